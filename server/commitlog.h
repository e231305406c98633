/*
 * What happened to each tested commit of a job, and its logs: the
 * outcomes a worker uploads (lib/outcome.h), stored per job and commit
 * with the tail of the build log and of the run output; the route that
 * serves them; and the real cause a job states when commits gave no
 * measurement.
 */
#ifndef STATBISECT_COMMITLOG_H
#define STATBISECT_COMMITLOG_H

#include <jansson.h>
#include <libpq-fe.h>

#include "fields.h"
#include "http.h"
#include "scheduler.h"

/* The most of a run's output and of a build log that is kept. */
#define COMMITLOG_RUN_OUTPUT_MAX 16384
#define COMMITLOG_BUILD_LOG_MAX 65536

/*
 * Stores the "outcomes" of an upload (NULL: none, as from older workers):
 * [{"commit_index", "status", "exit_code"?, "signal"?, "metrics_seen"?,
 * "run_output"?, "build_log"?}] for commits of the task's `plan`.  Inside
 * the caller's transaction.  Returns 0, or -1 with a 400 (malformed) or a
 * database error answered in `res`.
 */
int commitlog_store(struct http_response *res, PGconn *conn, long long job_id,
		    json_t *plan, json_t *outcomes);

/*
 * The outcome of every commit of job `job_id` that has one, as a JSON
 * object from the commit's index (decimal text) to {"status",
 * "exit_code", "signal", "metrics_seen"}, into *out (new reference).
 * Returns 0 or -1 on a database error.
 */
int commitlog_outcomes(json_t **out, PGconn *conn, long long job_id);

/*
 * When every run of both endpoints of `job` gave no KPI and at least one
 * exited normally without printing it (a misspelt KPI, say), sets *out to
 * a malloc'd message naming the KPI and the metrics the runs printed and
 * returns 1.  Returns 0 (*out NULL) otherwise, -1 on a database error.
 */
int commitlog_missing_kpi(char **out, PGconn *conn,
			  const struct sched_job *job);

/*
 * The real cause of an inconclusive verdict whose endpoint gave no
 * measurement ("the good commit does not build" from the engine, which
 * also skips commits whose runs keep failing): into *out a malloc'd line
 * naming what the endpoint's commit did (lib/outcome.h), or NULL when the
 * verdict is of another kind.  Returns 0 or -1 (database, memory).
 */
int commitlog_cause(char **out, PGconn *conn, const struct sched_job *job);

/*
 * The log of the commit of job `job_id` named by `commit` (4 to 40 hex
 * digits): {"job", "index", "commit", "build_failed", "outcome",
 * "build_log", "run_output"} in *out (a new reference).  Returns 0, or -1
 * with one entry in `errors`: 400 invalid_commit or ambiguous_commit, 404
 * not_found (no such job, or no such candidate), or a database failure.
 */
int commitlog_log(json_t **out, struct field_errors *errors, long long job_id,
		  const char *commit);

/* GET /api/v1/jobs/{id}/commits/{sha}/log (role read). */
void commitlog_get(struct http_response *res, struct http_request *req);

#endif
