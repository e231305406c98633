/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowselect.h"
#include "stats.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

static struct rowselect_series series(const char *name, const double *a,
				      size_t na, const double *b, size_t nb)
{
	struct rowselect_series s = {name, a, na, b, nb};

	return s;
}

#define SERIES(name, a, b) series(name, a, N(a), b, N(b))

static void test_rowselect__defaults(void **state)
{
	struct rowselect_options o;

	(void)state;
	rowselect_defaults(&o);
	assert_int_equal(o.min_runs, 3);
	assert_true(o.min_ratio == 1.01);
	assert_true(o.min_ratio_monitor == 1.05);
	assert_true(o.perf_profile_min == 5);
	assert_true(o.fdr == 0.05);
	assert_int_equal(o.test, ROWSELECT_WELCH);
}

static void test_rowselect__kind_by_prefix(void **state)
{
	(void)state;
	assert_int_equal(rowselect_kind_of("vmstat.system.cs"),
			 ROWSELECT_COUNTER);
	assert_int_equal(rowselect_kind_of("proc-vmstat.pgfree"),
			 ROWSELECT_COUNTER);
	assert_int_equal(rowselect_kind_of("perf-stat.task-clock"),
			 ROWSELECT_COUNTER);
	assert_int_equal(rowselect_kind_of("time.user_time"),
			 ROWSELECT_MONITOR);
	assert_int_equal(rowselect_kind_of("perf-profile.self.cycles-pp.x"),
			 ROWSELECT_MONITOR);
	assert_int_equal(rowselect_kind_of("bench.score"),
			 ROWSELECT_BENCHMARK);
	assert_int_equal(rowselect_kind_of("vmstat"), ROWSELECT_BENCHMARK);
	assert_int_equal(rowselect_kind_of("vmstatx.a"), ROWSELECT_BENCHMARK);
	assert_int_equal(rowselect_kind_of("timer.x"), ROWSELECT_BENCHMARK);
	assert_int_equal(rowselect_kind_of(""), ROWSELECT_BENCHMARK);
}

static void test_rowselect__robot_overlap_rule(void **state)
{
	static const double base[] = {100, 101, 102};
	static const double up[] = {110, 111, 112};
	static const double down[] = {90, 91, 92};
	/* min 101.5 above the base median 101, median 110 above max 102 */
	static const double barely[] = {101.5, 110, 111};
	/* min 100.5 below the base median */
	static const double overlap[] = {100.5, 110, 111};
	/* median 102 not above the base maximum 102 */
	static const double median_in[] = {101.5, 102, 130};
	struct rowselect_series s;

	(void)state;
	s = SERIES("bench.x", base, up);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", base, down);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", base, barely);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", base, overlap);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", base, median_in);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", base, base);
	assert_false(rowselect_robot_rule(&s, NULL));
}

static void test_rowselect__robot_ratio_by_kind(void **state)
{
	static const double base[] = {100, 100.1, 100.2};
	/* medians 100.1 and 100.7: ratio 1.006 */
	static const double tiny[] = {100.6, 100.7, 100.8};
	/* ratio 101.6 / 100.1 = 1.015 */
	static const double small[] = {101.5, 101.6, 101.7};
	/* ratio 106.1 / 100.1 = 1.06 */
	static const double large[] = {106, 106.1, 106.2};
	struct rowselect_series s;

	(void)state;
	s = SERIES("bench.x", base, tiny);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", base, small);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("vmstat.system.cs", base, small);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("time.user_time", base, small);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("time.user_time", base, large);
	assert_true(rowselect_robot_rule(&s, NULL));
}

static void test_rowselect__robot_runs_and_zero(void **state)
{
	static const double two_a[] = {1, 1.1}, two_b[] = {5, 5.1};
	static const double three[] = {100, 101, 102}, one[] = {120};
	static const double zeros[] = {0, 0, 0}, ones[] = {1, 1, 1};
	static const double neg[] = {-1, -1, -1};
	static const double with_nan[] = {1, NAN, 1};
	struct rowselect_series s;

	(void)state;
	s = SERIES("bench.x", two_a, two_b);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", three, one);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", zeros, ones);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", zeros, zeros);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", neg, ones);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.x", with_nan, ones);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = series("bench.x", three, 3, NULL, 0);
	assert_false(rowselect_robot_rule(&s, NULL));
	assert_false(rowselect_robot_rule(NULL, NULL));
}

static void test_rowselect__robot_perf_profile(void **state)
{
	static const double low_a[] = {1, 1.1, 1.2}, low_b[] = {3, 3.1, 3.2};
	static const double hi_a[] = {4, 4.1, 4.2}, hi_b[] = {6, 6.1, 6.2};
	struct rowselect_series s;

	(void)state;
	s = SERIES("perf-profile.self.cycles-pp.f", low_a, low_b);
	assert_false(rowselect_robot_rule(&s, NULL));
	s = SERIES("perf-profile.self.cycles-pp.f", hi_a, hi_b);
	assert_true(rowselect_robot_rule(&s, NULL));
	s = SERIES("bench.f", low_a, low_b);
	assert_true(rowselect_robot_rule(&s, NULL));
}

/*
 * scipy.stats.false_discovery_control(p, method='bh') by its definition:
 * q_i = min over p_j >= p_i of p_j * n / rank(p_j), rank counting ties.
 */
static void bh(double *q, const double *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double best = 1;

		for (size_t j = 0; j < n; j++) {
			size_t rank = 0;

			if (p[j] < p[i])
				continue;
			for (size_t k = 0; k < n; k++)
				if (p[k] <= p[j])
					rank++;
			if (p[j] * (double)n / (double)rank < best)
				best = p[j] * (double)n / (double)rank;
		}
		q[i] = best;
	}
}

static double welch_p(const double *a, size_t na, const double *b, size_t nb)
{
	struct stats_test t;

	assert_int_equal(stats_welch_t(&t, a, na, b, nb), 0);
	return t.p_value;
}

static void test_rowselect__select_kpi_strong_weak_null(void **state)
{
	static const double kpi_a[] = {1000, 1001, 999, 1000.5, 999.5};
	static const double kpi_b[] = {999.8, 1000.9, 1000.2, 999, 1001};
	static const double strong_a[] = {10, 10.1, 9.9, 10.05, 9.95};
	static const double strong_b[] = {12, 12.1, 11.9, 12.05, 11.95};
	/* passes the robot's rules, but the test is weak */
	static const double weak_a[] = {10, 11, 12};
	static const double weak_b[] = {12.5, 13, 20};
	static const double null_a[] = {1, 2, 3}, null_b[] = {1, 2, 3};
	static const double only[] = {5, 6, 7};
	struct rowselect_series s[6];
	struct rowselect_row out[6];
	double p[5], q[5];

	(void)state;
	s[0] = SERIES("bench.score", kpi_a, kpi_b);
	s[1] = SERIES("bench.ops", strong_a, strong_b);
	s[2] = SERIES("vmstat.system.cs", weak_a, weak_b);
	s[3] = SERIES("proc-vmstat.pgfree", null_a, null_b);
	s[4] = SERIES("proc-vmstat.pgalloc", null_b, null_a);
	s[5] = series("time.only_base", only, 3, NULL, 0);
	assert_int_equal(rowselect_select(out, s, 6, "bench.score", NULL), 0);

	p[0] = welch_p(kpi_a, 5, kpi_b, 5);
	p[1] = welch_p(strong_a, 5, strong_b, 5);
	p[2] = welch_p(weak_a, 3, weak_b, 3);
	p[3] = 1;
	p[4] = 1;
	bh(q, p, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_true(out[i].tested);
		assert_true(out[i].p_value == p[i]);
		assert_true(fabs(out[i].q_value - q[i]) < 1e-12);
	}
	assert_true(p[1] < 1e-6);
	assert_true(q[2] > 0.05);

	assert_false(out[0].robot);
	assert_true(out[0].shown); /* the KPI, always */
	assert_true(out[1].robot);
	assert_true(out[1].shown);
	assert_true(out[2].robot);
	assert_false(out[2].shown); /* robot yes, FDR no */
	assert_false(out[3].robot);
	assert_false(out[3].shown);
	assert_false(out[4].shown);
	assert_false(out[5].tested);
	assert_false(out[5].shown);
	assert_true(out[5].p_value == 1 && out[5].q_value == 1);
}

/* One moderately significant row is shown alone, and hidden among many
 * rows that show nothing: the FDR control is across all rows. */
static void test_rowselect__fdr_across_rows(void **state)
{
	static const double a[] = {100, 101, 102, 103, 104};
	static const double b[] = {103.5, 105, 106, 107, 108};
	static const double flat[] = {1, 2, 3, 4, 5};
	struct rowselect_series s[51];
	struct rowselect_row out[51];
	char names[50][16];
	double p = welch_p(a, 5, b, 5);

	(void)state;
	assert_true(p > 0.001 && p < 0.05);
	s[0] = SERIES("bench.latency", a, b);
	assert_int_equal(rowselect_select(out, s, 1, NULL, NULL), 0);
	assert_true(out[0].robot);
	assert_true(out[0].q_value == p);
	assert_true(out[0].shown);
	for (size_t i = 0; i < 50; i++) {
		snprintf(names[i], sizeof(names[i]), "proc-vmstat.c%zu", i);
		s[i + 1] = SERIES(names[i], flat, flat);
	}
	assert_int_equal(rowselect_select(out, s, 51, NULL, NULL), 0);
	assert_true(out[0].robot);
	assert_true(out[0].p_value == p);
	assert_true(fabs(out[0].q_value - fmin(1, p * 51)) < 1e-12);
	assert_false(out[0].shown);
	for (size_t i = 1; i < 51; i++) {
		assert_false(out[i].shown);
		assert_true(out[i].q_value == 1);
	}
}

static void test_rowselect__mann_whitney_option(void **state)
{
	static const double a[] = {1, 2, 3, 4, 5};
	static const double b[] = {10, 11, 12, 13, 14};
	struct rowselect_options o;
	struct rowselect_series s[1];
	struct rowselect_row out[1];

	(void)state;
	rowselect_defaults(&o);
	o.test = ROWSELECT_MANN_WHITNEY;
	s[0] = SERIES("bench.x", a, b);
	assert_int_equal(rowselect_select(out, s, 1, NULL, &o), 0);
	/* exact: 2 of the C(10, 5) = 252 orderings are as extreme */
	assert_true(fabs(out[0].p_value - 2.0 / 252) < 1e-12);
	assert_true(out[0].shown);
	o.fdr = 0.005;
	assert_int_equal(rowselect_select(out, s, 1, NULL, &o), 0);
	assert_false(out[0].shown);
}

static void test_rowselect__kpi_needs_both_sides(void **state)
{
	static const double a[] = {1, 2, 3};
	struct rowselect_series s[2];
	struct rowselect_row out[2];

	(void)state;
	s[0] = series("bench.score", a, 3, NULL, 0);
	s[1] = series("bench.single", a, 1, a + 1, 1);
	assert_int_equal(rowselect_select(out, s, 2, "bench.single", NULL), 0);
	assert_false(out[0].shown);
	/* one run a side: Welch cannot run, but the KPI row is kept */
	assert_false(out[1].tested);
	assert_true(out[1].shown);
}

static void test_rowselect__invalid_arguments(void **state)
{
	static const double a[] = {1, 2, 3};
	struct rowselect_options o;
	struct rowselect_series s[1];
	struct rowselect_row out[1];

	(void)state;
	assert_int_equal(rowselect_select(NULL, NULL, 0, NULL, NULL), 0);
	s[0] = series(NULL, a, 3, a, 3);
	assert_int_equal(rowselect_select(out, s, 1, NULL, NULL), -EINVAL);
	s[0] = series("x", NULL, 3, a, 3);
	assert_int_equal(rowselect_select(out, s, 1, NULL, NULL), -EINVAL);
	s[0] = series("x", a, 3, a, 3);
	assert_int_equal(rowselect_select(NULL, s, 1, NULL, NULL), -EINVAL);
	rowselect_defaults(&o);
	o.fdr = 0;
	assert_int_equal(rowselect_select(out, s, 1, NULL, &o), -EINVAL);
	rowselect_defaults(&o);
	o.min_ratio = 0.5;
	assert_int_equal(rowselect_select(out, s, 1, NULL, &o), -EINVAL);
	rowselect_defaults(&o);
	o.min_runs = 0;
	assert_int_equal(rowselect_select(out, s, 1, NULL, &o), -EINVAL);
	assert_int_equal(rowselect_select(out, s, 1, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rowselect__defaults),
	    cmocka_unit_test(test_rowselect__kind_by_prefix),
	    cmocka_unit_test(test_rowselect__robot_overlap_rule),
	    cmocka_unit_test(test_rowselect__robot_ratio_by_kind),
	    cmocka_unit_test(test_rowselect__robot_runs_and_zero),
	    cmocka_unit_test(test_rowselect__robot_perf_profile),
	    cmocka_unit_test(test_rowselect__select_kpi_strong_weak_null),
	    cmocka_unit_test(test_rowselect__fdr_across_rows),
	    cmocka_unit_test(test_rowselect__mann_whitney_option),
	    cmocka_unit_test(test_rowselect__kpi_needs_both_sides),
	    cmocka_unit_test(test_rowselect__invalid_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
