/* Unit tests of timeleft_estimate (lib/timeleft.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "timeleft.h"

/* 40 runs in 200 s: 5 s a run.  8 runs pending, 3 steps left at 6 runs
 * a commit (48 search runs over 8 commits): (8 + 18) * 5 s. */
static void
test_timeleft__pending_runs_and_steps_at_the_jobs_pace(void **state)
{
	struct timeleft_input in = {.elapsed_s = 200,
				    .runs_done = 40,
				    .runs_pending = 8,
				    .steps_left = 3,
				    .commits_tested = 8,
				    .search_runs = 48,
				    .step_runs_min = 3};

	(void)state;
	assert_float_equal(timeleft_estimate(&in), 130.0, 1e-9);
	/* Fewer runs a commit than a new commit gets: the minimum counts. */
	in.search_runs = 8;
	assert_float_equal(timeleft_estimate(&in), (8 + 3 * 3) * 5.0, 1e-9);
	/* Nothing pending and no step left: nothing left. */
	in.runs_pending = 0;
	in.steps_left = 0;
	assert_float_equal(timeleft_estimate(&in), 0.0, 1e-9);
}

/* Without a run or a time there is no pace to go by. */
static void test_timeleft__no_pace_no_estimate(void **state)
{
	struct timeleft_input in = {.elapsed_s = 0,
				    .runs_done = 10,
				    .runs_pending = 4,
				    .steps_left = 2,
				    .step_runs_min = 3};

	(void)state;
	assert_true(isnan(timeleft_estimate(&in)));
	in.elapsed_s = 30;
	in.runs_done = 0;
	assert_true(isnan(timeleft_estimate(&in)));
	in.runs_done = 10;
	in.elapsed_s = NAN;
	assert_true(isnan(timeleft_estimate(&in)));
	assert_true(isnan(timeleft_estimate(NULL)));
	in.elapsed_s = 30;
	/* No commit tested yet: each step at the fewest runs. */
	assert_float_equal(timeleft_estimate(&in), 3.0 * (4 + 2 * 3), 1e-9);
}

static void test_timeleft__format_two_largest_units(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(timeleft_format(buf, sizeof(buf), 0), "0 s");
	assert_string_equal(timeleft_format(buf, sizeof(buf), 59.9), "59 s");
	assert_string_equal(timeleft_format(buf, sizeof(buf), 252),
			    "4 min 12 s");
	assert_string_equal(timeleft_format(buf, sizeof(buf), 7500),
			    "2 h 5 min");
	assert_string_equal(
	    timeleft_format(buf, sizeof(buf), 3 * 86400 + 4 * 3600 + 7),
	    "3 d 4 h");
	assert_string_equal(timeleft_format(buf, sizeof(buf), -5), "0 s");
	assert_string_equal(timeleft_format(buf, sizeof(buf), NAN), "?");
	assert_string_equal(timeleft_format(buf, sizeof(buf), INFINITY),
			    "37037 d 0 h");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_timeleft__pending_runs_and_steps_at_the_jobs_pace),
	    cmocka_unit_test(test_timeleft__no_pace_no_estimate),
	    cmocka_unit_test(test_timeleft__format_two_largest_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
