/*
 * What happened to each tested commit of a job, as workers report it
 * (commitlog.c): the outcome, build log and run output kept with the
 * commit (job_commits), and the metric names its runs printed.
 * Conventions as in store_tasks.h: STORE_OK, STORE_NOT_FOUND where it
 * says, STORE_FAILED after logging a database error (store.h).  Text in
 * result structs points into the PGresult their *_clear frees.
 */
#ifndef STATBISECT_STORE_OUTCOMES_H
#define STATBISECT_STORE_OUTCOMES_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* An outcome as a worker uploads it; NULL pointers are not reported. */
struct store_outcome_new {
	long long index;	    /* the commit's index in the job */
	const char *status;	    /* lib/outcome.h's name */
	const long long *exit_code; /* NULL: none */
	const long long *signal;    /* NULL: none */
	const char *metrics_seen;   /* JSON list of names, or NULL */
	const char *run_output;	    /* NULL keeps the stored one */
	const char *build_log;	    /* NULL keeps the stored one */
};

/*
 * Stores `o` for its commit of job `job_id`.  A commit built by an earlier
 * task keeps that task's build log; a task that only built keeps the last
 * run output.
 */
int store_outcomes_set(PGconn *conn, long long job_id,
		       const struct store_outcome_new *o);

/* A stored outcome; `status` NULL when none was reported. */
struct store_outcome {
	long long index;
	const char *status;
	bool has_exit_code, has_signal;
	long long exit_code, signal;
	const char *metrics_seen; /* JSON list, or NULL */
};

struct store_outcome_list {
	struct store_outcome *items;
	size_t count;
	PGresult *result;
};

void store_outcome_list_clear(struct store_outcome_list *list);

/* Every commit of job `job_id` that has an outcome. */
int store_outcomes_list(struct store_outcome_list *out, PGconn *conn,
			long long job_id);

/* The outcome of commit `index` of job `job_id` (status NULL: none);
 * STORE_NOT_FOUND when there is no such commit. */
int store_outcomes_get(struct store_outcome_list *out, PGconn *conn,
		       long long job_id, long long index);

/* How the runs of a job's two endpoints (commits 0 and `last`) went. */
struct store_endpoint_runs {
	long long with_kpi;	  /* runs that gave the KPI */
	long long exited_without; /* exited 0 without printing it */
	long long commits;	  /* endpoints with any run (0, 1 or 2) */
};

int store_outcomes_endpoint_runs(struct store_endpoint_runs *out, PGconn *conn,
				 long long job_id, long long last);

/* Metric names, sorted. */
struct store_names {
	const char **names;
	size_t count;
	PGresult *result;
};

void store_names_clear(struct store_names *names);

/* The first column of result `r` (NULL: the query failed) as *out, which
 * keeps `r`; STORE_OK or STORE_FAILED.  For the store modules. */
int store_names_take(struct store_names *out, PGresult *r);

/* Where store_outcomes_names looks. */
enum store_names_source {
	STORE_NAMES_REPORTED,  /* as the worker reported them for each */
	STORE_NAMES_DISTINCT,  /* the same, each name once */
	STORE_NAMES_FROM_RUNS, /* the stored runs' metrics, each once */
};

/* The names the runs of commits `first` and `second` of job `job_id`
 * printed (the two may be one commit). */
int store_outcomes_names(struct store_names *out, PGconn *conn,
			 long long job_id, long long first, long long second,
			 enum store_names_source source);

/* The KPI of job `job_id`'s testcase (malloc'd); STORE_NOT_FOUND when
 * there is no such job. */
int store_outcomes_kpi(char **out, PGconn *conn, long long job_id);

/* A commit's logs as GET /api/v1/jobs/{id}/commits/{sha}/log serves them. */
struct store_commit_log {
	bool job_found;
	size_t matches;	 /* commits whose SHA starts so: 0, 1 or 2 */
	long long index; /* of the first match: */
	const char *sha;
	bool build_failed;
	struct store_outcome outcome;
	const char *build_log, *run_output; /* NULL when none */
	PGresult *result;
};

void store_commit_log_clear(struct store_commit_log *log);

/* The commits of job `job_id` whose SHA starts with `prefix` (lower case
 * hex), at most two. */
int store_outcomes_log(struct store_commit_log *out, PGconn *conn,
		       long long job_id, const char *prefix);

#endif
