/*
 * Unit tests of the bisection engine (lib/bisect.c).
 *
 * The engine is driven as the server drives it: call bisect_step, add the
 * runs it asks for, call it again, until it gives a verdict.  The runs come
 * from a seeded gsl_rng (Gaussian noise around a planted true mean per
 * commit), so every test sees the same data on every machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "bisect.h"

#define BASE_MEAN 1000.0
/* Safety net: no bisection of <= 64 commits needs this many calls. */
#define MAX_STEPS 1000

/* A simulated job: true means, noise, build failures and the runs so far. */
struct sim {
	size_t count;
	double *means; /* true mean of each commit */
	double sd;     /* absolute standard deviation of one run */
	bool *build_failed;
	double *values; /* count rows of `capacity` runs */
	size_t capacity;
	size_t *value_count;
	struct bisect_commit *input;
	enum bisect_class *classes;
	gsl_rng *rng;
	size_t steps;	   /* bisect_step calls until the verdict */
	size_t first_runs; /* runs of the first call's requests */
	struct bisect_result result;
};

/* Sims still alive, freed by the teardown when an assertion ends a test
 * early (cmocka leaves the test function with longjmp). */
#define MAX_LIVE_SIMS 64
static struct sim *live_sims[MAX_LIVE_SIMS];

static struct sim *sim_new(size_t count, double sd, size_t runs_max,
			   unsigned long seed)
{
	struct sim *s = calloc(1, sizeof(*s));
	size_t i;

	assert_non_null(s);
	for (i = 0; i < MAX_LIVE_SIMS && live_sims[i] != NULL; i++)
		;
	assert_true(i < MAX_LIVE_SIMS);
	live_sims[i] = s;
	s->count = count;
	s->sd = sd;
	s->capacity = runs_max;
	s->means = calloc(count, sizeof(*s->means));
	s->build_failed = calloc(count, sizeof(*s->build_failed));
	s->values = calloc(count * runs_max, sizeof(*s->values));
	s->value_count = calloc(count, sizeof(*s->value_count));
	s->input = calloc(count, sizeof(*s->input));
	s->classes = calloc(count, sizeof(*s->classes));
	s->rng = gsl_rng_alloc(gsl_rng_mt19937);
	assert_non_null(s->means);
	assert_non_null(s->build_failed);
	assert_non_null(s->values);
	assert_non_null(s->value_count);
	assert_non_null(s->input);
	assert_non_null(s->classes);
	assert_non_null(s->rng);
	gsl_rng_set(s->rng, seed);
	for (i = 0; i < count; i++)
		s->means[i] = BASE_MEAN;
	return s;
}

static void sim_free(struct sim *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < MAX_LIVE_SIMS; i++)
		if (live_sims[i] == s)
			live_sims[i] = NULL;
	free(s->means);
	free(s->build_failed);
	free(s->values);
	free(s->value_count);
	free(s->input);
	free(s->classes);
	gsl_rng_free(s->rng);
	free(s);
}

/* Plants a step: commits from `culprit` on have mean BASE * (1 + pct/100). */
static void sim_step_at(struct sim *s, size_t culprit, double pct)
{
	size_t i;

	for (i = culprit; i < s->count; i++)
		s->means[i] = BASE_MEAN * (1.0 + pct / 100.0);
}

static int free_live_sims(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < MAX_LIVE_SIMS; i++)
		sim_free(live_sims[i]);
	return 0;
}

static void sim_refresh_input(struct sim *s)
{
	size_t i;

	for (i = 0; i < s->count; i++) {
		s->input[i].values = s->values + i * s->capacity;
		s->input[i].value_count = s->value_count[i];
		s->input[i].build_failed = s->build_failed[i];
	}
}

/* Adds `runs` runs of `commit`: its true mean plus Gaussian noise. */
static void sim_add_runs(struct sim *s, size_t commit, size_t runs)
{
	double *row = s->values + commit * s->capacity;
	size_t k;

	assert_true(s->value_count[commit] + runs <= s->capacity);
	for (k = 0; k < runs; k++) {
		double noise = 0.0;

		if (s->sd > 0)
			noise = gsl_ran_gaussian(s->rng, s->sd);
		row[s->value_count[commit]++] = s->means[commit] + noise;
	}
}

/*
 * Runs the job to its verdict.  Checks on every call what the server relies
 * on: a pending result asks for 1 or 2 runs of valid, buildable commits, no
 * commit is asked for more than runs_max runs in total, and a verdict asks
 * for nothing.
 */
static const struct bisect_result *sim_run(struct sim *s,
					   const struct bisect_options *opts)
{
	struct bisect_result *res = &s->result;
	size_t i;

	for (s->steps = 1; s->steps <= MAX_STEPS; s->steps++) {
		sim_refresh_input(s);
		assert_int_equal(
		    bisect_step(res, s->classes, s->input, s->count, opts), 0);
		if (res->verdict != BISECT_PENDING) {
			assert_int_equal(res->request_count, 0);
			return res;
		}
		assert_in_range(res->request_count, 1, BISECT_MAX_REQUESTS);
		for (i = 0; i < res->request_count; i++) {
			const struct bisect_request *r = &res->requests[i];

			assert_in_range(r->commit, 0, s->count - 1);
			assert_false(s->build_failed[r->commit]);
			assert_true(r->runs > 0);
			assert_true(s->value_count[r->commit] + r->runs <=
				    opts->runs_max);
			if (s->steps == 1)
				s->first_runs += r->runs;
			sim_add_runs(s, r->commit, r->runs);
		}
	}
	fail_msg("no verdict after %d calls of bisect_step", MAX_STEPS);
	return NULL;
}

static double plain_mean(const struct sim *s, size_t i)
{
	double sum = 0.0;
	size_t k;

	for (k = 0; k < s->value_count[i]; k++)
		sum += s->values[i * s->capacity + k];
	return sum / (double)s->value_count[i];
}

/*
 * Checks a verdict that names `culprit` against the path a noise-free
 * binary search takes: the commits on that path, and only those, are
 * tested; each is GOOD_LIKE below the culprit and BAD_LIKE from it on;
 * build failures are SKIPPED and get no runs.  Each tested commit got a
 * multiple of runs_min runs, at most runs_max.
 */
static void assert_culprit_path(const struct sim *s,
				const struct bisect_options *opts,
				size_t culprit)
{
	bool *on_path = calloc(s->count, sizeof(*on_path));
	size_t lo = 0, hi = s->count - 1, i;

	assert_non_null(on_path);
	on_path[lo] = on_path[hi] = true;
	while (hi - lo > 1) {
		size_t middle = lo + (hi - lo) / 2, mid = hi, step;

		for (step = 0; step < hi - lo && mid == hi; step++) {
			if (middle + step < hi &&
			    !s->build_failed[middle + step])
				mid = middle + step;
			else if (middle >= step && middle - step > lo &&
				 !s->build_failed[middle - step])
				mid = middle - step;
		}
		if (mid == hi)
			break;
		on_path[mid] = true;
		if (mid >= culprit)
			hi = mid;
		else
			lo = mid;
	}
	assert_int_equal(s->result.culprit, hi);
	assert_int_equal(s->result.parent, lo);
	assert_int_equal(s->result.lo, lo);
	assert_int_equal(s->result.hi, hi);
	for (i = 0; i < s->count; i++) {
		enum bisect_class want;

		if (s->build_failed[i])
			want = BISECT_SKIPPED;
		else if (!on_path[i])
			want = BISECT_UNTESTED;
		else
			want =
			    i < culprit ? BISECT_GOOD_LIKE : BISECT_BAD_LIKE;
		assert_int_equal(s->classes[i], want);
		if (on_path[i]) {
			assert_in_range(s->value_count[i], opts->runs_min,
					opts->runs_max);
			assert_int_equal(s->value_count[i] % opts->runs_min,
					 0);
		} else {
			assert_int_equal(s->value_count[i], 0);
		}
	}
	free(on_path);
}

static void assert_no_runs_beyond_max(const struct sim *s,
				      const struct bisect_options *opts)
{
	size_t i;

	for (i = 0; i < s->count; i++)
		assert_true(s->value_count[i] <= opts->runs_max);
}

/* ---------------------------------------------------------------------- */

static void test_bisect__options_init_gives_documented_defaults(void **state)
{
	struct bisect_options opts;

	(void)state;
	bisect_options_init(&opts, true);
	assert_int_equal(opts.runs_min, 5);
	assert_int_equal(opts.runs_max, 30);
	assert_true(opts.min_change_pct == 1.0);
	assert_true(opts.alpha == 0.01);
	assert_true(opts.higher_is_better);
	bisect_options_init(&opts, false);
	assert_false(opts.higher_is_better);
}

static void
test_bisect__first_step_asks_runs_min_of_both_endpoints_only(void **state)
{
	struct bisect_commit commits[8];
	enum bisect_class classes[8];
	struct bisect_options opts;
	struct bisect_result res;
	size_t i;

	(void)state;
	memset(commits, 0, sizeof(commits));
	bisect_options_init(&opts, true);
	opts.runs_min = 7;
	assert_int_equal(bisect_step(&res, classes, commits, 8, &opts), 0);
	assert_int_equal(res.verdict, BISECT_PENDING);
	assert_int_equal(res.request_count, 2);
	assert_int_equal(res.requests[0].commit, 0);
	assert_int_equal(res.requests[0].runs, 7);
	assert_int_equal(res.requests[1].commit, 7);
	assert_int_equal(res.requests[1].runs, 7);
	assert_int_equal(res.lo, 0);
	assert_int_equal(res.hi, 7);
	assert_false(res.culprit_ambiguous);
	assert_null(res.reason);
	for (i = 0; i < 8; i++)
		assert_int_equal(classes[i], BISECT_UNTESTED);
}

static void
test_bisect__endpoint_with_runs_min_is_not_asked_again(void **state)
{
	const double good[5] = {10, 11, 10, 11, 10};
	const double bad[2] = {20, 21};
	struct bisect_commit commits[3] = {
	    {good, 5, false}, {NULL, 0, false}, {bad, 2, false}};
	struct bisect_options opts;
	struct bisect_result res;

	(void)state;
	bisect_options_init(&opts, true);
	assert_int_equal(bisect_step(&res, NULL, commits, 3, &opts), 0);
	assert_int_equal(res.verdict, BISECT_PENDING);
	assert_int_equal(res.request_count, 1);
	assert_int_equal(res.requests[0].commit, 2);
	assert_int_equal(res.requests[0].runs, 3);
}

static void
test_bisect__higher_is_better_drop_finds_exact_culprit(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 20240101);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 37, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 37);
	assert_int_equal(res->parent, 36);
	assert_false(res->culprit_ambiguous);
	assert_null(res->reason);
	assert_int_equal(s->first_runs, 10);
	/* change_pct is culprit vs parent, in percent of the parent's mean */
	assert_float_equal(res->change_pct,
			   100.0 * (plain_mean(s, 37) - plain_mean(s, 36)) /
			       plain_mean(s, 36),
			   1e-9);
	assert_in_range((long)floor(res->change_pct), -7, -4);
	assert_true(res->p_value < opts.alpha);
	assert_culprit_path(s, &opts, 37);
	sim_free(s);
}

static void test_bisect__lower_is_better_rise_is_regression(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 77);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, false);
	sim_step_at(s, 21, +5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 21);
	assert_int_equal(res->parent, 20);
	assert_false(res->culprit_ambiguous);
	assert_true(res->change_pct > 0);
	assert_culprit_path(s, &opts, 21);
	sim_free(s);
}

static void test_bisect__lower_is_better_drop_is_improvement(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 78);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, false);
	sim_step_at(s, 50, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_IMPROVEMENT);
	assert_int_equal(res->culprit, 50);
	assert_int_equal(res->parent, 49);
	assert_true(res->change_pct < 0);
	assert_culprit_path(s, &opts, 50);
	sim_free(s);
}

static void test_bisect__higher_is_better_rise_is_improvement(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 79);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 5, +5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_IMPROVEMENT);
	assert_int_equal(res->culprit, 5);
	assert_int_equal(res->parent, 4);
	assert_true(res->change_pct > 0);
	assert_culprit_path(s, &opts, 5);
	sim_free(s);
}

static void test_bisect__culprit_at_index_1_is_found(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(33, 10.0, 30, 11);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 1, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 1);
	assert_int_equal(res->parent, 0);
	assert_false(res->culprit_ambiguous);
	assert_culprit_path(s, &opts, 1);
	sim_free(s);
}

static void test_bisect__culprit_at_last_index_is_found(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(33, 10.0, 30, 12);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 32, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 32);
	assert_int_equal(res->parent, 31);
	assert_false(res->culprit_ambiguous);
	assert_culprit_path(s, &opts, 32);
	sim_free(s);
}

static void test_bisect__two_candidates_blame_the_bad_endpoint(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(2, 10.0, 30, 13);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 1, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 1);
	assert_int_equal(res->parent, 0);
	assert_int_equal(res->lo, 0);
	assert_int_equal(res->hi, 1);
	assert_int_equal(s->steps, 2);
	assert_int_equal(s->value_count[0], 5);
	assert_int_equal(s->value_count[1], 5);
	assert_int_equal(s->classes[0], BISECT_GOOD_LIKE);
	assert_int_equal(s->classes[1], BISECT_BAD_LIKE);
	sim_free(s);
}

static void test_bisect__flat_range_is_no_change(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 4242);
	const struct bisect_result *res;
	size_t i;

	(void)state;
	bisect_options_init(&opts, true);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_NO_CHANGE);
	assert_null(res->reason);
	assert_false(res->culprit_ambiguous);
	assert_int_equal(res->lo, 0);
	assert_int_equal(res->hi, 63);
	assert_int_equal(res->culprit, 0);
	assert_int_equal(res->parent, 0);
	assert_true(fabs(res->change_pct) < opts.min_change_pct);
	assert_float_equal(res->change_pct,
			   100.0 * (plain_mean(s, 63) - plain_mean(s, 0)) /
			       plain_mean(s, 0),
			   1e-9);
	/* only the endpoints are measured, equally often */
	assert_int_equal(s->value_count[0], s->value_count[63]);
	assert_in_range(s->value_count[0], 5, 30);
	for (i = 1; i < 63; i++) {
		assert_int_equal(s->value_count[i], 0);
		assert_int_equal(s->classes[i], BISECT_UNTESTED);
	}
	sim_free(s);
}

/* A flat range under several seeds: never a culprit, never past runs_max. */
static void test_bisect__flat_range_never_names_a_culprit(void **state)
{
	unsigned long seed;
	size_t no_change = 0;

	(void)state;
	for (seed = 1; seed <= 20; seed++) {
		struct bisect_options opts;
		struct sim *s = sim_new(16, 10.0, 30, seed);
		const struct bisect_result *res;

		bisect_options_init(&opts, true);
		res = sim_run(s, &opts);
		assert_true(res->verdict == BISECT_NO_CHANGE ||
			    res->verdict == BISECT_INCONCLUSIVE);
		no_change += res->verdict == BISECT_NO_CHANGE;
		assert_no_runs_beyond_max(s, &opts);
		sim_free(s);
	}
	assert_int_equal(no_change, 20);
}

/* A real shift of 0.3% measured precisely (sd 0.1%) is below the 1% that
 * matters: no change, with the measured shift reported. */
static void
test_bisect__real_change_below_min_change_is_no_change(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(32, 1.0, 30, 606);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 10, -0.3);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_NO_CHANGE);
	assert_int_equal(s->steps, 2);
	assert_int_equal(s->value_count[0], 5);
	assert_int_equal(s->value_count[31], 5);
	assert_in_range((long)floor(res->change_pct * 10), -4, -3);
	assert_true(res->p_value < opts.alpha); /* real, but too small */
	sim_free(s);
}

static void
test_bisect__equal_constants_are_no_change_at_runs_min(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(10, 0.0, 30, 1);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_NO_CHANGE);
	assert_int_equal(s->steps, 2);
	assert_int_equal(s->value_count[0], 5);
	assert_int_equal(s->value_count[9], 5);
	assert_true(res->change_pct == 0.0);
	assert_true(res->p_value == 1.0);
	assert_null(res->reason);
	sim_free(s);
}

/*
 * A KPI that is exactly 0 on every run (a count of errors, say) on both
 * endpoints: nothing changed and there is no noise, so the answer is
 * NO_CHANGE after runs_min runs each, as for any other constant.
 */
static void test_bisect__equal_zero_constants_are_no_change(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(10, 0.0, 30, 1);
	const struct bisect_result *res;
	size_t i;

	(void)state;
	for (i = 0; i < 10; i++)
		s->means[i] = 0.0;
	bisect_options_init(&opts, false);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_NO_CHANGE);
	assert_int_equal(s->steps, 2);
	assert_int_equal(s->value_count[0], 5);
	assert_int_equal(s->value_count[9], 5);
	sim_free(s);
}

static void
test_bisect__different_constant_endpoints_find_culprit(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(20, 0.0, 30, 1);
	const struct bisect_result *res;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 13, -10.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 13);
	assert_int_equal(res->parent, 12);
	assert_float_equal(res->change_pct, -10.0, 1e-9);
	assert_true(res->p_value == 0.0);
	assert_culprit_path(s, &opts, 13);
	/* with no noise every tested commit is decided at runs_min */
	assert_int_equal(s->value_count[0], 5);
	assert_int_equal(s->value_count[13], 5);
	sim_free(s);
}

/*
 * A 0.1% shift under 5% noise, min_change_pct 1%: the engine cannot tell
 * and must stop at runs_max (23, not a multiple of runs_min, to check the
 * cap) without blaming anyone.
 */
static void
test_bisect__tiny_change_in_big_noise_names_no_culprit(void **state)
{
	unsigned long seed;
	size_t inconclusive = 0;

	(void)state;
	for (seed = 100; seed < 120; seed++) {
		struct bisect_options opts;
		struct sim *s = sim_new(32, 50.0, 23, seed);
		const struct bisect_result *res;
		size_t i;

		bisect_options_init(&opts, true);
		opts.runs_max = 23;
		sim_step_at(s, 16, -0.1);
		res = sim_run(s, &opts);
		assert_true(res->verdict == BISECT_NO_CHANGE ||
			    res->verdict == BISECT_INCONCLUSIVE);
		assert_int_equal(res->culprit, 0);
		assert_int_equal(res->parent, 0);
		assert_false(res->culprit_ambiguous);
		assert_no_runs_beyond_max(s, &opts);
		for (i = 1; i < 31; i++)
			assert_int_equal(s->value_count[i], 0);
		if (res->verdict == BISECT_INCONCLUSIVE) {
			inconclusive++;
			assert_int_equal(s->value_count[0], 23);
			assert_int_equal(s->value_count[31], 23);
			assert_string_equal(res->reason,
					    "the endpoints differ too little "
					    "for the noise, even at runs_max");
		}
		sim_free(s);
	}
	/* 5% noise never shows equivalence within 1% in 23 runs */
	assert_int_equal(inconclusive, 20);
}

static void test_bisect__build_failures_are_never_requested(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 31);
	const struct bisect_result *res;
	static const size_t failed[] = {31, 32, 47, 3, 60};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(failed) / sizeof(failed[0]); i++)
		s->build_failed[failed[i]] = true;
	bisect_options_init(&opts, true);
	sim_step_at(s, 40, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_int_equal(res->culprit, 40);
	assert_int_equal(res->parent, 39);
	assert_false(res->culprit_ambiguous);
	/* sim_run checked no request named a failed commit; none has runs */
	for (i = 0; i < sizeof(failed) / sizeof(failed[0]); i++) {
		assert_int_equal(s->value_count[failed[i]], 0);
		assert_int_equal(s->classes[failed[i]], BISECT_SKIPPED);
	}
	assert_culprit_path(s, &opts, 40);
	sim_free(s);
}

static void test_bisect__all_failed_before_culprit_is_ambiguous(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(16, 10.0, 30, 32);
	const struct bisect_result *res;

	(void)state;
	/* the change is in 5, 6, 7 or 8; 5..7 cannot be built */
	s->build_failed[5] = s->build_failed[6] = s->build_failed[7] = true;
	bisect_options_init(&opts, true);
	sim_step_at(s, 6, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_true(res->culprit_ambiguous);
	assert_int_equal(res->culprit, 8);
	assert_int_equal(res->parent, 4);
	assert_int_equal(res->lo, 4);
	assert_int_equal(res->hi, 8);
	assert_false(s->build_failed[res->culprit]);
	assert_false(s->build_failed[res->parent]);
	assert_int_equal(s->classes[4], BISECT_GOOD_LIKE);
	assert_int_equal(s->classes[8], BISECT_BAD_LIKE);
	assert_int_equal(s->classes[5], BISECT_SKIPPED);
	assert_int_equal(s->classes[6], BISECT_SKIPPED);
	assert_int_equal(s->classes[7], BISECT_SKIPPED);
	assert_culprit_path(s, &opts, 6);
	sim_free(s);
}

static void test_bisect__failed_culprit_gives_next_buildable_one(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(16, 10.0, 30, 33);
	const struct bisect_result *res;

	(void)state;
	s->build_failed[9] = true;
	bisect_options_init(&opts, true);
	sim_step_at(s, 9, -5.0);
	res = sim_run(s, &opts);
	assert_int_equal(res->verdict, BISECT_REGRESSION);
	assert_true(res->culprit_ambiguous);
	assert_int_equal(res->culprit, 10);
	assert_int_equal(res->parent, 8);
	assert_culprit_path(s, &opts, 9);
	sim_free(s);
}

static void test_bisect__failed_good_endpoint_is_inconclusive(void **state)
{
	struct bisect_commit commits[4];
	enum bisect_class classes[4];
	struct bisect_options opts;
	struct bisect_result res;

	(void)state;
	memset(commits, 0, sizeof(commits));
	commits[0].build_failed = true;
	bisect_options_init(&opts, true);
	assert_int_equal(bisect_step(&res, classes, commits, 4, &opts), 0);
	assert_int_equal(res.verdict, BISECT_INCONCLUSIVE);
	assert_int_equal(res.request_count, 0);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "the good commit does not build");
	assert_int_equal(classes[0], BISECT_SKIPPED);
	assert_int_equal(classes[1], BISECT_UNTESTED);
	assert_int_equal(classes[3], BISECT_UNTESTED);
}

static void test_bisect__failed_bad_endpoint_is_inconclusive(void **state)
{
	const double good[5] = {10, 11, 10, 11, 10};
	struct bisect_commit commits[4];
	struct bisect_options opts;
	struct bisect_result res;

	(void)state;
	memset(commits, 0, sizeof(commits));
	commits[0].values = good;
	commits[0].value_count = 5;
	commits[3].build_failed = true;
	bisect_options_init(&opts, true);
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), 0);
	assert_int_equal(res.verdict, BISECT_INCONCLUSIVE);
	assert_int_equal(res.request_count, 0);
	assert_non_null(res.reason);
	assert_string_equal(res.reason, "the bad commit does not build");
}

static void test_bisect__invalid_options_return_minus_one(void **state)
{
	struct bisect_commit commits[4];
	struct bisect_options opts, good_opts;
	struct bisect_result res;

	(void)state;
	memset(commits, 0, sizeof(commits));
	bisect_options_init(&good_opts, true);
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &good_opts), 0);

	opts = good_opts;
	opts.runs_min = 1;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);
	opts.runs_min = 0;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);

	opts = good_opts;
	opts.runs_max = opts.runs_min - 1;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);
	opts.runs_max = opts.runs_min; /* equal is allowed */
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), 0);

	opts = good_opts;
	opts.alpha = 0.0;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);
	opts.alpha = 1.0;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);
	opts.alpha = -0.5;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);
	opts.alpha = NAN;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);

	opts = good_opts;
	opts.min_change_pct = 0.0;
	assert_int_equal(bisect_step(&res, NULL, commits, 4, &opts), -1);

	assert_int_equal(bisect_step(&res, NULL, commits, 1, &good_opts), -1);
	assert_int_equal(bisect_step(&res, NULL, commits, 0, &good_opts), -1);
	assert_int_equal(bisect_step(&res, NULL, commits, 2, &good_opts), 0);
}

static void assert_same_result(const struct bisect_result *a,
			       const struct bisect_result *b)
{
	size_t i;

	assert_int_equal(a->verdict, b->verdict);
	assert_int_equal(a->request_count, b->request_count);
	for (i = 0; i < a->request_count; i++) {
		assert_int_equal(a->requests[i].commit, b->requests[i].commit);
		assert_int_equal(a->requests[i].runs, b->requests[i].runs);
	}
	assert_int_equal(a->lo, b->lo);
	assert_int_equal(a->hi, b->hi);
	assert_int_equal(a->culprit, b->culprit);
	assert_int_equal(a->parent, b->parent);
	assert_int_equal(a->culprit_ambiguous, b->culprit_ambiguous);
	assert_memory_equal(&a->change_pct, &b->change_pct, sizeof(double));
	assert_memory_equal(&a->p_value, &b->p_value, sizeof(double));
	assert_ptr_equal(a->reason, b->reason);
}

/* The same input gives the same answer, mid-way and at the verdict. */
static void test_bisect__same_input_gives_same_result(void **state)
{
	struct bisect_options opts;
	struct sim *s = sim_new(64, 10.0, 30, 5150);
	struct bisect_result first, second;
	enum bisect_class classes_again[64];
	size_t i, calls = 0;

	(void)state;
	bisect_options_init(&opts, true);
	sim_step_at(s, 29, -5.0);
	/* stop half-way: take the state after three calls */
	for (;;) {
		sim_refresh_input(s);
		memset(&first, 0xa5, sizeof(first));
		assert_int_equal(
		    bisect_step(&first, s->classes, s->input, s->count, &opts),
		    0);
		memset(&second, 0x5a, sizeof(second));
		memset(classes_again, 0x5a, sizeof(classes_again));
		assert_int_equal(bisect_step(&second, classes_again, s->input,
					     s->count, &opts),
				 0);
		assert_same_result(&first, &second);
		for (i = 0; i < 64; i++)
			assert_int_equal(s->classes[i], classes_again[i]);
		if (first.verdict != BISECT_PENDING)
			break;
		for (i = 0; i < first.request_count; i++)
			sim_add_runs(s, first.requests[i].commit,
				     first.requests[i].runs);
		assert_true(++calls < MAX_STEPS);
	}
	assert_int_equal(first.verdict, BISECT_REGRESSION);
	assert_int_equal(first.culprit, 29);
	assert_true(calls >= 3);
	sim_free(s);
}

static void test_bisect__verdict_names(void **state)
{
	(void)state;
	assert_null(bisect_verdict_name(BISECT_PENDING));
	assert_string_equal(bisect_verdict_name(BISECT_REGRESSION),
			    "regression");
	assert_string_equal(bisect_verdict_name(BISECT_IMPROVEMENT),
			    "improvement");
	assert_string_equal(bisect_verdict_name(BISECT_NO_CHANGE),
			    "no-change");
	assert_string_equal(bisect_verdict_name(BISECT_INCONCLUSIVE),
			    "inconclusive");
	assert_null(bisect_verdict_name((enum bisect_verdict)99));
}

static void test_bisect__class_names(void **state)
{
	(void)state;
	assert_string_equal(bisect_class_name(BISECT_UNTESTED), "untested");
	assert_string_equal(bisect_class_name(BISECT_GOOD_LIKE), "good");
	assert_string_equal(bisect_class_name(BISECT_BAD_LIKE), "bad");
	assert_string_equal(bisect_class_name(BISECT_UNDECIDED), "undecided");
	assert_string_equal(bisect_class_name(BISECT_SKIPPED), "skipped");
}

/*
 * 200 seeded trials over 64 commits, a step of 4 sd (4% with 1% noise) at a
 * random commit, min_change_pct 2% as the simulator sets it: at least 97%
 * of the trials name exactly the planted culprit as a regression.
 */
static void test_bisect__noise_sweep_accuracy_at_least_97pct(void **state)
{
	const size_t trials = 200, count = 64;
	gsl_rng *pick = gsl_rng_alloc(gsl_rng_mt19937);
	size_t trial, correct = 0, wrong_culprit = 0, no_culprit = 0;

	(void)state;
	assert_non_null(pick);
	gsl_rng_set(pick, 99);
	for (trial = 0; trial < trials; trial++) {
		struct bisect_options opts;
		size_t culprit = 1 + gsl_rng_uniform_int(pick, count - 1);
		struct sim *s = sim_new(count, 10.0, 30, 1000 + trial);
		const struct bisect_result *res;

		bisect_options_init(&opts, true);
		opts.min_change_pct = 2.0;
		sim_step_at(s, culprit, -4.0);
		res = sim_run(s, &opts);
		assert_no_runs_beyond_max(s, &opts);
		if (res->verdict == BISECT_REGRESSION &&
		    res->culprit == culprit && !res->culprit_ambiguous)
			correct++;
		else if (res->verdict == BISECT_REGRESSION)
			wrong_culprit++;
		else
			no_culprit++;
		sim_free(s);
	}
	gsl_rng_free(pick);
	print_message("noise sweep: %zu/%zu correct, %zu wrong culprit, "
		      "%zu without culprit\n",
		      correct, trials, wrong_culprit, no_culprit);
	assert_int_equal(correct + wrong_culprit + no_culprit, trials);
	assert_true(correct * 100 >= 97 * trials);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_bisect__options_init_gives_documented_defaults),
	    cmocka_unit_test(
		test_bisect__first_step_asks_runs_min_of_both_endpoints_only),
	    cmocka_unit_test(
		test_bisect__endpoint_with_runs_min_is_not_asked_again),
	    cmocka_unit_test(
		test_bisect__higher_is_better_drop_finds_exact_culprit),
	    cmocka_unit_test(test_bisect__lower_is_better_rise_is_regression),
	    cmocka_unit_test(test_bisect__lower_is_better_drop_is_improvement),
	    cmocka_unit_test(
		test_bisect__higher_is_better_rise_is_improvement),
	    cmocka_unit_test(test_bisect__culprit_at_index_1_is_found),
	    cmocka_unit_test(test_bisect__culprit_at_last_index_is_found),
	    cmocka_unit_test(
		test_bisect__two_candidates_blame_the_bad_endpoint),
	    cmocka_unit_test(test_bisect__flat_range_is_no_change),
	    cmocka_unit_test(test_bisect__flat_range_never_names_a_culprit),
	    cmocka_unit_test(
		test_bisect__real_change_below_min_change_is_no_change),
	    cmocka_unit_test(
		test_bisect__equal_constants_are_no_change_at_runs_min),
	    cmocka_unit_test(test_bisect__equal_zero_constants_are_no_change),
	    cmocka_unit_test(
		test_bisect__different_constant_endpoints_find_culprit),
	    cmocka_unit_test(
		test_bisect__tiny_change_in_big_noise_names_no_culprit),
	    cmocka_unit_test(test_bisect__build_failures_are_never_requested),
	    cmocka_unit_test(
		test_bisect__all_failed_before_culprit_is_ambiguous),
	    cmocka_unit_test(
		test_bisect__failed_culprit_gives_next_buildable_one),
	    cmocka_unit_test(
		test_bisect__failed_good_endpoint_is_inconclusive),
	    cmocka_unit_test(test_bisect__failed_bad_endpoint_is_inconclusive),
	    cmocka_unit_test(test_bisect__invalid_options_return_minus_one),
	    cmocka_unit_test(test_bisect__same_input_gives_same_result),
	    cmocka_unit_test(test_bisect__verdict_names),
	    cmocka_unit_test(test_bisect__class_names),
	    cmocka_unit_test(test_bisect__noise_sweep_accuracy_at_least_97pct),
	};

	return cmocka_run_group_tests(tests, NULL, free_live_sims);
}
