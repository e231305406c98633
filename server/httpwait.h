/*
 * httpwait: requests whose answer may wait (a worker's long-polling
 * claim, issue 14), held by the HTTP layer without holding a thread.
 *
 * libmicrohttpd's pool threads each serve many connections, so a handler
 * that slept would stall every other connection of its thread.  Instead a
 * held request's connection is suspended (MHD_suspend_connection) and
 * resumed by httpwait's timer thread when its time is up, or at once by
 * httpwait_wake(); libmicrohttpd then calls the handler again.  Suspended
 * connections count against the connection limits and do not time out.
 * All functions are thread-safe.
 */
#ifndef STATBISECT_HTTPWAIT_H
#define STATBISECT_HTTPWAIT_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>

/* The longest tag of a held request (a worker group's name). */
#define HTTPWAIT_TAG_MAX 64

/* One held request; lives in the request's context.  Zeroed: not held. */
struct httpwait_entry {
	struct httpwait_entry *prev, *next;
	struct MHD_Connection *connection;
	unsigned long long due_ms;	/* httpwait_now_ms() to resume at */
	atomic_bool held;		/* set and cleared under the lock */
	char tag[HTTPWAIT_TAG_MAX + 1]; /* what wakes it; "": anything */
};

struct httpwait;

/*
 * Starts the timer thread for at most `held_max` held requests at once.
 * Returns 0 and *out, or -1 (logged); stop with httpwait_stop(), then
 * free with httpwait_free().
 */
int httpwait_start(struct httpwait **out, unsigned held_max);

/*
 * Holds the request of `connection` (called from its handler, which then
 * returns without answering) for up to `ms` milliseconds, or until
 * httpwait_wake_tag() names `tag` (NULL or "": any tag; cut to
 * HTTPWAIT_TAG_MAX bytes).  Returns false, holding nothing, when
 * `held_max` requests are held already or the server is stopping: the
 * caller answers at once.
 */
bool httpwait_hold(struct httpwait *waits, struct httpwait_entry *entry,
		   struct MHD_Connection *connection, unsigned ms,
		   const char *tag);

/* Resumes every held request now. */
void httpwait_wake(struct httpwait *waits);

/* Resumes now the held requests of tag `tag`, and those held with none;
 * how many. */
unsigned httpwait_wake_tag(struct httpwait *waits, const char *tag);

/* How many held requests were resumed early by a wake, since the start,
 * and how many are held now (into *held). */
unsigned long long httpwait_woken(struct httpwait *waits, unsigned *held);

/* Drops `entry` if still held (its connection closed). */
void httpwait_forget(struct httpwait *waits, struct httpwait_entry *entry);

/*
 * Resumes every held request, refuses to hold any more, and stops the
 * timer thread; call before MHD_stop_daemon, which may not meet a
 * suspended connection.  NULL does nothing.
 */
void httpwait_stop(struct httpwait *waits);

/* Frees a stopped `waits`, once no connection can reach it; NULL does
 * nothing. */
void httpwait_free(struct httpwait *waits);

/* A monotonic clock in milliseconds. */
unsigned long long httpwait_now_ms(void);

#endif
