/*
 * The SQL of robot mode (issue 12): watches, the heads of watched branches
 * with their runs, the jobs the watcher made, reported culprits and notes.
 * C structs in, C structs out; nothing else in the server touches these
 * tables.  Every function takes the caller's connection and runs inside
 * the caller's transaction when there is one.  Functions returning int
 * answer 0, 1 for "no such row" where said, or -1 on a database error
 * (logged by db.c).
 */
#ifndef STATBISECT_STORE_WATCHES_H
#define STATBISECT_STORE_WATCHES_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

/* A watch as stored.  Strings are malloc'd; free with
 * store_watch_clear. */
struct store_watch {
	long long id;
	long long repo_id;
	char *repo;	/* the repository's name */
	char *repo_url; /* where the mirror fetches from */
	char *web_url;	/* the repository's commit link with {sha}, or NULL */
	char *branch;	/* a branch name or a glob of branches */
	long long interval_s;
	bool regressions_only;
	bool paused;
	char *notify; /* JSON array of addresses */
	size_t testcase_count;
	long long *testcase_ids;
	char **testcase_names;
	char *created_at;   /* ISO 8601 UTC */
	char *last_poll_at; /* or NULL */
	char *last_error;   /* or NULL */
};

void store_watch_clear(struct store_watch *watch);
void store_watches_free(struct store_watch *watches, size_t count);

/* What a new watch is made of (borrowed). */
struct store_watch_new {
	long long repo_id;
	const char *branch;
	long long interval_s;
	bool regressions_only;
	bool paused;
	const char *notify; /* JSON array text */
	const long long *testcase_ids;
	size_t testcase_count;
	long long token_id; /* 0: the bootstrap admin token */
};

/* The id of repository / testcase `name`: 0, or 1 when none. */
int store_watches_repo_id(PGconn *conn, const char *name, long long *out);
int store_watches_testcase_id(PGconn *conn, const char *name, long long *out);

/* Stores a new watch (due at once) with its testcases, in one
 * transaction of its own. */
int store_watches_insert(PGconn *conn, const struct store_watch_new *in,
			 long long *id_out);

/* Watch `id`: 0, or 1 when there is none. */
int store_watches_get(struct store_watch *out, PGconn *conn, long long id);

/* Every watch, oldest first; free with store_watches_free. */
int store_watches_list(struct store_watch **out, size_t *count, PGconn *conn);

/* Pauses or resumes watch `id` (a resumed watch is due at once): 0, or 1
 * when there is none. */
int store_watches_set_paused(PGconn *conn, long long id, bool paused);

/* Deletes watch `id` with its heads; its jobs stay.  0, or 1 when none. */
int store_watches_delete(PGconn *conn, long long id);

/* Makes every unpaused watch of repository `repo` due now (the push
 * hook).  0 with *count set, or 1 when there is no such repository. */
int store_watches_poke_repo(PGconn *conn, const char *repo, size_t *count);

/*
 * Claims the unpaused watch due first, if any, moving its next poll one
 * interval on so that no other server claims it meanwhile: 0 with *out
 * filled, 1 when none is due.
 */
int store_watches_claim_due(struct store_watch *out, PGconn *conn);

/* Records a poll of watch `id`: its time and error (NULL: none). */
int store_watches_polled(PGconn *conn, long long id, const char *error);

/* One head of a watched branch for one testcase. */
struct store_head {
	long long id;
	long long testcase_id;
	char testcase[65];
	char branch[256];
	char sha[41];
	char *subject;
	char state[16];	   /* baseline, measuring, measured */
	char outcome[16];  /* "" while none */
	double change_pct; /* NaN when none */
	long long job_id;  /* the measuring job, 0 when none */
	long long base_head_id;
	char seen_at[32];
	char measured_at[32]; /* "" while not measured */
	/* history only: */
	size_t run_count;
	double median, min, max, q1, q3; /* NaN without runs */
	char job_role[16];		 /* measure / bisect / "" */
	char verdict[16];		 /* of the job, "" while none */
	char culprit[41];		 /* of a bisection, "" when none */
};

void store_heads_free(struct store_head *heads, size_t count);

/*
 * The head of (watch, testcase, branch) that the next measurement starts
 * from: the newest baseline or measured head whose measurement did not
 * fail.  *measuring tells whether a measurement is running.  0, or 1 when
 * the branch has no head yet.
 */
int store_watches_base_head(struct store_head *out, bool *measuring,
			    PGconn *conn, long long watch_id,
			    long long testcase_id, const char *branch);

/*
 * Takes up head `sha` of a branch in `state` (baseline or measuring),
 * measured against head `base_head_id` (0: none).  0 with *id_out, or 1
 * when this head was taken up before.
 */
int store_watches_add_head(PGconn *conn, long long watch_id,
			   long long testcase_id, const char *branch,
			   const char *sha, const char *subject,
			   const char *state, long long base_head_id,
			   long long *id_out);

/* Forgets a head whose job could not be made (it is taken up again). */
int store_watches_drop_head(PGconn *conn, long long head_id);

/* Makes a measuring head a baseline (its range cannot be measured: the
 * branch was rewritten). */
int store_watches_rebase_head(PGconn *conn, long long head_id);

/*
 * Links job `job_id` to measuring head `head_id` as its measurement: the
 * job's bad revision becomes the branch name, which its report shows.
 */
int store_watches_link_job(PGconn *conn, long long watch_id, long long head_id,
			   long long job_id, const char *branch);

/* A job the watcher made, with what it needs to move it on. */
struct store_watch_job {
	long long job_id;
	long long watch_id; /* 0 when the watch was deleted */
	long long head_id;  /* 0 when the head was deleted */
	long long base_head_id;
	long long testcase_id;
	char role[16]; /* measure or bisect */
	char branch[256];
	bool regressions_only;
};

/* The watch link of job `job_id`: 0, or 1 when the watcher did not make
 * it. */
int store_watches_job(struct store_watch_job *out, PGconn *conn,
		      long long job_id);

/*
 * Records the measurement of the job's head: its outcome and change, and
 * the KPI of the job's runs of commit 0 for the base head and of commit
 * `last_idx` for the head itself.
 */
int store_watches_measured(PGconn *conn, const struct store_watch_job *wj,
			   const char *outcome, double change_pct,
			   size_t last_idx);

/* Makes the measuring job a bisection of its range. */
int store_watches_promote(PGconn *conn, long long job_id);

/* Finishes a measuring job without a bisection (verdict, the endpoints'
 * change and p-value, an optional message). */
int store_watches_finish_job(PGconn *conn, long long job_id,
			     const char *verdict, double change_pct,
			     double p_value, const char *message);

/*
 * Claims the report of culprit `sha` for testcase `testcase_id`: 0 when
 * this job is the first to report it, 1 when job *earlier (0 when unknown)
 * did before.
 */
int store_watches_claim_report(PGconn *conn, long long testcase_id,
			       const char *sha, long long job_id,
			       long long *earlier);

/* Adds `note` to job `job_id`. */
int store_watches_note(PGconn *conn, long long job_id, const char *note);

/*
 * The newest bisection of (watch, testcase, branch), when it found a
 * regression: 0 with *job_id, or 1 when there is none or it did not.
 */
int store_watches_open_regression(PGconn *conn, long long watch_id,
				  long long testcase_id, const char *branch,
				  long long *job_id);

/*
 * Ends the measurement of heads whose job failed or was cancelled, and of
 * heads left without a job for a minute (a crash between taking the head
 * up and making its job).  *count receives how many.
 */
int store_watches_reconcile(PGconn *conn, size_t *count);

/*
 * The heads of watch `watch_id`, oldest first: of `testcase_id` only
 * (0: all), the newest `limit` (0: all), with the history columns.
 */
int store_watches_heads(struct store_head **out, size_t *count, PGconn *conn,
			long long watch_id, long long testcase_id,
			size_t limit);

/*
 * Reports of a watch with several testcases wait in watch_held until every
 * job of the same head (watch, branch and range) has ended; then the
 * watcher sends one per culprit, with a row for each testcase that moved
 * at it (store_watch_reports.c).
 */
struct store_watch_held {
	long long job_id;
	size_t which;	  /* the culprit's index in the job */
	char culprit[41]; /* its sha */
	char group[400];  /* the same text for the jobs of one head */
};

/* Whether jobs of other testcases measure the head job `job_id` does. */
int store_watches_has_siblings(PGconn *conn, long long job_id, bool *out);

/* Holds the report of culprit `which` (`sha`) of job `job_id`. */
int store_watches_hold(PGconn *conn, long long job_id, size_t which,
		       const char *sha);

/* Held reports whose head has no job left running, by head, culprit and
 * job (at most 64); free *out with free(). */
int store_watches_held_ready(struct store_watch_held **out, size_t *count,
			     PGconn *conn);

/* Ends the hold of a report that was sent. */
int store_watches_unhold(PGconn *conn, long long job_id, size_t which);

struct report_samples;

/*
 * Adds to `samples` the KPI runs of commits `base_idx` (side 0) and
 * `new_idx` (side 1) of the other jobs of the same head whose held report
 * names the same culprit as held report (`job_id`, `which`), each named
 * "<testcase>.<kpi>".  Adds nothing when that report is not held.
 */
int store_watches_held_samples(struct report_samples *samples, PGconn *conn,
			       long long job_id, size_t which, size_t base_idx,
			       size_t new_idx);

/* A job of a watch as its page lists it. */
struct store_watch_jobrow {
	long long id;
	char role[16];
	char state[16];
	char verdict[16]; /* "" while none */
	char culprit[41]; /* "" when none */
	char testcase[65];
	char branch[256];
	char *notes; /* JSON array of strings */
};

void store_watch_jobrows_free(struct store_watch_jobrow *rows, size_t count);

/* The jobs of watch `watch_id`, oldest first. */
int store_watches_jobs(struct store_watch_jobrow **out, size_t *count,
		       PGconn *conn, long long watch_id);

/*
 * Helpers the store_watch* files share (timestamps: store/store.h).  _row_dup:
 * a malloc'd copy of a field, NULL when SQL NULL (or out of memory);
 * _row_copy: the field ("" when NULL) cut to `size`; _exec: runs a command
 * whose rows are not needed (0 / -1); _exec_touch: 0 when it changed a row, 1
 * when none, -1.
 */
char *store_watches_row_dup(const PGresult *r, int row, int col);
void store_watches_row_copy(char *dst, size_t size, const PGresult *r, int row,
			    int col);
int store_watches_exec(PGconn *conn, const char *sql, int n,
		       const char *const *params);
int store_watches_exec_touch(PGconn *conn, const char *sql, int n,
			     const char *const *params);

#endif
