/*
 * Webhooks (issue 15): the webhooks table (what a testcase or a job asks
 * for) and webhook_deliveries (the POSTs a finished job queued, which the
 * mailer thread delivers).  The only SQL on them.  Every function runs on
 * the caller's connection, inside its transaction when it has one, and
 * returns STORE_OK, STORE_NOT_FOUND where it says, or STORE_FAILED after
 * logging a database error (store.h).  Text in the structs points into
 * `held`, which their _clear frees.
 */
#ifndef STATBISECT_STORE_WEBHOOKS_H
#define STATBISECT_STORE_WEBHOOKS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* Whose a webhook is. */
enum store_webhook_owner {
	STORE_WEBHOOK_TESTCASE,
	STORE_WEBHOOK_JOB,
};

/* A webhook as asked for. */
struct store_webhook {
	const char *source; /* "testcase" or "job" */
	const char *url;    /* as given, with any {sha} */
	const char *format; /* "statbisect" or "github-status" */
	const char *secret; /* NULL: none of its own */
};

struct store_webhook_list {
	struct store_webhook *items;
	size_t count;
	PGresult *held;
};

void store_webhook_list_clear(struct store_webhook_list *list);

/*
 * Gives testcase or job `owner_id` the webhook `url` in `format` signed
 * with `secret` (NULL: none of its own), replacing one it had.
 */
int store_webhooks_set(PGconn *conn, enum store_webhook_owner owner,
		       long long owner_id, const char *url, const char *format,
		       const char *secret);

/* Removes the webhook of testcase or job `owner_id`, if any. */
int store_webhooks_remove(PGconn *conn, enum store_webhook_owner owner,
			  long long owner_id);

/* The webhook of testcase or job `owner_id` into *out (one item at
 * most; none when it has none). */
int store_webhooks_get(struct store_webhook_list *out, PGconn *conn,
		       enum store_webhook_owner owner, long long owner_id);

/*
 * The webhooks job `job_id` has to call now: its own and its testcase's,
 * each only when the job has ended ('done' or 'failed') and no delivery
 * of that source is queued yet.  An empty list otherwise.
 */
int store_webhooks_due(struct store_webhook_list *out, PGconn *conn,
		       long long job_id);

/* Queues the POST of `body` to `url` for job `job_id` (`signature`:
 * the header's value, or NULL). */
int store_webhooks_queue(PGconn *conn, long long job_id, const char *source,
			 const char *format, const char *url, const char *body,
			 const char *signature);

/* A delivery due. */
struct store_webhook_delivery {
	long long id, job_id, attempts;
	const char *format, *url, *body,
	    *signature; /* signature may be NULL */
	PGresult *held;
};

void store_webhook_delivery_clear(struct store_webhook_delivery *delivery);

/* Locks the oldest delivery neither delivered nor given up whose next
 * attempt is due (FOR UPDATE SKIP LOCKED), in a transaction.
 * STORE_NOT_FOUND when none is due. */
int store_webhooks_next(struct store_webhook_delivery *out, PGconn *conn);

/* Marks delivery `id` delivered now, the receiver having said `status`. */
int store_webhooks_delivered(PGconn *conn, long long id, long status);

/*
 * Records a failed attempt at delivery `id`: the receiver's `status` (0:
 * none came) and `error`.  The next attempt waits 5 s, 10 s, 20 s ... at
 * most `retry_max_seconds`; the delivery is given up after `tries_max`
 * attempts, or at once when `give_up`.
 */
int store_webhooks_failed(PGconn *conn, long long id, long status,
			  const char *error, unsigned retry_max_seconds,
			  unsigned tries_max, bool give_up);

/* A delivery as the job's page and API show it. */
struct store_webhook_shown {
	long long id, attempts;
	long last_status; /* 0: none yet */
	const char *source, *format, *url, *state, *last_error;
	const char *created_at, *delivered_at, *next_attempt_at; /* or NULL */
};

struct store_webhook_shown_list {
	struct store_webhook_shown *items;
	size_t count;
	PGresult *held;
};

void store_webhook_shown_list_clear(struct store_webhook_shown_list *list);

/* The deliveries of job `job_id`, oldest first; state is "pending",
 * "retrying", "delivered" or "failed". */
int store_webhooks_deliveries(struct store_webhook_shown_list *out,
			      PGconn *conn, long long job_id);

#endif
