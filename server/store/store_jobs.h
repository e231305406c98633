/*
 * The store of jobs and their candidate commits: the only SQL on the jobs
 * and job_commits tables, and the job-side reads of the rows that hang off
 * a job (its runs, its report in the outbox, its tasks' plans).
 *
 * Every function runs on the caller's connection (inside the caller's
 * transaction when it has one), takes typed parameters and returns
 * STORE_OK, STORE_NOT_FOUND where it says ("no such job"), or
 * STORE_FAILED after logging a database error (db_last_failure() then
 * says whether trying again may help): store.h.  Results
 * come back in structs whose text points into a result that the struct's
 * *_clear function frees; a cleared or zeroed struct may be cleared again.
 * Timestamps are ISO 8601 UTC text; a NULL pointer is an SQL NULL and a
 * NAN double a missing number.
 */
#ifndef STATBISECT_STORE_JOBS_H
#define STATBISECT_STORE_JOBS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "gitrepo.h"
#include "store.h"

/* A new job as store_jobs_create stores it. */
struct store_job_new {
	long long repo_id, testcase_id;
	const char *good_rev, *bad_rev; /* as the request named them */
	const char *notify;		/* a JSON array of addresses */
	long long created_by;		/* a token id; 0 for none */
	long long runs_min, runs_max;	/* 0: the testcase's */
	const char *group;		/* NULL: the testcase's */
};

/*
 * Stores job `job` with its candidates `commits` (count >= 1, oldest
 * first: commits[0] is `good`, the last `bad`) and puts its id into
 * *out_id.  Run inside a transaction: on STORE_FAILED the caller rolls back.
 */
int store_jobs_create(long long *out_id, PGconn *conn,
		      const struct store_job_new *job,
		      const struct gitrepo_commit *commits, size_t count);

/*
 * Writes the candidates `commits` of job `job_id` (idx 0 the first) with
 * one COPY rather than one INSERT each: a range of 100,000 commits takes a
 * second, not half a minute.  Subjects and names go in exactly as given
 * (tabs, newlines and backslashes included).  Inside the caller's
 * transaction; on STORE_FAILED the caller rolls back.
 */
/*
 * Stores job `job` in state 'resolving' with only its two ends (full
 * SHAs) and queues it for the resolver (store_resolving.h), which lists
 * and adds its candidates later.  Inside a transaction, as
 * store_jobs_create.
 */
int store_jobs_create_resolving(long long *out_id, PGconn *conn,
				const struct store_job_new *job,
				const char *good_sha, const char *bad_sha);

int store_jobs_add_commits(PGconn *conn, long long job_id,
			   const struct gitrepo_commit *commits, size_t count);

/* What token `token_id` has submitted, and its own limits. */
struct store_token_usage {
	long long max_jobs_per_hour, max_open_jobs; /* -1: the server's */
	long long open_jobs;	  /* its jobs queued or running */
	long long jobs_last_hour; /* its jobs created in the last hour */
	/* Seconds until the oldest of those is an hour old (0: none). */
	long long hour_frees_in_s;
};

/*
 * Locks token `token_id`'s row (SELECT ... FOR UPDATE, inside the
 * caller's transaction, so that concurrent submissions of one token count
 * one after the other) and then, in a statement of its own that sees what
 * the submission before committed, counts its jobs into *out.
 * STORE_NOT_FOUND when there is no such token.
 */
int store_jobs_token_usage(struct store_token_usage *out, PGconn *conn,
			   long long token_id);

/*
 * Locks job `job_id` (SELECT ... FOR UPDATE, inside the caller's
 * transaction) and puts its state into `state` (may be NULL).  STORE_NOT_FOUND
 * when there is no such job.
 */
int store_jobs_lock(PGconn *conn, long long job_id, char state[16]);

/* A job's row with its repository's and testcase's names. */
struct store_job {
	long long id;
	const char *state, *verdict, *culprit, *parent;
	const char *good_sha, *bad_sha, *good_rev, *bad_rev;
	const char *repo, *testcase, *kpi, *message;
	const char *created_at, *finished_at;
	const char *started_at; /* the first claim; NULL before */
	double elapsed_s;	/* first claim to the end or now; NaN before */
	const char *notify, *culprits; /* JSON text */
	bool higher_is_better;
	double change_pct, p_value, confidence;
	double change_ci95_lo, change_ci95_hi;
	long long runs_min, runs_max; /* the job's own; 0: the testcase's */
	/* The testcase's benchmark repository and revision, and the bench
	 * commit the job runs (pinned by its first upload); NULL: none. */
	const char *bench_repo, *bench_rev, *bench_sha;
	const char *group; /* the machine group it runs on */
	PGresult *result;
};

void store_job_clear(struct store_job *job);

/* Job `job_id` into *out.  STORE_NOT_FOUND when there is no such job. */
int store_jobs_get(struct store_job *out, PGconn *conn, long long job_id);

/* The delivery of a job's latest report (its outbox row). */
struct store_job_delivery {
	const char *state; /* pending, retrying, failed or sent */
	long long attempts;
	const char *last_error, *sent_at, *next_attempt_at;
	const char *recipients; /* JSON text */
	PGresult *result;
};

void store_job_delivery_clear(struct store_job_delivery *delivery);

/* STORE_NOT_FOUND when job `job_id` has no report (yet). */
int store_jobs_delivery(struct store_job_delivery *out, PGconn *conn,
			long long job_id);

/* The builds the workers did for job `job_id` (0 for tasks whose worker
 * did not say) into *out. */
int store_jobs_builds(long long *out, PGconn *conn, long long job_id);

/*
 * The latest report message of job `job_id` (RFC 5322 text with CRLF line
 * ends; NULL while the job has none) into *out (malloc'd).  STORE_NOT_FOUND
 * when there is no such job.
 */
int store_jobs_report(char **out, PGconn *conn, long long job_id);

/* Which jobs store_jobs_list lists. */
struct store_jobs_filter {
	/* NULL: any */
	const char *repo, *testcase, *state, *verdict, *group;
	long long limit, offset;
};

/* One job of a list. */
struct store_jobs_row {
	long long id;
	const char *state, *verdict, *repo, *testcase;
	const char *good_sha, *bad_sha, *culprit, *culprit_subject;
	const char *created_at, *finished_at;
	const char *group; /* the machines it runs on */
	double change_pct;
	long long age_seconds;		/* since it was created */
	long long runs, commits_tested; /* as the job's page counts them */
};

/* A page of jobs, newest first, and how many match in all. */
struct store_jobs_page {
	long long total;
	size_t count;
	struct store_jobs_row *rows;
	PGresult *result;
};

void store_jobs_page_clear(struct store_jobs_page *page);

/* The jobs `filter` selects into *out; the total and the page come from
 * one snapshot. */
int store_jobs_list(struct store_jobs_page *out, PGconn *conn,
		    const struct store_jobs_filter *filter);

/*
 * Cancels job `job_id`, queued or running, and its open tasks in a
 * transaction of its own, and puts its earlier state into `state`.
 * STORE_NOT_FOUND when there is no such job, STORE_CONFLICT (changing
 * nothing) when it has ended already.
 */
int store_jobs_cancel(char state[16], PGconn *conn, long long job_id);

/* What re-running a job asks for again. */
struct store_job_rerun {
	const char *repo, *testcase, *good_sha, *bad_sha, *group;
	const char *notify; /* JSON text */
	PGresult *result;
};

void store_job_rerun_clear(struct store_job_rerun *rerun);

/* STORE_NOT_FOUND when there is no such job. */
int store_jobs_rerun_source(struct store_job_rerun *out, PGconn *conn,
			    long long job_id);

/* One run of a job. */
struct store_job_run {
	long long commit_index, exit_code;
	const char *commit, *worker, *metrics, *created_at; /* metrics: JSON */
	double wall_s, kpi;
	long long worker_id;	     /* the machine that made it; 0: unknown */
	const char *group, *machine; /* its group and description, or NULL */
	bool counted; /* made on the machine the job is bound to (issue 14) */
};

struct store_job_runs {
	size_t count;
	struct store_job_run *runs; /* in upload order */
	PGresult *result;
};

void store_job_runs_clear(struct store_job_runs *runs);

/* The runs of job `job_id`.  STORE_NOT_FOUND when there is no such job. */
int store_jobs_runs(struct store_job_runs *out, PGconn *conn,
		    long long job_id);

/* What the job page shows beside the job. */
struct store_job_page_info {
	long range_lo, range_hi; /* indices of the range's ends; -1: unknown */
	const char *culprit_author; /* "Name <email>", or NULL */
	const char *web_url;	    /* the repository's commit link template */
	PGresult *result;
};

void store_job_page_info_clear(struct store_job_page_info *info);

/*
 * For job `job_id`: the indices of candidates `range_after` and
 * `range_through` and the author of `culprit` (each may be NULL).
 * STORE_NOT_FOUND when there is no such job.
 */
int store_jobs_page_info(struct store_job_page_info *out, PGconn *conn,
			 long long job_id, const char *range_after,
			 const char *range_through, const char *culprit);

/* One commit on a job's bisection path. */
struct store_path_commit {
	long long index;
	const char *sha, *subject, *author_name;
	const char *log_tail; /* the end of the log that explains a commit
				 that gave no value, or NULL */
};

struct store_job_path {
	size_t count;
	struct store_path_commit *commits; /* in the order first asked for */
	PGresult *result;
};

void store_job_path_clear(struct store_job_path *path);

/* The commits the tasks of job `job_id` ran or run. */
int store_jobs_path(struct store_job_path *out, PGconn *conn,
		    long long job_id);

#endif
