/*
 * server/store/store_watches.c against a real PostgreSQL (testdb.h):
 * watches made in a transaction of their own and read back whole, listed
 * oldest first, paused and resumed, deleted with their heads (their jobs
 * stay), poked by the push hook, and claimed when due, one server's
 * claim skipped by another (SKIP LOCKED).
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
#include "testdb.h"

#define NO_WATCH 999999

static long long linux_id, git_id, bench_id, aim_id, token_id;

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

/* Two repositories (one with a web URL, one with no watch), two
 * testcases and an admin token. */
static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	linux_id = sql_int("INSERT INTO repos (name, url, web_url) VALUES"
			   " ('linux', 'https://git.example/linux',"
			   " 'https://git.example/c/{sha}') RETURNING id",
			   0, NULL);
	git_id = sql_int("INSERT INTO repos (name, url) VALUES ('git',"
			 " '/srv/git') RETURNING id",
			 0, NULL);
	testdb_exec("INSERT INTO repos (name, url) VALUES ('idle', '/x')");
	bench_id = sql_int("INSERT INTO testcases (name, build, run, kpi,"
			   " higher_is_better) VALUES ('zbench', 'make',"
			   " './b', 'ms', false) RETURNING id",
			   0, NULL);
	aim_id = sql_int("INSERT INTO testcases (name, build, run, kpi,"
			 " higher_is_better) VALUES ('aim', 'make', './a',"
			 " 'ops', true) RETURNING id",
			 0, NULL);
	token_id = sql_int("INSERT INTO tokens (name, role, token_hash)"
			   " VALUES ('admin', 'admin', 'h') RETURNING id",
			   0, NULL);
	return 0;
}

/* A watch of `repo` on `branch` with the testcases zbench and aim. */
static long long make_watch(long long repo, const char *branch, bool paused)
{
	const long long testcases[2] = {bench_id, aim_id};
	struct store_watch_new in = {
	    .repo_id = repo,
	    .branch = branch,
	    .interval_s = 60,
	    .paused = paused,
	    .notify = "[]",
	    .testcase_ids = testcases,
	    .testcase_count = 2,
	};
	long long id = 0;

	assert_int_equal(store_watches_insert(db_conn(), &in, &id), 0);
	assert_true(id > 0);
	return id;
}

static void test_store_watches__ids_by_name(void **state)
{
	long long id = -1;

	(void)state;
	assert_int_equal(store_watches_repo_id(db_conn(), "git", &id), 0);
	assert_int_equal(id, git_id);
	assert_int_equal(store_watches_testcase_id(db_conn(), "aim", &id), 0);
	assert_int_equal(id, aim_id);
	id = -1;
	assert_int_equal(store_watches_repo_id(db_conn(), "aim", &id), 1);
	assert_int_equal(store_watches_testcase_id(db_conn(), "git", &id), 1);
	assert_int_equal(id, -1);
}

static void test_store_watches__a_watch_reads_back_whole(void **state)
{
	/* Given out of order and once twice: stored once each, by name. */
	const long long testcases[3] = {bench_id, aim_id, bench_id};
	struct store_watch_new in = {
	    .repo_id = linux_id,
	    .branch = "for-next/*",
	    .interval_s = 900,
	    .regressions_only = true,
	    .notify = "[\"perf@example.org\"]",
	    .testcase_ids = testcases,
	    .testcase_count = 3,
	    .token_id = token_id,
	};
	struct store_watch w;
	long long id = 0;
	char text[64];

	(void)state;
	assert_int_equal(store_watches_insert(db_conn(), &in, &id), 0);
	assert_int_equal(store_watches_get(&w, db_conn(), id), 0);
	assert_int_equal(w.id, id);
	assert_int_equal(w.repo_id, linux_id);
	assert_string_equal(w.repo, "linux");
	assert_string_equal(w.repo_url, "https://git.example/linux");
	assert_string_equal(w.web_url, "https://git.example/c/{sha}");
	assert_string_equal(w.branch, "for-next/*");
	assert_int_equal(w.interval_s, 900);
	assert_true(w.regressions_only);
	assert_false(w.paused);
	assert_string_equal(w.notify, "[\"perf@example.org\"]");
	assert_int_equal(w.testcase_count, 2);
	assert_int_equal(w.testcase_ids[0], aim_id);
	assert_string_equal(w.testcase_names[0], "aim");
	assert_int_equal(w.testcase_ids[1], bench_id);
	assert_string_equal(w.testcase_names[1], "zbench");
	assert_int_equal(strlen(w.created_at), 20);
	assert_int_equal(w.created_at[10], 'T');
	assert_null(w.last_poll_at);
	assert_null(w.last_error);
	store_watch_clear(&w);
	assert_null(w.repo);
	/* Due at once, made by the token. */
	sql_text(text, sizeof(text),
		 "SELECT (next_poll_at <= now()) || ' ' || (created_by = "
		 "(SELECT id FROM tokens WHERE name = 'admin'))"
		 " FROM watches WHERE id = $1",
		 id);
	assert_string_equal(text, "true true");
}

static void test_store_watches__a_bare_watch(void **state)
{
	struct store_watch_new in = {
	    .repo_id = git_id,
	    .branch = "master",
	    .interval_s = 10,
	    .paused = true,
	    .notify = "[]",
	};
	struct store_watch w;
	long long id = 0;
	char text[64];

	(void)state;
	assert_int_equal(store_watches_insert(db_conn(), &in, &id), 0);
	assert_int_equal(store_watches_get(&w, db_conn(), id), 0);
	assert_null(w.web_url);
	assert_true(w.paused);
	assert_false(w.regressions_only);
	assert_string_equal(w.notify, "[]");
	assert_int_equal(w.testcase_count, 0);
	assert_non_null(w.testcase_ids);
	assert_null(w.testcase_names[0]);
	store_watch_clear(&w);
	/* Token 0 is the bootstrap admin: nobody in the table. */
	sql_text(text, sizeof(text),
		 "SELECT created_by FROM watches WHERE id = $1", id);
	assert_string_equal(text, "NULL");
}

static void test_store_watches__a_refused_watch_leaves_nothing(void **state)
{
	const long long testcases[2] = {bench_id, 999999};
	struct store_watch_new in = {
	    .repo_id = git_id,
	    .branch = "refused",
	    .interval_s = 60,
	    .notify = "[]",
	    .testcase_ids = testcases,
	    .testcase_count = 2,
	};
	long long id = 0;
	char text[64];

	(void)state;
	/* The second testcase is unknown: the watch goes with it. */
	assert_int_equal(store_watches_insert(db_conn(), &in, &id), -1);
	assert_string_equal(db_last_failure(), "23503");
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM watches WHERE branch = 'refused'"
		 " AND $1 > 0",
		 1);
	assert_string_equal(text, "0");
	in.testcase_count = 1;
	in.interval_s = 5; /* below the table's 10 */
	assert_int_equal(store_watches_insert(db_conn(), &in, &id), -1);
	assert_string_equal(db_last_failure(), "23514");
	/* The connection is out of the failed transaction. */
	assert_int_equal(PQtransactionStatus(db_conn()), PQTRANS_IDLE);
}

static void test_store_watches__no_such_watch(void **state)
{
	struct store_watch w;

	(void)state;
	w.repo = (char *)"stale";
	assert_int_equal(store_watches_get(&w, db_conn(), NO_WATCH), 1);
	assert_null(w.repo);
	assert_int_equal(store_watches_set_paused(db_conn(), NO_WATCH, true),
			 1);
	assert_int_equal(store_watches_delete(db_conn(), NO_WATCH), 1);
}

static void test_store_watches__listed_oldest_first(void **state)
{
	long long first = make_watch(git_id, "list-1", false);
	long long second = make_watch(linux_id, "list-2", true);
	struct store_watch *list = NULL;
	size_t count = 0, i, seen = 0;

	(void)state;
	assert_int_equal(store_watches_list(&list, &count, db_conn()), 0);
	assert_true(count >= 2);
	for (i = 1; i < count; i++)
		assert_true(list[i - 1].id < list[i].id);
	for (i = 0; i < count; i++) {
		if (list[i].id == first) {
			seen++;
			assert_string_equal(list[i].repo, "git");
			assert_string_equal(list[i].branch, "list-1");
			assert_int_equal(list[i].testcase_count, 2);
		} else if (list[i].id == second) {
			seen++;
			assert_true(list[i].paused);
			assert_string_equal(list[i].testcase_names[0], "aim");
		}
	}
	assert_int_equal(seen, 2);
	assert_int_equal(list[count - 1].id, second);
	store_watches_free(list, count);
}

static void test_store_watches__paused_and_resumed(void **state)
{
	long long id = make_watch(git_id, "pause", false);
	struct store_watch w;
	char text[64];

	(void)state;
	sql_exec("UPDATE watches SET next_poll_at = '2030-01-01Z'"
		 " WHERE id = $1",
		 id);
	assert_int_equal(store_watches_set_paused(db_conn(), id, true), 0);
	assert_int_equal(store_watches_get(&w, db_conn(), id), 0);
	assert_true(w.paused);
	store_watch_clear(&w);
	/* Pausing keeps the next poll; resuming makes the watch due. */
	sql_text(text, sizeof(text),
		 "SELECT next_poll_at = '2030-01-01Z' FROM watches"
		 " WHERE id = $1",
		 id);
	assert_string_equal(text, "t");
	assert_int_equal(store_watches_set_paused(db_conn(), id, false), 0);
	assert_int_equal(store_watches_get(&w, db_conn(), id), 0);
	assert_false(w.paused);
	store_watch_clear(&w);
	sql_text(text, sizeof(text),
		 "SELECT next_poll_at <= now() FROM watches WHERE id = $1",
		 id);
	assert_string_equal(text, "t");
}

static void test_store_watches__deleted_with_heads_jobs_stay(void **state)
{
	long long id = make_watch(git_id, "delete", false), job;
	char text[64];

	(void)state;
	sql_exec("INSERT INTO watch_heads (watch_id, testcase_id, branch,"
		 " sha, state) SELECT $1, id, 'delete', 'aaa', 'baseline'"
		 " FROM testcases",
		 id);
	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha) SELECT r.id, t.id, 'g',"
		      " 'b', 'g', 'b' FROM repos r, testcases t WHERE r.name ="
		      " 'git' AND t.name = 'aim' RETURNING id",
		      0, NULL);
	{
		char job_text[STORE_INT_TEXT], id_text[STORE_INT_TEXT];
		const char *params[2] = {store_int_text(job_text, job),
					 store_int_text(id_text, id)};
		PGresult *r = db_exec(
		    db_conn(),
		    "INSERT INTO watch_jobs (job_id, watch_id, branch, role)"
		    " VALUES ($1, $2, 'delete', 'measure')",
		    2, params);

		assert_non_null(r);
		PQclear(r);
	}
	assert_int_equal(store_watches_delete(db_conn(), id), 0);
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM watch_heads WHERE watch_id = $1", id);
	assert_string_equal(text, "0");
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM watch_testcases WHERE watch_id = $1",
		 id);
	assert_string_equal(text, "0");
	sql_text(text, sizeof(text),
		 "SELECT j.state || ' ' || coalesce(wj.watch_id::text,"
		 " 'NULL') FROM jobs j JOIN watch_jobs wj ON wj.job_id = j.id"
		 " WHERE j.id = $1",
		 job);
	assert_string_equal(text, "queued NULL");
	assert_int_equal(store_watches_delete(db_conn(), id), 1);
}

static void test_store_watches__the_push_hook_pokes_a_repo(void **state)
{
	long long a = make_watch(linux_id, "poke-a", false);
	long long b = make_watch(linux_id, "poke-b", false);
	long long paused = make_watch(linux_id, "poke-p", true);
	size_t count = 99;
	char text[64];

	(void)state;
	testdb_exec("UPDATE watches SET next_poll_at = now() + interval"
		    " '1 day'");
	assert_int_equal(store_watches_poke_repo(db_conn(), "linux", &count),
			 0);
	/* Every unpaused watch of linux, made in this program so far. */
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM watches WHERE repo_id = $1"
		 " AND NOT paused",
		 linux_id);
	assert_int_equal(count, (size_t)atoi(text));
	assert_true(count >= 2);
	sql_text(text, sizeof(text),
		 "SELECT string_agg((next_poll_at <= now())::text, ' '"
		 " ORDER BY id) FROM watches WHERE id BETWEEN $1::bigint AND "
		 "$1::bigint + 2",
		 a);
	assert_string_equal(text, "true true false");
	assert_int_equal(b, a + 1);
	assert_int_equal(paused, a + 2);
	/* Another repository's watches stay as they were. */
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM watches WHERE repo_id = $1"
		 " AND next_poll_at <= now()",
		 git_id);
	assert_string_equal(text, "0");
	count = 99;
	assert_int_equal(store_watches_poke_repo(db_conn(), "idle", &count),
			 0);
	assert_int_equal(count, 0);
	assert_int_equal(store_watches_poke_repo(db_conn(), "nope", &count),
			 1);
}

/* Nothing is due but watches `a` (due 2 minutes ago) and `b` (1 minute
 * ago); a paused watch was due before both. */
static void two_due(long long *a, long long *b)
{
	long long paused;

	*a = make_watch(git_id, "due-a", false);
	*b = make_watch(git_id, "due-b", false);
	paused = make_watch(git_id, "due-p", true);
	testdb_exec("UPDATE watches SET next_poll_at = now() + interval"
		    " '1 day'");
	sql_exec("UPDATE watches SET next_poll_at = now() - interval"
		 " '2 minutes' WHERE id = $1",
		 *a);
	sql_exec("UPDATE watches SET next_poll_at = now() - interval"
		 " '1 minute' WHERE id = $1",
		 *b);
	sql_exec("UPDATE watches SET next_poll_at = now() - interval"
		 " '1 hour' WHERE id = $1",
		 paused);
}

static void test_store_watches__claimed_in_due_order(void **state)
{
	struct store_watch w;
	long long a, b;
	char text[64];

	(void)state;
	two_due(&a, &b);
	assert_int_equal(store_watches_claim_due(&w, db_conn()), 0);
	assert_int_equal(w.id, a);
	assert_string_equal(w.branch, "due-a");
	assert_int_equal(w.testcase_count, 2);
	store_watch_clear(&w);
	/* Its next poll is one interval (60 s) on. */
	sql_text(text, sizeof(text),
		 "SELECT round(extract(epoch FROM next_poll_at - now()))"
		 " FROM watches WHERE id = $1",
		 a);
	assert_string_equal(text, "60");
	assert_int_equal(store_watches_claim_due(&w, db_conn()), 0);
	assert_int_equal(w.id, b);
	store_watch_clear(&w);
	assert_int_equal(store_watches_claim_due(&w, db_conn()), 1);
}

/* Another server's connection: a lock it would wait on fails the test
 * within 5 s instead of hanging it. */
static PGconn *another_conn(void)
{
	PGconn *conn = PQconnectdb(testdb.conninfo);
	PGresult *r;

	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	r = PQexec(conn, "SET statement_timeout = 5000");
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	return conn;
}

static void test_store_watches__a_claimed_watch_is_skipped(void **state)
{
	PGconn *other = another_conn();
	PGconn *third = another_conn();
	struct store_watch mine, theirs, none;
	long long a, b;

	(void)state;
	two_due(&a, &b);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_watches_claim_due(&mine, db_conn()), 0);
	assert_int_equal(mine.id, a);
	/* Another server, while the first one's claim is open. */
	assert_int_equal(db_begin(other), 0);
	assert_int_equal(store_watches_claim_due(&theirs, other), 0);
	assert_int_equal(theirs.id, b);
	assert_int_equal(store_watches_claim_due(&none, third), 1);
	/* Rolled back, the first claim is due again. */
	db_rollback(db_conn());
	assert_int_equal(store_watches_claim_due(&none, third), 0);
	assert_int_equal(none.id, a);
	store_watch_clear(&none);
	assert_int_equal(db_commit(other), 0);
	store_watch_clear(&theirs);
	store_watch_clear(&mine);
	PQfinish(third);
	PQfinish(other);
}

static void test_store_watches__a_poll_is_recorded(void **state)
{
	long long id = make_watch(git_id, "poll", false);
	struct store_watch w;

	(void)state;
	assert_int_equal(
	    store_watches_polled(db_conn(), id, "fetch: connection refused"),
	    0);
	assert_int_equal(store_watches_get(&w, db_conn(), id), 0);
	assert_int_equal(strlen(w.last_poll_at), 20);
	assert_string_equal(w.last_error, "fetch: connection refused");
	store_watch_clear(&w);
	assert_int_equal(store_watches_polled(db_conn(), id, NULL), 0);
	assert_int_equal(store_watches_get(&w, db_conn(), id), 0);
	assert_non_null(w.last_poll_at);
	assert_null(w.last_error);
	store_watch_clear(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_watches__ids_by_name),
	    cmocka_unit_test(test_store_watches__a_watch_reads_back_whole),
	    cmocka_unit_test(test_store_watches__a_bare_watch),
	    cmocka_unit_test(
		test_store_watches__a_refused_watch_leaves_nothing),
	    cmocka_unit_test(test_store_watches__no_such_watch),
	    cmocka_unit_test(test_store_watches__listed_oldest_first),
	    cmocka_unit_test(test_store_watches__paused_and_resumed),
	    cmocka_unit_test(test_store_watches__deleted_with_heads_jobs_stay),
	    cmocka_unit_test(test_store_watches__the_push_hook_pokes_a_repo),
	    cmocka_unit_test(test_store_watches__claimed_in_due_order),
	    cmocka_unit_test(test_store_watches__a_claimed_watch_is_skipped),
	    cmocka_unit_test(test_store_watches__a_poll_is_recorded),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
