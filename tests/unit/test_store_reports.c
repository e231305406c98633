/*
 * server/store/store_reports.c against a real PostgreSQL (testdb.h): the
 * facts a report shows read back from the job, its testcase and the
 * machine that ran the commit; the samples of two commits in run order;
 * the hand-off to the outbox; and job read keys added, checked and
 * revoked.  Each test makes the jobs it needs.
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
#include "../../server/store/store_reports.h"
#include "testdb.h"

#define NO_JOB 999999

static long long worker_with_machine, worker_without_machine;

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
 * parameter `id` ("" for none). */
static void sql_text(char *out, size_t size, const char *sql, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r = db_exec(db_conn(), sql, 1, params);

	assert_non_null(r);
	snprintf(out, size, "%s",
		 PQntuples(r) > 0 && !db_is_null(r, 0, 0) ? db_text(r, 0, 0)
							  : "");
	PQclear(r);
}

/* Two repositories (one with a web URL), two testcases, two workers. */
static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec("INSERT INTO repos (name, url, web_url) VALUES"
		    " ('linux', 'https://git.example/linux',"
		    " 'https://git.example/c/{sha}'),"
		    " ('bare', '/srv/bare', NULL)");
	testdb_exec(
	    "INSERT INTO testcases (name, build, run, kpi,"
	    " higher_is_better, params, notify, notify_author)"
	    " VALUES ('hackbench', 'make -j4', './hackbench 10',"
	    " 'bench.score', true,"
	    " '{\"threads\": 4, \"mode\": \"fast\","
	    " \"sizes\": [1, 2], \"on\": true}',"
	    " '[\"perf@example.org\"]', true),"
	    " ('plain', 'make', './b', 'k', false, '{}', '[]', false)");
	worker_with_machine =
	    sql_int("INSERT INTO workers (name, machine) VALUES"
		    " ('w1', 'Xeon 8375C, 64 GiB') RETURNING id",
		    0, NULL);
	worker_without_machine = sql_int(
	    "INSERT INTO workers (name) VALUES ('w2') RETURNING id", 0, NULL);
	return 0;
}

/* A job of repository `repo` and testcase `testcase` with `notify` and
 * three commits. */
static long long make_job(const char *repo, const char *testcase,
			  const char *notify)
{
	const char *params[3] = {repo, testcase, notify};
	char job_text[STORE_INT_TEXT];
	const char *job_params[1] = {job_text};
	long long job;
	PGresult *r;

	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha, notify) SELECT r.id, t.id,"
		      " 'v1.0', 'v1.1', 'c0', 'c2', $3::jsonb"
		      " FROM repos r, testcases t WHERE r.name = $1"
		      " AND t.name = $2 RETURNING id",
		      3, params);
	store_int_text(job_text, job);
	r = db_exec(db_conn(),
		    "INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email) SELECT $1, i, 'c' || i, 's',"
		    " 'Ada', 'ada@example.org' FROM generate_series(0, 2) i",
		    1, job_params);
	assert_non_null(r);
	PQclear(r);
	return job;
}

/* A run of commit `idx` of `job` on `worker`: `kpi` NULL for none. */
static void add_run(long long job, long long idx, long long worker,
		    const char *kpi, const char *metrics)
{
	char job_text[STORE_INT_TEXT], idx_text[STORE_INT_TEXT];
	char task_text[STORE_INT_TEXT], worker_text[STORE_INT_TEXT];
	const char *task_params[2] = {store_int_text(job_text, job),
				      store_int_text(idx_text, idx)};
	const char *params[6] = {job_text, task_text,
				 idx_text, store_int_text(worker_text, worker),
				 kpi,	   metrics};
	PGresult *r;

	store_int_text(task_text,
		       sql_int("INSERT INTO tasks (job_id, plan) VALUES ($1,"
			       " jsonb_build_array(jsonb_build_object('idx',"
			       " $2::int, 'runs', 3, 'purpose', 'search')))"
			       " RETURNING id",
			       2, task_params));
	r = db_exec(db_conn(),
		    "INSERT INTO runs (job_id, task_id, commit_idx, worker_id,"
		    " kpi, exit_code, metrics) VALUES ($1, $2, $3, $4, $5, 0,"
		    " $6)",
		    6, params);
	assert_non_null(r);
	PQclear(r);
}

static const char *param(const struct store_report_facts *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->param_count; i++)
		if (strcmp(f->params[i].key, key) == 0)
			return f->params[i].value;
	return NULL;
}

static void test_store_reports__the_facts_of_a_job(void **state)
{
	long long job = make_job("linux", "hackbench",
				 "[\"dev@example.org\", \"lkp@example.org\"]");
	struct store_report_facts f;

	(void)state;
	add_run(job, 1, worker_without_machine, "1.0", "{}");
	add_run(job, 1, worker_with_machine, "1.0", "{}");
	assert_int_equal(store_reports_facts(&f, db_conn(), job, 1), 0);
	assert_string_equal(f.repo, "linux");
	assert_string_equal(f.repo_url, "https://git.example/linux");
	assert_string_equal(f.web_url, "https://git.example/c/{sha}");
	assert_string_equal(f.bad_rev, "v1.1");
	assert_string_equal(f.testcase, "hackbench");
	assert_string_equal(f.build, "make -j4");
	assert_string_equal(f.run, "./hackbench 10");
	assert_string_equal(f.kpi, "bench.score");
	/* Strings as they are, other JSON as JSON. */
	assert_int_equal(f.param_count, 4);
	assert_string_equal(param(&f, "threads"), "4");
	assert_string_equal(param(&f, "mode"), "fast");
	assert_string_equal(param(&f, "sizes"), "[1, 2]");
	assert_string_equal(param(&f, "on"), "true");
	assert_int_equal(f.notify_count, 2);
	assert_string_equal(f.notify[0], "dev@example.org");
	assert_string_equal(f.notify[1], "lkp@example.org");
	assert_null(f.notify[2]);
	assert_int_equal(f.testcase_notify_count, 1);
	assert_string_equal(f.testcase_notify[0], "perf@example.org");
	assert_true(f.notify_author);
	/* The worker that has a machine, not the one without. */
	assert_string_equal(f.machine, "Xeon 8375C, 64 GiB");
	store_report_facts_clear(&f);
	assert_null(f.row);
	assert_null(f.machine);
	/* Nobody with a machine ran commit 2. */
	add_run(job, 2, worker_without_machine, "1.0", "{}");
	assert_int_equal(store_reports_facts(&f, db_conn(), job, 2), 0);
	assert_null(f.machine);
	store_report_facts_clear(&f);
}

static void test_store_reports__the_facts_where_little_is_set(void **state)
{
	long long job = make_job("bare", "plain", "[\"a@example.org\", 5]");
	struct store_report_facts f;

	(void)state;
	assert_int_equal(store_reports_facts(&f, db_conn(), job, 0), 0);
	assert_string_equal(f.repo, "bare");
	assert_null(f.web_url);
	assert_int_equal(f.param_count, 0);
	assert_non_null(f.params);
	/* An entry that is not a string keeps its place as NULL. */
	assert_int_equal(f.notify_count, 2);
	assert_string_equal(f.notify[0], "a@example.org");
	assert_null(f.notify[1]);
	assert_int_equal(f.testcase_notify_count, 0);
	assert_false(f.notify_author);
	assert_null(f.machine);
	store_report_facts_clear(&f);
}

static void test_store_reports__no_facts_without_a_job(void **state)
{
	struct store_report_facts f;

	(void)state;
	assert_int_equal(store_reports_facts(&f, db_conn(), NO_JOB, 0), -1);
	assert_null(f.repo);
	store_report_facts_clear(&f);
	assert_null(f.row);
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

static void test_store_reports__samples_in_run_order(void **state)
{
	long long job = make_job("linux", "hackbench", "[]");
	long long other = make_job("linux", "hackbench", "[]");
	struct report_samples s = {0};
	const struct report_series *score, *rss;

	(void)state;
	add_run(job, 2, worker_with_machine, "3",
		"{\"score\": 3, \"rss\": 30, \"tag\": \"x\"}");
	add_run(job, 0, worker_with_machine, "1", "{\"score\": 1}");
	add_run(job, 2, worker_with_machine, "2", "{\"score\": 2.5}");
	add_run(job, 0, worker_with_machine, "5", "{\"score\": 5}");
	/* No KPI, another commit, another job: left out. */
	add_run(job, 0, worker_with_machine, NULL, "{\"score\": 99}");
	add_run(job, 1, worker_with_machine, "98", "{\"score\": 98}");
	add_run(other, 0, worker_with_machine, "97", "{\"score\": 97}");
	assert_int_equal(store_reports_samples(&s, db_conn(), job, 0, 2), 0);
	assert_int_equal(s.count, 2);
	score = series(&s, "score");
	assert_non_null(score);
	assert_int_equal(score->count[0], 2);
	assert_true(score->side[0][0] == 1.0);
	assert_true(score->side[0][1] == 5.0);
	assert_int_equal(score->count[1], 2);
	assert_true(score->side[1][0] == 3.0);
	assert_true(score->side[1][1] == 2.5);
	rss = series(&s, "rss");
	assert_non_null(rss);
	assert_int_equal(rss->count[0], 0);
	assert_int_equal(rss->count[1], 1);
	assert_true(rss->side[1][0] == 30.0);
	assert_null(series(&s, "tag"));
	report_samples_clear(&s);
	/* A job without runs adds nothing. */
	assert_int_equal(store_reports_samples(&s, db_conn(), NO_JOB, 0, 2),
			 0);
	assert_int_equal(s.count, 0);
	report_samples_clear(&s);
}

/* Issue 14: a job that moved to another machine reports that machine and
 * compares its runs only, the earlier machine's kept but superseded. */
static void test_store_reports__a_moved_job_reports_its_machine(void **state)
{
	long long job = make_job("linux", "hackbench", "[]"), bound;
	struct store_report_facts f;
	struct report_samples s = {0};
	const struct report_series *score;
	char job_text[STORE_INT_TEXT], bound_text[STORE_INT_TEXT];
	const char *params[2] = {job_text, bound_text};

	(void)state;
	bound = sql_int("INSERT INTO workers (name, machine) VALUES"
			" ('w3', 'the bound box') RETURNING id",
			0, NULL);
	store_int_text(job_text, job);
	store_int_text(bound_text, bound);
	add_run(job, 0, worker_with_machine, "100", "{\"score\": 100}");
	add_run(job, 2, worker_with_machine, "90", "{\"score\": 90}");
	sql_int("WITH m AS (UPDATE runs SET superseded = true"
		" WHERE job_id = $1 RETURNING 1) SELECT count(*) FROM m",
		1, params);
	sql_int("UPDATE jobs SET worker_id = $2 WHERE id = $1 RETURNING id", 2,
		params);
	add_run(job, 0, bound, "97", "{\"score\": 97}");
	add_run(job, 2, bound, "87", "{\"score\": 87}");
	assert_int_equal(store_reports_facts(&f, db_conn(), job, 2), 0);
	assert_string_equal(f.machine, "the bound box");
	store_report_facts_clear(&f);
	assert_int_equal(store_reports_samples(&s, db_conn(), job, 0, 2), 0);
	score = series(&s, "score");
	assert_non_null(score);
	assert_int_equal(score->count[0], 1);
	assert_true(score->side[0][0] == 97.0);
	assert_int_equal(score->count[1], 1);
	assert_true(score->side[1][0] == 87.0);
	report_samples_clear(&s);
}

static void test_store_reports__a_report_is_queued(void **state)
{
	long long job = make_job("linux", "hackbench", "[]");
	const char *to[2] = {"dev@example.org", "perf@example.org"};
	char text[256];

	(void)state;
	assert_int_equal(store_reports_queue(db_conn(), job, to, 2,
					     "[statbisect] regression",
					     "Subject: r\r\n\r\nbody\r\n"),
			 0);
	sql_text(text, sizeof(text),
		 "SELECT recipients::text || ' ' || subject || ' ' ||"
		 " attempts || ' ' || (sent_at IS NULL) FROM outbox"
		 " WHERE job_id = $1",
		 job);
	assert_string_equal(text, "[\"dev@example.org\", \"perf@example.org\"]"
				  " [statbisect] regression 0 true");
	sql_text(text, sizeof(text),
		 "SELECT message FROM outbox WHERE job_id = $1", job);
	assert_string_equal(text, "Subject: r\r\n\r\nbody\r\n");
}

static void test_store_reports__a_read_key_opens_its_job_only(void **state)
{
	long long job = make_job("bare", "plain", "[]");
	long long other = make_job("bare", "plain", "[]");
	char text[128];

	(void)state;
	assert_int_equal(store_reports_add_key(db_conn(), job, "abc"), 0);
	assert_int_equal(store_reports_key_opens(db_conn(), job, "abc"), 1);
	assert_int_equal(store_reports_key_opens(db_conn(), job, "abd"), 0);
	assert_int_equal(store_reports_key_opens(db_conn(), other, "abc"), 0);
	assert_int_equal(store_reports_key_opens(db_conn(), NO_JOB, "abc"), 0);
	/* Only the hash is kept: sha256("abc"). */
	sql_text(text, sizeof(text),
		 "SELECT key_hash FROM job_read_keys WHERE job_id = $1", job);
	assert_string_equal(text, "ba7816bf8f01cfea414140de5dae2223"
				  "b00361a396177a9cb410ff61f20015ad");
	/* A key is one job's: the same key again is refused. */
	assert_int_equal(store_reports_add_key(db_conn(), other, "abc"), -1);
	assert_string_equal(db_last_failure(), "23505");
	assert_int_equal(store_reports_add_key(db_conn(), NO_JOB, "k"), -1);
	assert_string_equal(db_last_failure(), "23503");
}

static void test_store_reports__revoking_ends_every_live_key(void **state)
{
	long long job = make_job("bare", "plain", "[]");
	long long other = make_job("bare", "plain", "[]");
	long long count = -1;

	(void)state;
	assert_int_equal(store_reports_add_key(db_conn(), job, "key-1"), 0);
	assert_int_equal(store_reports_add_key(db_conn(), job, "key-2"), 0);
	assert_int_equal(store_reports_add_key(db_conn(), other, "key-3"), 0);
	assert_int_equal(store_reports_revoke_keys(db_conn(), job, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(store_reports_key_opens(db_conn(), job, "key-1"), 0);
	assert_int_equal(store_reports_key_opens(db_conn(), job, "key-2"), 0);
	assert_int_equal(store_reports_key_opens(db_conn(), other, "key-3"),
			 1);
	/* Revoked already: none left to revoke. */
	assert_int_equal(store_reports_revoke_keys(db_conn(), job, &count), 0);
	assert_int_equal(count, 0);
	/* A key added after the revocation opens the job. */
	assert_int_equal(store_reports_add_key(db_conn(), job, "key-4"), 0);
	assert_int_equal(store_reports_key_opens(db_conn(), job, "key-4"), 1);
	count = -1;
	assert_int_equal(store_reports_revoke_keys(db_conn(), NO_JOB, &count),
			 STORE_NOT_FOUND);
	assert_int_equal(count, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_reports__the_facts_of_a_job),
	    cmocka_unit_test(
		test_store_reports__the_facts_where_little_is_set),
	    cmocka_unit_test(test_store_reports__no_facts_without_a_job),
	    cmocka_unit_test(test_store_reports__samples_in_run_order),
	    cmocka_unit_test(
		test_store_reports__a_moved_job_reports_its_machine),
	    cmocka_unit_test(test_store_reports__a_report_is_queued),
	    cmocka_unit_test(
		test_store_reports__a_read_key_opens_its_job_only),
	    cmocka_unit_test(test_store_reports__revoking_ends_every_live_key),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
