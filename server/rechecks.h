/*
 * Re-checks of a regression on a newer head of its branch (issue 13): a
 * compare job (compare.h) of the culprit's parent, the culprit and the
 * branch's head, made by hand (POST /api/v1/jobs/{id}/recheck) or on the
 * testcase's schedule (recheck_interval_s).  When it ends, lib/recheck.h
 * judges the head "still regression", "fixed" or "inconclusive"; the
 * outcome is added to the regression's job ("still regression on main
 * 1a2b3c4d5e6f" in its API answer and page) and mailed as a reply in the
 * thread of the regression's report.
 */
#ifndef STATBISECT_RECHECKS_H
#define STATBISECT_RECHECKS_H

#include <jansson.h>
#include <libpq-fe.h>

#include "fields.h"
#include "http.h"
#include "scheduler.h"

/*
 * Creates the re-check of regression `job_id` on `head` (a revision; NULL
 * or "": the revision the job was submitted with as its bad end, such as
 * its branch, resolved anew) as token `token_id`; the compare job's id
 * into *out_id.  Refused (JOBS_REFUSED with the error in `errors`) when
 * there is no such job (404), it is not a finished regression with a
 * culprit (409), or the head is unknown or is the culprit (422); as
 * jobs_create otherwise.
 */
int rechecks_create(long long *out_id, PGconn *conn, long long job_id,
		    const char *head, long long token_id,
		    struct field_errors *errors);

/* POST /api/v1/jobs/{id}/recheck {"head"?: revision}: 201 the re-check's
 * compare job. */
void rechecks_api_create(struct http_response *res, struct http_request *req);

/* PUT /api/v1/testcases/{name}/recheck {"interval_s": N, or 0 or null
 * for none} (role admin): how often the testcase's regressions are
 * re-checked on their branch's head. */
void rechecks_api_schedule(struct http_response *res,
			   struct http_request *req);

/*
 * The compare step's hook when compare job `job` has ended (in its
 * transaction): 0 when it is no re-check; 1 when it is one, its outcome
 * stored and its reply queued (the compare job mails nothing else); -1
 * on a database error.
 */
int rechecks_finish(PGconn *conn, const struct sched_job *job);

/* Adds "rechecks" (store_rechecks_json) to the job `out` shows.  0 or
 * -1. */
int rechecks_json_add(PGconn *conn, json_t *out, long long job_id);

/* Starts the re-checks the testcases' schedules have due; called by the
 * watcher's thread on its tick. */
void rechecks_schedule(PGconn *conn);

#endif
