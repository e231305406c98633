/*
 * The store of the worker protocol: workers, tasks with their leases and
 * plans, and the runs workers upload.  The only SQL on those tables.
 * Every function runs on the caller's connection (inside the caller's
 * transaction when it has one), takes typed parameters and returns
 * STORE_OK (0), STORE_NOT_FOUND where it says, or STORE_FAILED after
 * logging a database error (store.h).
 */
#ifndef STATBISECT_STORE_TASKS_H
#define STATBISECT_STORE_TASKS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* One commit a task runs: its index in the job, how many runs, and why
 * ("search" or "confirm"). */
struct store_plan_entry {
	long long index;
	char sha[41]; /* filled by loads, not read by store_tasks_insert */
	long long runs;
	char purpose[8];
	bool rebuild; /* build it again, not from the worker's cache */
};

/* The commits a task runs, in the order to run them. */
struct store_plan {
	struct store_plan_entry *entries;
	size_t count;
	bool interleave; /* run the commits alternately (A B A B ...) */
	/* A spread job's (lib/spread.h): the machine the task is for (0:
	 * the job's machine), or the endpoints of a machine joining it. */
	long long for_worker;
	bool joining;
};

void store_plan_clear(struct store_plan *plan);

/*
 * Registers worker (`name`, `group`) for token `token_id` (0: the
 * bootstrap admin token, stored as no token), or updates the row of that
 * name and group; `machine` may be NULL.  The worker's id into *out_id.
 */
int store_workers_register(long long *out_id, PGconn *conn, const char *name,
			   const char *group, const char *machine,
			   long long token_id);

/*
 * Marks worker `worker_id` seen now and puts the token it registered with
 * into *out_token_id (0 when none) and its group into `group` (`size`
 * bytes, cut to fit; NULL: not wanted).  STORE_NOT_FOUND when there is no such
 * worker.
 */
int store_workers_touch(long long *out_token_id, char *group, size_t size,
			PGconn *conn, long long worker_id);

/* A worker as GET /api/v1/workers lists it; text points into the list's
 * result, timestamps as store.h writes them. */
struct store_worker_row {
	long long id;
	const char *name, *group, *machine; /* machine may be NULL */
	const char *registered_at, *last_seen_at;
	bool has_task; /* it holds a running task under a live lease: */
	long long task_id, job_id, commit_index; /* its first commit */
	const char *commit, *lease_expires_at;
};

struct store_worker_list {
	struct store_worker_row *rows;
	size_t count;
	PGresult *result;
};

void store_worker_list_clear(struct store_worker_list *list);

/* Every worker by group and name, each with its latest such task. */
int store_workers_list(struct store_worker_list *out, PGconn *conn);

/* A task handed to a worker, with what it needs to run it. */
struct store_claim {
	long long task_id, lease, job_id;
	char *repo_name, *repo_url;
	char *testcase_name, *build, *run, *kpi;
	char *monitors, *params; /* JSON text */
	long long timeout_s;
	/* The testcase's benchmark repository and revision, and the bench
	 * commit the job's first upload pinned; "" when none. */
	char *bench_repo, *bench_rev, *bench_sha;
	struct store_plan plan;
};

void store_claim_clear(struct store_claim *claim);

/*
 * Claims for worker `worker_id`, which calls with token `token_id`, the
 * oldest open task of its group whose lease is free or lapsed and whose
 * job is bound to this worker or to none (a task or job another
 * transaction holds locked is skipped): binds it to the worker and the
 * token under lease `lease` (a random number the caller made) for
 * `lease_seconds`, marks its job running and binds an unbound job to the
 * worker (jobs.worker_id: one machine per job, issue 14).  Run inside a
 * transaction. Returns 0 with *out filled (free with store_claim_clear),
 * STORE_NOT_FOUND when there is nothing to do.
 */
int store_tasks_claim(struct store_claim *out, PGconn *conn,
		      long long worker_id, long long token_id, long long lease,
		      unsigned lease_seconds);

/* A job taken over from a machine that is gone (store_tasks_adopt). */
struct store_move {
	long long job_id;
	long long old_worker_id;   /* the machine it was bound to */
	long long unseen_s;	   /* how long that one was not seen */
	long long runs_superseded; /* its runs, no longer counted */
	long long tasks_withdrawn; /* tasks planned from them, cancelled */
};

/*
 * Binds to worker `worker_id` one open job of its group whose bound worker
 * has not been seen for `machine_timeout_s` seconds (a job row another
 * transaction holds is skipped): the job's runs made by other workers are
 * marked superseded (kept, no longer given to the engine) and its open
 * tasks, planned from them, cancelled; the caller then asks the engine
 * again (sched_advance), which starts over from the endpoints on the new
 * machine.  Run inside a transaction.  STORE_NOT_FOUND when no job is
 * stranded.
 */
int store_tasks_adopt(struct store_move *out, PGconn *conn,
		      long long worker_id, unsigned machine_timeout_s);

/* A task's lease as store_tasks_lock reads it. */
struct store_task_lease {
	char state[16];	    /* the task's state */
	char job_state[16]; /* its job's */
	long long lease, job_id, worker_id;
	long long token_id; /* of the claim; 0 when none */
	bool live;	    /* the lease has not expired */
};

/*
 * Locks task `task_id` (FOR UPDATE) and reads its lease into *out.
 * STORE_NOT_FOUND when there is no such task.
 */
int store_tasks_lock(struct store_task_lease *out, PGconn *conn,
		     long long task_id);

/*
 * Extends task `task_id`'s lease to `lease_seconds` from now and, unless
 * `activity` is NULL, records what the task does now (its time kept while
 * the text stays the same).
 */
int store_tasks_extend(PGconn *conn, long long task_id, const char *activity,
		       unsigned lease_seconds);

/*
 * The plan of task `task_id` into *out (free with store_plan_clear).
 * STORE_NOT_FOUND when the task does not exist or runs no commit.
 */
int store_tasks_plan(struct store_plan *out, PGconn *conn, long long task_id);

/*
 * Locks job `job_id` (FOR UPDATE) and puts its testcase's KPI name into
 * *out (malloc'd).  STORE_NOT_FOUND when there is no such job.
 */
int store_tasks_lock_job(char **out, PGconn *conn, long long job_id);

/* One uploaded run. */
struct store_run {
	long long job_id, task_id, commit_index, worker_id;
	bool has_kpi; /* false: the run failed or did not print the KPI */
	double kpi;
	const char *metrics; /* JSON object text */
	long long exit_code;
	double wall_s;
	const char *purpose; /* "search" or "confirm" */
};

/* Stores `run`; superseded when its worker is not the one its job is
 * bound to (a late upload of a machine the job moved away from). */
int store_runs_insert(PGconn *conn, const struct store_run *run);

/* Marks commit `index` of job `job_id` as failing to build, with the end
 * of its build log. */
int store_tasks_build_failed(PGconn *conn, long long job_id, long long index,
			     const char *log);

/*
 * Pins the benchmark commit `sha` of job `job_id` (jobs.bench_sha) unless
 * one is pinned already: 0 when `sha` is the job's bench commit now,
 * STORE_CONFLICT when another was pinned before, STORE_NOT_FOUND or
 * STORE_FAILED.
 */
int store_tasks_bench_pin(PGconn *conn, long long job_id, const char *sha);

/* Marks task `task_id` done; `builds` < 0 when the worker did not say. */
int store_tasks_finish(PGconn *conn, long long task_id, long long builds);

/*
 * Queues one task of job `job_id` that runs the commits of `plan` (index,
 * runs and purpose of each entry; at least one).
 */
int store_tasks_insert(PGconn *conn, long long job_id,
		       const struct store_plan *plan);

/* How many tasks of job `job_id` are queued or running, into *out. */
int store_tasks_open_count(long long *out, PGconn *conn, long long job_id);

/* The KPI of one run, as the engine reads it. */
struct store_run_kpi {
	long long commit_index;
	bool has_kpi;
	double kpi;
	bool confirm;	     /* a confirmation run, not a search run */
	long long worker_id; /* the machine that made it (0: unknown) */
};

/*
 * Every counted run of job `job_id` (not superseded: made on the machine
 * the job is bound to; while it is spread, its first machine's) in upload
 * order into *out (malloc'd, free()) and
 * their number into *count.
 */
int store_runs_kpis(struct store_run_kpi **out, size_t *count, PGconn *conn,
		    long long job_id);

/* The same with the runs of every machine of a spread job (lib/spread.h),
 * each with its worker. */
int store_runs_by_machine(struct store_run_kpi **out, size_t *count,
			  PGconn *conn, long long job_id);

/* What a running task of a job does now, on which worker, since when. */
struct store_activity {
	const char *text, *since, *worker;
	PGresult *result;
};

void store_activity_clear(struct store_activity *activity);

/* The activity of job `job_id`'s latest running task that reported one;
 * STORE_NOT_FOUND when none did. */
int store_tasks_activity(struct store_activity *out, PGconn *conn,
			 long long job_id);

#endif
