/*
 * Unit tests of lib/outcome.c: the names of a commit's outcomes, the
 * outcome of one run, and the sentence that names the real cause when a
 * commit gave no measurement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outcome.h"

static void assert_described(const struct outcome *o, const char *kpi,
			     const char *want)
{
	char *got = NULL;

	assert_int_equal(outcome_describe(&got, "the good commit", o, kpi), 0);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_outcome__names_round_trip(void **state)
{
	const char *names[] = {"built",	    "build_failed", "crashed",
			       "timed_out", "no_kpi",	    "ran"};
	enum outcome_status s;
	size_t i;

	(void)state;
	for (i = 0; i < OUTCOME_STATUS_COUNT; i++) {
		assert_string_equal(
		    outcome_status_name((enum outcome_status)i), names[i]);
		s = OUTCOME_RAN;
		assert_int_equal(outcome_status_parse(&s, names[i]), 0);
		assert_int_equal(s, (enum outcome_status)i);
	}
	assert_string_equal(outcome_status_name(OUTCOME_STATUS_COUNT),
			    "unknown");
	s = OUTCOME_BUILT;
	assert_int_equal(outcome_status_parse(&s, "Ran"), -1);
	assert_int_equal(outcome_status_parse(&s, ""), -1);
	assert_int_equal(outcome_status_parse(&s, NULL), -1);
	assert_int_equal(s, OUTCOME_BUILT);
}

static void test_outcome__of_run_orders_timeout_crash_kpi(void **state)
{
	(void)state;
	assert_int_equal(outcome_of_run(0, 0, false, true), OUTCOME_RAN);
	assert_int_equal(outcome_of_run(0, 0, false, false), OUTCOME_NO_KPI);
	assert_int_equal(outcome_of_run(3, 0, false, true), OUTCOME_CRASHED);
	assert_int_equal(outcome_of_run(-1, SIGSEGV, false, false),
			 OUTCOME_CRASHED);
	/* A run killed at its time limit ends by a signal: it timed out. */
	assert_int_equal(outcome_of_run(-1, SIGKILL, true, false),
			 OUTCOME_TIMED_OUT);
	assert_int_equal(outcome_of_run(0, 0, true, true), OUTCOME_TIMED_OUT);
}

static void test_outcome__describes_build_crash_and_timeout(void **state)
{
	struct outcome o = {.status = OUTCOME_BUILD_FAILED};

	(void)state;
	assert_described(&o, "k", "the good commit does not build");
	o = (struct outcome){.status = OUTCOME_CRASHED, .exit_code = 3};
	assert_described(
	    &o, "k", "the runs of the good commit crashed (exit status 3)");
	o = (struct outcome){.status = OUTCOME_CRASHED,
			     .exit_code = -1,
			     .term_signal = SIGSEGV};
	assert_described(&o, "k",
			 "the runs of the good commit crashed (killed by "
			 "signal 11, SIGSEGV)");
	o = (struct outcome){.status = OUTCOME_TIMED_OUT};
	assert_described(&o, "k", "the runs of the good commit timed out");
	o = (struct outcome){.status = OUTCOME_RAN};
	assert_described(&o, "k", "the good commit was built and measured");
}

static void test_outcome__no_kpi_lists_the_names_and_a_near_one(void **state)
{
	const char *seen[] = {"aux.constant", "bench.score"};
	struct outcome o = {.status = OUTCOME_NO_KPI,
			    .metrics_seen = seen,
			    .metrics_seen_count = 2};

	(void)state;
	assert_described(&o, "bench.scor",
			 "the runs of the good commit printed no metric "
			 "'bench.scor'; they printed: aux.constant, "
			 "bench.score (did you mean 'bench.score'?)");
	/* Nothing close: no suggestion. */
	assert_described(&o, "latency_us",
			 "the runs of the good commit printed no metric "
			 "'latency_us'; they printed: aux.constant, "
			 "bench.score");
	o.metrics_seen_count = 0;
	assert_described(&o, "latency_us",
			 "the runs of the good commit printed no metrics at "
			 "all (the KPI is 'latency_us')");
}

static void test_outcome__no_kpi_list_is_bounded(void **state)
{
	char names[OUTCOME_NAMES_MAX + 5][16], want[2048], *p = want;
	const char *seen[OUTCOME_NAMES_MAX + 5];
	struct outcome o = {.status = OUTCOME_NO_KPI,
			    .metrics_seen = seen,
			    .metrics_seen_count = OUTCOME_NAMES_MAX + 5};
	size_t i;

	(void)state;
	p += sprintf(p, "the runs of the good commit printed no metric "
			"'kpi.wanted'; they printed: ");
	for (i = 0; i < OUTCOME_NAMES_MAX + 5; i++) {
		snprintf(names[i], sizeof(names[i]), "metric.%02zu", i);
		seen[i] = names[i];
		if (i < OUTCOME_NAMES_MAX)
			p += sprintf(p, "%s%s", i > 0 ? ", " : "", names[i]);
	}
	sprintf(p, " and 5 more");
	assert_described(&o, "kpi.wanted", want);
}

static void test_outcome__describe_refuses_null(void **state)
{
	struct outcome o = {.status = OUTCOME_RAN};
	char *out = NULL;

	(void)state;
	assert_int_equal(outcome_describe(NULL, "x", &o, "k"), -1);
	assert_int_equal(outcome_describe(&out, NULL, &o, "k"), -1);
	assert_int_equal(outcome_describe(&out, "x", NULL, "k"), -1);
	assert_int_equal(outcome_describe(&out, "x", &o, NULL), -1);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outcome__names_round_trip),
	    cmocka_unit_test(test_outcome__of_run_orders_timeout_crash_kpi),
	    cmocka_unit_test(test_outcome__describes_build_crash_and_timeout),
	    cmocka_unit_test(
		test_outcome__no_kpi_lists_the_names_and_a_near_one),
	    cmocka_unit_test(test_outcome__no_kpi_list_is_bounded),
	    cmocka_unit_test(test_outcome__describe_refuses_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
