#include "notify.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "db.h"
#include "log.h"

/* How long a broken connection waits before it is opened again. */
#define NOTIFY_RECONNECT_MS 1000
/* How long one wait lasts before the thread looks at its stop flag. */
#define NOTIFY_WAIT_MS 5000

struct notify {
	enum store_channel channel;
	/* notify_start's: wakes after (re)connecting and on notifications */
	void (*wake)(void *arg);
	const struct notify_handlers *handlers; /* or notify_start_notes' */
	void *arg;
	pthread_t thread;
	int stop_pipe[2]; /* written to by notify_stop */
};

/* Sleeps `ms`, or less when a stop is asked for; whether it was. */
static bool pause_or_stop(struct notify *n, int ms)
{
	struct pollfd fd = {.fd = n->stop_pipe[0], .events = POLLIN};

	return poll(&fd, 1, ms) > 0;
}

static bool stop_asked(struct notify *n)
{
	return pause_or_stop(n, 0);
}

static void *notify_main(void *arg)
{
	struct notify *n = arg;
	bool listening = false;

	while (!stop_asked(n)) {
		PGconn *conn = db_conn();
		int rc;

		if (!listening) {
			if (conn == NULL ||
			    store_notify_listen(conn, n->channel) !=
				STORE_OK) {
				if (pause_or_stop(n, NOTIFY_RECONNECT_MS))
					break;
				continue;
			}
			listening = true;
			/* What was notified while nobody listened. */
			if (n->handlers != NULL)
				n->handlers->listening(n->arg);
			else
				n->wake(n->arg);
		}
		rc = store_notify_wait(
		    conn, n->stop_pipe[0], NOTIFY_WAIT_MS,
		    n->handlers != NULL ? n->handlers->note : NULL, n->arg);
		if (rc > 0 && n->handlers == NULL) {
			n->wake(n->arg);
		} else if (rc < 0) {
			listening = false;
			if (n->handlers != NULL)
				n->handlers->lost(n->arg);
			db_disconnect();
		}
	}
	if (listening && n->handlers != NULL)
		n->handlers->lost(n->arg);
	db_disconnect();
	return NULL;
}

static struct notify *start(enum store_channel channel,
			    void (*wake)(void *arg),
			    const struct notify_handlers *handlers, void *arg)
{
	struct notify *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->channel = channel;
	n->wake = wake;
	n->handlers = handlers;
	n->arg = arg;
	if (pipe2(n->stop_pipe, O_CLOEXEC) < 0) {
		log_error("notify: cannot make a pipe");
		free(n);
		return NULL;
	}
	if (pthread_create(&n->thread, NULL, notify_main, n) != 0) {
		log_error("notify: cannot start the listening thread");
		close(n->stop_pipe[0]);
		close(n->stop_pipe[1]);
		free(n);
		return NULL;
	}
	return n;
}

struct notify *notify_start(enum store_channel channel,
			    void (*wake)(void *arg), void *arg)
{
	return start(channel, wake, NULL, arg);
}

struct notify *notify_start_notes(enum store_channel channel,
				  const struct notify_handlers *handlers,
				  void *arg)
{
	return start(channel, NULL, handlers, arg);
}

void notify_stop(struct notify *n)
{
	if (n == NULL)
		return;
	if (write(n->stop_pipe[1], "x", 1) < 0)
		log_warn("notify: cannot signal the thread to stop");
	pthread_join(n->thread, NULL);
	close(n->stop_pipe[0]);
	close(n->stop_pipe[1]);
	free(n);
}
