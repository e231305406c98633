/*
 * server/store/store_outcomes.c against a real PostgreSQL (testdb.h):
 * outcomes stored and read back, what a NULL keeps, the runs of a job's
 * endpoints counted, metric names sorted from either source, the KPI,
 * and a commit's logs found by a prefix of its SHA.  Each test makes a
 * job of its own, with four commits.
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

#include "../../server/store/store_outcomes.h"
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

/* Runs `sql` with `n` parameters; fails the test when it fails. */
static void sql_exec(const char *sql, int n, const char *const *params)
{
	PGresult *r = db_exec(db_conn(), sql, n, params);

	assert_non_null(r);
	PQclear(r);
}

static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec(
	    "INSERT INTO repos (name, url) VALUES ('proj', '/srv/proj')");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better) VALUES ('tc', 'make', './bench',"
		    " 'bench.score', true)");
	return 0;
}

/* A job of four commits: aaa0 <- aab1 <- aab2 <- bbb3. */
static long long make_job(void)
{
	char job_text[STORE_INT_TEXT];
	const char *params[1] = {job_text};
	long long job;

	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha) SELECT r.id, t.id, 'g',"
		      " 'b', 'aaa0', 'bbb3' FROM repos r, testcases t"
		      " RETURNING id",
		      0, NULL);
	store_int_text(job_text, job);
	sql_exec("INSERT INTO job_commits (job_id, idx, sha,"
		 " subject, author_name, author_email)"
		 " SELECT $1, i, (ARRAY['aaa0', 'aab1', 'aab2',"
		 " 'bbb3'])[i + 1], 's', 'Ada', 'ada@example.org'"
		 " FROM generate_series(0, 3) i",
		 1, params);
	return job;
}

/* A task of job `job` on commit `idx`, for runs to belong to. */
static long long make_task(long long job, long long idx)
{
	char job_text[STORE_INT_TEXT], idx_text[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job_text, job),
				 store_int_text(idx_text, idx)};

	return sql_int("INSERT INTO tasks (job_id, plan) VALUES ($1,"
		       " jsonb_build_array(jsonb_build_object('idx',"
		       " $2::int, 'runs', 3, 'purpose', 'search')))"
		       " RETURNING id",
		       2, params);
}

/* A run of commit `idx` of `job`: `kpi` NULL for none. */
static void add_run(long long job, long long idx, const char *kpi,
		    int exit_code, const char *metrics)
{
	char job_text[STORE_INT_TEXT], idx_text[STORE_INT_TEXT];
	char task_text[STORE_INT_TEXT], exit_text[STORE_INT_TEXT];
	const char *params[6] = {
	    store_int_text(job_text, job),
	    store_int_text(task_text, make_task(job, idx)),
	    store_int_text(idx_text, idx),
	    kpi,
	    store_int_text(exit_text, exit_code),
	    metrics};

	sql_exec("INSERT INTO runs (job_id, task_id, commit_idx,"
		 " kpi, exit_code, metrics) VALUES ($1, $2, $3, $4,"
		 " $5, $6)",
		 6, params);
}

static const struct store_outcome *
find_index(const struct store_outcome_list *list, long long index)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		if (list->items[i].index == index)
			return &list->items[i];
	return NULL;
}

static void test_store_outcomes__set_then_listed(void **state)
{
	long long job = make_job(), two = 2, minus_one = -1, eleven = 11;
	struct store_outcome_new crashed = {
	    .index = 1,
	    .status = "crashed",
	    .exit_code = &two,
	    .metrics_seen = "[\"b.x\", \"a.y\"]",
	    .run_output = "Segmentation fault",
	};
	struct store_outcome_new killed = {
	    .index = 3,
	    .status = "timed_out",
	    .exit_code = &minus_one,
	    .signal = &eleven,
	};
	struct store_outcome_list list;
	const struct store_outcome *o;

	(void)state;
	assert_int_equal(store_outcomes_set(db_conn(), job, &crashed),
			 STORE_OK);
	assert_int_equal(store_outcomes_set(db_conn(), job, &killed),
			 STORE_OK);
	assert_int_equal(store_outcomes_list(&list, db_conn(), job), STORE_OK);
	assert_int_equal(list.count, 2);
	o = find_index(&list, 1);
	assert_non_null(o);
	assert_string_equal(o->status, "crashed");
	assert_true(o->has_exit_code);
	assert_int_equal(o->exit_code, 2);
	assert_false(o->has_signal);
	assert_string_equal(o->metrics_seen, "[\"b.x\", \"a.y\"]");
	o = find_index(&list, 3);
	assert_non_null(o);
	assert_string_equal(o->status, "timed_out");
	assert_true(o->has_exit_code);
	assert_int_equal(o->exit_code, -1);
	assert_true(o->has_signal);
	assert_int_equal(o->signal, 11);
	assert_null(o->metrics_seen);
	store_outcome_list_clear(&list);
	assert_null(list.result);
	assert_null(list.items);
}

static void test_store_outcomes__nothing_to_list(void **state)
{
	long long job = make_job();
	struct store_outcome_list list;

	(void)state;
	assert_int_equal(store_outcomes_list(&list, db_conn(), job), STORE_OK);
	assert_int_equal(list.count, 0);
	store_outcome_list_clear(&list);
	assert_int_equal(store_outcomes_list(&list, db_conn(), NO_JOB),
			 STORE_OK);
	assert_int_equal(list.count, 0);
	store_outcome_list_clear(&list);
}

static void test_store_outcomes__get_one_commit(void **state)
{
	long long job = make_job(), zero = 0;
	struct store_outcome_new no_kpi = {
	    .index = 2,
	    .status = "no_kpi",
	    .exit_code = &zero,
	    .metrics_seen = "[\"m.a\"]",
	};
	struct store_outcome_list got;

	(void)state;
	assert_int_equal(store_outcomes_set(db_conn(), job, &no_kpi),
			 STORE_OK);
	assert_int_equal(store_outcomes_get(&got, db_conn(), job, 2),
			 STORE_OK);
	assert_int_equal(got.count, 1);
	assert_int_equal(got.items[0].index, 2);
	assert_string_equal(got.items[0].status, "no_kpi");
	assert_true(got.items[0].has_exit_code);
	assert_int_equal(got.items[0].exit_code, 0);
	assert_false(got.items[0].has_signal);
	/* The names as stored, as store_outcomes_list gives them. */
	assert_non_null(got.items[0].metrics_seen);
	assert_string_equal(got.items[0].metrics_seen, "[\"m.a\"]");
	store_outcome_list_clear(&got);
	/* A commit without an outcome is there, its status NULL. */
	assert_int_equal(store_outcomes_get(&got, db_conn(), job, 0),
			 STORE_OK);
	assert_int_equal(got.count, 1);
	assert_int_equal(got.items[0].index, 0);
	assert_null(got.items[0].status);
	assert_false(got.items[0].has_exit_code);
	assert_false(got.items[0].has_signal);
	assert_null(got.items[0].metrics_seen);
	store_outcome_list_clear(&got);
	assert_int_equal(store_outcomes_get(&got, db_conn(), job, 4),
			 STORE_NOT_FOUND);
	assert_null(got.result);
	assert_int_equal(store_outcomes_get(&got, db_conn(), NO_JOB, 0),
			 STORE_NOT_FOUND);
}

static void test_store_outcomes__null_keeps_the_stored_logs(void **state)
{
	long long job = make_job(), one = 1;
	struct store_outcome_new built = {
	    .index = 1,
	    .status = "built",
	    .build_log = "cc -c a.c",
	    .metrics_seen = "[\"m.a\"]",
	};
	struct store_outcome_new ran = {
	    .index = 1,
	    .status = "crashed",
	    .exit_code = &one,
	    .run_output = "abort",
	};
	struct store_commit_log log;

	(void)state;
	assert_int_equal(store_outcomes_set(db_conn(), job, &built), STORE_OK);
	/* A later task that only ran keeps the earlier build log and the
	 * names; one that only built keeps the last run output. */
	assert_int_equal(store_outcomes_set(db_conn(), job, &ran), STORE_OK);
	built.status = "built";
	built.build_log = NULL;
	built.metrics_seen = NULL;
	assert_int_equal(store_outcomes_set(db_conn(), job, &built), STORE_OK);
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "aab1"),
			 STORE_OK);
	assert_int_equal(log.matches, 1);
	assert_string_equal(log.build_log, "cc -c a.c");
	assert_string_equal(log.run_output, "abort");
	assert_string_equal(log.outcome.status, "built");
	assert_string_equal(log.outcome.metrics_seen, "[\"m.a\"]");
	/* The exit code is the last upload's: none reported, none kept. */
	assert_false(log.outcome.has_exit_code);
	store_commit_log_clear(&log);
}

static void test_store_outcomes__long_output_keeps_its_tail(void **state)
{
	long long job = make_job();
	char *run = malloc(20001), *build = malloc(70001);
	struct store_outcome_new o = {.index = 0, .status = "crashed"};
	struct store_commit_log log;

	(void)state;
	assert_non_null(run);
	assert_non_null(build);
	memset(run, 'r', 20000);
	memcpy(run, "HEAD", 4);
	memcpy(run + 20000 - 4, "TAIL", 5);
	memset(build, 'b', 70000);
	memcpy(build, "HEAD", 4);
	memcpy(build + 70000 - 4, "TAIL", 5);
	o.run_output = run;
	o.build_log = build;
	assert_int_equal(store_outcomes_set(db_conn(), job, &o), STORE_OK);
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "aaa0"),
			 STORE_OK);
	assert_int_equal(strlen(log.run_output), 16384);
	assert_string_equal(log.run_output, run + 20000 - 16384);
	assert_int_equal(strlen(log.build_log), 65536);
	assert_string_equal(log.build_log, build + 70000 - 65536);
	store_commit_log_clear(&log);
	free(run);
	free(build);
}

static void test_store_outcomes__an_unknown_status_fails(void **state)
{
	long long job = make_job();
	struct store_outcome_new o = {.index = 0, .status = "exploded"};
	struct store_outcome_list list;

	(void)state;
	assert_int_equal(store_outcomes_set(db_conn(), job, &o), STORE_FAILED);
	assert_string_equal(db_last_failure(), "23514");
	assert_int_equal(store_outcomes_list(&list, db_conn(), job), STORE_OK);
	assert_int_equal(list.count, 0);
	store_outcome_list_clear(&list);
}

static void test_store_outcomes__endpoint_runs_are_counted(void **state)
{
	long long job = make_job(), none = make_job(), one_end = make_job();
	struct store_endpoint_runs runs;

	(void)state;
	add_run(job, 0, "1.5", 0, "{}");
	add_run(job, 0, NULL, 0, "{}");
	add_run(job, 0, NULL, 1, "{}");
	add_run(job, 3, NULL, 0, "{}");
	/* The middle and another job's runs do not count. */
	add_run(job, 1, "2.5", 0, "{}");
	add_run(one_end, 3, "1.0", 0, "{}");
	assert_int_equal(
	    store_outcomes_endpoint_runs(&runs, db_conn(), job, 3), STORE_OK);
	assert_int_equal(runs.with_kpi, 1);
	assert_int_equal(runs.exited_without, 2);
	assert_int_equal(runs.commits, 2);
	assert_int_equal(
	    store_outcomes_endpoint_runs(&runs, db_conn(), job, 1), STORE_OK);
	assert_int_equal(runs.with_kpi, 2);
	assert_int_equal(runs.exited_without, 1);
	assert_int_equal(runs.commits, 2);
	assert_int_equal(
	    store_outcomes_endpoint_runs(&runs, db_conn(), one_end, 3),
	    STORE_OK);
	assert_int_equal(runs.with_kpi, 1);
	assert_int_equal(runs.exited_without, 0);
	assert_int_equal(runs.commits, 1);
	runs.commits = 7;
	assert_int_equal(
	    store_outcomes_endpoint_runs(&runs, db_conn(), none, 3), STORE_OK);
	assert_int_equal(runs.with_kpi, 0);
	assert_int_equal(runs.exited_without, 0);
	assert_int_equal(runs.commits, 0);
}

/* The names of `n` as one string "a b c". */
static void joined(char *out, size_t size, const struct store_names *n)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < n->count && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s",
					 i > 0 ? " " : "", n->names[i]);
	assert_null(n->names[n->count]);
}

static void test_store_outcomes__names_sorted_from_each_source(void **state)
{
	long long job = make_job();
	struct store_outcome_new o = {.status = "no_kpi"};
	struct store_names names;
	char text[128];

	(void)state;
	o.index = 0;
	o.metrics_seen = "[\"m.c\", \"m.a\"]";
	store_outcomes_set(db_conn(), job, &o);
	o.index = 3;
	o.metrics_seen = "[\"m.b\", \"m.a\"]";
	store_outcomes_set(db_conn(), job, &o);
	o.index = 1;
	o.metrics_seen = "[\"m.z\"]";
	store_outcomes_set(db_conn(), job, &o);
	o.index = 2;
	o.metrics_seen = "{\"m.y\": 1}"; /* not a list: no names */
	store_outcomes_set(db_conn(), job, &o);
	add_run(job, 0, "1", 0, "{\"bench.score\": 1, \"cpu\": 2}");
	add_run(job, 3, "2", 0, "{\"bench.score\": 2, \"mem\": 3}");
	add_run(job, 1, "3", 0, "{\"other\": 3}");

	assert_int_equal(store_outcomes_names(&names, db_conn(), job, 0, 3,
					      STORE_NAMES_REPORTED),
			 STORE_OK);
	joined(text, sizeof(text), &names);
	assert_string_equal(text, "m.a m.a m.b m.c");
	store_names_clear(&names);
	assert_int_equal(store_outcomes_names(&names, db_conn(), job, 0, 3,
					      STORE_NAMES_DISTINCT),
			 STORE_OK);
	joined(text, sizeof(text), &names);
	assert_string_equal(text, "m.a m.b m.c");
	store_names_clear(&names);
	/* The two may be one commit: its names once. */
	assert_int_equal(store_outcomes_names(&names, db_conn(), job, 3, 3,
					      STORE_NAMES_REPORTED),
			 STORE_OK);
	joined(text, sizeof(text), &names);
	assert_string_equal(text, "m.a m.b");
	store_names_clear(&names);
	assert_int_equal(store_outcomes_names(&names, db_conn(), job, 2, 2,
					      STORE_NAMES_DISTINCT),
			 STORE_OK);
	assert_int_equal(names.count, 0);
	store_names_clear(&names);
	assert_int_equal(store_outcomes_names(&names, db_conn(), job, 0, 3,
					      STORE_NAMES_FROM_RUNS),
			 STORE_OK);
	joined(text, sizeof(text), &names);
	assert_string_equal(text, "bench.score cpu mem");
	store_names_clear(&names);
	assert_null(names.result);
	assert_int_equal(store_outcomes_names(&names, db_conn(), NO_JOB, 0, 3,
					      STORE_NAMES_FROM_RUNS),
			 STORE_OK);
	assert_int_equal(names.count, 0);
	store_names_clear(&names);
}

static void test_store_outcomes__the_kpi_of_a_job(void **state)
{
	long long job = make_job();
	char *kpi = NULL;

	(void)state;
	assert_int_equal(store_outcomes_kpi(&kpi, db_conn(), job), STORE_OK);
	assert_string_equal(kpi, "bench.score");
	free(kpi);
	kpi = (char *)"stale";
	assert_int_equal(store_outcomes_kpi(&kpi, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
	assert_null(kpi);
}

static void test_store_outcomes__a_log_by_sha_prefix(void **state)
{
	long long job = make_job(), nine = 9;
	struct store_outcome_new o = {
	    .index = 2,
	    .status = "build_failed",
	    .exit_code = &nine,
	    .build_log = "error: x",
	};
	struct store_commit_log log;
	char job_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job_text, job)};

	(void)state;
	assert_int_equal(store_outcomes_set(db_conn(), job, &o), STORE_OK);
	sql_exec("UPDATE job_commits SET build_failed = true"
		 " WHERE job_id = $1 AND idx = 2",
		 1, params);
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "aab2"),
			 STORE_OK);
	assert_true(log.job_found);
	assert_int_equal(log.matches, 1);
	assert_int_equal(log.index, 2);
	assert_string_equal(log.sha, "aab2");
	assert_true(log.build_failed);
	assert_string_equal(log.outcome.status, "build_failed");
	assert_int_equal(log.outcome.exit_code, 9);
	assert_string_equal(log.build_log, "error: x");
	assert_null(log.run_output);
	store_commit_log_clear(&log);
	/* Two match: the first by index; three match: still two. */
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "aab"),
			 STORE_OK);
	assert_int_equal(log.matches, 2);
	assert_int_equal(log.index, 1);
	assert_string_equal(log.sha, "aab1");
	assert_false(log.build_failed);
	assert_null(log.outcome.status);
	assert_null(log.build_log);
	store_commit_log_clear(&log);
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "a"),
			 STORE_OK);
	assert_int_equal(log.matches, 2);
	assert_int_equal(log.index, 0);
	assert_string_equal(log.sha, "aaa0");
	store_commit_log_clear(&log);
	/* None matches: the job is found all the same. */
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "c"),
			 STORE_OK);
	assert_true(log.job_found);
	assert_int_equal(log.matches, 0);
	assert_null(log.sha);
	store_commit_log_clear(&log);
	assert_int_equal(store_outcomes_log(&log, db_conn(), NO_JOB, "a"),
			 STORE_OK);
	assert_false(log.job_found);
	assert_int_equal(log.matches, 0);
	store_commit_log_clear(&log);
	assert_null(log.result);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_outcomes__set_then_listed),
	    cmocka_unit_test(test_store_outcomes__nothing_to_list),
	    cmocka_unit_test(test_store_outcomes__get_one_commit),
	    cmocka_unit_test(test_store_outcomes__null_keeps_the_stored_logs),
	    cmocka_unit_test(test_store_outcomes__long_output_keeps_its_tail),
	    cmocka_unit_test(test_store_outcomes__an_unknown_status_fails),
	    cmocka_unit_test(test_store_outcomes__endpoint_runs_are_counted),
	    cmocka_unit_test(
		test_store_outcomes__names_sorted_from_each_source),
	    cmocka_unit_test(test_store_outcomes__the_kpi_of_a_job),
	    cmocka_unit_test(test_store_outcomes__a_log_by_sha_prefix),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
