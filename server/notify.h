/*
 * notify: a thread that LISTENs on one of the store's channels
 * (store/store_notify.h) on a database connection of its own and calls
 * back whenever a notification comes (issue 14: claims and the mailer
 * wake at once on new work rather than at their next poll).
 *
 * Notifications are a hint, never the only way work is found: the
 * callback also runs after every (re)connection, since whatever was
 * notified while nobody listened is lost, and waiters keep a slow poll of
 * their own.
 */
#ifndef STATBISECT_NOTIFY_H
#define STATBISECT_NOTIFY_H

#include "store/store_notify.h"

struct notify;

/*
 * Starts listening on `channel`; `wake(arg)` runs on the notify thread.
 * Returns NULL (logged) when the thread cannot start; a database that is
 * down is not an error (the thread connects when it can).
 */
struct notify *notify_start(enum store_channel channel,
			    void (*wake)(void *arg), void *arg);

/* What a listener that needs each notification is told, on the notify
 * thread. */
struct notify_handlers {
	/* It listens, after a (re)connection: whatever was notified
	 * before is lost. */
	void (*listening)(void *arg);
	/* It does not listen any more (the connection broke). */
	void (*lost)(void *arg);
	/* One notification, with its payload. */
	store_notify_each *note;
};

/* Like notify_start, calling `handlers` (which must outlive the thread). */
struct notify *notify_start_notes(enum store_channel channel,
				  const struct notify_handlers *handlers,
				  void *arg);

/* Stops the thread and frees `n`; NULL does nothing. */
void notify_stop(struct notify *n);

#endif
