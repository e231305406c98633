/* Unit tests of lib/recheck.c: a regression re-checked on a newer head.
 * The p-values are compared with scipy.stats.ttest_ind (Welch, one-sided)
 * computed by Debian's /usr/bin/python3 during the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "recheck.h"

#define N 10

/* Ten runs around `level`, 1% noise, the same shape each time. */
static void runs(double *out, double level)
{
	static const double z[N] = {0.31, -0.52, 1.13, -0.87, 0.05,
				    0.66, -1.21, 0.44, -0.13, 0.92};
	size_t i;

	for (i = 0; i < N; i++)
		out[i] = level * (1 + 0.01 * z[i]);
}

static void test_recheck__decided_from_the_columns(void **state)
{
	(void)state;
	assert_int_equal(recheck_decide("regression", "regression"),
			 RECHECK_STILL);
	assert_int_equal(recheck_decide("regression", "no-change"),
			 RECHECK_FIXED);
	assert_int_equal(recheck_decide("regression", "improvement"),
			 RECHECK_FIXED);
	assert_int_equal(recheck_decide("regression", "inconclusive"),
			 RECHECK_INCONCLUSIVE);
	assert_int_equal(recheck_decide("regression", NULL),
			 RECHECK_INCONCLUSIVE);
	/* The regression did not show again: nothing to say of the head. */
	assert_int_equal(recheck_decide("no-change", "regression"),
			 RECHECK_INCONCLUSIVE);
	assert_int_equal(recheck_decide("inconclusive", "no-change"),
			 RECHECK_INCONCLUSIVE);
	assert_int_equal(recheck_decide(NULL, NULL), RECHECK_INCONCLUSIVE);
	assert_string_equal(recheck_verdict_name(RECHECK_STILL),
			    "still regression");
	assert_string_equal(recheck_verdict_name(RECHECK_FIXED), "fixed");
	assert_string_equal(recheck_verdict_name(RECHECK_INCONCLUSIVE),
			    "inconclusive");
}

static void test_recheck__measure_turns_with_the_direction(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_numbers r;

	(void)state;
	/* A time: the culprit took 10% longer, and the head still does. */
	runs(parent, 10.0);
	runs(culprit, 11.0);
	runs(head, 11.0);
	assert_int_equal(
	    recheck_measure(&r, parent, N, culprit, N, head, N, false), 0);
	assert_true(r.change_pct > 9.99 && r.change_pct < 10.01);
	assert_true(r.p_worse < 1e-6);
	assert_true(r.p_better_than_culprit > 0.4);
	/* Read as higher-is-better the same head is better, not worse. */
	assert_int_equal(
	    recheck_measure(&r, parent, N, culprit, N, head, N, true), 0);
	assert_true(r.p_worse > 0.999);
}

static void test_recheck__refuses_bad_input(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_numbers r;

	(void)state;
	runs(parent, 1000);
	runs(culprit, 900);
	runs(head, 900);
	assert_int_equal(
	    recheck_measure(&r, parent, 1, culprit, N, head, N, true), -1);
	assert_int_equal(
	    recheck_measure(&r, parent, N, culprit, N, head, 0, true), -1);
	head[3] = NAN;
	assert_int_equal(
	    recheck_measure(&r, parent, N, culprit, N, head, N, true), -1);
}

/* The two p-values against scipy, on a head 3% down with 1% noise. */
static void test_recheck__p_values_match_scipy(void **state)
{
	double parent[N], culprit[N], head[N], want[2];
	struct recheck_numbers r;
	char cmd[4096], *p = cmd;
	FILE *pipe;
	size_t i;

	(void)state;
	runs(parent, 1000);
	runs(culprit, 900);
	runs(head, 970);
	for (i = 0; i < N; i++) /* shuffle the head's shape a little */
		head[i] += (double)(i % 3) - 1.0;
	p += sprintf(p, "/usr/bin/python3 -c 'from scipy import stats\n"
			"p=[");
	for (i = 0; i < N; i++)
		p += sprintf(p, "%.17g,", parent[i]);
	p += sprintf(p, "]\nc=[");
	for (i = 0; i < N; i++)
		p += sprintf(p, "%.17g,", culprit[i]);
	p += sprintf(p, "]\nh=[");
	for (i = 0; i < N; i++)
		p += sprintf(p, "%.17g,", head[i]);
	sprintf(p, "]\n"
		   "g=lambda b,a: stats.ttest_ind(b,a,equal_var=False,"
		   "alternative=\"greater\").pvalue\n"
		   "print(\"%%.17g %%.17g\" %% (g(p,h), g(h,c)))'");
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	assert_int_equal(fscanf(pipe, "%lf %lf", &want[0], &want[1]), 2);
	assert_int_equal(pclose(pipe), 0);
	assert_int_equal(
	    recheck_measure(&r, parent, N, culprit, N, head, N, true), 0);
	assert_true(fabs(r.p_worse - want[0]) <= 1e-9 * want[0] + 1e-300);
	assert_true(fabs(r.p_better_than_culprit - want[1]) <=
		    1e-9 * want[1] + 1e-300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_recheck__decided_from_the_columns),
	    cmocka_unit_test(test_recheck__measure_turns_with_the_direction),
	    cmocka_unit_test(test_recheck__refuses_bad_input),
	    cmocka_unit_test(test_recheck__p_values_match_scipy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
