/*
 * Webhooks (issue 15): a testcase or a job may name a URL that gets a
 * JSON POST when the job ends, signed with HMAC-SHA256 (lib/webhook.h
 * makes the bodies and the signature).  Read and checked here for the
 * testcases and jobs resources, queued in the transaction that ends the
 * job, and delivered by the mailer thread (webhooks_deliver_one) with
 * retries and backoff as mail is.  The SQL is store/store_webhooks.c.
 *
 * A request's "webhook" member is null (none; on a PATCH: remove it) or
 * {"url": "http(s)://...", "format": "statbisect" | "github-status",
 * "secret": "..."}; "format" defaults to "statbisect" and "secret" to
 * none of its own (then the server's, STATBISECT_WEBHOOK_SECRET, signs).
 * The secret is write-only: the API shows {"url" (its password masked),
 * "format", "secret_set"}.
 */
#ifndef STATBISECT_WEBHOOKS_H
#define STATBISECT_WEBHOOKS_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "fields.h"
#include "store/store_webhooks.h"

/* A delivery is given up after this many attempts. */
#define WEBHOOKS_TRIES_MAX 10

/* The "webhook" member of a request, as read; strings borrowed. */
struct webhooks_request {
	bool given;			   /* the member was there */
	bool remove;			   /* it was null */
	const char *url, *format, *secret; /* format: never NULL when set */
};

/*
 * Reads the "webhook" member of `body` into *out, adding a 400
 * "invalid_field" error of field "webhook", "webhook.url",
 * "webhook.format" or "webhook.secret" for each part that breaks the
 * rules above (a URL not http(s) with a host, say).  The messages never
 * repeat the URL, which may hold a password.
 */
void webhooks_request_read(struct webhooks_request *out, json_t *body,
			   struct field_errors *errors);

/*
 * The value rules of a webhook whose parts were read (a form fills
 * url, format and secret itself, with given set): the URL's (when `url`),
 * the format's, NULL becoming "statbisect" (when `format`), and the
 * secret's (when `secret`), adding the errors as webhooks_request_read.
 */
void webhooks_request_check(struct webhooks_request *request, bool url,
			    bool format, bool secret,
			    struct field_errors *errors);

/*
 * Stores what `request` asks for testcase or job `owner_id` (nothing
 * when it was not given), in the caller's transaction.  When
 * `keep_secret`, a webhook given without a secret keeps the one stored
 * (a PATCH that changes the URL).  Returns 0 or -1 (the database).
 */
int webhooks_save(PGconn *conn, enum store_webhook_owner owner,
		  long long owner_id, const struct webhooks_request *request,
		  bool keep_secret);

/* The webhook of testcase or job `owner_id` as the API shows it (new
 * reference: null when none); NULL when the database failed. */
json_t *webhooks_json(PGconn *conn, enum store_webhook_owner owner,
		      long long owner_id);

/*
 * Queues the POSTs job `job_id` owes now that it has ended (its own
 * webhook's and its testcase's, each once), with bodies of the job as
 * GET /api/v1/jobs/{id} shows it and links under `base_url`.  Nothing
 * when the job has not ended or has queued them already.  Run in the
 * transaction that ends the job.  Returns 0 or -1.
 */
int webhooks_job_ended(PGconn *conn, long long job_id, const char *base_url);

/* The deliveries of job `job_id` as its JSON's "webhooks" array (new
 * reference; an empty array when the database cannot say). */
json_t *webhooks_deliveries_json(PGconn *conn, long long job_id);

/* The job page's sentence of each delivery of `job` (as jobs_json shows
 * it): "Webhook (job): delivered (HTTP 200) at ...", "... failed after 3
 * tries: HTTP 500: ...".  A new array. */
json_t *webhooks_page_lines(json_t *job);

/*
 * Makes one due delivery (webhooks_send.c): POSTs it with libcurl and
 * marks it delivered on a 2xx answer, else records the failure for a
 * retry (a 4xx other than 408 and 429 is given up at once).  `stop`
 * aborts a transfer in progress.  Returns 1 when one was handled, 0
 * when none was due, -1 on a database error.
 */
int webhooks_deliver_one(PGconn *conn, atomic_bool *stop);

#endif
