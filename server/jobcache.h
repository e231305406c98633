/*
 * jobcache: GET /api/v1/jobs/{id}'s answer kept per job (issue 11), so
 * that clients polling a job do not make the server replay the engine
 * over all its runs and read a dozen tables each time.
 *
 * A kept answer is given only while nothing it was made from can have
 * changed.  Whatever changes a job's answer notifies 'statbisect_jobs'
 * in its transaction (sql/170_job_notify.sql), whichever server or
 * program made the change; this server listens (notify.h) and forgets
 * the job's answer when told.  A notification may name one job, or none
 * (any answer may have changed: all are forgotten); STORE_NOTE_LIST is
 * for listcache.h only.  Nothing is kept or
 * given while the listening connection is down, and reconnecting forgets
 * everything, since notifications sent meanwhile are lost.  A request
 * that may have written (any method but GET and HEAD, but a worker's)
 * forgets its job, or everything, once it is answered (http.c), so that
 * its client reads its own write at once, before the notification has
 * come back.
 *
 * A fill races with changes: the answer is made from a snapshot taken
 * after jobcache_lookup, so jobcache_lookup's ticket records what had
 * been forgotten by then, and jobcache_keep keeps the answer only when
 * nothing has been forgotten since.
 */
#ifndef STATBISECT_JOBCACHE_H
#define STATBISECT_JOBCACHE_H

#include <jansson.h>
#include <stdbool.h>

#include "jobs.h"
#include "notify.h"

/* What jobcache_lookup saw, for jobcache_keep. */
struct jobcache_ticket {
	long long job_id;
	unsigned long generation, epoch;
	bool live;
};

/*
 * The kept answer for job `job_id` as JSON text written with
 * HTTP_JSON_FLAGS (malloc'd), its time brought up to now, or NULL when
 * none is kept: then make it and give it to jobcache_keep with `ticket`.
 */
char *jobcache_lookup(struct jobcache_ticket *ticket, long long job_id);

/* Keeps a copy of `answer`, made with `clock` after `ticket`'s lookup
 * and written as `text` (with HTTP_JSON_FLAGS), unless the job's answer
 * was forgotten since. */
void jobcache_keep(const struct jobcache_ticket *ticket, const json_t *answer,
		   const char *text, const struct jobs_clock *clock);

/*
 * Whether the cache keeps anything now (its listener listens), and in
 * *out the count of times everything was forgotten: other caches that
 * forget with it keep what they saw (tokencache.h).
 */
bool jobcache_generation(unsigned long *out);

/* Forgets job `job_id`'s answer (a request that may have written it). */
void jobcache_forget(long long job_id);

/* Forgets every answer (a request that may have written any). */
void jobcache_forget_all(void);

/* The handlers of the listener on STORE_CHANNEL_JOBS (arg unused). */
extern const struct notify_handlers jobcache_listener;

/* What the cache did since the server started (GET /metrics). */
struct jobcache_stats {
	unsigned long long hits;   /* lookups answered from the cache */
	unsigned long long misses; /* lookups that found nothing usable */
	unsigned long long kept;   /* answers kept */
};

void jobcache_stats(struct jobcache_stats *out);

/* Frees what is kept (at exit). */
void jobcache_clear(void);

#endif
