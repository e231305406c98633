/*
 * server/store/store_compare.c against a real PostgreSQL
 * (tests/unit/testdb.h): a job marked a compare job reads back with its
 * columns, each column's result and the job's end are stored, a bisection
 * is no compare job, and a re-test's source says what its job is.
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
#include <stdlib.h>
#include <string.h>

#include "../../server/store/store_compare.h"
#include "../../server/store/store_jobs.h"
#include "../../server/store/store_repos.h"
#include "testdb.h"

#define NO_JOB 999999

static long long make_job(void)
{
	static const char *const shas[] = {
	    "1111111111111111111111111111111111111111",
	    "2222222222222222222222222222222222222222",
	    "3333333333333333333333333333333333333333"};
	static char subject[] = "mm: x", name[] = "Ada", email[] = "a@x.org";
	struct gitrepo_commit commits[3];
	struct store_job_new job = {0};
	struct store_testcase t;
	struct store_repo r;
	size_t parents[2] = {0, 1}, i;
	long long id = 0;

	memset(commits, 0, sizeof(commits));
	for (i = 0; i < 3; i++) {
		snprintf(commits[i].sha, sizeof(commits[i].sha), "%s",
			 shas[i]);
		commits[i].subject = subject;
		commits[i].author_name = name;
		commits[i].author_email = email;
		if (i > 0) {
			commits[i].parents = &parents[i - 1];
			commits[i].parent_count = 1;
		}
	}
	assert_int_equal(store_repos_find(&r, db_conn(), "toy"), STORE_OK);
	assert_int_equal(store_testcases_find(&t, db_conn(), "bench"),
			 STORE_OK);
	job.repo_id = r.id;
	job.testcase_id = t.id;
	job.good_rev = "v1.0";
	job.bad_rev = "fix";
	job.notify = "[\"dev@example.org\"]";
	job.group = "rack-b";
	store_repo_clear(&r);
	store_testcase_clear(&t);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_jobs_create(&id, db_conn(), &job, commits, 3),
			 STORE_OK);
	assert_int_equal(db_commit(db_conn()), 0);
	return id;
}

static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec("INSERT INTO repos (name, url) VALUES ('toy', '/srv/t')");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better) VALUES ('bench', 'make', './b', 'ops',"
		    " true)");
	return 0;
}

static void test_store_compare__a_compare_job_reads_back(void **state)
{
	static const char *const revisions[] = {"v1.0", "2222", "fix"};
	static const char *const labels[] = {"base", "culprit", "fix"};
	long long bisection = make_job(), id = make_job();
	struct store_compare cmp;
	char kind[16];

	(void)state;
	assert_int_equal(store_compare_get(&cmp, db_conn(), bisection),
			 STORE_NOT_FOUND);
	assert_int_equal(store_compare_kind(db_conn(), bisection, kind),
			 STORE_OK);
	assert_string_equal(kind, "bisect");
	assert_int_equal(
	    store_compare_mark(db_conn(), id, revisions, labels, 3, bisection),
	    STORE_OK);
	assert_int_equal(store_compare_kind(db_conn(), id, kind), STORE_OK);
	assert_string_equal(kind, "compare");
	assert_int_equal(store_compare_get(&cmp, db_conn(), id), STORE_OK);
	assert_int_equal(cmp.count, 3);
	assert_int_equal(cmp.retest_of, bisection);
	assert_string_equal(cmp.columns[1].revision, "2222");
	assert_string_equal(cmp.columns[2].label, "fix");
	assert_null(cmp.columns[1].verdict);
	assert_true(isnan(cmp.columns[1].change_pct));
	store_compare_clear(&cmp);

	assert_int_equal(store_compare_set_column(db_conn(), id, 1,
						  "regression", -10.5, 1e-6),
			 STORE_OK);
	assert_int_equal(store_compare_finish(db_conn(), id, "regression",
					      -10.5, NAN, "2222 -10.5%"),
			 STORE_OK);
	assert_int_equal(store_compare_get(&cmp, db_conn(), id), STORE_OK);
	assert_string_equal(cmp.columns[1].verdict, "regression");
	assert_true(fabs(cmp.columns[1].change_pct + 10.5) < 1e-9);
	assert_null(cmp.columns[2].verdict);
	store_compare_clear(&cmp);
	{
		PGresult *r =
		    db_exec(db_conn(),
			    "SELECT state || ' ' || verdict || ' ' ||"
			    " (p_value IS NULL) FROM jobs"
			    " WHERE verdict IS NOT NULL",
			    0, NULL);

		assert_non_null(r);
		assert_int_equal(PQntuples(r), 1);
		assert_string_equal(PQgetvalue(r, 0, 0),
				    "done regression true");
		PQclear(r);
	}
}

static void test_store_compare__a_retest_source(void **state)
{
	struct store_compare_source source;
	long long id = make_job();
	char kind[16];

	(void)state;
	assert_int_equal(store_compare_source(&source, db_conn(), id),
			 STORE_OK);
	assert_string_equal(source.kind, "bisect");
	assert_string_equal(source.state, "queued");
	assert_null(source.culprit_sha);
	assert_string_equal(source.repo, "toy");
	assert_string_equal(source.testcase, "bench");
	assert_string_equal(source.notify, "[\"dev@example.org\"]");
	/* A re-test or re-check runs where the job it repeats ran. */
	assert_string_equal(source.group, "rack-b");
	store_compare_source_clear(&source);
	assert_int_equal(store_compare_source(&source, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
	assert_int_equal(store_compare_kind(db_conn(), NO_JOB, kind),
			 STORE_NOT_FOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_compare__a_compare_job_reads_back),
	    cmocka_unit_test(test_store_compare__a_retest_source),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
