/*
 * The store's notification channels (issue 14): LISTEN on a connection of
 * its own and wait for NOTIFY.  The notifications themselves come from
 * triggers (sql/100_notify.sql), in the transaction that made the change,
 * so a listener hears of a queued task or an outbox row only once it is
 * committed, whichever server committed it.
 */
#ifndef STATBISECT_STORE_NOTIFY_H
#define STATBISECT_STORE_NOTIFY_H

#include <libpq-fe.h>

#include "store.h"

enum store_channel {
	/* A task became claimable (inserted or queued again); the payload
	 * is its job's group. */
	STORE_CHANNEL_TASKS,
	/* A report or note entered the mail outbox. */
	STORE_CHANNEL_OUTBOX,
	/* What GET /api/v1/jobs/{id} answers changed
	 * (sql/170_job_notify.sql); the payload is the job's id, or empty
	 * when any job's answer may have changed.  STORE_NOTE_LIST comes
	 * besides the job's id when which jobs a list selects may have
	 * changed (sql/180_job_list_notify.sql). */
	STORE_CHANNEL_JOBS,
};

/* The payload on STORE_CHANNEL_JOBS of a job added, removed or moved
 * between the lists' filters. */
#define STORE_NOTE_LIST "list"

/* Called with the payload of each notification a wait consumes. */
typedef void store_notify_each(const char *payload, void *arg);

/* LISTENs on `channel` on `conn`, outside any transaction.  STORE_OK or
 * STORE_FAILED. */
int store_notify_listen(PGconn *conn, enum store_channel channel);

/*
 * Waits up to `timeout_ms` for a notification on `conn` (which LISTENs) or
 * for `wake_fd` (-1: none) to become readable, without reading it.
 * Returns 1 when one or more notifications came (all consumed, each
 * passed to `each(payload, arg)` unless `each` is NULL), 0 when none did,
 * or STORE_FAILED when the connection broke.
 */
int store_notify_wait(PGconn *conn, int wake_fd, int timeout_ms,
		      store_notify_each *each, void *arg);

#endif
