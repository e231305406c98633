#include "tokencache.h"

#include <pthread.h>
#include <string.h>

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
