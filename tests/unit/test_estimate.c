/*
 * Unit tests of lib/estimate.c against SciPy.
 *
 * The setup draws seeded samples, writes them to a temporary file and runs
 * /usr/bin/python3 once: SciPy finds, for each pair, the ratios of the
 * means at which scipy.stats.ttest_ind(changed, ratio * base,
 * equal_var=False) has a p-value of exactly 0.05 (brentq), which bound
 * the 95% interval.  Nothing is copied from an earlier run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "estimate.h"

#define REFERENCE_PYTHON "/usr/bin/python3"
#define SEED_SAMPLES 20261202UL
#define CASES_MAX 64
#define RTOL_MEAN 1e-12
#define RTOL_BOUND 1e-7

struct pair_case {
	double base[64], changed[64];
	size_t base_n, changed_n;
	/* From SciPy: change, lower and upper bound in percent (NaN when
	 * unbounded). */
	double ref[3];
};

struct fixture {
	struct pair_case cases[CASES_MAX];
	size_t count;
};

/* Passed to the shell in single quotes: no single quote inside. */
static const char reference_script[] =
    "import sys, warnings\n"
    "import numpy as np\n"
    "from scipy import stats, optimize\n"
    "warnings.simplefilter(\"ignore\")\n"
    "def p_at(c, b, th):\n"
    "    return stats.ttest_ind(c, th * b, equal_var=False).pvalue - 0.05\n"
    "def bound(c, b, th, sign):\n"
    "    step = 1e-3 * max(abs(th), 1e-3)\n"
    "    for i in range(200):\n"
    "        far = th + sign * step\n"
    "        if p_at(c, b, far) < 0:\n"
    "            lo, hi = sorted((th, far))\n"
    "            return optimize.brentq(lambda x: p_at(c, b, x), lo, hi,\n"
    "                                   xtol=1e-15, rtol=1e-15)\n"
    "        step *= 1.5\n"
    "    return float(\"nan\")\n"
    "for line in open(sys.argv[1]):\n"
    "    f = line.split()\n"
    "    nb, nc = int(f[0]), int(f[1])\n"
    "    v = np.array(f[2:], dtype=float)\n"
    "    b, c = v[:nb], v[nb:nb + nc]\n"
    "    mb, mc = np.mean(b), np.mean(c)\n"
    "    th = mc / mb\n"
    "    lo, hi = bound(c, b, th, -1), bound(c, b, th, 1)\n"
    "    if mb > 0:\n"
    "        r = [100 * (th - 1), 100 * (lo - 1), 100 * (hi - 1)]\n"
    "    else:\n"
    "        r = [100 * (mc - mb) / abs(mb), 100 * (1 - hi), 100 * (1 - lo)]\n"
    "    if np.isnan(lo) or np.isnan(hi):\n"
    "        r[1] = r[2] = float(\"nan\")\n"
    "    print(\" \".join(repr(float(x)) for x in r))\n";

static void add_case(struct fixture *fx, gsl_rng *rng, size_t base_n,
		     size_t changed_n, double base_mean, double change,
		     double sd_base, double sd_changed)
{
	struct pair_case *c = &fx->cases[fx->count++];
	size_t i;

	c->base_n = base_n;
	c->changed_n = changed_n;
	for (i = 0; i < base_n; i++)
		c->base[i] = base_mean + gsl_ran_gaussian(rng, sd_base);
	for (i = 0; i < changed_n; i++)
		c->changed[i] = base_mean * (1 + change) +
				gsl_ran_gaussian(rng, sd_changed);
}

static int run_reference(struct fixture *fx)
{
	char path[] = "/tmp/statbisect_test_estimate_XXXXXX";
	char *cmd = NULL, *line = NULL;
	size_t cap = 0, done = 0, i, k;
	FILE *f, *pipe = NULL;
	int fd, error = -1;

	if ((fd = mkstemp(path)) < 0)
		return -1;
	f = fdopen(fd, "w");
	if (f == NULL) {
		close(fd);
		goto out;
	}
	for (i = 0; i < fx->count; i++) {
		const struct pair_case *c = &fx->cases[i];

		fprintf(f, "%zu %zu", c->base_n, c->changed_n);
		for (k = 0; k < c->base_n; k++)
			fprintf(f, " %.17g", c->base[k]);
		for (k = 0; k < c->changed_n; k++)
			fprintf(f, " %.17g", c->changed[k]);
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		goto out;
	if (asprintf(&cmd, "%s -c '%s' '%s'", REFERENCE_PYTHON,
		     reference_script, path) < 0) {
		cmd = NULL;
		goto out;
	}
	if ((pipe = popen(cmd, "r")) == NULL)
		goto out;
	while (done < fx->count && getline(&line, &cap, pipe) > 0) {
		double *r = fx->cases[done].ref;

		if (sscanf(line, "%lf %lf %lf", &r[0], &r[1], &r[2]) != 3)
			goto out;
		done++;
	}
	if (done == fx->count)
		error = 0;
out:
	if (pipe != NULL && pclose(pipe) != 0)
		error = -1;
	free(line);
	free(cmd);
	unlink(path);
	return error;
}

static int group_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	size_t i;

	if (fx == NULL || rng == NULL) {
		free(fx);
		gsl_rng_free(rng);
		return -1;
	}
	gsl_rng_set(rng, SEED_SAMPLES);
	/* Job-like pairs: a level of 1000, sd 1%, changes of 0-5%. */
	for (i = 0; i < 24; i++)
		add_case(fx, rng, 2 + i % 9, 2 + (i * 7) % 13, 1000,
			 -0.05 + 0.005 * (double)i, 10, 10 + (double)(i % 4));
	/* Large samples, unequal spreads, a higher-is-better score. */
	add_case(fx, rng, 60, 40, 50, 0.03, 2, 0.5);
	add_case(fx, rng, 7, 64, 3.5, -0.2, 0.3, 0.05);
	/* A negative base mean (a KPI like a balance). */
	add_case(fx, rng, 9, 11, -200, 0.1, 15, 20);
	add_case(fx, rng, 5, 5, -3, -0.5, 0.4, 0.4);
	/* A base too noisy to bound the ratio: no interval. */
	add_case(fx, rng, 3, 3, 1, 0.5, 5, 5);
	*state = fx;
	gsl_rng_free(rng);
	return run_reference(fx);
}

static int group_teardown(void **state)
{
	free(*state);
	return 0;
}

static void assert_close(double got, double want, double rtol, double atol,
			 const char *what, size_t which)
{
	if (isnan(want) && isnan(got))
		return;
	if (!(fabs(got - want) <= atol + rtol * fabs(want)))
		fail_msg("case %zu %s: got %.17g, SciPy %.17g", which, what,
			 got, want);
}

static void test_estimate_change_interval_matches_scipy(void **state)
{
	struct fixture *fx = *state;
	size_t i, bounded = 0, unbounded = 0;

	for (i = 0; i < fx->count; i++) {
		const struct pair_case *c = &fx->cases[i];
		struct estimate_change e;
		/* A bound in percent: relative to the ratio, which is about
		 * 1 (100 + percent), so the absolute tolerance is 100x. */
		double atol =
		    RTOL_BOUND * 100 * (1 + fabs(c->ref[0]) / 100 + 1);

		assert_int_equal(estimate_change(&e, c->base, c->base_n,
						 c->changed, c->changed_n),
				 0);
		assert_int_equal(e.base_runs, c->base_n);
		assert_int_equal(e.changed_runs, c->changed_n);
		assert_close(e.change_pct, c->ref[0], RTOL_MEAN, 1e-10,
			     "change", i);
		assert_close(e.ci95_lo, c->ref[1], RTOL_BOUND, atol, "lower",
			     i);
		assert_close(e.ci95_hi, c->ref[2], RTOL_BOUND, atol, "upper",
			     i);
		if (isnan(c->ref[1])) {
			unbounded++;
		} else {
			bounded++;
			assert_true(e.ci95_lo <= e.change_pct);
			assert_true(e.change_pct <= e.ci95_hi);
		}
	}
	/* Both kinds were really checked. */
	assert_true(bounded >= 25);
	assert_true(unbounded >= 1);
}

/* estimate_commits reads search and confirmation runs as one sample. */
static void test_estimate_commits_pools_search_and_confirm(void **state)
{
	struct fixture *fx = *state;
	size_t i;

	for (i = 0; i < 24; i++) {
		const struct pair_case *c = &fx->cases[i];
		struct bisect_commit base = {0}, changed = {0};
		struct estimate_change whole, pooled;
		size_t cut_b = c->base_n / 2, cut_c = c->changed_n / 3;

		base.values = c->base;
		base.value_count = cut_b;
		base.confirm_values = c->base + cut_b;
		base.confirm_count = c->base_n - cut_b;
		changed.values = c->changed;
		changed.value_count = cut_c;
		changed.confirm_values = c->changed + cut_c;
		changed.confirm_count = c->changed_n - cut_c;
		assert_int_equal(estimate_change(&whole, c->base, c->base_n,
						 c->changed, c->changed_n),
				 0);
		assert_int_equal(estimate_commits(&pooled, &base, &changed),
				 0);
		assert_int_equal(pooled.base_runs, c->base_n);
		assert_int_equal(pooled.changed_runs, c->changed_n);
		assert_close(pooled.change_pct, c->ref[0], RTOL_MEAN, 1e-10,
			     "pooled change", i);
		assert_close(pooled.ci95_lo, whole.ci95_lo, 1e-9, 1e-9,
			     "pooled lower", i);
		assert_close(pooled.ci95_hi, whole.ci95_hi, 1e-9, 1e-9,
			     "pooled upper", i);
	}
}

static void test_estimate_change_edge_cases(void **state)
{
	static const double one[] = {100};
	static const double two[] = {100, 102};
	static const double zero[] = {0, 0, 0};
	static const double flat_a[] = {5, 5, 5};
	static const double flat_b[] = {6, 6};
	static const double bad[] = {1, NAN};
	struct estimate_change e;

	(void)state;
	/* One run a side: the change, no interval. */
	assert_int_equal(estimate_change(&e, one, 1, two, 2), 0);
	assert_true(fabs(e.change_pct - 1.0) < 1e-12);
	assert_true(isnan(e.ci95_lo) && isnan(e.ci95_hi));
	/* A base mean of 0: relative to the other side, no interval. */
	assert_int_equal(estimate_change(&e, zero, 3, two, 2), 0);
	assert_true(fabs(e.change_pct - 100.0) < 1e-12);
	assert_true(isnan(e.ci95_lo));
	/* No spread at all: the interval is the point. */
	assert_int_equal(estimate_change(&e, flat_a, 3, flat_b, 2), 0);
	assert_true(fabs(e.change_pct - 20.0) < 1e-12);
	assert_true(e.ci95_lo == e.change_pct && e.ci95_hi == e.change_pct);
	/* Bad input. */
	assert_int_equal(estimate_change(&e, one, 0, two, 2), -1);
	assert_int_equal(estimate_change(&e, bad, 2, two, 2), -1);
	assert_int_equal(estimate_change(NULL, one, 1, two, 2), -1);
	assert_int_equal(estimate_commits(&e, NULL, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_estimate_change_interval_matches_scipy),
	    cmocka_unit_test(test_estimate_commits_pools_search_and_confirm),
	    cmocka_unit_test(test_estimate_change_edge_cases),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
