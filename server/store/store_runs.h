/*
 * Reads of the runs of a job beyond the engine's KPI (store_runs_kpis in
 * store_tasks.h): another metric's values, and the names of the metrics
 * the runs reported, for the job page's plots (issue 15).  On the
 * caller's connection; STORE_OK or STORE_FAILED (store.h).
 */
#ifndef STATBISECT_STORE_RUNS_H
#define STATBISECT_STORE_RUNS_H

#include <libpq-fe.h>
#include <stddef.h>

#include "store.h"
#include "store_outcomes.h"

/* One run's value of a metric. */
struct store_run_value {
	long long commit_index;
	double value;
};

/*
 * The values of metric `name` in the counted runs of job `job_id` that
 * reported it as a number, in upload order, into *out (malloc'd, free())
 * and their number into *count.
 */
int store_runs_metric(struct store_run_value **out, size_t *count,
		      PGconn *conn, long long job_id, const char *name);

/* The names of the metrics the counted runs of job `job_id` reported, in
 * order, each once, into *out (store_names_clear()). */
int store_runs_metric_names(struct store_names *out, PGconn *conn,
			    long long job_id);

#endif
