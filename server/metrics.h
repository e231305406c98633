/*
 * GET /metrics: the server's figures in the Prometheus text format
 * (lib/promtext.h), for a read token or anyone when the server runs with
 * --metrics-open (docs/OPERATIONS.md).
 */
#ifndef STATBISECT_METRICS_H
#define STATBISECT_METRICS_H

#include <stddef.h>

#include "http.h"
#include "jobcache.h"
#include "listcache.h"
#include "store/store_metrics.h"

/* The upper bounds (seconds) of the job duration histogram's buckets,
 * ascending; +Inf follows them. */
extern const double metrics_duration_bounds[];
extern const size_t metrics_duration_bound_count;

/* The figures of this server process. */
struct metrics_process {
	const struct http_count *requests; /* HTTP requests answered */
	size_t request_count;
	struct jobcache_stats cache;	 /* what the job cache did */
	struct listcache_stats lists;	 /* what the list cache did */
	unsigned long long claims_woken; /* held claims woken by a task */
	unsigned claims_waiting;	 /* claims held now */
};

/*
 * The exposition text of `db` (the database's figures, durations counted
 * under metrics_duration_bounds) and of `proc`, in *out (malloc'd, the
 * caller frees it).  Pure.  -1 when out of memory.
 */
int metrics_render(char **out, const struct store_metrics *db,
		   const struct metrics_process *proc);

/* The route's handler. */
void metrics_get(struct http_response *res, struct http_request *req);

#endif
