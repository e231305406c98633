/*
 * server/store/store_watch_reports.c against a real PostgreSQL
 * (testdb.h): the jobs of other testcases that measure the same head,
 * reports held until every job of the head has ended, released by head
 * and culprit, and the other testcases' samples a held report carries.
 * Each test starts with nothing held.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/store/store.h"
#include "../../server/store/store_watches.h"
#include "report_build.h"
#include "testdb.h"

#define NO_JOB 999999

static long long watch_id, other_watch_id, tc_a, tc_b, tc_c;

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

/* Runs `sql` with the one parameter `id`. */
static void sql_exec(const char *sql, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r = db_exec(db_conn(), sql, 1, params);

	assert_non_null(r);
	PQclear(r);
}

static long long make_testcase(const char *name, const char *kpi)
{
	const char *params[2] = {name, kpi};

	return sql_int("INSERT INTO testcases (name, build, run, kpi,"
		       " higher_is_better) VALUES ($1, 'make', './b', $2,"
		       " true) RETURNING id",
		       2, params);
}

/* A repository, testcases alpha, beta and gamma, two watches. */
static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec("INSERT INTO repos (name, url) VALUES ('p', '/srv/p')");
	tc_a = make_testcase("alpha", "ms");
	tc_b = make_testcase("beta", "ops");
	tc_c = make_testcase("gamma", "rss");
	watch_id = sql_int("INSERT INTO watches (repo_id, branch) SELECT id,"
			   " '*' FROM repos RETURNING id",
			   0, NULL);
	other_watch_id = sql_int("INSERT INTO watches (repo_id, branch)"
				 " SELECT id, '*' FROM repos RETURNING id",
				 0, NULL);
	return 0;
}

static int nothing_held(void **state)
{
	(void)state;
	testdb_exec("DELETE FROM watch_held");
	return 0;
}

/* A job of watch `watch` on `branch` for testcase `tc` over the range
 * `good`..`bad` (three commits) in `state`. */
static long long watch_job(long long watch, const char *branch, long long tc,
			   const char *good, const char *bad,
			   const char *state)
{
	char watch_text[STORE_INT_TEXT], tc_text[STORE_INT_TEXT];
	char job_text[STORE_INT_TEXT];
	const char *params[6] = {store_int_text(watch_text, watch),
				 branch,
				 store_int_text(tc_text, tc),
				 good,
				 bad,
				 state};
	const char *job_params[3] = {job_text, good, bad};
	long long job;
	PGresult *r;

	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha, state) SELECT r.id, $2,"
		      " $3, $1, $3, $4, $5 FROM repos r RETURNING id",
		      5, params + 1);
	store_int_text(job_text, job);
	r = db_exec(db_conn(),
		    "INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email) VALUES ($1, 0, $2, 's', 'A',"
		    " 'a@x.org'), ($1, 1, 'mid', 's', 'A', 'a@x.org'),"
		    " ($1, 2, $3, 's', 'A', 'a@x.org')",
		    3, job_params);
	assert_non_null(r);
	PQclear(r);
	r = db_exec(db_conn(),
		    "INSERT INTO watch_jobs (job_id, watch_id, branch, role)"
		    " SELECT $1, $2, $3, 'bisect'",
		    3, (const char *const[]){job_text, watch_text, branch});
	assert_non_null(r);
	PQclear(r);
	return job;
}

static bool siblings(long long job)
{
	bool out = true;

	assert_int_equal(store_watches_has_siblings(db_conn(), job, &out), 0);
	return out;
}

static void test_store_watch_reports__siblings_of_a_head(void **state)
{
	long long a = watch_job(watch_id, "sib", tc_a, "g1", "b1", "done");
	long long b, other_range, other_branch, other_watch, plain;

	(void)state;
	assert_false(siblings(a));
	b = watch_job(watch_id, "sib", tc_b, "g1", "b1", "running");
	assert_true(siblings(a));
	assert_true(siblings(b));
	/* Not the same head: another range, branch or watch. */
	other_range = watch_job(watch_id, "sib", tc_c, "g1", "b2", "running");
	other_branch =
	    watch_job(watch_id, "sib/2", tc_c, "g1", "b1", "running");
	other_watch =
	    watch_job(other_watch_id, "sib", tc_c, "g1", "b1", "running");
	assert_false(siblings(other_range));
	assert_false(siblings(other_branch));
	assert_false(siblings(other_watch));
	/* A job the watcher did not make has none. */
	plain =
	    sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		    " bad_rev, good_sha, bad_sha) SELECT id, 1, 'g1', 'b1',"
		    " 'g1', 'b1' FROM repos RETURNING id",
		    0, NULL);
	assert_false(siblings(plain));
	assert_false(siblings(NO_JOB));
}

static void
test_store_watch_reports__the_same_testcase_is_no_sibling(void **state)
{
	long long a = watch_job(watch_id, "same", tc_a, "g1", "b1", "done");

	(void)state;
	/* A second job of alpha over the same head (a measurement made
	 * again): the contract counts other testcases only. */
	watch_job(watch_id, "same", tc_a, "g1", "b1", "running");
	assert_false(siblings(a));
}

/* Held reports ready now: "job:which:culprit:group" joined by " | ". */
static void ready(char *out, size_t size)
{
	struct store_watch_held *held = NULL;
	size_t count = 99, i, used = 0;

	assert_int_equal(store_watches_held_ready(&held, &count, db_conn()),
			 0);
	assert_non_null(held);
	out[0] = '\0';
	for (i = 0; i < count && used < size; i++)
		used += (size_t)snprintf(
		    out + used, size - used, "%s%lld:%zu:%s:%s",
		    i > 0 ? " | " : "", held[i].job_id, held[i].which,
		    held[i].culprit, held[i].group);
	free(held);
}

static void test_store_watch_reports__held_until_the_head_ends(void **state)
{
	long long a = watch_job(watch_id, "hold", tc_a, "g2", "b2", "done");
	long long b = watch_job(watch_id, "hold", tc_b, "g2", "b2", "running");
	char text[512], expected[512];

	(void)state;
	ready(text, sizeof(text));
	assert_string_equal(text, "");
	assert_int_equal(store_watches_hold(db_conn(), a, 1, "cul"), 0);
	/* Held twice: once. */
	assert_int_equal(store_watches_hold(db_conn(), a, 1, "cul"), 0);
	/* beta still runs. */
	ready(text, sizeof(text));
	assert_string_equal(text, "");
	sql_exec("UPDATE jobs SET state = 'done' WHERE id = $1", b);
	assert_int_equal(store_watches_hold(db_conn(), b, 0, "cul"), 0);
	ready(text, sizeof(text));
	snprintf(expected, sizeof(expected),
		 "%lld:1:cul:%lld hold g2 b2 | %lld:0:cul:%lld hold g2 b2", a,
		 watch_id, b, watch_id);
	assert_string_equal(text, expected);
	/* Sent: unheld; the other stays until it is sent too. */
	assert_int_equal(store_watches_unhold(db_conn(), a, 1), 0);
	ready(text, sizeof(text));
	snprintf(expected, sizeof(expected), "%lld:0:cul:%lld hold g2 b2", b,
		 watch_id);
	assert_string_equal(text, expected);
	assert_int_equal(store_watches_unhold(db_conn(), b, 0), 0);
	ready(text, sizeof(text));
	assert_string_equal(text, "");
	/* Unholding what is not held changes nothing. */
	assert_int_equal(store_watches_unhold(db_conn(), NO_JOB, 0), 0);
}

static void test_store_watch_reports__ready_by_head_and_culprit(void **state)
{
	long long a = watch_job(watch_id, "order", tc_a, "g3", "b3", "done");
	long long b = watch_job(watch_id, "order", tc_b, "g3", "b3", "done");
	long long c = watch_job(watch_id, "order", tc_c, "g3", "b3", "done");
	long long cancelled =
	    watch_job(watch_id, "order", tc_a, "g4", "b4", "cancelled");
	char text[1024], expected[1024];

	(void)state;
	store_watches_hold(db_conn(), c, 0, "x2");
	store_watches_hold(db_conn(), b, 0, "x1");
	store_watches_hold(db_conn(), a, 2, "x2");
	store_watches_hold(db_conn(), a, 1, "x1");
	/* A cancelled job has ended too. */
	store_watches_hold(db_conn(), cancelled, 0, "x0");
	ready(text, sizeof(text));
	snprintf(expected, sizeof(expected),
		 "%lld:1:x1:%lld order g3 b3 | %lld:0:x1:%lld order g3 b3 | "
		 "%lld:2:x2:%lld order g3 b3 | %lld:0:x2:%lld order g3 b3 | "
		 "%lld:0:x0:%lld order g4 b4",
		 a, watch_id, b, watch_id, a, watch_id, c, watch_id, cancelled,
		 watch_id);
	assert_string_equal(text, expected);
}

/* The series of `name` in `s`, or NULL. */
static const struct report_series *series(const struct report_samples *s,
					  const char *name)
{
	size_t i;

	for (i = 0; i < s->count; i++)
		if (strcmp(s->series[i].name, name) == 0)
			return &s->series[i];
	return NULL;
}

/* A run of commit `idx` of `job` with `kpi` (NULL: none). */
static void add_run(long long job, long long idx, const char *kpi)
{
	char job_text[STORE_INT_TEXT], idx_text[STORE_INT_TEXT];
	const char *params[3] = {store_int_text(job_text, job),
				 store_int_text(idx_text, idx), kpi};
	PGresult *r;

	r = db_exec(db_conn(),
		    "WITH t AS (INSERT INTO tasks (job_id, plan) VALUES ($1,"
		    " jsonb_build_array(jsonb_build_object('idx', $2::int,"
		    " 'runs', 3, 'purpose', 'search'))) RETURNING id)"
		    " INSERT INTO runs (job_id, task_id, commit_idx, kpi,"
		    " exit_code) SELECT $1, t.id, $2::int, $3::float8, 0"
		    " FROM t",
		    3, params);
	assert_non_null(r);
	PQclear(r);
}

static void test_store_watch_reports__samples_of_the_others(void **state)
{
	long long a = watch_job(watch_id, "samples", tc_a, "g5", "b5", "done");
	long long b = watch_job(watch_id, "samples", tc_b, "g5", "b5", "done");
	long long c = watch_job(watch_id, "samples", tc_c, "g5", "b5", "done");
	struct report_samples s = {0};
	const struct report_series *ops;

	(void)state;
	add_run(a, 0, "100"); /* its own runs are its report's already */
	add_run(b, 0, "1");
	add_run(b, 2, "3");
	add_run(b, 0, "2");
	add_run(b, 1, "50"); /* not an endpoint of the culprit */
	add_run(b, 2, NULL); /* no KPI */
	add_run(c, 0, "7");  /* gamma blames another commit */
	store_watches_hold(db_conn(), a, 0, "cul");
	store_watches_hold(db_conn(), b, 0, "cul");
	store_watches_hold(db_conn(), c, 0, "other");
	assert_int_equal(store_watches_held_samples(&s, db_conn(), a, 0, 0, 2),
			 0);
	assert_int_equal(s.count, 1);
	ops = series(&s, "beta.ops");
	assert_non_null(ops);
	assert_int_equal(ops->count[0], 2);
	assert_true(ops->side[0][0] == 1.0);
	assert_true(ops->side[0][1] == 2.0);
	assert_int_equal(ops->count[1], 1);
	assert_true(ops->side[1][0] == 3.0);
	report_samples_clear(&s);
	/* A report that is not held gets nothing. */
	assert_int_equal(store_watches_held_samples(&s, db_conn(), a, 5, 0, 2),
			 0);
	assert_int_equal(s.count, 0);
	store_watches_unhold(db_conn(), a, 0);
	assert_int_equal(store_watches_held_samples(&s, db_conn(), a, 0, 0, 2),
			 0);
	assert_int_equal(s.count, 0);
	report_samples_clear(&s);
}

#define HELD_TEST(name)                                                       \
	cmocka_unit_test_setup(test_store_watch_reports__##name, nothing_held)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    HELD_TEST(siblings_of_a_head),
	    HELD_TEST(the_same_testcase_is_no_sibling),
	    HELD_TEST(held_until_the_head_ends),
	    HELD_TEST(ready_by_head_and_culprit),
	    HELD_TEST(samples_of_the_others),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
