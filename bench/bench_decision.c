/*
 * bench_decision: how long one scheduler decision takes, that is one
 * bisect_step() call, on a 10,000-commit range with merges (the
 * simulator's merges shape, bench/sim/dag.h) in the middle of a
 * bisection: the engine is fed Gaussian runs of a planted 2-sd regression
 * until the endpoints and 8 tested commits have runs, then the same call
 * is timed 200 times with CLOCK_MONOTONIC.
 *
 * Prints `decision_10000_commits_us: <median>` and
 * `decision_10000_commits_p95_us: <p95>`.  The issue asks for a decision
 * in under a millisecond: the exit status is 1 when the median is not.
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

int main(void)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct series *search = calloc(COMMITS, sizeof(*search));
	struct series *confirm = calloc(COMMITS, sizeof(*confirm));
	struct bisect_commit *in = calloc(COMMITS, sizeof(*in));
	double *level = malloc(COMMITS * sizeof(double));
	double times[CALLS];
	struct bisect_options opts;
	struct bisect_result res;
	struct timespec t0, t1;
	size_t i, q, k, change, steps, runs = 0;
	struct dag dag;
	double median, p95;

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
	for (steps = 0; tested(search) < TESTED; steps++) {
		feed(in, search, confirm);
		if (bisect_step(&res, NULL, in, COMMITS, &opts) < 0)
			die("bisect_step failed");
		if (res.verdict != BISECT_PENDING || steps == STEPS_MAX)
			break;
		for (q = 0; q < res.request_count; q++) {
			const struct bisect_request *r = &res.requests[q];

			if (r->commit >= COMMITS)
				die("request out of range");
			for (k = 0; k < r->runs; k++)
				add_run(r->purpose == BISECT_CONFIRM
					    ? &confirm[r->commit]
					    : &search[r->commit],
					level[r->commit] +
					    gsl_ran_gaussian(rng, SD));
			runs += r->runs;
		}
	}
	feed(in, search, confirm);
	if (bisect_step(&res, NULL, in, COMMITS, &opts) < 0)
		die("bisect_step failed");
	for (i = 0; i < CALLS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (bisect_step(&res, NULL, in, COMMITS, &opts) < 0)
			die("bisect_step failed");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		times[i] = elapsed_us(&t0, &t1);
	}
	qsort(times, CALLS, sizeof(double), compare_double);
	median = (times[CALLS / 2 - 1] + times[CALLS / 2]) / 2;
	p95 = times[(size_t)(0.95 * CALLS) - 1];
	printf(
	    "decision_state: %zu commits, %zu merges, %zu tested, %zu runs, "
	    "verdict %s\n",
	    (size_t)COMMITS, dag.parent_first[COMMITS] - (COMMITS - 1),
	    tested(search), runs,
	    res.verdict == BISECT_PENDING ? "pending"
					  : bisect_verdict_name(res.verdict));
	printf("decision_10000_commits_us: %.1f\n", median);
	printf("decision_10000_commits_p95_us: %.1f\n", p95);
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
	return median < LIMIT_US ? 0 : 1;
}
