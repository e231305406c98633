#include "reqcount.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct reqcount {
	pthread_mutex_t lock;
	struct http_count *items;
	size_t len, cap;
};

struct reqcount *reqcount_new(void)
{
	struct reqcount *counts = calloc(1, sizeof(*counts));

	if (counts != NULL)
		pthread_mutex_init(&counts->lock, NULL);
	return counts;
}

void reqcount_free(struct reqcount *counts)
{
	if (counts == NULL)
		return;
	pthread_mutex_destroy(&counts->lock);
	free(counts->items);
	free(counts);
}

/* Compares the strings by address: both come from the route table or
 * from literals, so equal labels are the same pointers. */
void reqcount_add(struct reqcount *counts, const char *method,
		  const char *route, unsigned status)
{
	size_t i;

	pthread_mutex_lock(&counts->lock);
	for (i = 0; i < counts->len; i++) {
		const struct http_count *c = &counts->items[i];

		if (c->route == route && c->method == method &&
		    c->status == status)
			break;
	}
	if (i == counts->len && i == counts->cap) {
		size_t cap = counts->cap != 0 ? counts->cap * 2 : 64;
		struct http_count *grown =
		    realloc(counts->items, cap * sizeof(*grown));

		if (grown != NULL) {
			counts->items = grown;
			counts->cap = cap;
		}
	}
	if (i < counts->len) {
		counts->items[i].count++;
	} else if (i < counts->cap) {
		counts->items[i] =
		    (struct http_count){method, route, status, 1};
		counts->len++;
	}
	pthread_mutex_unlock(&counts->lock);
}

int reqcount_snapshot(struct reqcount *counts, struct http_count **out,
		      size_t *count)
{
	pthread_mutex_lock(&counts->lock);
	*count = counts->len;
	*out = malloc((counts->len + 1) * sizeof(**out));
	if (*out != NULL)
		memcpy(*out, counts->items, counts->len * sizeof(**out));
	pthread_mutex_unlock(&counts->lock);
	if (*out == NULL) {
		*count = 0;
		return -1;
	}
	return 0;
}
