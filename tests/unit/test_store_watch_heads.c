/*
 * server/store/store_watch_heads.c against a real PostgreSQL (testdb.h):
 * the heads of watched branches taken up, dropped, rebased and measured
 * with the KPI of their runs; the jobs the watcher made, linked, promoted,
 * finished and listed with their notes; culprits reported once; the open
 * regression of a branch; and heads whose measurement died, reconciled.
 * Each test works on a branch of its own.
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
#include <stdlib.h>
#include <string.h>

#include "../../server/store/store.h"
#include "../../server/store/store_watches.h"
#include "testdb.h"

#define NO_JOB 999999

static long long watch_id, other_watch_id, tc_a, tc_b;

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
 * parameter `id` ("NULL" for SQL NULL, "" for no row). */
static void sql_text(char *out, size_t size, const char *sql, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r = db_exec(db_conn(), sql, 1, params);

	assert_non_null(r);
	snprintf(out, size, "%s",
		 PQntuples(r) == 0     ? ""
		 : db_is_null(r, 0, 0) ? "NULL"
				       : db_text(r, 0, 0));
	PQclear(r);
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

/* A repository, testcases alpha and beta, and two watches of both. */
static int group_setup(void **state)
{
	long long testcases[2];
	struct store_watch_new in = {
	    .branch = "*",
	    .interval_s = 60,
	    .regressions_only = true,
	    .notify = "[]",
	    .testcase_ids = testcases,
	    .testcase_count = 2,
	};

	if (testdb_setup(state) < 0)
		return -1;
	in.repo_id = sql_int("INSERT INTO repos (name, url) VALUES"
			     " ('proj', '/srv/proj') RETURNING id",
			     0, NULL);
	tc_a = sql_int("INSERT INTO testcases (name, build, run, kpi,"
		       " higher_is_better) VALUES ('alpha', 'make', './a',"
		       " 'ms', false) RETURNING id",
		       0, NULL);
	tc_b = sql_int("INSERT INTO testcases (name, build, run, kpi,"
		       " higher_is_better) VALUES ('beta', 'make', './b',"
		       " 'ops', true) RETURNING id",
		       0, NULL);
	testcases[0] = tc_a;
	testcases[1] = tc_b;
	if (store_watches_insert(db_conn(), &in, &watch_id) < 0)
		return -1;
	in.regressions_only = false;
	return store_watches_insert(db_conn(), &in, &other_watch_id);
}

/* A job of testcase `tc` in `state` with commits c0, c1, c2. */
static long long make_job(long long tc, const char *state)
{
	char tc_text[STORE_INT_TEXT], job_text[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(tc_text, tc), state};
	long long job;

	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha, state) SELECT r.id, $1,"
		      " 'c0', 'c2', 'c0', 'c2', $2 FROM repos r RETURNING id",
		      2, params);
	store_int_text(job_text, job);
	sql_exec("INSERT INTO job_commits (job_id, idx, sha, subject,"
		 " author_name, author_email) SELECT $1, i, 'c' || i, 's',"
		 " 'Ada', 'ada@example.org' FROM generate_series(0, 2) i",
		 job);
	return job;
}

/* A run of commit `idx` of `job`: `kpi` NULL for none. */
static void add_run(long long job, long long idx, const char *kpi,
		    const char *purpose)
{
	char job_text[STORE_INT_TEXT], idx_text[STORE_INT_TEXT];
	char task_text[STORE_INT_TEXT];
	const char *task_params[2] = {store_int_text(job_text, job),
				      store_int_text(idx_text, idx)};
	const char *params[5] = {job_text, task_text, idx_text, kpi, purpose};
	PGresult *r;

	store_int_text(task_text,
		       sql_int("INSERT INTO tasks (job_id, plan) VALUES ($1,"
			       " jsonb_build_array(jsonb_build_object('idx',"
			       " $2::int, 'runs', 3, 'purpose', 'search')))"
			       " RETURNING id",
			       2, task_params));
	r = db_exec(db_conn(),
		    "INSERT INTO runs (job_id, task_id, commit_idx, kpi,"
		    " exit_code, purpose) VALUES ($1, $2, $3, $4, 0, $5)",
		    5, params);
	assert_non_null(r);
	PQclear(r);
}

/* Takes up head `sha` of `branch` for testcase alpha; its id. */
static long long add_head(const char *branch, const char *sha,
			  const char *state, long long base)
{
	long long id = 0;

	assert_int_equal(store_watches_add_head(db_conn(), watch_id, tc_a,
						branch, sha, "subject of x",
						state, base, &id),
			 0);
	assert_true(id > 0);
	return id;
}

static void test_store_watch_heads__the_first_head_of_a_branch(void **state)
{
	struct store_head base;
	bool measuring = true;
	long long id = 0, again = -1;

	(void)state;
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "first"),
			 1);
	assert_false(measuring);
	assert_int_equal(store_watches_add_head(db_conn(), watch_id, tc_a,
						"first", "aaa", "mm: speed up",
						"baseline", 0, &id),
			 0);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "first"),
			 0);
	assert_false(measuring);
	assert_int_equal(base.id, id);
	assert_int_equal(base.testcase_id, tc_a);
	assert_string_equal(base.testcase, "alpha");
	assert_string_equal(base.branch, "first");
	assert_string_equal(base.sha, "aaa");
	assert_string_equal(base.subject, "mm: speed up");
	assert_string_equal(base.state, "baseline");
	assert_string_equal(base.outcome, "");
	assert_true(isnan(base.change_pct));
	assert_int_equal(base.job_id, 0);
	assert_int_equal(base.base_head_id, 0);
	assert_int_equal(strlen(base.seen_at), 20);
	assert_string_equal(base.measured_at, "");
	free(base.subject);
	/* Taken up before: 1, and *id_out untouched. */
	assert_int_equal(store_watches_add_head(db_conn(), watch_id, tc_a,
						"first", "aaa", "again",
						"baseline", 0, &again),
			 1);
	assert_int_equal(again, -1);
	/* The same SHA of another testcase, branch or watch is new. */
	assert_int_equal(store_watches_add_head(db_conn(), watch_id, tc_b,
						"first", "aaa", "s",
						"baseline", 0, &again),
			 0);
	assert_int_equal(store_watches_add_head(db_conn(), other_watch_id,
						tc_a, "first", "aaa", "s",
						"baseline", 0, &again),
			 0);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "second"),
			 1);
}

static void test_store_watch_heads__base_skips_what_failed(void **state)
{
	struct store_head base;
	bool measuring = false;
	long long a = add_head("skip", "a", "baseline", 0), b, c;

	(void)state;
	b = add_head("skip", "b", "measuring", a);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "skip"),
			 0);
	assert_true(measuring);
	assert_int_equal(base.id, a);
	free(base.subject);
	/* One measuring head per branch: a second one is refused. */
	assert_int_equal(store_watches_add_head(db_conn(), watch_id, tc_a,
						"skip", "b2", "s", "measuring",
						a, &c),
			 1);
	/* A failed measurement is no base; a measured one is. */
	sql_exec("UPDATE watch_heads SET state = 'measured', outcome ="
		 " 'failed' WHERE id = $1",
		 b);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "skip"),
			 0);
	assert_false(measuring);
	assert_int_equal(base.id, a);
	free(base.subject);
	c = add_head("skip", "c", "measuring", a);
	sql_exec("UPDATE watch_heads SET state = 'measured', outcome ="
		 " 'same', change_pct = 0.25 WHERE id = $1",
		 c);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "skip"),
			 0);
	assert_int_equal(base.id, c);
	assert_string_equal(base.state, "measured");
	assert_string_equal(base.outcome, "same");
	assert_true(base.change_pct == 0.25);
	assert_int_equal(base.base_head_id, a);
	free(base.subject);
}

static void test_store_watch_heads__dropped_and_rebased(void **state)
{
	struct store_head base;
	bool measuring = false;
	long long a = add_head("drop", "a", "baseline", 0);
	long long b = add_head("drop", "b", "measuring", a), again;

	(void)state;
	assert_int_equal(store_watches_drop_head(db_conn(), b), 0);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "drop"),
			 0);
	assert_false(measuring);
	free(base.subject);
	/* Dropped, it is taken up again. */
	again = add_head("drop", "b", "measuring", a);
	assert_true(again != b);
	assert_int_equal(store_watches_rebase_head(db_conn(), again), 0);
	assert_int_equal(store_watches_base_head(&base, &measuring, db_conn(),
						 watch_id, tc_a, "drop"),
			 0);
	assert_false(measuring);
	assert_int_equal(base.id, again);
	assert_string_equal(base.state, "baseline");
	assert_int_equal(base.base_head_id, 0);
	free(base.subject);
}

static void test_store_watch_heads__a_job_linked_and_read(void **state)
{
	long long a = add_head("link", "c0", "baseline", 0);
	long long b = add_head("link", "c2", "measuring", a);
	long long job = make_job(tc_a, "queued");
	struct store_watch_job wj;
	char text[128];

	(void)state;
	assert_int_equal(
	    store_watches_link_job(db_conn(), watch_id, b, job, "link"), 0);
	sql_text(text, sizeof(text), "SELECT bad_rev FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "link");
	sql_text(text, sizeof(text),
		 "SELECT job_id FROM watch_heads WHERE id = $1", b);
	assert_int_equal(atoll(text), job);
	assert_int_equal(store_watches_job(&wj, db_conn(), job), 0);
	assert_int_equal(wj.job_id, job);
	assert_int_equal(wj.watch_id, watch_id);
	assert_int_equal(wj.head_id, b);
	assert_int_equal(wj.base_head_id, a);
	assert_int_equal(wj.testcase_id, tc_a);
	assert_string_equal(wj.role, "measure");
	assert_string_equal(wj.branch, "link");
	assert_true(wj.regressions_only);
	/* Promoted, it is a bisection of the range. */
	assert_int_equal(store_watches_promote(db_conn(), job), 0);
	assert_int_equal(store_watches_job(&wj, db_conn(), job), 0);
	assert_string_equal(wj.role, "bisect");
	/* A job the watcher did not make. */
	assert_int_equal(
	    store_watches_job(&wj, db_conn(), make_job(tc_a, "queued")), 1);
	assert_int_equal(wj.job_id, 0);
	assert_int_equal(store_watches_job(&wj, db_conn(), NO_JOB), 1);
}

static void test_store_watch_heads__a_job_outlives_its_watch(void **state)
{
	long long testcases[1] = {tc_b};
	struct store_watch_new in = {
	    .repo_id = 1,
	    .branch = "gone",
	    .interval_s = 60,
	    .regressions_only = true,
	    .notify = "[]",
	    .testcase_ids = testcases,
	    .testcase_count = 1,
	};
	struct store_watch_job wj;
	long long watch = 0, head = 0, job = make_job(tc_b, "running");

	(void)state;
	assert_int_equal(store_watches_insert(db_conn(), &in, &watch), 0);
	assert_int_equal(store_watches_add_head(db_conn(), watch, tc_b, "gone",
						"c2", "s", "measuring", 0,
						&head),
			 0);
	assert_int_equal(
	    store_watches_link_job(db_conn(), watch, head, job, "gone"), 0);
	assert_int_equal(store_watches_delete(db_conn(), watch), 0);
	assert_int_equal(store_watches_job(&wj, db_conn(), job), 0);
	assert_int_equal(wj.watch_id, 0);
	assert_int_equal(wj.head_id, 0);
	assert_int_equal(wj.base_head_id, 0);
	assert_int_equal(wj.testcase_id, tc_b);
	assert_string_equal(wj.branch, "gone");
	assert_false(wj.regressions_only);
}

/* "state outcome change measured_at-set" of head `id`. */
static void head_state(char *out, size_t size, long long id)
{
	sql_text(out, size,
		 "SELECT state || ' ' || coalesce(outcome, 'NULL') || ' ' ||"
		 " coalesce(change_pct::text, 'NULL') || ' ' ||"
		 " (measured_at IS NOT NULL) FROM watch_heads WHERE id = $1",
		 id);
}

/* The KPIs kept for head `id`, in order. */
static void head_runs(char *out, size_t size, long long id)
{
	sql_text(out, size,
		 "SELECT coalesce(string_agg(kpi::text, ' ' ORDER BY kpi),"
		 " '') FROM watch_head_runs WHERE head_id = $1",
		 id);
}

static void test_store_watch_heads__a_measurement_keeps_runs(void **state)
{
	long long a = add_head("measure", "c0", "baseline", 0);
	long long b = add_head("measure", "c2", "measuring", a);
	long long job = make_job(tc_a, "running");
	struct store_watch_job wj;
	char text[128];

	(void)state;
	add_run(job, 0, "10", "search");
	add_run(job, 0, "11", "search");
	add_run(job, 2, "12", "search");
	add_run(job, 2, "14", "search");
	add_run(job, 2, "13", "search");
	/* Left out: no KPI, a confirmation, the middle commit. */
	add_run(job, 2, NULL, "search");
	add_run(job, 2, "99", "confirm");
	add_run(job, 1, "50", "search");
	assert_int_equal(
	    store_watches_link_job(db_conn(), watch_id, b, job, "measure"), 0);
	assert_int_equal(store_watches_job(&wj, db_conn(), job), 0);
	assert_int_equal(
	    store_watches_measured(db_conn(), &wj, "changed", 15.5, 2), 0);
	head_state(text, sizeof(text), b);
	assert_string_equal(text, "measured changed 15.5 true");
	head_runs(text, sizeof(text), b);
	assert_string_equal(text, "12 13 14");
	head_runs(text, sizeof(text), a);
	assert_string_equal(text, "10 11");
	/* Again (a retried upload): each run is kept once; no change is
	 * NULL. */
	assert_int_equal(
	    store_watches_measured(db_conn(), &wj, "inconclusive", NAN, 2), 0);
	head_state(text, sizeof(text), b);
	assert_string_equal(text, "measured inconclusive NULL true");
	head_runs(text, sizeof(text), b);
	assert_string_equal(text, "12 13 14");
}

static void test_store_watch_heads__the_history_of_heads(void **state)
{
	long long testcases[2] = {tc_a, tc_b};
	struct store_watch_new in = {
	    .repo_id = 1,
	    .branch = "main",
	    .interval_s = 60,
	    .notify = "[]",
	    .testcase_ids = testcases,
	    .testcase_count = 2,
	};
	struct store_watch_job wj;
	struct store_head *heads = NULL;
	size_t count = 0;
	long long watch = 0, h0, h1, h2, hb, job = make_job(tc_a, "running");

	(void)state;
	assert_int_equal(store_watches_insert(db_conn(), &in, &watch), 0);
	store_watches_add_head(db_conn(), watch, tc_a, "main", "c0", "s0",
			       "baseline", 0, &h0);
	store_watches_add_head(db_conn(), watch, tc_b, "main", "c0", "s0",
			       "baseline", 0, &hb);
	store_watches_add_head(db_conn(), watch, tc_a, "main", "c2", "s2",
			       "measuring", h0, &h1);
	add_run(job, 0, "1", "search");
	add_run(job, 2, "2", "search");
	add_run(job, 2, "4", "search");
	add_run(job, 2, "3", "search");
	add_run(job, 2, "5", "search");
	store_watches_link_job(db_conn(), watch, h1, job, "main");
	store_watches_job(&wj, db_conn(), job);
	store_watches_measured(db_conn(), &wj, "changed", -8, 2);
	store_watches_promote(db_conn(), job);
	sql_exec("UPDATE jobs SET state = 'done', verdict = 'regression',"
		 " culprit_sha = 'c2' WHERE id = $1",
		 job);
	store_watches_add_head(db_conn(), watch, tc_a, "main", "c3", "s3",
			       "baseline", 0, &h2);

	assert_int_equal(
	    store_watches_heads(&heads, &count, db_conn(), watch, 0, 0), 0);
	assert_int_equal(count, 4);
	assert_int_equal(heads[0].id, h0);
	assert_int_equal(heads[1].id, hb);
	assert_string_equal(heads[1].testcase, "beta");
	assert_int_equal(heads[2].id, h1);
	assert_int_equal(heads[3].id, h2);
	/* h0 kept the base's one run; h1 its four. */
	assert_int_equal(heads[0].run_count, 1);
	assert_true(heads[0].median == 1.0);
	assert_int_equal(heads[2].run_count, 4);
	assert_true(heads[2].median == 3.5);
	assert_true(heads[2].min == 2.0);
	assert_true(heads[2].max == 5.0);
	assert_true(heads[2].q1 == 2.75);
	assert_true(heads[2].q3 == 4.25);
	assert_true(heads[2].change_pct == -8.0);
	assert_string_equal(heads[2].subject, "s2");
	assert_string_equal(heads[2].job_role, "bisect");
	assert_string_equal(heads[2].verdict, "regression");
	assert_string_equal(heads[2].culprit, "c2");
	assert_int_equal(heads[2].job_id, job);
	assert_int_equal(strlen(heads[2].measured_at), 20);
	/* Without runs or a job: NaN and "". */
	assert_int_equal(heads[3].run_count, 0);
	assert_true(isnan(heads[3].median));
	assert_true(isnan(heads[3].q3));
	assert_string_equal(heads[3].job_role, "");
	assert_string_equal(heads[3].verdict, "");
	store_heads_free(heads, count);
	/* One testcase; the newest two, still oldest first. */
	assert_int_equal(
	    store_watches_heads(&heads, &count, db_conn(), watch, tc_a, 2), 0);
	assert_int_equal(count, 2);
	assert_int_equal(heads[0].id, h1);
	assert_int_equal(heads[1].id, h2);
	store_heads_free(heads, count);
	assert_int_equal(
	    store_watches_heads(&heads, &count, db_conn(), watch, tc_b, 0), 0);
	assert_int_equal(count, 1);
	assert_int_equal(heads[0].id, hb);
	store_heads_free(heads, count);
	assert_int_equal(
	    store_watches_heads(&heads, &count, db_conn(), 999999, 0, 0), 0);
	assert_int_equal(count, 0);
	store_heads_free(heads, count);
}

static void test_store_watch_heads__a_measuring_job_finished(void **state)
{
	long long job = make_job(tc_a, "running");
	char text[256];

	(void)state;
	assert_int_equal(store_watches_finish_job(db_conn(), job, "no-change",
						  0.75, 0.5,
						  "the head is the same"),
			 0);
	sql_text(text, sizeof(text),
		 "SELECT state || ' ' || verdict || ' ' || change_pct || ' '"
		 " || p_value || ' ' || message || ' ' || (finished_at IS NOT"
		 " NULL) FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(
	    text, "done no-change 0.75 0.5 the head is the same true");
	job = make_job(tc_a, "running");
	assert_int_equal(store_watches_finish_job(db_conn(), job,
						  "inconclusive", NAN,
						  INFINITY, NULL),
			 0);
	sql_text(text, sizeof(text),
		 "SELECT verdict || ' ' || coalesce(change_pct::text, 'NULL')"
		 " || ' ' || coalesce(p_value::text, 'NULL') || ' ' ||"
		 " coalesce(message, 'NULL') FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "inconclusive NULL NULL NULL");
}

static void test_store_watch_heads__a_culprit_is_reported_once(void **state)
{
	long long first = make_job(tc_a, "done"),
		  second = make_job(tc_a, "done");
	long long earlier = -1;

	(void)state;
	assert_int_equal(store_watches_claim_report(db_conn(), tc_a, "bad1",
						    first, &earlier),
			 0);
	assert_int_equal(earlier, 0);
	assert_int_equal(store_watches_claim_report(db_conn(), tc_a, "bad1",
						    second, &earlier),
			 1);
	assert_int_equal(earlier, first);
	/* Another testcase's report of the same commit is its own. */
	assert_int_equal(store_watches_claim_report(db_conn(), tc_b, "bad1",
						    second, &earlier),
			 0);
	/* The first job gone: reported before, by nobody known. */
	sql_exec("DELETE FROM jobs WHERE id = $1", first);
	earlier = -1;
	assert_int_equal(store_watches_claim_report(db_conn(), tc_a, "bad1",
						    second, &earlier),
			 1);
	assert_int_equal(earlier, 0);
}

static void test_store_watch_heads__jobs_listed_with_notes(void **state)
{
	long long testcases[2] = {tc_a, tc_b};
	struct store_watch_new in = {
	    .repo_id = 1,
	    .branch = "jobs",
	    .interval_s = 60,
	    .notify = "[]",
	    .testcase_ids = testcases,
	    .testcase_count = 2,
	};
	struct store_watch_jobrow *rows = NULL;
	long long watch = 0, ha = 0, hb = 0;
	long long ja = make_job(tc_a, "done"), jb = make_job(tc_b, "running");
	size_t count = 0;

	(void)state;
	assert_int_equal(store_watches_insert(db_conn(), &in, &watch), 0);
	store_watches_add_head(db_conn(), watch, tc_a, "jobs", "c2", "s",
			       "measuring", 0, &ha);
	store_watches_add_head(db_conn(), watch, tc_b, "jobs/x", "c2", "s",
			       "measuring", 0, &hb);
	assert_int_equal(
	    store_watches_link_job(db_conn(), watch, hb, jb, "jobs/x"), 0);
	assert_int_equal(
	    store_watches_link_job(db_conn(), watch, ha, ja, "jobs"), 0);
	store_watches_promote(db_conn(), ja);
	sql_exec("UPDATE jobs SET verdict = 'regression', culprit_sha ="
		 " 'c1' WHERE id = $1",
		 ja);
	assert_int_equal(store_watches_note(db_conn(), ja, "first note"), 0);
	assert_int_equal(
	    store_watches_note(db_conn(), ja, "still regression \"x\""), 0);
	assert_int_equal(store_watches_jobs(&rows, &count, db_conn(), watch),
			 0);
	assert_int_equal(count, 2);
	assert_int_equal(rows[0].id, ja);
	assert_string_equal(rows[0].role, "bisect");
	assert_string_equal(rows[0].state, "done");
	assert_string_equal(rows[0].verdict, "regression");
	assert_string_equal(rows[0].culprit, "c1");
	assert_string_equal(rows[0].testcase, "alpha");
	assert_string_equal(rows[0].branch, "jobs");
	assert_string_equal(rows[0].notes, "[\"first note\", "
					   "\"still regression \\\"x\\\"\"]");
	assert_int_equal(rows[1].id, jb);
	assert_string_equal(rows[1].role, "measure");
	assert_string_equal(rows[1].state, "running");
	assert_string_equal(rows[1].verdict, "");
	assert_string_equal(rows[1].culprit, "");
	assert_string_equal(rows[1].testcase, "beta");
	assert_string_equal(rows[1].branch, "jobs/x");
	assert_string_equal(rows[1].notes, "[]");
	store_watch_jobrows_free(rows, count);
	assert_int_equal(store_watches_jobs(&rows, &count, db_conn(), 999999),
			 0);
	assert_int_equal(count, 0);
	store_watch_jobrows_free(rows, count);
	/* A note needs a job. */
	assert_int_equal(store_watches_note(db_conn(), NO_JOB, "x"), -1);
}

/* A bisection of `branch` for alpha by watch `watch_id` in `state` with
 * `verdict` (NULL: none). */
static long long bisection(const char *branch, const char *state,
			   const char *verdict, const char *role)
{
	long long job = make_job(tc_a, state);
	char job_text[STORE_INT_TEXT], watch_text[STORE_INT_TEXT];
	const char *params[5] = {store_int_text(job_text, job),
				 store_int_text(watch_text, watch_id), branch,
				 role, verdict};
	PGresult *r;

	r = db_exec(db_conn(),
		    "WITH l AS (INSERT INTO watch_jobs (job_id, watch_id,"
		    " branch, role) VALUES ($1, $2, $3, $4))"
		    " UPDATE jobs SET verdict = $5 WHERE id = $1",
		    5, params);
	assert_non_null(r);
	PQclear(r);
	return job;
}

static void test_store_watch_heads__the_open_regression(void **state)
{
	long long job = -1, found;

	(void)state;
	assert_int_equal(store_watches_open_regression(db_conn(), watch_id,
						       tc_a, "open", &job),
			 1);
	assert_int_equal(job, -1);
	found = bisection("open", "done", "regression", "bisect");
	/* Not counted: a running bisection, a measurement, another branch
	 * or testcase. */
	bisection("open", "running", NULL, "bisect");
	bisection("open", "done", "improvement", "measure");
	bisection("open/2", "done", "no-change", "bisect");
	assert_int_equal(store_watches_open_regression(db_conn(), watch_id,
						       tc_a, "open", &job),
			 0);
	assert_int_equal(job, found);
	assert_int_equal(store_watches_open_regression(db_conn(), watch_id,
						       tc_b, "open", &job),
			 1);
	assert_int_equal(store_watches_open_regression(
			     db_conn(), other_watch_id, tc_a, "open", &job),
			 1);
	/* The newest bisection found no regression: none is open. */
	bisection("open", "done", "no-change", "bisect");
	job = -1;
	assert_int_equal(store_watches_open_regression(db_conn(), watch_id,
						       tc_a, "open", &job),
			 1);
	assert_int_equal(job, -1);
}

static void test_store_watch_heads__dead_measurements_end(void **state)
{
	long long failed_job = make_job(tc_a, "failed");
	long long cancelled_job = make_job(tc_a, "cancelled");
	long long running_job = make_job(tc_a, "running");
	long long h_failed, h_cancelled, h_running, h_orphan, h_new;
	size_t count = 99;
	char text[64];

	(void)state;
	/* What earlier tests left to reconcile goes first. */
	assert_int_equal(store_watches_reconcile(db_conn(), &count), 0);
	h_failed = add_head("rc-1", "c2", "measuring", 0);
	h_cancelled = add_head("rc-2", "c2", "measuring", 0);
	h_running = add_head("rc-3", "c2", "measuring", 0);
	h_orphan = add_head("rc-4", "c2", "measuring", 0);
	h_new = add_head("rc-5", "c2", "measuring", 0);
	store_watches_link_job(db_conn(), watch_id, h_failed, failed_job,
			       "rc-1");
	store_watches_link_job(db_conn(), watch_id, h_cancelled, cancelled_job,
			       "rc-2");
	store_watches_link_job(db_conn(), watch_id, h_running, running_job,
			       "rc-3");
	/* Taken up two minutes ago, and no job was made for it. */
	sql_exec("UPDATE watch_heads SET seen_at = now() - interval"
		 " '2 minutes' WHERE id = $1",
		 h_orphan);
	assert_int_equal(store_watches_reconcile(db_conn(), &count), 0);
	assert_int_equal(count, 3);
	head_state(text, sizeof(text), h_failed);
	assert_string_equal(text, "measured failed NULL true");
	head_state(text, sizeof(text), h_cancelled);
	assert_string_equal(text, "measured failed NULL true");
	head_state(text, sizeof(text), h_orphan);
	assert_string_equal(text, "measured failed NULL true");
	head_state(text, sizeof(text), h_running);
	assert_string_equal(text, "measuring NULL NULL false");
	head_state(text, sizeof(text), h_new);
	assert_string_equal(text, "measuring NULL NULL false");
	assert_int_equal(store_watches_reconcile(db_conn(), &count), 0);
	assert_int_equal(count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_store_watch_heads__the_first_head_of_a_branch),
	    cmocka_unit_test(test_store_watch_heads__base_skips_what_failed),
	    cmocka_unit_test(test_store_watch_heads__dropped_and_rebased),
	    cmocka_unit_test(test_store_watch_heads__a_job_linked_and_read),
	    cmocka_unit_test(test_store_watch_heads__a_job_outlives_its_watch),
	    cmocka_unit_test(test_store_watch_heads__a_measurement_keeps_runs),
	    cmocka_unit_test(test_store_watch_heads__the_history_of_heads),
	    cmocka_unit_test(test_store_watch_heads__a_measuring_job_finished),
	    cmocka_unit_test(
		test_store_watch_heads__a_culprit_is_reported_once),
	    cmocka_unit_test(test_store_watch_heads__jobs_listed_with_notes),
	    cmocka_unit_test(test_store_watch_heads__the_open_regression),
	    cmocka_unit_test(test_store_watch_heads__dead_measurements_end),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
