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

/* Stops the thread and frees `n`; NULL does nothing. */
void notify_stop(struct notify *n);

#endif
