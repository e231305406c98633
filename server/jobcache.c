#include "jobcache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"

/* Slots of the cache; job j's answer can only be kept in slot
 * j % JOBCACHE_SLOTS, so a busy slot holds the last job asked for. */
#define JOBCACHE_SLOTS 512

struct slot {
	long long job_id; /* whose answer is kept; 0: none */
	/* Bumped by each notification of a job of this slot, kept or not. */
	unsigned long epoch;
	unsigned long kept_generation, kept_epoch;
	/* The answer written, when time does not change it, else as JSON. */
	json_t *answer;
	char *text;
	struct jobs_clock clock;
	double kept_at; /* monotonic seconds */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool live;		 /* the listener listens */
static unsigned long generation; /* bumped: every answer forgotten */
static struct slot slots[JOBCACHE_SLOTS];
static struct jobcache_stats stats;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct slot *slot_of(long long job_id)
{
	return &slots[(unsigned long long)job_id % JOBCACHE_SLOTS];
}

char *jobcache_lookup(struct jobcache_ticket *ticket, long long job_id)
{
	struct slot *s = slot_of(job_id);
	struct jobs_clock clock;
	json_t *answer = NULL;
	char *text = NULL;
	double kept_at = 0;
	bool hit = false;

	pthread_mutex_lock(&lock);
	ticket->job_id = job_id;
	ticket->generation = generation;
	ticket->epoch = s->epoch;
	ticket->live = live;
	if (live && (s->answer != NULL || s->text != NULL) &&
	    s->job_id == job_id && s->kept_generation == generation &&
	    s->kept_epoch == s->epoch) {
		hit = true;
		if (s->text != NULL)
			text = strdup(s->text);
		else
			answer = json_deep_copy(s->answer);
		clock = s->clock;
		kept_at = s->kept_at;
	}
	if (hit)
		stats.hits++;
	else
		stats.misses++;
	pthread_mutex_unlock(&lock);
	if (answer != NULL) {
		jobs_json_times(answer, &clock, now_s() - kept_at);
		text = json_dumps(answer, HTTP_JSON_FLAGS);
		json_decref(answer);
	}
	return text;
}

void jobcache_keep(const struct jobcache_ticket *ticket, const json_t *answer,
		   const char *written, const struct jobs_clock *clock)
{
	struct slot *s = slot_of(ticket->job_id);
	json_t *copy = NULL, *old = NULL;
	char *text = NULL, *old_text = NULL;

	if (!ticket->live)
		return;
	/* An answer that time does not change is kept written; another
	 * as JSON, to bring its time up to date. */
	if (!clock->ticking && !clock->estimated)
		text = strdup(written);
	else
		copy = json_deep_copy(answer);
	if (copy == NULL && text == NULL)
		return;
	pthread_mutex_lock(&lock);
	if (live && generation == ticket->generation &&
	    s->epoch == ticket->epoch) {
		old = s->answer;
		old_text = s->text;
		s->job_id = ticket->job_id;
		s->answer = copy;
		s->text = text;
		s->clock = *clock;
		s->kept_at = now_s();
		s->kept_generation = generation;
		s->kept_epoch = s->epoch;
		stats.kept++;
		copy = NULL;
		text = NULL;
	}
	pthread_mutex_unlock(&lock);
	json_decref(copy);
	json_decref(old);
	free(text);
	free(old_text);
}

void jobcache_forget_all(void)
{
	pthread_mutex_lock(&lock);
	generation++;
	pthread_mutex_unlock(&lock);
}

/* The listener listens, or not any more: either way what was kept may
 * have missed a notification. */
static void set_live(bool now_live)
{
	pthread_mutex_lock(&lock);
	live = now_live;
	generation++;
	pthread_mutex_unlock(&lock);
}

static void listening(void *arg)
{
	(void)arg;
	set_live(true);
}

static void lost(void *arg)
{
	(void)arg;
	set_live(false);
}

bool jobcache_generation(unsigned long *out)
{
	bool now_live;

	pthread_mutex_lock(&lock);
	*out = generation;
	now_live = live;
	pthread_mutex_unlock(&lock);
	return now_live;
}

void jobcache_forget(long long job_id)
{
	pthread_mutex_lock(&lock);
	slot_of(job_id)->epoch++;
	pthread_mutex_unlock(&lock);
}

/* A notification: the job named, or every job for anything else. */
static void note(const char *payload, void *arg)
{
	char *end;
	long long job_id;

	(void)arg;
	/* Lists only: the job's own id comes with it. */
	if (strcmp(payload, STORE_NOTE_LIST) == 0)
		return;
	errno = 0;
	job_id = strtoll(payload, &end, 10);
	if (payload[0] < '0' || payload[0] > '9' || *end != '\0' ||
	    errno != 0 || job_id <= 0) {
		jobcache_forget_all();
		return;
	}
	jobcache_forget(job_id);
}

const struct notify_handlers jobcache_listener = {
    .listening = listening, .lost = lost, .note = note};

void jobcache_stats(struct jobcache_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}

void jobcache_clear(void)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < JOBCACHE_SLOTS; i++) {
		json_decref(slots[i].answer);
		free(slots[i].text);
		slots[i].answer = NULL;
		slots[i].text = NULL;
		slots[i].job_id = 0;
	}
	live = false;
	generation++;
	pthread_mutex_unlock(&lock);
}
