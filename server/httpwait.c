#include "httpwait.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

struct httpwait {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* on CLOCK_MONOTONIC */
	pthread_t thread;
	struct httpwait_entry *head; /* the held requests, unordered */
	unsigned held, held_max;
	unsigned long long woken; /* resumed by a wake, not by time */
	bool stopping;
};

unsigned long long httpwait_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 +
	       (unsigned long long)ts.tv_nsec / 1000000;
}

static void unlink_entry(struct httpwait *waits, struct httpwait_entry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		waits->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
	e->held = false;
	waits->held--;
}

/*
 * Unlinks the held requests due by `now_ms` (all with ULLONG_MAX) and,
 * when `tag` is not NULL, those of tag `tag` or of none, with the lock
 * held, and returns them chained by `next` for resume_taken(); *earliest
 * is the earliest due time left, or 0 when none is held.
 */
static struct httpwait_entry *take_due(struct httpwait *waits,
				       unsigned long long now_ms,
				       const char *tag,
				       unsigned long long *earliest)
{
	struct httpwait_entry *e = waits->head, *next, *taken = NULL;

	*earliest = 0;
	for (; e != NULL; e = next) {
		next = e->next;
		if (e->due_ms <= now_ms ||
		    (tag != NULL &&
		     (e->tag[0] == '\0' || strcmp(e->tag, tag) == 0))) {
			unlink_entry(waits, e);
			e->next = taken;
			taken = e;
		} else if (*earliest == 0 || e->due_ms < *earliest) {
			*earliest = e->due_ms;
		}
	}
	return taken;
}

/*
 * Resumes the requests take_due() unlinked, without the lock, as
 * libmicrohttpd takes locks of its own.  Their suspend came first (it was
 * made with the lock held, when they were linked), and a suspended
 * connection stays until resumed, so each entry is still there; once
 * resumed it may go, so its `next` is read before.
 */
static void resume_taken(struct httpwait_entry *e)
{
	while (e != NULL) {
		struct httpwait_entry *next = e->next;

		MHD_resume_connection(e->connection);
		e = next;
	}
}

static void *timer_main(void *arg)
{
	struct httpwait *waits = arg;
	unsigned long long next;

	pthread_mutex_lock(&waits->lock);
	while (!waits->stopping) {
		struct httpwait_entry *taken =
		    take_due(waits, httpwait_now_ms(), NULL, &next);
		struct timespec until;

		if (taken != NULL) {
			pthread_mutex_unlock(&waits->lock);
			resume_taken(taken);
			pthread_mutex_lock(&waits->lock);
			continue;
		}
		if (next == 0) {
			pthread_cond_wait(&waits->changed, &waits->lock);
			continue;
		}
		until.tv_sec = (time_t)(next / 1000);
		until.tv_nsec = (long)(next % 1000) * 1000000;
		pthread_cond_timedwait(&waits->changed, &waits->lock, &until);
	}
	{
		struct httpwait_entry *taken =
		    take_due(waits, ~0ULL, NULL, &next);

		pthread_mutex_unlock(&waits->lock);
		resume_taken(taken);
	}
	return NULL;
}

int httpwait_start(struct httpwait **out, unsigned held_max)
{
	struct httpwait *waits = calloc(1, sizeof(*waits));
	pthread_condattr_t attr;

	*out = NULL;
	if (waits == NULL)
		return -1;
	waits->held_max = held_max;
	pthread_mutex_init(&waits->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&waits->changed, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&waits->thread, NULL, timer_main, waits) != 0) {
		log_error("cannot start the thread of waiting requests");
		pthread_cond_destroy(&waits->changed);
		pthread_mutex_destroy(&waits->lock);
		free(waits);
		return -1;
	}
	*out = waits;
	return 0;
}

bool httpwait_hold(struct httpwait *waits, struct httpwait_entry *entry,
		   struct MHD_Connection *connection, unsigned ms,
		   const char *tag)
{
	bool held = false;

	pthread_mutex_lock(&waits->lock);
	if (!waits->stopping && waits->held < waits->held_max &&
	    !entry->held) {
		entry->connection = connection;
		entry->due_ms = httpwait_now_ms() + ms;
		snprintf(entry->tag, sizeof(entry->tag), "%s",
			 tag != NULL ? tag : "");
		entry->prev = NULL;
		entry->next = waits->head;
		if (waits->head != NULL)
			waits->head->prev = entry;
		waits->head = entry;
		entry->held = true;
		waits->held++;
		MHD_suspend_connection(connection);
		pthread_cond_signal(&waits->changed);
		held = true;
	}
	pthread_mutex_unlock(&waits->lock);
	return held;
}

/* Resumes the held requests due at `now_ms` or of `tag`; how many. */
static unsigned wake(struct httpwait *waits, unsigned long long now_ms,
		     const char *tag)
{
	struct httpwait_entry *taken, *e;
	unsigned long long next;
	unsigned count = 0;

	if (waits == NULL)
		return 0;
	pthread_mutex_lock(&waits->lock);
	taken = take_due(waits, now_ms, tag, &next);
	for (e = taken; e != NULL; e = e->next)
		count++;
	waits->woken += count;
	pthread_mutex_unlock(&waits->lock);
	resume_taken(taken);
	return count;
}

void httpwait_wake(struct httpwait *waits)
{
	wake(waits, ~0ULL, NULL);
}

unsigned httpwait_wake_tag(struct httpwait *waits, const char *tag)
{
	return wake(waits, 0, tag);
}

unsigned long long httpwait_woken(struct httpwait *waits, unsigned *held)
{
	unsigned long long woken;

	pthread_mutex_lock(&waits->lock);
	woken = waits->woken;
	*held = waits->held;
	pthread_mutex_unlock(&waits->lock);
	return woken;
}

void httpwait_forget(struct httpwait *waits, struct httpwait_entry *entry)
{
	/* Only a connection closed while held (at a stop) takes the lock:
	 * libmicrohttpd may call this with a lock of its own held. */
	if (waits == NULL || !atomic_load(&entry->held))
		return;
	pthread_mutex_lock(&waits->lock);
	if (atomic_load(&entry->held))
		unlink_entry(waits, entry);
	pthread_mutex_unlock(&waits->lock);
}

void httpwait_stop(struct httpwait *waits)
{
	if (waits == NULL)
		return;
	pthread_mutex_lock(&waits->lock);
	waits->stopping = true;
	pthread_cond_signal(&waits->changed);
	pthread_mutex_unlock(&waits->lock);
	pthread_join(waits->thread, NULL);
}

void httpwait_free(struct httpwait *waits)
{
	if (waits == NULL)
		return;
	pthread_cond_destroy(&waits->changed);
	pthread_mutex_destroy(&waits->lock);
	free(waits);
}
