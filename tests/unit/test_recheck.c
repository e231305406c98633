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

static void test_recheck__head_still_at_the_culprits_level(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_result r;

	(void)state;
	runs(parent, 1000);
	runs(culprit, 900);
	runs(head, 905);
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 1.0, 0.01),
	    0);
	assert_int_equal(r.verdict, RECHECK_STILL);
	assert_true(r.p_worse < 1e-6);
	assert_true(fabs(r.change_pct - -9.5) < 1e-9);
	assert_string_equal(recheck_verdict_name(r.verdict),
			    "still regression");
}

static void test_recheck__head_back_at_the_parents_level(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_result r;

	(void)state;
	runs(parent, 1000);
	runs(culprit, 900);
	runs(head, 999);
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 2.0, 0.01),
	    0);
	assert_int_equal(r.verdict, RECHECK_FIXED);
	assert_true(r.p_better_than_culprit < 1e-6);
	assert_true(r.p_level < 0.01);
}

static void test_recheck__lower_is_better_turns_the_test(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_result r;

	(void)state;
	/* A time: the culprit took 10% longer, and the head still does. */
	runs(parent, 10.0);
	runs(culprit, 11.0);
	runs(head, 11.0);
	assert_int_equal(recheck_judge(&r, parent, N, culprit, N, head, N,
				       false, 1.0, 0.01),
			 0);
	assert_int_equal(r.verdict, RECHECK_STILL);
	assert_true(r.change_pct > 9.9 && r.change_pct < 10.1);
	/* Read as higher-is-better the same runs are no regression. */
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 1.0, 0.01),
	    0);
	assert_int_not_equal(r.verdict, RECHECK_STILL);
}

static void test_recheck__halfway_or_too_few_runs_is_inconclusive(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_result r;

	(void)state;
	runs(parent, 1000);
	runs(culprit, 900);
	runs(head, 996); /* 0.4% below the parent: under min_change 1% */
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 1.0, 0.01),
	    0);
	assert_int_not_equal(r.verdict, RECHECK_STILL);
	/* Two runs of a head 3% down cannot tell. */
	runs(head, 970);
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, 2, true, 1.0, 0.01),
	    0);
	assert_int_equal(r.verdict, RECHECK_INCONCLUSIVE);
}

static void test_recheck__refuses_bad_input(void **state)
{
	double parent[N], culprit[N], head[N];
	struct recheck_result r;

	(void)state;
	runs(parent, 1000);
	runs(culprit, 900);
	runs(head, 900);
	assert_int_equal(
	    recheck_judge(&r, parent, 1, culprit, N, head, N, true, 1.0, 0.01),
	    -1);
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 1.0, 0.0),
	    -1);
	assert_int_equal(recheck_judge(&r, parent, N, culprit, N, head, N,
				       true, 100.0, 0.01),
			 -1);
	head[3] = NAN;
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 1.0, 0.01),
	    -1);
}

/* The three p-values against scipy, on a head 3% down with 1% noise. */
static void test_recheck__p_values_match_scipy(void **state)
{
	double parent[N], culprit[N], head[N], want[3];
	struct recheck_result r;
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
	sprintf(p, "]\nt=sum(p)/len(p)*0.01\n"
		   "g=lambda b,a: stats.ttest_ind(b,a,equal_var=False,"
		   "alternative=\"greater\").pvalue\n"
		   "print(\"%%.17g %%.17g %%.17g\" %% (g(p,h), g(h,c),"
		   " g([x+t for x in h],p)))'");
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	assert_int_equal(
	    fscanf(pipe, "%lf %lf %lf", &want[0], &want[1], &want[2]), 3);
	assert_int_equal(pclose(pipe), 0);
	assert_int_equal(
	    recheck_judge(&r, parent, N, culprit, N, head, N, true, 1.0, 0.01),
	    0);
	assert_true(fabs(r.p_worse - want[0]) <= 1e-9 * want[0] + 1e-300);
	assert_true(fabs(r.p_better_than_culprit - want[1]) <=
		    1e-9 * want[1] + 1e-300);
	assert_true(fabs(r.p_level - want[2]) <= 1e-6 * want[2] + 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_recheck__head_still_at_the_culprits_level),
	    cmocka_unit_test(test_recheck__head_back_at_the_parents_level),
	    cmocka_unit_test(test_recheck__lower_is_better_turns_the_test),
	    cmocka_unit_test(
		test_recheck__halfway_or_too_few_runs_is_inconclusive),
	    cmocka_unit_test(test_recheck__refuses_bad_input),
	    cmocka_unit_test(test_recheck__p_values_match_scipy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
