/*
 * Unit tests of server/store/store_notify.c and sql/170_job_notify.sql:
 * what changes a job's answer notifies 'statbisect_jobs' with its id, on
 * a real PostgreSQL (testdb.h).  A session hears its own notifications,
 * once its transaction has committed, so one connection does both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../server/store/store_notify.h"
#include "testdb.h"

/* The payloads a wait consumed. */
struct heard {
	char payloads[16][32];
	size_t count;
};

static void collect(const char *payload, void *arg)
{
	struct heard *heard = arg;

	if (heard->count < 16)
		snprintf(heard->payloads[heard->count++],
			 sizeof(heard->payloads[0]), "%s", payload);
}

/* What was notified since the last call: every notification pending now
 * (a short wait: they were committed before the call). */
static void hear(struct heard *heard)
{
	memset(heard, 0, sizeof(*heard));
	while (store_notify_wait(db_conn(), -1, 200, collect, heard) > 0)
		;
}

static bool heard_of(const struct heard *heard, const char *payload)
{
	size_t i;

	for (i = 0; i < heard->count; i++)
		if (strcmp(heard->payloads[i], payload) == 0)
			return true;
	return false;
}

static long long sql_int(const char *sql)
{
	PGresult *r = db_exec(db_conn(), sql, 0, NULL);
	long long v;

	assert_non_null(r);
	assert_int_equal(PQntuples(r), 1);
	v = atoll(db_text(r, 0, 0));
	PQclear(r);
	return v;
}

static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec(
	    "INSERT INTO repos (name, url) VALUES ('proj', '/srv/proj')");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better)"
		    " VALUES ('tc', 'make', './bench', 'ms', false)");
	return store_notify_listen(db_conn(), STORE_CHANNEL_JOBS) == STORE_OK
		   ? 0
		   : -1;
}

/* A table added later that names a job without the trigger would let
 * the job cache answer what that table no longer says. */
static void test_store_notify__every_table_of_jobs_notifies(void **state)
{
	PGresult *r = db_exec(
	    db_conn(),
	    "SELECT c.table_name FROM information_schema.columns c"
	    " WHERE c.table_schema = 'public' AND c.column_name = 'job_id'"
	    " AND NOT EXISTS (SELECT 1 FROM pg_trigger t"
	    " WHERE t.tgrelid = quote_ident(c.table_name)::regclass"
	    " AND t.tgname = 'job_notify') ORDER BY 1",
	    0, NULL);
	int i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < PQntuples(r); i++)
		print_error("table %s has no job_notify trigger\n",
			    db_text(r, i, 0));
	assert_int_equal(PQntuples(r), 0);
	PQclear(r);
}

static void test_store_notify__a_change_names_its_job(void **state)
{
	struct heard heard;
	long long job, other;
	char id[32], other_id[32], sql[256];

	(void)state;
	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha) SELECT r.id, t.id, 'g',"
		      " 'b', 'g', 'b' FROM repos r, testcases t RETURNING id");
	other = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
			" bad_rev, good_sha, bad_sha) SELECT r.id, t.id, 'g',"
			" 'b', 'g', 'b' FROM repos r, testcases t"
			" RETURNING id");
	snprintf(id, sizeof(id), "%lld", job);
	snprintf(other_id, sizeof(other_id), "%lld", other);
	hear(&heard);
	assert_true(heard_of(&heard, id));
	assert_true(heard_of(&heard, other_id));

	/* Candidates are listed with their job: nothing of their own. */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO job_commits (job_id, idx, sha, subject,"
		 " author_name, author_email) VALUES (%lld, 0, 'g', 's', 'a',"
		 " 'a@x')",
		 job);
	testdb_exec(sql);
	hear(&heard);
	assert_int_equal(heard.count, 0);

	/* A task and its runs of one job: that job only, once for the
	 * whole transaction. */
	snprintf(sql, sizeof(sql),
		 "WITH t AS (INSERT INTO tasks (job_id, plan) VALUES"
		 " (%lld, '[{\"idx\": 0, \"runs\": 5}]') RETURNING id, job_id)"
		 " INSERT INTO runs (job_id, task_id, commit_idx, kpi,"
		 " exit_code) SELECT t.job_id, t.id, 0, g, 0"
		 " FROM t, generate_series(1, 5) g",
		 job);
	testdb_exec(sql);
	hear(&heard);
	assert_int_equal(heard.count, 1);
	assert_string_equal(heard.payloads[0], id);

	/* A testcase changed: every job's answer may have. */
	testdb_exec("UPDATE testcases SET kpi = 'ops' WHERE name = 'tc'");
	hear(&heard);
	assert_int_equal(heard.count, 1);
	assert_string_equal(heard.payloads[0], "");

	/* A session is no job's business. */
	testdb_exec("DELETE FROM sessions");
	hear(&heard);
	assert_int_equal(heard.count, 0);

	/* Nothing is heard of a transaction rolled back. */
	testdb_exec("BEGIN");
	snprintf(sql, sizeof(sql),
		 "UPDATE jobs SET message = 'x' WHERE id = %lld", other);
	testdb_exec(sql);
	testdb_exec("ROLLBACK");
	hear(&heard);
	assert_int_equal(heard.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_notify__every_table_of_jobs_notifies),
	    cmocka_unit_test(test_store_notify__a_change_names_its_job),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
