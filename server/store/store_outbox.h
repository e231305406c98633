/*
 * The outbox: the reports a verdict queues and the mailer delivers.  The
 * only SQL on the outbox table.  Every function runs on the caller's
 * connection (inside its transaction when it has one) and returns
 * STORE_OK (0), STORE_NOT_FOUND where it says, or STORE_FAILED after
 * logging a database error (store.h).
 */
#ifndef STATBISECT_STORE_OUTBOX_H
#define STATBISECT_STORE_OUTBOX_H

#include <libpq-fe.h>
#include <stddef.h>

#include "store.h"

/*
 * Queues the report `message` (a whole RFC 5322 message) with `subject`
 * for job `job_id` (0: a mail of no job, such as the inbox's note on a
 * series it could not apply), to the `count` addresses of `recipients`.
 */
int store_outbox_insert(PGconn *conn, long long job_id,
			const char *const *recipients, size_t count,
			const char *subject, const char *message);

/* A report due for delivery. */
struct store_outbox_item {
	long long id;
	char *recipients; /* JSON list of addresses */
	char *message;
	long long attempts;
};

void store_outbox_item_clear(struct store_outbox_item *item);

/*
 * Locks the oldest report that is neither sent nor given up, has someone
 * to tell, and whose next attempt is due (FOR UPDATE SKIP LOCKED: another
 * mailer's is skipped), into *out.  Run inside a transaction.  STORE_NOT_FOUND
 * when none is due.
 */
int store_outbox_next(struct store_outbox_item *out, PGconn *conn);

/* Marks report `id` sent now. */
int store_outbox_sent(PGconn *conn, long long id);

/*
 * Records a failed attempt at report `id` with `error`: the next attempt
 * waits 5 s, 10 s, 20 s ... up to `retry_max_seconds`; a report older
 * than `give_up_seconds` is given up.
 */
int store_outbox_failed(PGconn *conn, long long id, const char *error,
			unsigned retry_max_seconds, unsigned give_up_seconds);

#endif
