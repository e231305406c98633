/* Builds the report of a finished job from the database and queues it in
 * the outbox, inside the caller's transaction. */
#ifndef STATBISECT_REPORTJOB_H
#define STATBISECT_REPORTJOB_H

#include <libpq-fe.h>

#include "scheduler.h"

/*
 * Renders the RFC 5322 report of culprit `which` of `job` (whose engine
 * result is final; for a job without culprits, the report on the range)
 * with lib/report_build.h and inserts it into the outbox.  `base_url` is where
 * people reach the server.  Returns 0 or -1 on a database or rendering
 * error.
 */
/*
 * Queues a short mail of job `job_id` (0: of no job) in the outbox: from
 * the robot to the `count` plain addresses `to`, with `subject`, replying
 * to `in_reply_to` ("<id>", or NULL) with `body`.  The inbox's notes and
 * the re-checks' replies go out so.  Returns 0, or -1 (a rendering or
 * database error, for the caller to log).
 */
int reportjob_queue_mail(PGconn *conn, long long job_id, const char *const *to,
			 size_t count, const char *subject,
			 const char *in_reply_to, const char *body);

int reportjob_queue(PGconn *conn, const struct sched_job *job,
		    const char *base_url, size_t which);

/*
 * DELETE /api/v1/jobs/{id}/keys (submit role): revokes every read key of
 * the job, so the links of its reports no longer open its pages (people
 * with an account still can).  Answers 200 {"job", "revoked": count}, 404
 * for no such job.
 */
struct http_response;
struct http_request;
void reportjob_keys_revoke(struct http_response *res,
			   struct http_request *req);

#endif
