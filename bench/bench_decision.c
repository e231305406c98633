/*
 * bench_decision: how long one scheduler decision takes, that is one
 * bisect_step() call, on a 10,000-commit range with merges (the
 * simulator's merges shape, bench/sim/dag.h).  The engine is fed Gaussian
 * runs of a planted 2-sd regression until the endpoints and 8 tested
 * commits have runs (the middle of a bisection), and the same call is
 * timed 200 times with CLOCK_MONOTONIC; then on to the verdict, whose
 * call (replaying the whole search, the confirmation and the follow-ups'
 * checks for a second change) is timed the same way.
 *
 * Prints `decision_10000_commits_us: <median>` and
 * `decision_10000_commits_p95_us: <p95>`, and the same with `final_` for
 * the verdict's call.  The issue asks for a decision in under a
 * millisecond: the exit status is 1 when either median is not.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisect.h"

/* The Makefile links the benchmarks with lib/ only, so the simulator's
 * range generator is compiled in here. */
#include "sim/dag.c"

#define COMMITS 10000
#define TESTED 8
#define CALLS 200
#define STEPS_MAX 10000
#define LIMIT_US 1000.0
#define SD 10.0

struct series {
	double *values;
	size_t count, capacity;
};

static void die(const char *what)
{
	fprintf(stderr, "bench_decision: %s\n", what);
	exit(2);
}

static void add_run(struct series *s, double v)
{
	if (s->count == s->capacity) {
		s->capacity = s->capacity ? 2 * s->capacity : 16;
		s->values = realloc(s->values, s->capacity * sizeof(double));
		if (s->values == NULL)
			die("out of memory");
	}
	s->values[s->count++] = v;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

static void feed(struct bisect_commit *in, struct series *search,
		 struct series *confirm)
{
	size_t i;

	for (i = 0; i < COMMITS; i++) {
		in[i].values = search[i].values;
		in[i].value_count = search[i].count;
		in[i].confirm_values = confirm[i].values;
		in[i].confirm_count = confirm[i].count;
	}
}

/* Commits other than the endpoints that have runs. */
static size_t tested(const struct series *search)
{
	size_t i, n = 0;

	for (i = 1; i + 1 < COMMITS; i++)
		n += search[i].count > 0;
	return n;
}

/* A bisection under way: every commit's runs, and its true level. */
struct job {
	struct series *search, *confirm;
	struct bisect_commit *in;
	double *level;
	gsl_rng *rng;
	size_t runs;
};

/* Makes the runs the engine asks for until `tested` commits besides the
 * endpoints have runs or it gives its verdict. */
static void run_until(struct bisect_result *res, struct job *job,
		      const struct bisect_options *opts, size_t tested_max)
{
	size_t steps, q, k;

	for (steps = 0; tested(job->search) < tested_max; steps++) {
		feed(job->in, job->search, job->confirm);
		if (bisect_step(res, NULL, job->in, COMMITS, opts) < 0)
			die("bisect_step failed");
		if (res->verdict != BISECT_PENDING || steps == STEPS_MAX)
			break;
		for (q = 0; q < res->request_count; q++) {
			const struct bisect_request *r = &res->requests[q];

			if (r->commit >= COMMITS)
				die("request out of range");
			for (k = 0; k < r->runs; k++)
				add_run(r->purpose == BISECT_CONFIRM
					    ? &job->confirm[r->commit]
					    : &job->search[r->commit],
					job->level[r->commit] +
					    gsl_ran_gaussian(job->rng, SD));
			job->runs += r->runs;
		}
	}
	feed(job->in, job->search, job->confirm);
}

/* The same call CALLS times: median and 95th percentile in us. */
static void time_calls(double *median, double *p95, struct bisect_result *res,
		       const struct job *job,
		       const struct bisect_options *opts)
{
	double times[CALLS];
	struct timespec t0, t1;
	size_t i;

	if (bisect_step(res, NULL, job->in, COMMITS, opts) < 0)
		die("bisect_step failed");
	for (i = 0; i < CALLS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (bisect_step(res, NULL, job->in, COMMITS, opts) < 0)
			die("bisect_step failed");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		times[i] = elapsed_us(&t0, &t1);
	}
	qsort(times, CALLS, sizeof(double), compare_double);
	*median = (times[CALLS / 2 - 1] + times[CALLS / 2]) / 2;
	*p95 = times[(size_t)(0.95 * CALLS) - 1];
}

static void print_state(const struct job *job, const struct dag *dag,
			const struct bisect_result *res, const char *prefix)
{
	printf("decision_%sstate: %zu commits, %zu merges, %zu tested, "
	       "%zu runs, verdict %s\n",
	       prefix, (size_t)COMMITS,
	       dag->parent_first[COMMITS] - (COMMITS - 1), tested(job->search),
	       job->runs,
	       res->verdict == BISECT_PENDING
		   ? "pending"
		   : bisect_verdict_name(res->verdict));
}

int main(void)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct series *search = calloc(COMMITS, sizeof(*search));
	struct series *confirm = calloc(COMMITS, sizeof(*confirm));
	struct bisect_commit *in = calloc(COMMITS, sizeof(*in));
	double *level = malloc(COMMITS * sizeof(double));
	struct job job = {search, confirm, in, level, rng, 0};
	struct bisect_options opts;
	struct bisect_result res;
	size_t i, change;
	struct dag dag;
	double median, p95, final, final_p95;

	if (rng == NULL || search == NULL || confirm == NULL || in == NULL ||
	    level == NULL)
		die("out of memory");
	gsl_rng_set(rng, 1);
	if (dag_generate(&dag, DAG_MERGES, COMMITS, rng) < 0 ||
	    dag_index(&dag) < 0)
		die("out of memory");
	change = 1 + gsl_rng_uniform_int(rng, COMMITS - 1);
	for (i = 0; i < COMMITS; i++) {
		in[i].parents = dag_parents_of(&dag, i);
		in[i].parent_count = dag_parent_count(&dag, i);
		level[i] =
		    1000.0 - (dag_is_ancestor(&dag, change, i) ? 2 * SD : 0);
	}
	bisect_options_init(&opts, true);
	opts.min_change_pct = 0.5;
	opts.runs_max = 1000;
	run_until(&res, &job, &opts, TESTED);
	time_calls(&median, &p95, &res, &job, &opts);
	print_state(&job, &dag, &res, "");
	printf("decision_10000_commits_us: %.1f\n", median);
	printf("decision_10000_commits_p95_us: %.1f\n", p95);
	/* The last call replays the whole search, confirmations and the
	 * follow-ups' checks for a second change included. */
	run_until(&res, &job, &opts, COMMITS);
	time_calls(&final, &final_p95, &res, &job, &opts);
	print_state(&job, &dag, &res, "final_");
	printf("decision_10000_commits_final_us: %.1f\n", final);
	printf("decision_10000_commits_final_p95_us: %.1f\n", final_p95);
	for (i = 0; i < COMMITS; i++) {
		free(search[i].values);
		free(confirm[i].values);
	}
	free(search);
	free(confirm);
	free(in);
	free(level);
	dag_free(&dag);
	gsl_rng_free(rng);
	return median < LIMIT_US && final < LIMIT_US ? 0 : 1;
}
