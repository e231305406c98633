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
};

/* LISTENs on `channel` on `conn`, outside any transaction.  STORE_OK or
 * STORE_FAILED. */
int store_notify_listen(PGconn *conn, enum store_channel channel);

/*
 * Waits up to `timeout_ms` for a notification on `conn` (which LISTENs) or
 * for `wake_fd` (-1: none) to become readable, without reading it.
 * Returns 1 when one or more notifications came (all consumed), 0 when
 * none did, or STORE_FAILED when the connection broke.
 */
int store_notify_wait(PGconn *conn, int wake_fd, int timeout_ms);

#endif
