/*
 * server/store/store_engine.c against a real PostgreSQL (testdb.h): a
 * job's options with the job's limits over the testcase's, its candidates
 * by index with their parents, and the verdict or failure it ends with,
 * read back column by column.  Each test makes the jobs it needs.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../server/store/store_engine.h"
#include "testdb.h"

#define NO_JOB 999999

/* The first column of the first row of `sql` as a number. */
static long long sql_int(const char *sql, int n, const char *const *params)
{
	PGresult *r = db_exec(db_conn(), sql, n, params);
	long long value;

	assert_non_null(r);
	assert_int_equal(PQntuples(r), 1);
	value = db_int(r, 0, 0);
	PQclear(r);
	return value;
}

/* Text of the first column of the first row of `sql` with the one
 * parameter `id` ("NULL" for SQL NULL). */
static void sql_text(char *out, size_t size, const char *sql, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r = db_exec(db_conn(), sql, 1, params);

	assert_non_null(r);
	assert_int_equal(PQntuples(r), 1);
	snprintf(out, size, "%s",
		 db_is_null(r, 0, 0) ? "NULL" : db_text(r, 0, 0));
	PQclear(r);
}

/* A repository and a testcase: 5 to 30 runs, 2.5 %, lower is better. */
static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec(
	    "INSERT INTO repos (name, url) VALUES ('proj', '/srv/proj')");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better, min_change_pct, runs_min, runs_max)"
		    " VALUES ('tc', 'make', './bench', 'ms', false, 2.5, 5,"
		    " 30)");
	return 0;
}

/* A job with the limits `runs_min` and `runs_max` (NULL: the
 * testcase's) and no commits. */
static long long make_job(const char *runs_min, const char *runs_max)
{
	const char *params[2] = {runs_min, runs_max};

	return sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		       " bad_rev, good_sha, bad_sha, runs_min, runs_max)"
		       " SELECT r.id, t.id, 'g', 'b', 'g', 'b', $1, $2"
		       " FROM repos r, testcases t RETURNING id",
		       2, params);
}

static void test_store_engine__options_of_a_job(void **state)
{
	long long job = make_job(NULL, NULL);
	struct store_engine_options o;

	(void)state;
	assert_int_equal(store_engine_options(&o, db_conn(), job), STORE_OK);
	assert_string_equal(o.state, "queued");
	assert_int_equal(o.runs_min, 5);
	assert_int_equal(o.runs_max, 30);
	assert_true(o.min_change_pct == 2.5);
	assert_false(o.higher_is_better);
}

static void test_store_engine__the_jobs_limits_come_first(void **state)
{
	long long both = make_job("8", "12"), min_only = make_job("40", NULL);
	struct store_engine_options o;

	(void)state;
	assert_int_equal(store_engine_options(&o, db_conn(), both), STORE_OK);
	assert_int_equal(o.runs_min, 8);
	assert_int_equal(o.runs_max, 12);
	/* The testcase's 30 is below the job's 40: never below runs_min. */
	assert_int_equal(store_engine_options(&o, db_conn(), min_only),
			 STORE_OK);
	assert_int_equal(o.runs_min, 40);
	assert_int_equal(o.runs_max, 40);
}

static void test_store_engine__options_of_no_job(void **state)
{
	struct store_engine_options o;

	(void)state;
	memset(&o, 0x55, sizeof(o));
	assert_int_equal(store_engine_options(&o, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
	assert_string_equal(o.state, "");
	assert_int_equal(o.runs_min, 0);
}

static void test_store_engine__candidates_by_index(void **state)
{
	long long job = make_job(NULL, NULL);
	char job_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job_text, job)};
	struct store_engine_commits list;
	PGresult *r;

	(void)state;
	/* Stored out of order; 3 merges 1 and 2. */
	r = db_exec(db_conn(),
		    "INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email, build_failed, parents)"
		    " VALUES ($1, 3, 'c3', 'merge', 'Bo', 'bo@x.org', false,"
		    " '{1,2}'), ($1, 0, 'c0', 'good', 'Ada', 'ada@x.org',"
		    " false, '{}'), ($1, 2, 'c2', 'side', 'Cy', 'cy@x.org',"
		    " true, '{0}'), ($1, 1, 'c1', 'main', 'Ada', 'ada@x.org',"
		    " false, '{0}')",
		    1, params);
	assert_non_null(r);
	PQclear(r);
	assert_int_equal(store_engine_commits(&list, db_conn(), job),
			 STORE_OK);
	assert_int_equal(list.count, 4);
	assert_int_equal(list.commits[0].index, 0);
	assert_string_equal(list.commits[0].sha, "c0");
	assert_string_equal(list.commits[0].subject, "good");
	assert_string_equal(list.commits[0].author_name, "Ada");
	assert_string_equal(list.commits[0].author_email, "ada@x.org");
	assert_false(list.commits[0].build_failed);
	assert_int_equal(list.commits[0].parent_count, 0);
	assert_int_equal(list.commits[1].index, 1);
	assert_int_equal(list.commits[1].parent_count, 1);
	assert_int_equal(list.commits[1].parents[0], 0);
	assert_int_equal(list.commits[2].index, 2);
	assert_string_equal(list.commits[2].sha, "c2");
	assert_true(list.commits[2].build_failed);
	assert_int_equal(list.commits[2].parent_count, 1);
	assert_int_equal(list.commits[3].index, 3);
	assert_string_equal(list.commits[3].author_name, "Bo");
	assert_int_equal(list.commits[3].parent_count, 2);
	assert_int_equal(list.commits[3].parents[0], 1);
	assert_int_equal(list.commits[3].parents[1], 2);
	store_engine_commits_clear(&list);
	assert_null(list.commits);
	assert_null(list.result);
}

static void test_store_engine__no_candidates_without_a_job(void **state)
{
	long long job = make_job(NULL, NULL);
	struct store_engine_commits list;

	(void)state;
	assert_int_equal(store_engine_commits(&list, db_conn(), job),
			 STORE_OK);
	assert_int_equal(list.count, 0);
	store_engine_commits_clear(&list);
	assert_int_equal(store_engine_commits(&list, db_conn(), NO_JOB),
			 STORE_OK);
	assert_int_equal(list.count, 0);
	store_engine_commits_clear(&list);
}

static void test_store_engine__a_verdict_is_stored_whole(void **state)
{
	long long job = make_job(NULL, NULL);
	struct store_engine_verdict v = {
	    .verdict = "regression",
	    .culprit_sha = "c2",
	    .parent_sha = "c1",
	    .message = NULL,
	    .culprits = "[{\"commit\": \"c2\"}]",
	    .change_pct = 12.345678901234567,
	    .p_value = 0.001,
	    .confidence = 0.99,
	    .change_ci95_lo = 10.5,
	    .change_ci95_hi = 14.25,
	};
	char text[256];

	(void)state;
	assert_int_equal(store_engine_finish(db_conn(), job, &v), STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT state || ' ' || verdict || ' ' || culprit_sha || ' '"
		 " || parent_sha || ' ' || coalesce(message, 'NULL') || ' '"
		 " || culprits::text || ' ' || (finished_at IS NOT NULL)"
		 " FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "done regression c2 c1 NULL"
				  " [{\"commit\": \"c2\"}] true");
	/* Every bit of the numbers (%.17g). */
	sql_text(text, sizeof(text),
		 "SELECT (change_pct = 12.345678901234567::float8 AND"
		 " p_value = 0.001::float8 AND confidence = 0.99::float8 AND"
		 " change_ci95_lo = 10.5 AND change_ci95_hi = 14.25)::text"
		 " FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "true");
}

static void test_store_engine__no_interval_unless_both_finite(void **state)
{
	long long job = make_job(NULL, NULL), half = make_job(NULL, NULL);
	struct store_engine_verdict v = {
	    .verdict = "no-change",
	    .message = "no commit changed the KPI",
	    .culprits = "[]",
	    .change_pct = 0.5,
	    .p_value = 0.4,
	    .confidence = 0.5,
	    .change_ci95_lo = NAN,
	    .change_ci95_hi = NAN,
	};
	char text[256];

	(void)state;
	assert_int_equal(store_engine_finish(db_conn(), job, &v), STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT verdict || ' ' || coalesce(culprit_sha, 'NULL')"
		 " || ' ' || coalesce(parent_sha, 'NULL') || ' ' || message"
		 " || ' ' || (change_ci95_lo IS NULL) || ' ' ||"
		 " (change_ci95_hi IS NULL) FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "no-change NULL NULL no commit changed"
				  " the KPI true true");
	v.change_ci95_lo = -1.0;
	v.change_ci95_hi = INFINITY;
	assert_int_equal(store_engine_finish(db_conn(), half, &v), STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT (change_ci95_lo IS NULL) || ' ' ||"
		 " (change_ci95_hi IS NULL) FROM jobs WHERE id = $1",
		 half);
	assert_string_equal(text, "true true");
}

static void test_store_engine__a_verdict_the_table_refuses(void **state)
{
	long long job = make_job(NULL, NULL);
	struct store_engine_verdict v = {
	    .verdict = "maybe",
	    .culprits = "[]",
	    .change_ci95_lo = NAN,
	    .change_ci95_hi = NAN,
	};
	char text[64];

	(void)state;
	assert_int_equal(store_engine_finish(db_conn(), job, &v),
			 STORE_FAILED);
	assert_string_equal(db_last_failure(), "23514");
	sql_text(text, sizeof(text),
		 "SELECT state || ' ' || coalesce(verdict, 'NULL')"
		 " FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "queued NULL");
}

static void test_store_engine__a_failure_says_why(void **state)
{
	long long job = make_job(NULL, NULL);
	struct store_engine_options o;
	char text[128];

	(void)state;
	assert_int_equal(store_engine_fail(db_conn(), job, "good is bad"),
			 STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT state || ' ' || message || ' ' ||"
		 " coalesce(verdict, 'NULL') || ' ' || (finished_at IS NOT"
		 " NULL) FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "failed good is bad NULL true");
	assert_int_equal(store_engine_options(&o, db_conn(), job), STORE_OK);
	assert_string_equal(o.state, "failed");
	/* No such job: nothing to mark, and nothing fails. */
	assert_int_equal(store_engine_fail(db_conn(), NO_JOB, "x"), STORE_OK);
}

static void test_store_engine__a_rolled_back_verdict_is_gone(void **state)
{
	long long job = make_job(NULL, NULL);
	struct store_engine_verdict v = {
	    .verdict = "improvement",
	    .culprit_sha = "c1",
	    .parent_sha = "c0",
	    .culprits = "[]",
	    .change_pct = -3,
	    .change_ci95_lo = NAN,
	    .change_ci95_hi = NAN,
	};
	struct store_engine_options o;

	(void)state;
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_engine_finish(db_conn(), job, &v), STORE_OK);
	assert_int_equal(store_engine_options(&o, db_conn(), job), STORE_OK);
	assert_string_equal(o.state, "done");
	db_rollback(db_conn());
	assert_int_equal(store_engine_options(&o, db_conn(), job), STORE_OK);
	assert_string_equal(o.state, "queued");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_engine__options_of_a_job),
	    cmocka_unit_test(test_store_engine__the_jobs_limits_come_first),
	    cmocka_unit_test(test_store_engine__options_of_no_job),
	    cmocka_unit_test(test_store_engine__candidates_by_index),
	    cmocka_unit_test(test_store_engine__no_candidates_without_a_job),
	    cmocka_unit_test(test_store_engine__a_verdict_is_stored_whole),
	    cmocka_unit_test(
		test_store_engine__no_interval_unless_both_finite),
	    cmocka_unit_test(test_store_engine__a_verdict_the_table_refuses),
	    cmocka_unit_test(test_store_engine__a_failure_says_why),
	    cmocka_unit_test(test_store_engine__a_rolled_back_verdict_is_gone),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
