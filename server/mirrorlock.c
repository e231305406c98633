#include "mirrorlock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A mirror's lock, kept while a thread holds it or waits for it. */
struct mirrorlock {
	pthread_mutex_t mutex;
	unsigned users; /* holding or waiting; under table_lock */
	struct mirrorlock *next;
	char name[];
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mirrorlock *table;
/* What a thread gets when there is no memory for a lock of its own. */
static struct mirrorlock shared = {.mutex = PTHREAD_MUTEX_INITIALIZER};

struct mirrorlock *mirrorlock_acquire(const char *name)
{
	struct mirrorlock *lock;
	size_t len = strlen(name);

	pthread_mutex_lock(&table_lock);
	for (lock = table; lock != NULL; lock = lock->next)
		if (strcmp(lock->name, name) == 0)
			break;
	if (lock == NULL) {
		if ((lock = malloc(sizeof(*lock) + len + 1)) == NULL) {
			pthread_mutex_unlock(&table_lock);
			pthread_mutex_lock(&shared.mutex);
			return &shared;
		}
		pthread_mutex_init(&lock->mutex, NULL);
		lock->users = 0;
		memcpy(lock->name, name, len + 1);
		lock->next = table;
		table = lock;
	}
	lock->users++;
	pthread_mutex_unlock(&table_lock);
	pthread_mutex_lock(&lock->mutex);
	return lock;
}

void mirrorlock_release(struct mirrorlock *lock)
{
	struct mirrorlock **link;

	if (lock == NULL)
		return;
	pthread_mutex_unlock(&lock->mutex);
	if (lock == &shared)
		return;
	pthread_mutex_lock(&table_lock);
	if (--lock->users == 0) {
		for (link = &table; *link != lock; link = &(*link)->next)
			;
		*link = lock->next;
		pthread_mutex_destroy(&lock->mutex);
		free(lock);
	}
	pthread_mutex_unlock(&table_lock);
}
