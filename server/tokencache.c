#include "tokencache.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>

#include "jobcache.h"

/* Token j can only be kept in slot (first byte of its digest) % SLOTS. */
#define TOKENCACHE_SLOTS 64

struct slot {
	bool used;
	unsigned char digest[32];
	unsigned long generation;
	struct token_identity who;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[TOKENCACHE_SLOTS];

static struct slot *slot_of(const unsigned char digest[32])
{
	return &slots[digest[0] % TOKENCACHE_SLOTS];
}

bool tokencache_lookup(struct tokencache_ticket *ticket,
		       struct token_identity *out, const char *secret)
{
	struct slot *s;
	bool hit;

	SHA256((const unsigned char *)secret, strlen(secret), ticket->digest);
	ticket->live = jobcache_generation(&ticket->generation);
	s = slot_of(ticket->digest);
	pthread_mutex_lock(&lock);
	hit = ticket->live && s->used && s->generation == ticket->generation &&
	      memcmp(s->digest, ticket->digest, sizeof(s->digest)) == 0;
	if (hit)
		*out = s->who;
	pthread_mutex_unlock(&lock);
	return hit;
}

void tokencache_keep(const struct tokencache_ticket *ticket,
		     const struct token_identity *who)
{
	struct slot *s = slot_of(ticket->digest);
	unsigned long generation;

	if (!ticket->live)
		return;
	pthread_mutex_lock(&lock);
	if (jobcache_generation(&generation) &&
	    generation == ticket->generation) {
		s->used = true;
		memcpy(s->digest, ticket->digest, sizeof(s->digest));
		s->generation = generation;
		s->who = *who;
	}
	pthread_mutex_unlock(&lock);
}

/* Session s can only be kept in slot (first two bytes of its digest) %
 * SESSION_SLOTS. */
#define TOKENCACHE_SESSION_SLOTS 256

struct session_slot {
	bool used;
	unsigned char digest[32];
	unsigned long generation;
	double expires; /* monotonic seconds */
	struct token_session session;
};

static struct session_slot sessions[TOKENCACHE_SESSION_SLOTS];

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct session_slot *session_slot_of(const unsigned char digest[32])
{
	return &sessions[((unsigned)digest[0] << 8 | digest[1]) %
			 TOKENCACHE_SESSION_SLOTS];
}

bool tokencache_session_lookup(struct tokencache_ticket *ticket,
			       struct token_session *out, const char *secret)
{
	struct session_slot *s;
	bool hit;

	SHA256((const unsigned char *)secret, strlen(secret), ticket->digest);
	ticket->live = jobcache_generation(&ticket->generation);
	ticket->at = now_s();
	s = session_slot_of(ticket->digest);
	pthread_mutex_lock(&lock);
	hit = ticket->live && s->used && s->generation == ticket->generation &&
	      ticket->at < s->expires &&
	      memcmp(s->digest, ticket->digest, sizeof(s->digest)) == 0;
	if (hit)
		*out = s->session;
	pthread_mutex_unlock(&lock);
	return hit;
}

void tokencache_session_keep(const struct tokencache_ticket *ticket,
			     const struct token_session *session,
			     double expires_in)
{
	struct session_slot *s = session_slot_of(ticket->digest);
	unsigned long generation;

	if (!ticket->live)
		return;
	pthread_mutex_lock(&lock);
	if (jobcache_generation(&generation) &&
	    generation == ticket->generation) {
		s->used = true;
		memcpy(s->digest, ticket->digest, sizeof(s->digest));
		s->generation = generation;
		/* From the lookup, before the read: never after the end. */
		s->expires = ticket->at + expires_in;
		s->session = *session;
	}
	pthread_mutex_unlock(&lock);
}
