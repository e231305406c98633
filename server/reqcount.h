/*
 * The request counts of GET /metrics: how many requests each route (by
 * its pattern, never the raw path, so that the counts stay few) answered
 * with each status.  Thread-safe; http.c counts every answered request.
 */
#ifndef STATBISECT_REQCOUNT_H
#define STATBISECT_REQCOUNT_H

#include <stddef.h>

#include "http.h"

struct reqcount;

/* A new, empty set of counts; NULL when out of memory. */
struct reqcount *reqcount_new(void);

/* Frees the counts; NULL is a no-op. */
void reqcount_free(struct reqcount *counts);

/*
 * Counts one request of `method` answered `status` on `route` (NULL: no
 * route).  Both strings must outlive the counts (the route table's, or
 * literals).  A count that cannot be added for want of memory is lost.
 */
void reqcount_add(struct reqcount *counts, const char *method,
		  const char *route, unsigned status);

/* A copy of the counts, as http_counts (http.h) hands it out. */
int reqcount_snapshot(struct reqcount *counts, struct http_count **out,
		      size_t *count);

#endif
