/*
 * The scheduler: loads a job's candidates and runs from the database, asks
 * the bisection engine (lib/bisect.h) what to do next, and stores its answer
 * as new tasks or as the verdict with its report.
 */
#ifndef STATBISECT_SCHEDULER_H
#define STATBISECT_SCHEDULER_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "bisect.h"

struct sched_commit {
	long long idx;
	char sha[41];
	char *subject;
	char *author_name;
	char *author_email;
	bool build_failed;
	size_t failed_runs; /* runs that gave no KPI */
};

/* A job as the engine sees it, with what the engine answered. */
struct sched_job {
	long long id;
	char state[16];
	struct bisect_options opts;
	size_t count;
	struct sched_commit *commits;
	struct bisect_commit *input; /* engine input, one per commit */
	double *values;		     /* storage behind the runs' values */
	size_t *seq;		     /* behind input[].seq, confirm_seq */
	size_t *parents;	     /* storage behind input[].parents */
	enum bisect_class *classes;
	struct bisect_result result;
	/* A watcher's bisection (watcher.h): the watched branch its report
	 * names, else "". */
	char watched_branch[256];
};

/*
 * Loads job `job_id` and runs the engine over its runs (read only; the
 * caller may hold the job row locked).  Returns 0, 1 when there is no such
 * job, or -1 on a database error.  Free with sched_job_clear.
 */
int sched_load(struct sched_job *out, PGconn *conn, long long job_id);
void sched_job_clear(struct sched_job *job);

/* The same without runs and without asking the engine: the job's options
 * and candidates (input[] with parents and build failures only). */
int sched_load_shape(struct sched_job *out, PGconn *conn, long long job_id);

struct store_run_kpi; /* store/store_tasks.h */

/*
 * Fills job->input (job->count commits, loaded) with runs[0..n), every
 * run of the job in upload order (store_runs_kpis): each commit's search
 * and confirmation KPIs in that order, and each run's place in it, 1 for
 * the first run of the job (bisect_commit.seq and confirm_seq: a worker
 * uploads a task's runs in the order it made them).  Runs without
 * a KPI are counted in failed_runs and keep their place; runs naming a
 * commit outside the range are ignored.  Allocates job->values and
 * job->seq.  Returns 0, or -1 when out of memory.
 */
int sched_fill_runs(struct sched_job *job, const struct store_run_kpi *runs,
		    size_t n);

/*
 * Moves job `job_id` on after an upload or at creation: when no task of the
 * job is open, stores the engine's requests as tasks or finishes the job
 * with its verdict and report (outbox row).  Must run inside the caller's
 * transaction, which has locked the job row (SELECT ... FOR UPDATE).
 * Returns 0 or -1 on a database error.
 */
int sched_advance(PGconn *conn, long long job_id, const char *base_url);

/*
 * Ends job `job_id`, when it is still queued or running, as failed with
 * `message` (a whole sentence without a final period that names what to
 * fix) and queues the report that says so.  For what no measurement can
 * cure, such as a benchmark repository the worker cannot fetch.  Inside
 * the caller's transaction, like sched_advance.  0 or -1.
 */
int sched_fail(PGconn *conn, long long job_id, const char *message,
	       const char *base_url);

/*
 * A change's 95% interval as the API shows it: [lo, hi], or JSON null when
 * either bound is not finite.  Returns a new reference.
 */
json_t *sched_ci95_json(double lo, double hi);

#endif
