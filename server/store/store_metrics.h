/*
 * What GET /metrics reads from the database (server/metrics.c): the
 * queue and the workers of each group, the jobs by state, the runs, the
 * durations of ended jobs, and the outbox.
 */
#ifndef STATBISECT_STORE_METRICS_H
#define STATBISECT_STORE_METRICS_H

#include <libpq-fe.h>
#include <stddef.h>

/* The most bucket bounds store_metrics_read counts jobs under. */
#define STORE_METRICS_BUCKETS_MAX 16

/* A group: its name (a worker's group or a job's), the tasks queued for
 * its jobs, and its workers seen within the machine timeout. */
struct store_metrics_group {
	char *name;
	long long tasks_queued;
	long long workers_alive;
};

/* How many jobs are in `state`. */
struct store_metrics_state {
	char *state;
	long long jobs;
};

struct store_metrics {
	struct store_metrics_group *groups; /* by name */
	size_t group_count;
	struct store_metrics_state *states; /* the states jobs are in */
	size_t state_count;
	long long runs_total; /* runs stored, all jobs */
	/* Jobs that ended done or failed: how many, their durations (from
	 * submission to the end, seconds) in all, and how many took at most
	 * each bound given (cumulative, as a Prometheus histogram). */
	long long duration_count;
	double duration_sum;
	long long duration_le[STORE_METRICS_BUCKETS_MAX];
	/* Outbox rows waiting for (another) attempt, given up, and sent. */
	long long outbox_pending, outbox_failed, outbox_sent;
};

/*
 * Reads the figures into *out: workers alive are those seen in the last
 * `machine_timeout_s` seconds; jobs' durations are counted under the
 * `bound_count` (at most STORE_METRICS_BUCKETS_MAX) ascending `bounds`.
 * 0, or STORE_FAILED (*out is then empty).  store_metrics_clear frees it.
 */
int store_metrics_read(struct store_metrics *out, PGconn *conn,
		       unsigned machine_timeout_s, const double *bounds,
		       size_t bound_count);

/* Frees what *m holds and empties it. */
void store_metrics_clear(struct store_metrics *m);

#endif
