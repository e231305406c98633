/*
 * Tests of the N-column table (lib/report.c report_format_row_columns,
 * report_put_table_head) and of a compare job's report
 * (lib/report_compare.c).
 */
/* cmocka.h needs these first; its own block keeps clang-format from
 * sorting it above them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_compare.h"
#include "strbuf.h"

#define PM "\xc2\xb1"

#define SHA_A "32e4a5447ed9fa90b1b2c3d4e5f6a7b8c9d0e1f2"
#define SHA_B "2b0cfa6e49566c8fa6759734cf8271a9e1234567"
#define SHA_C "5e1f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b"

/* Two columns are the robot's row, byte for byte, for every kind of
 * value: large, small, absolute metrics, stddev shown or not. */
static void test_report_compare__two_columns_are_the_robot_row(void **state)
{
	static const struct {
		const char *metric;
		struct report_side a, b;
	} rows[] = {
	    {"vmstat.system.cs", {64663, 1, 10}, {66953, 1, 10}},
	    {"stress-ng.time.voluntary_context_switches",
	     {1678568, 2.5, 10},
	     {1874352, 1, 10}},
	    {"perf-profile.self.cycles-pp.lockref_put_return",
	     {0.09, 4.2, 10},
	     {0.11, 6.9, 10}},
	    {"perf-stat.i.cache-references",
	     {96563339, 0, 5},
	     {1.017e8, 0, 5}},
	    {"cpu.idle%", {48.68, 0, 1}, {48.79, 9, 1}},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct report_side sides[2] = {rows[i].a, rows[i].b};
		char *two = NULL, *columns = NULL;

		assert_int_equal(report_format_row(&two, rows[i].metric,
						   &rows[i].a, &rows[i].b),
				 0);
		assert_int_equal(report_format_row_columns(
				     &columns, rows[i].metric, sides, 2),
				 0);
		assert_string_equal(columns, two);
		free(two);
		free(columns);
	}
}

static void test_report_compare__three_column_row(void **state)
{
	struct report_side sides[3] = {
	    {1000, 1, 10}, {900, 3.7, 10}, {1001, 0.5, 10}};
	char *row = NULL;

	(void)state;
	assert_int_equal(
	    report_format_row_columns(&row, "bench.score", sides, 3), 0);
	assert_string_equal(row, "      1000           -10.0%     900.00 " PM
				 "  3%      +0.1%       1001        "
				 "bench.score\n");
	assert_int_equal(strlen("      1000           -10.0%     900.00 "
				"+  3%      +0.1%       1001        "),
			 16 + 28 + 28 + 2);
	free(row);
}

static void test_report_compare__row_refuses_bad_input(void **state)
{
	struct report_side sides[5] = {
	    {1, 0, 1}, {2, 0, 1}, {3, 0, 1}, {4, 0, 1}, {5, 0, 1}};
	char *row = (char *)"x";

	(void)state;
	assert_int_equal(report_format_row_columns(&row, "m", sides, 5),
			 -EINVAL);
	assert_null(row);
	assert_int_equal(report_format_row_columns(&row, "m", sides, 0),
			 -EINVAL);
	assert_int_equal(report_format_row_columns(&row, "a\nb", sides, 3),
			 -EINVAL);
	sides[1].mean = NAN;
	assert_int_equal(report_format_row_columns(&row, "m", sides, 3),
			 -EINVAL);
}

static void test_report_compare__table_head(void **state)
{
	struct strbuf b = STRBUF_INIT;
	char *text = NULL;

	(void)state;
	report_put_table_head(&b, (const char *const[]){SHA_A, SHA_B, SHA_C},
			      3);
	assert_int_equal(strbuf_finish(&text, NULL, &b), 0);
	assert_string_equal(text,
			    "32e4a5447ed9fa90 2b0cfa6e49566c8fa6759734cf8 "
			    "5e1f0a2b3c4d5e6f708192a3b4c "
			    "\n"
			    "---------------- --------------------------- "
			    "--------------------------- \n"
			    "         %stddev     %change         %stddev"
			    "     %change         %stddev\n"
			    "             \\          |                \\  "
			    "        |                \\  \n");
	free(text);
}

static const struct report_param params[] = {{"threads", "8"}};

static void fill(struct report_compare_input *in,
		 struct report_compare_column *columns,
		 struct report_compare_row *row)
{
	memset(in, 0, sizeof(*in));
	columns[0] = (struct report_compare_column){
	    "base", SHA_A, "net: base", 10, REPORT_NO_CHANGE, 0};
	columns[1] = (struct report_compare_column){
	    "culprit", SHA_B, "net: slow", 10, REPORT_REGRESSION, -10.0};
	columns[2] = (struct report_compare_column){
	    "fix", SHA_C, "net: fix", 12, REPORT_NO_CHANGE, 0.1};
	row->metric = "bench.score";
	row->sides[0] = (struct report_side){1000, 1, 10};
	row->sides[1] = (struct report_side){900, 3.7, 10};
	row->sides[2] = (struct report_side){1001, 0.5, 12};
	in->robot_name = "statbisect robot";
	in->service_name = "statbisect";
	in->service_url = "http://127.0.0.1:8080/";
	in->tree = "repo";
	in->branch = "main";
	in->kpi = "bench.score";
	in->testcase = "bench";
	in->params = params;
	in->param_count = 1;
	in->columns = columns;
	in->column_count = 3;
	in->rows = row;
	in->row_count = 1;
	in->job_url = "http://127.0.0.1:8080/jobs/7";
	in->build_cmd = "make";
	in->run_cmd = "./bench";
}

static void test_report_compare__subject(void **state)
{
	struct report_compare_input in;
	struct report_compare_column columns[3];
	struct report_compare_row row;
	char *subject = NULL;

	(void)state;
	fill(&in, columns, &row);
	assert_int_equal(report_compare_subject(&subject, &in), 0);
	assert_string_equal(subject,
			    "[repo:main] compare of bench.score against "
			    "32e4a5447e: 2b0cfa6e49 -10.0% regression, "
			    "5e1f0a2b3c +0.1% no change");
	free(subject);
}

static void test_report_compare__body_has_the_table(void **state)
{
	struct report_compare_input in;
	struct report_compare_column columns[3];
	struct report_compare_row row;
	char *body = NULL;

	(void)state;
	fill(&in, columns, &row);
	assert_int_equal(report_compare_body(&body, &in), 0);
	assert_non_null(strstr(
	    body, "\nHello,\n\nstatbisect robot compared bench.score on 3 "
		  "revisions:\n\n\nbase:    " SHA_A " (\"net: base\")\n"
		  "culprit: " SHA_B " (\"net: slow\")\n"
		  "fix:     " SHA_C " (\"net: fix\")\nrepo main\n\n"
		  "culprit: -10.0% regression of bench.score against base\n"
		  "fix:     +0.1% no change of bench.score against base\n\n"
		  "testcase: bench\nruns: 10 (base) / 10 (culprit) / 12 "
		  "(fix)\n"));
	assert_non_null(strstr(body,
			       "testcase/threads:\n  bench/8\n\ncommit: \n"
			       "  32e4a5447e (\"net: base\")\n"
			       "  2b0cfa6e49 (\"net: slow\")\n"
			       "  5e1f0a2b3c (\"net: fix\")\n\n"
			       "32e4a5447ed9fa90 2b0cfa6e49566c8fa6759734cf8 "
			       "5e1f0a2b3c4d5e6f708192a3b4c \n"));
	assert_non_null(strstr(body,
			       "      1000           -10.0%     900.00 " PM
			       "  3%      +0.1%       1001        "
			       "bench.score\n"));
	assert_non_null(strstr(body, "\tgit checkout " SHA_C "\n"));
	assert_non_null(strstr(body, "\n-- \nstatbisect\n"));
	free(body);
}

/* A benchmark repository is fetched beside the tree before the
 * revisions' checkouts, its password masked (report_bench_command). */
static void test_report_compare__bench_before_the_checkouts(void **state)
{
	struct report_compare_input in;
	struct report_compare_column columns[3];
	struct report_compare_row row;
	char *body = NULL, *bench;

	(void)state;
	fill(&in, columns, &row);
	bench = report_bench_command("https://u:pw@git.example/b.git", SHA_A);
	assert_string_equal(
	    bench, "git clone 'https://u:***@git.example/b.git' bench "
		   "&& git -C bench checkout " SHA_A "\n"
		   "export STATBISECT_BENCH_DIR=$PWD/bench");
	assert_null(report_bench_command("https://git.example/b.git", NULL));
	assert_null(report_bench_command(NULL, SHA_A));
	in.bench_cmd = bench;
	assert_int_equal(report_compare_body(&body, &in), 0);
	assert_non_null(strstr(
	    body,
	    "The benchmark, beside the tree:\n\n"
	    "\tgit clone 'https://u:***@git.example/b.git' bench && "
	    "git -C bench checkout " SHA_A "\n"
	    "\texport STATBISECT_BENCH_DIR=$PWD/bench\n\n"
	    "To reproduce, for each revision:\n\n\tgit checkout " SHA_A));
	free(body);
	free(bench);
}

static void test_report_compare__refuses_bad_input(void **state)
{
	struct report_compare_input in;
	struct report_compare_column columns[3];
	struct report_compare_row row;
	char *text = NULL;

	(void)state;
	fill(&in, columns, &row);
	in.column_count = 1;
	assert_int_equal(report_compare_subject(&text, &in), -EINVAL);
	in.column_count = 5;
	assert_int_equal(report_compare_body(&text, &in), -EINVAL);
	fill(&in, columns, &row);
	columns[2].sha = "zz";
	assert_int_equal(report_compare_body(&text, &in), -EINVAL);
	fill(&in, columns, &row);
	columns[1].change_pct = NAN;
	assert_int_equal(report_compare_subject(&text, &in), -EINVAL);
	assert_null(text);
}

/* A revision without a measurement is inconclusive, with no change. */
static void test_report_compare__unmeasured_column(void **state)
{
	struct report_compare_input in;
	struct report_compare_column columns[3];
	struct report_compare_row row;
	char *text = NULL;

	(void)state;
	fill(&in, columns, &row);
	columns[1].change_pct = NAN;
	columns[1].kind = REPORT_INCONCLUSIVE;
	columns[1].runs = 0;
	in.row_count = 0;
	assert_int_equal(report_compare_subject(&text, &in), 0);
	assert_string_equal(text, "[repo:main] compare of bench.score against "
				  "32e4a5447e: 2b0cfa6e49 inconclusive, "
				  "5e1f0a2b3c +0.1% no change");
	free(text);
	assert_int_equal(report_compare_body(&text, &in), 0);
	assert_non_null(strstr(text, "culprit: inconclusive of bench.score "
				     "against base\n"));
	assert_null(strstr(text, "bench.score\n\n\nDisclaimer"));
	free(text);
}

/* pairs[k - 1]: the first revision on side 0, revision k on side 1, as
 * the server loads them; means per column, small noise. */
static void add_metric(struct report_samples *pairs, size_t columns,
		       const char *name, const double *means, size_t skip)
{
	static const double noise[5] = {-0.002, 0.001, 0, 0.002, -0.001};
	size_t k, r;

	for (k = 1; k < columns; k++)
		for (r = 0; r < 5; r++) {
			assert_int_equal(
			    report_samples_add(&pairs[k - 1], name, 0,
					       means[0] * (1 + noise[r])),
			    0);
			if (k != skip)
				assert_int_equal(
				    report_samples_add(
					&pairs[k - 1], name, 1,
					means[k] * (1 + noise[(r + k) % 5])),
				    0);
		}
}

static void test_report_compare__rows_selected_across_columns(void **state)
{
	static const double score[3] = {1000, 900, 1000};
	static const double constant[3] = {42, 42, 42};
	static const double cs[3] = {5000, 5000, 6000};
	static const double partial[3] = {10, 20, 30};
	struct report_samples pairs[2];
	struct report_compare_row *rows = NULL;
	size_t count = 0, k;

	(void)state;
	memset(pairs, 0, sizeof(pairs));
	add_metric(pairs, 3, "vmstat.system.cs", cs, 0);
	add_metric(pairs, 3, "aux.constant", constant, 0);
	add_metric(pairs, 3, "bench.score", score, 0);
	add_metric(pairs, 3, "time.elapsed", partial, 2);
	assert_int_equal(
	    report_compare_rows(&rows, &count, pairs, 3, "bench.score"), 0);
	/* the KPI first; the unchanged constant and the metric revision 2
	 * lacks are left out; vmstat changed in the third column only */
	assert_int_equal(count, 2);
	assert_string_equal(rows[0].metric, "bench.score");
	assert_string_equal(rows[1].metric, "vmstat.system.cs");
	for (k = 0; k < 3; k++) {
		assert_true(fabs(rows[0].sides[k].mean - score[k]) < 0.01);
		assert_int_equal(rows[0].sides[k].runs, 5);
		assert_true(rows[0].sides[k].stddev_pct < 1);
	}
	assert_true(fabs(rows[1].sides[2].mean - 6000) < 0.1);
	free(rows);
	assert_int_equal(
	    report_compare_rows(&rows, &count, pairs, 1, "bench.score"),
	    -EINVAL);
	report_samples_clear(&pairs[0]);
	report_samples_clear(&pairs[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_report_compare__two_columns_are_the_robot_row),
	    cmocka_unit_test(test_report_compare__three_column_row),
	    cmocka_unit_test(test_report_compare__row_refuses_bad_input),
	    cmocka_unit_test(test_report_compare__table_head),
	    cmocka_unit_test(test_report_compare__subject),
	    cmocka_unit_test(test_report_compare__body_has_the_table),
	    cmocka_unit_test(test_report_compare__bench_before_the_checkouts),
	    cmocka_unit_test(test_report_compare__refuses_bad_input),
	    cmocka_unit_test(test_report_compare__unmeasured_column),
	    cmocka_unit_test(
		test_report_compare__rows_selected_across_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
