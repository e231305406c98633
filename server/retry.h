/*
 * Retrying one commit of a job (issue 15): more runs of it, or a fresh
 * build, without running the whole job again.  A build that failed for a
 * reason outside the commit (a full disk, a flaky download) hides the
 * exact culprit among its neighbours; a commit the engine passed with few
 * runs may deserve more.  The job runs again until the engine, with the
 * new runs, decides anew; a finished job gets its verdict (and report)
 * again.  The REST route and the job page's form both call retry_commit.
 */
#ifndef STATBISECT_RETRY_H
#define STATBISECT_RETRY_H

#include <jansson.h>
#include <libpq-fe.h>

#include "fields.h"
#include "http.h"

/*
 * Retries commit `sha` (its full SHA or an unambiguous prefix of at least
 * 4 hex digits) of job `job_id` as `body` asks: {"runs": N (1 to the
 * job's runs_max; default its runs_min), "rebuild": bool (default
 * false)}.  Queues one task of those runs (built again when `rebuild`)
 * and reopens the job; the job as GET answers it into *out.  Refused: no
 * such job or commit (404), bad fields or commit (400, "invalid_commit";
 * "ambiguous_commit" for a prefix of several),
 * a job that has not started, has failed or was cancelled, or a compare
 * job (409).  Returns 0, JOBS_REFUSED or JOBS_DB_FAILED (jobs.h).
 */
int retry_commit(json_t **out, PGconn *conn, long long job_id, const char *sha,
		 json_t *body, struct field_errors *errors);

/* POST /api/v1/jobs/{id}/commits/{sha}/retry: 202 with the job. */
void retry_api(struct http_response *res, struct http_request *req);

/* POST /jobs/{id}/commits/{sha}/retry (the job page's form): back to
 * the job page. */
void retry_web(struct http_response *res, struct http_request *req);

#endif
