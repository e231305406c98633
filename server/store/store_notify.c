#include "store_notify.h"

#include <errno.h>
#include <poll.h>

#include "../db.h"
#include "log.h"

int store_notify_listen(PGconn *conn, enum store_channel channel)
{
	static const char *const listen_sql[] = {
	    [STORE_CHANNEL_TASKS] = "LISTEN statbisect_tasks",
	    [STORE_CHANNEL_OUTBOX] = "LISTEN statbisect_outbox",
	    [STORE_CHANNEL_JOBS] = "LISTEN statbisect_jobs",
	};
	PGresult *r = db_exec(conn, listen_sql[channel], 0, NULL);

	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

/* Consumes what the server sent; the number of notifications among it,
 * or -1 when the connection broke. */
static int consume(PGconn *conn, store_notify_each *each, void *arg)
{
	PGnotify *note;
	int count = 0;

	if (PQconsumeInput(conn) == 0) {
		log_warn("database: listening connection lost: %s",
			 PQerrorMessage(conn));
		return -1;
	}
	while ((note = PQnotifies(conn)) != NULL) {
		count++;
		if (each != NULL)
			each(note->extra, arg);
		PQfreemem(note);
	}
	return count;
}

int store_notify_wait(PGconn *conn, int wake_fd, int timeout_ms,
		      store_notify_each *each, void *arg)
{
	struct pollfd fds[2] = {{.fd = PQsocket(conn), .events = POLLIN},
				{.fd = wake_fd, .events = POLLIN}};
	int count, rc;

	if (fds[0].fd < 0 || (count = consume(conn, each, arg)) < 0)
		return STORE_FAILED;
	if (count > 0)
		return 1;
	rc = poll(fds, 2, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : STORE_FAILED;
	if (rc == 0 || !(fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	count = consume(conn, each, arg);
	if (count < 0)
		return STORE_FAILED;
	return count > 0 ? 1 : 0;
}
