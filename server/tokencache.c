#include "tokencache.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>

#include "jobcache.h"

/* Token j can only be kept in slot (first byte of its digest) % SLOTS. */
#define TOKENCACHE_SLOTS 64

/* What a slot was kept for: the secret's digest, in which generation of
 * the job cache. */
struct key {
	bool used;
	unsigned char digest[32];
	unsigned long generation;
};

struct slot {
	struct key key;
	struct token_identity who;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[TOKENCACHE_SLOTS];

static struct slot *slot_of(const unsigned char digest[32])
{
	return &slots[digest[0] % TOKENCACHE_SLOTS];
}

/* A lookup of `secret` begins: its digest and the generation now. */
static void ticket_start(struct tokencache_ticket *ticket, const char *secret)
{
	SHA256((const unsigned char *)secret, strlen(secret), ticket->digest);
	ticket->live = jobcache_generation(&ticket->generation);
}

/* Whether `key` holds `ticket`'s secret of its generation (lock held). */
static bool key_hit(const struct key *key,
		    const struct tokencache_ticket *ticket)
{
	return ticket->live && key->used &&
	       key->generation == ticket->generation &&
	       memcmp(key->digest, ticket->digest, sizeof(key->digest)) == 0;
}

/* Marks `key` as `ticket`'s unless everything was forgotten since its
 * lookup; false then (lock held). */
static bool key_take(struct key *key, const struct tokencache_ticket *ticket)
{
	unsigned long generation;

	if (!ticket->live || !jobcache_generation(&generation) ||
	    generation != ticket->generation)
		return false;
	key->used = true;
	memcpy(key->digest, ticket->digest, sizeof(key->digest));
	key->generation = generation;
	return true;
}

bool tokencache_lookup(struct tokencache_ticket *ticket,
		       struct token_identity *out, const char *secret)
{
	struct slot *s;
	bool hit;

	ticket_start(ticket, secret);
	s = slot_of(ticket->digest);
	pthread_mutex_lock(&lock);
	hit = key_hit(&s->key, ticket);
	if (hit)
		*out = s->who;
	pthread_mutex_unlock(&lock);
	return hit;
}

void tokencache_keep(const struct tokencache_ticket *ticket,
		     const struct token_identity *who)
{
	struct slot *s = slot_of(ticket->digest);

	pthread_mutex_lock(&lock);
	if (key_take(&s->key, ticket))
		s->who = *who;
	pthread_mutex_unlock(&lock);
}

/* Session s can only be kept in slot (first two bytes of its digest) %
 * SESSION_SLOTS. */
#define TOKENCACHE_SESSION_SLOTS 256

struct session_slot {
	struct key key;
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

	ticket_start(ticket, secret);
	ticket->at = now_s();
	s = session_slot_of(ticket->digest);
	pthread_mutex_lock(&lock);
	hit = key_hit(&s->key, ticket) && ticket->at < s->expires;
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

	pthread_mutex_lock(&lock);
	if (key_take(&s->key, ticket)) {
		/* From the lookup, before the read: never after the end. */
		s->expires = ticket->at + expires_in;
		s->session = *session;
	}
	pthread_mutex_unlock(&lock);
}
