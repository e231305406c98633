/*
 * connlimit: counts the server's open HTTP connections, in total and per
 * client address, so that connections past the limits are answered 503
 * rather than served (issue 11: a flood of idle connections from one
 * client must not take the server from everybody else).
 *
 * libmicrohttpd enforces hard limits of its own (it closes a connection
 * past them at once); connlimit's limits are the lower, soft ones: a
 * connection past them is accepted, answered 503 with Retry-After on its
 * first request, and closed.  All functions are thread-safe.
 */
#ifndef STATBISECT_CONNLIMIT_H
#define STATBISECT_CONNLIMIT_H

#include <microhttpd.h>
#include <stdbool.h>
#include <sys/socket.h>

struct connlimit;

/*
 * Makes a counter for at most `total_max` connections in all and
 * `per_address_max` from one address (both >= 1).  Returns 0 and *out,
 * or -ENOMEM / -EINVAL; free with connlimit_free().
 */
int connlimit_new(struct connlimit **out, unsigned total_max,
		  unsigned per_address_max);

/* connlimit_free(NULL) does nothing. */
void connlimit_free(struct connlimit *limits);

/*
 * Counts a new connection from `address` (AF_INET or AF_INET6; another
 * family, or NULL, counts in the total only).  Returns true when it is
 * within both limits; either way it is counted, and the caller calls
 * connlimit_leave() with the same address when it closes.
 */
bool connlimit_enter(struct connlimit *limits, const struct sockaddr *address);

/* Uncounts a connection counted by connlimit_enter(). */
void connlimit_leave(struct connlimit *limits, const struct sockaddr *address);

/* Connections counted now: in total, and from `address`. */
unsigned connlimit_count(struct connlimit *limits,
			 const struct sockaddr *address);

/*
 * The number of connections, at most `wanted`, that the descriptor limit
 * leaves room for, with libmicrohttpd's margin above the soft limits (a
 * quarter and 8 more) and 64 descriptors kept for the database, the
 * mirrors and the log.  Raises the soft descriptor limit to the hard one
 * first.  At least 8.
 */
unsigned connlimit_fit_descriptors(unsigned wanted);

/*
 * libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback, with `cls` the
 * struct connlimit: counts each connection as it opens and closes, and
 * remembers in its socket context whether it was past the limits.
 */
void connlimit_notify(void *cls, struct MHD_Connection *connection,
		      void **socket_context,
		      enum MHD_ConnectionNotificationCode code);

/* Whether `connection` (counted by connlimit_notify) is past the limits. */
bool connlimit_connection_over(struct MHD_Connection *connection);

#endif
