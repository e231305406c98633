/*
 * The scheduler's view of a job (scheduler.c): the engine's options and
 * candidates as stored, and the verdict or failure it ends with.  Rows of
 * the jobs and job_commits tables like store_jobs.h's, kept apart because
 * only the scheduler reads and writes them this way (and store_jobs.c is
 * full).  Conventions as in store_jobs.h: STORE_OK, STORE_NOT_FOUND where
 * it says, STORE_FAILED after logging a database error (store.h).
 */
#ifndef STATBISECT_STORE_ENGINE_H
#define STATBISECT_STORE_ENGINE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* A job's state and the testcase limits the engine works with. */
struct store_engine_options {
	char state[16];
	long long runs_min; /* the job's, else its testcase's */
	long long runs_max; /* likewise, and never below runs_min */
	double min_change_pct;
	bool higher_is_better;
	bool several_machines; /* submitted with "machines" above 1 */
};

/* STORE_NOT_FOUND when there is no job `job_id`. */
int store_engine_options(struct store_engine_options *out, PGconn *conn,
			 long long job_id);

/* One candidate commit; text points into the list's result. */
struct store_engine_commit {
	long long index;
	const char *sha, *subject, *author_name, *author_email;
	bool build_failed;
	const long long *parents; /* indices of its parents in the range */
	size_t parent_count;
};

struct store_engine_commits {
	struct store_engine_commit *commits; /* by index, from 0 (`good`) */
	size_t count;
	long long *parents; /* storage behind commits[].parents */
	PGresult *result;
};

void store_engine_commits_clear(struct store_engine_commits *list);

/* The candidates of job `job_id` (none when there is no such job). */
int store_engine_commits(struct store_engine_commits *out, PGconn *conn,
			 long long job_id);

/* A job's end as the scheduler stores it. */
struct store_engine_verdict {
	const char *verdict; /* regression, improvement, no-change, ... */
	const char *culprit_sha, *parent_sha; /* NULL without a culprit */
	const char *message;		      /* why, or NULL */
	const char *culprits;		      /* JSON list */
	double change_pct, p_value, confidence;
	double change_ci95_lo,
	    change_ci95_hi; /* both finite, or no interval */
};

/* Marks job `job_id` done with `verdict`. */
int store_engine_finish(PGconn *conn, long long job_id,
			const struct store_engine_verdict *verdict);

/* The machine a job is bound to (issue 14), as the API shows it. */
struct store_engine_machine {
	bool bound;		    /* false until a worker claimed a task */
	long long worker_id, moves; /* moves: how often it moved */
	char name[129], group[65];  /* the worker's */
	char machine[513];	    /* its description; "" when none */
	char bound_at[32];	    /* as store.h writes timestamps */
	long long runs_superseded;  /* runs of earlier machines, kept */
};

/* STORE_NOT_FOUND when there is no job `job_id`. */
int store_engine_machine(struct store_engine_machine *out, PGconn *conn,
			 long long job_id);

/* Marks job `job_id` failed, saying why in `message`. */
int store_engine_fail(PGconn *conn, long long job_id, const char *message);

#endif
