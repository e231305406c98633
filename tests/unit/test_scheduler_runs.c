/*
 * Unit tests of sched_fill_runs (server/scheduler.c): the runs of a job,
 * in upload order as store_runs_kpis gives them, into the engine's input,
 * with each confirmation run's place in that order (issue 10).  No
 * database: the rows are made here as the store returns them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../server/scheduler.h"
#include "../../server/store/store_tasks.h"

static void job_new(struct sched_job *job, size_t count)
{
	memset(job, 0, sizeof(*job));
	job->count = count;
	bisect_options_init(&job->opts, true);
	job->commits = calloc(count, sizeof(*job->commits));
	job->input = calloc(count, sizeof(*job->input));
	assert_non_null(job->commits);
	assert_non_null(job->input);
}

/*
 * A search run, a confirmation interleaved P C P C with a failed run
 * among it and a run naming a commit outside the range: each
 * confirmation run keeps its place in the upload order, 1 for the first
 * row, failed and ignored rows included.
 */
static void
test_sched_fill_runs__confirmation_runs_keep_upload_order(void **state)
{
	static const struct store_run_kpi rows[] = {
	    {0, true, 1.0, false, 0}, /* 1: search, commit 0 */
	    {2, true, 2.0, false, 0}, /* 2: search, commit 2 */
	    {1, true, 10.0, true, 0}, /* 3: confirm, parent */
	    {2, true, 20.0, true, 0}, /* 4: confirm, culprit */
	    {1, false, 0.0, true, 0}, /* 5: parent, no KPI */
	    {2, true, 21.0, true, 0}, /* 6 */
	    {1, true, 11.0, true, 0}, /* 7 */
	    {7, true, 99.0, true, 0}, /* 8: outside the range */
	    {2, true, 22.0, true, 0}, /* 9 */
	    {0, true, 1.5, false, 0}, /* 10: search, commit 0 */
	};
	struct sched_job job;

	(void)state;
	job_new(&job, 3);
	assert_int_equal(
	    sched_fill_runs(&job, rows, sizeof(rows) / sizeof(rows[0])), 0);

	assert_int_equal(job.input[0].value_count, 2);
	assert_true(job.input[0].values[0] == 1.0);
	assert_true(job.input[0].values[1] == 1.5);
	assert_int_equal(job.input[0].seq[0], 1);
	assert_int_equal(job.input[0].seq[1], 10);
	assert_int_equal(job.input[0].confirm_count, 0);

	assert_int_equal(job.input[1].value_count, 0);
	assert_int_equal(job.input[1].confirm_count, 2);
	assert_true(job.input[1].confirm_values[0] == 10.0);
	assert_true(job.input[1].confirm_values[1] == 11.0);
	assert_int_equal(job.input[1].confirm_seq[0], 3);
	assert_int_equal(job.input[1].confirm_seq[1], 7);
	assert_int_equal(job.commits[1].failed_runs, 1);

	assert_int_equal(job.input[2].value_count, 1);
	assert_true(job.input[2].values[0] == 2.0);
	assert_int_equal(job.input[2].seq[0], 2);
	assert_int_equal(job.input[2].confirm_count, 3);
	assert_true(job.input[2].confirm_values[0] == 20.0);
	assert_true(job.input[2].confirm_values[2] == 22.0);
	assert_int_equal(job.input[2].confirm_seq[0], 4);
	assert_int_equal(job.input[2].confirm_seq[1], 6);
	assert_int_equal(job.input[2].confirm_seq[2], 9);
	sched_job_clear(&job);
}

/* A job without runs: empty input, nothing to pair. */
static void test_sched_fill_runs__no_runs(void **state)
{
	struct sched_job job;
	size_t i;

	(void)state;
	job_new(&job, 2);
	assert_int_equal(sched_fill_runs(&job, NULL, 0), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(job.input[i].value_count, 0);
		assert_int_equal(job.input[i].confirm_count, 0);
		assert_non_null(job.input[i].confirm_seq);
		assert_non_null(job.input[i].seq);
	}
	sched_job_clear(&job);
}

/* Fills commit 0 with `ok` runs with a KPI and `failed` without, in
 * the order a benchmark failing every so often would give them. */
static bool fill_and_skip(size_t ok, size_t failed)
{
	struct store_run_kpi rows[64];
	struct sched_job job;
	size_t i, n = ok + failed;
	bool skipped;

	assert_true(n <= sizeof(rows) / sizeof(rows[0]));
	for (i = 0; i < n; i++) {
		/* failed runs spread among the good ones */
		bool fails = i * failed / n != (i + 1) * failed / n;

		rows[i] =
		    (struct store_run_kpi){0, !fails, 100.0, i % 2 == 1, 0};
	}
	job_new(&job, 2);
	assert_int_equal(job.opts.runs_min, 5);
	assert_int_equal(sched_fill_runs(&job, rows, n), 0);
	assert_int_equal(job.commits[0].failed_runs, failed);
	assert_int_equal(job.input[0].value_count + job.input[0].confirm_count,
			 ok);
	skipped = job.input[0].build_failed;
	assert_false(job.input[1].build_failed);
	sched_job_clear(&job);
	return skipped;
}

/*
 * A benchmark that crashes on one run in four is measured by the other
 * three, however many runs the job asks for; one that fails on most of
 * its runs (and at least runs_min of them) makes the commit unusable, as
 * a failed build does.  A fixed count of failures called a commit with
 * 23 runs, 6 of them crashed, unusable, and the job inconclusive.
 */
static void
test_sched_fill_runs__a_commit_is_skipped_when_most_runs_fail(void **state)
{
	(void)state;
	assert_false(fill_and_skip(18, 6));
	assert_false(fill_and_skip(45, 15));
	assert_false(fill_and_skip(4, 4));
	assert_false(fill_and_skip(0, 4));
	assert_true(fill_and_skip(0, 5));
	assert_true(fill_and_skip(4, 6));
	assert_true(fill_and_skip(10, 11));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_sched_fill_runs__confirmation_runs_keep_upload_order),
	    cmocka_unit_test(test_sched_fill_runs__no_runs),
	    cmocka_unit_test(
		test_sched_fill_runs__a_commit_is_skipped_when_most_runs_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
