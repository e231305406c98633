/*
 * Compare jobs and fix re-tests (issue 13).  A compare job measures two
 * to four revisions interleaved on one machine and reports them as the
 * robot's table with one column per revision, each column's change
 * against the first; the bisection engine does not search them: each
 * column is put to the engine's endpoint test against the first until
 * every one is decided or has its runs_max.  A fix re-test is the compare
 * job of a finished bisection's culprit's parent, the culprit and a fix.
 *
 * Requests go through jobs_create (jobs.h) like a bisection's: the
 * request reader, the resolver and the marking below are its compare
 * steps.  docs/PATCHES.md ("Compare jobs and fix re-tests") has the API.
 */
#ifndef STATBISECT_COMPARE_H
#define STATBISECT_COMPARE_H

#include <git2.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "fields.h"
#include "http.h"
#include "jobs.h"
#include "scheduler.h"

/* The fewest and most revisions of one compare job. */
#define COMPARE_LEAST 2
#define COMPARE_MOST 4

/* True when a job request body asks for a compare job ("kind":
 * "compare"). */
bool compare_is_request(json_t *body);

/*
 * Reads "revisions" of a compare request `body` into `out` (its good and
 * bad become the first and the last), adding an error when it is not a
 * list of 2 to 4 non-empty strings.
 */
void compare_request_from_json(struct jobs_request *out, json_t *body,
			       struct field_errors *errors);

/*
 * Resolves each revision of `request` in the fetched mirror `repo` into
 * *commits (oldest-first order is the request's; each commit's parent is
 * the one before, so the scheduler loads them as it loads any job); an
 * unknown revision (422 unknown_revision, naming it) or two naming one
 * commit (422 invalid_field) adds an error and leaves *commits NULL.
 */
void compare_resolve(struct gitrepo_commit **commits, size_t *count,
		     git_repository *repo, const struct jobs_request *request,
		     struct field_errors *errors);

/* Makes job `job_id`, just stored, the compare job `request` asks for
 * (store_compare_mark).  0 or -1. */
int compare_mark(PGconn *conn, long long job_id,
		 const struct jobs_request *request);

/*
 * The scheduler's step for a compare job (sched_advance, in its
 * transaction): 0 when `job` is not one, or when more runs are wanted
 * (then job->result holds them: one interleaved task of every revision
 * still undecided and the first); 1 when the job has ended (verdict,
 * columns and report stored); -1 on a database error.
 */
int compare_advance(PGconn *conn, struct sched_job *job, const char *base_url);

/* Adds "kind" to the job `out` shows, and for a compare job "revisions"
 * (each column's revision, sha, runs, mean, sd, change against the
 * first, verdict) and "retest_of".  0 or -1. */
int compare_json_add(PGconn *conn, json_t *out, const struct sched_job *job);

/* JOBS_REFUSED (409) when job `job_id` is a compare job, which cannot be
 * re-run as a bisection; 0 otherwise; JOBS_DB_FAILED. */
int compare_refuse_rerun(PGconn *conn, long long job_id,
			 struct field_errors *errors);

/*
 * Creates the re-test of fix `fix` (a revision) for bisection `job_id`,
 * as token `token_id`: the compare job of its culprit's parent (base),
 * its culprit and the fix, notifying whom the bisection notified; its id
 * into *out_id.  Refused (JOBS_REFUSED) when there is no such job (404),
 * it is not a finished bisection with a culprit (409), the fix is
 * missing (400) or unknown (422); as jobs_create otherwise.
 */
int compare_retest(long long *out_id, PGconn *conn, long long job_id,
		   const char *fix, long long token_id,
		   struct field_errors *errors);

struct store_compare_source;

/* Loads job `job_id` as the source of a compare job made from its
 * culprit (store_compare_source): 0, JOBS_REFUSED with a 404 in `errors`
 * when there is no such job, or JOBS_DB_FAILED.  Clear *out with
 * store_compare_source_clear after 0. */
int compare_source_load(struct store_compare_source *out, PGconn *conn,
			long long job_id, struct field_errors *errors);

/*
 * Fills `out` (zeroed by the caller) with the compare job of `source`'s
 * culprit: its parent (labelled base), the culprit and `revision`
 * (labelled, and named in errors, `label`), with the source's repository,
 * testcase and notify list (a new reference in out->notify, or NULL,
 * that the caller drops).
 */
void compare_of_culprit(struct jobs_request *out,
			const struct store_compare_source *source,
			const char *revision, const char *label);

/* POST /api/v1/jobs/{id}/retest {"fix": "<revision>"}: 201 the new job. */
void compare_api_retest(struct http_response *res, struct http_request *req);

/*
 * What makes a compare job from job `job_id` and a revision (NULL: none
 * given): compare_retest, rechecks_create.
 */
typedef int (*compare_maker)(long long *out_id, PGconn *conn, long long job_id,
			     const char *revision, long long token_id,
			     struct field_errors *errors);

/*
 * The REST side of a compare_maker on POST /api/v1/jobs/{id}/...: reads
 * the string `field` of the body (400 "field '<field>' must be a string:
 * <meaning>" otherwise), calls `make` for the caller's token, and answers
 * 201 with the new job and its Location, or the maker's error.
 */
void compare_api_make(struct http_response *res, struct http_request *req,
		      const char *field, const char *meaning,
		      compare_maker make);

/* compare_report.c: queues the report of compare job `job`, whose
 * columns `cmp` hold their results, in the outbox.  0 or -1. */
struct store_compare;
int compare_report_queue(PGconn *conn, const struct sched_job *job,
			 const struct store_compare *cmp,
			 const char *base_url);

#endif
