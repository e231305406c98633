/*
 * server/store/store_outbox.c against a real PostgreSQL (testdb.h):
 * reports queued, handed out oldest first and only when due, one mailer's
 * locked row skipped by another, the back-off of failed attempts, the
 * give-up after the deadline, and what a rolled back attempt leaves.
 * Each test starts from an empty outbox.
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

#include "../../server/store/store_outbox.h"
#include "testdb.h"

#define NO_REPORT 999999

static long long job;

/* Text of the first column of the first row of `sql` with the one
 * parameter `id` ("" for none, "NULL" for SQL NULL). */
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

/* The cluster with one job for the reports to belong to. */
static int group_setup(void **state)
{
	PGresult *r;

	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec(
	    "INSERT INTO repos (name, url) VALUES ('proj', '/srv/proj')");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better) VALUES ('tc', 'make', './bench',"
		    " 'score', true)");
	r = db_exec(db_conn(),
		    "INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		    " bad_rev, good_sha, bad_sha) SELECT r.id, t.id, 'c0',"
		    " 'c2', 'c0', 'c2' FROM repos r, testcases t RETURNING id",
		    0, NULL);
	if (r == NULL)
		return -1;
	job = db_int(r, 0, 0);
	PQclear(r);
	return 0;
}

static int empty_outbox(void **state)
{
	(void)state;
	testdb_exec("DELETE FROM outbox");
	return 0;
}

/* Queues a report to one address with `message`; returns its id. */
static long long queue(const char *message)
{
	const char *to[1] = {"dev@example.org"};
	char id[64];

	assert_int_equal(
	    store_outbox_insert(db_conn(), job, to, 1, "subject", message),
	    STORE_OK);
	sql_text(id, sizeof(id), "SELECT max(id) FROM outbox WHERE $1 > 0", 1);
	return atoll(id);
}

static void test_store_outbox__a_report_is_stored_as_queued(void **state)
{
	const char *to[2] = {"a@example.org", "\"Ann\" <b@example.org>"};
	char text[256], expected[256];
	long long id;

	(void)state;
	assert_int_equal(store_outbox_insert(db_conn(), job, to, 2,
					     "[statbisect] regression",
					     "Subject: x\r\n\r\nbody\r\n"),
			 STORE_OK);
	sql_text(text, sizeof(text), "SELECT max(id) FROM outbox WHERE $1 > 0",
		 1);
	id = atoll(text);
	assert_true(id > 0);
	snprintf(expected, sizeof(expected),
		 "%lld [\"a@example.org\", \"\\\"Ann\\\" <b@example.org>\"]"
		 " [statbisect] regression",
		 job);
	sql_text(text, sizeof(text),
		 "SELECT job_id || ' ' || recipients::text || ' ' || subject"
		 " FROM outbox WHERE id = $1",
		 id);
	assert_string_equal(text, expected);
	sql_text(text, sizeof(text),
		 "SELECT message FROM outbox WHERE id = $1", id);
	assert_string_equal(text, "Subject: x\r\n\r\nbody\r\n");
	sql_text(text, sizeof(text),
		 "SELECT attempts || ' ' || (sent_at IS NULL) || ' ' ||"
		 " (failed_at IS NULL) || ' ' || (last_error IS NULL) || ' '"
		 " || (next_attempt_at <= now()) FROM outbox WHERE id = $1",
		 id);
	assert_string_equal(text, "0 true true true true");
}

static void test_store_outbox__next_on_an_empty_outbox(void **state)
{
	struct store_outbox_item item;

	(void)state;
	item.id = 42;
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_NOT_FOUND);
	assert_int_equal(item.id, 0);
	assert_null(item.recipients);
	assert_null(item.message);
	store_outbox_item_clear(&item);
}

static void test_store_outbox__next_hands_out_the_oldest(void **state)
{
	struct store_outbox_item item;
	long long first = queue("first"), second = queue("second");

	(void)state;
	assert_true(first < second);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(item.id, first);
	assert_string_equal(item.recipients, "[\"dev@example.org\"]");
	assert_string_equal(item.message, "first");
	assert_int_equal(item.attempts, 0);
	assert_int_equal(store_outbox_sent(db_conn(), item.id), STORE_OK);
	assert_int_equal(db_commit(db_conn()), 0);
	store_outbox_item_clear(&item);
	assert_int_equal(item.id, 0);
	assert_null(item.message);
	/* Sent once, it is not handed out again. */
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(item.id, second);
	assert_string_equal(item.message, "second");
	store_outbox_item_clear(&item);
}

static void test_store_outbox__nobody_to_tell_is_never_due(void **state)
{
	struct store_outbox_item item;
	char text[64];

	(void)state;
	assert_int_equal(store_outbox_insert(db_conn(), job, NULL, 0,
					     "subject", "to nobody"),
			 STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT recipients::text FROM outbox WHERE $1 > 0", 1);
	assert_string_equal(text, "[]");
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_NOT_FOUND);
}

static void test_store_outbox__a_future_attempt_is_not_due(void **state)
{
	struct store_outbox_item item;
	long long id = queue("later");
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r;

	(void)state;
	r = db_exec(db_conn(),
		    "UPDATE outbox SET next_attempt_at = now() +"
		    " interval '1 minute' WHERE id = $1",
		    1, params);
	assert_non_null(r);
	PQclear(r);
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_NOT_FOUND);
	r = db_exec(db_conn(),
		    "UPDATE outbox SET next_attempt_at = now() -"
		    " interval '1 second' WHERE id = $1",
		    1, params);
	assert_non_null(r);
	PQclear(r);
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(item.id, id);
	store_outbox_item_clear(&item);
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

static void test_store_outbox__a_locked_report_is_skipped(void **state)
{
	struct store_outbox_item mine, theirs, none;
	long long first = queue("one"), second = queue("two");
	PGconn *other = another_conn();
	PGconn *third = another_conn();

	(void)state;
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_outbox_next(&mine, db_conn()), STORE_OK);
	assert_int_equal(mine.id, first);
	/* Another mailer's transaction passes over the locked row. */
	assert_int_equal(db_begin(other), 0);
	assert_int_equal(store_outbox_next(&theirs, other), STORE_OK);
	assert_int_equal(theirs.id, second);
	assert_string_equal(theirs.message, "two");
	/* With both locked, a third finds nothing due. */
	assert_int_equal(db_begin(third), 0);
	assert_int_equal(store_outbox_next(&none, third), STORE_NOT_FOUND);
	db_rollback(third);
	/* The lock ends with the transaction that took it. */
	db_rollback(db_conn());
	assert_int_equal(store_outbox_next(&none, third), STORE_OK);
	assert_int_equal(none.id, first);
	store_outbox_item_clear(&none);
	db_rollback(other);
	store_outbox_item_clear(&theirs);
	store_outbox_item_clear(&mine);
	PQfinish(third);
	PQfinish(other);
}

static void test_store_outbox__a_rolled_back_attempt_leaves_it(void **state)
{
	struct store_outbox_item item;
	long long id = queue("again");
	char text[64];

	(void)state;
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(
	    store_outbox_failed(db_conn(), item.id, "refused", 600, 172800),
	    STORE_OK);
	db_rollback(db_conn());
	store_outbox_item_clear(&item);
	sql_text(text, sizeof(text),
		 "SELECT attempts || ' ' || coalesce(last_error, 'none')"
		 " FROM outbox WHERE id = $1",
		 id);
	assert_string_equal(text, "0 none");
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(item.id, id);
	assert_int_equal(item.attempts, 0);
	store_outbox_item_clear(&item);
}

/* "attempts wait last_error failed": the state of report `id`, the wait
 * the seconds from its last attempt to its next. */
static void attempt_state(char *out, size_t size, long long id)
{
	sql_text(out, size,
		 "SELECT attempts || ' ' || extract(epoch FROM"
		 " next_attempt_at - last_attempt_at)::int || ' ' ||"
		 " coalesce(last_error, 'none') || ' ' ||"
		 " (failed_at IS NOT NULL) FROM outbox WHERE id = $1",
		 id);
}

static void test_store_outbox__failed_attempts_back_off(void **state)
{
	struct store_outbox_item item;
	long long id = queue("backoff");
	char text[128];

	(void)state;
	assert_int_equal(
	    store_outbox_failed(db_conn(), id, "refused", 600, 172800),
	    STORE_OK);
	attempt_state(text, sizeof(text), id);
	assert_string_equal(text, "1 5 refused false");
	/* Waiting: not handed out. */
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_NOT_FOUND);
	assert_int_equal(
	    store_outbox_failed(db_conn(), id, "timeout", 600, 172800),
	    STORE_OK);
	attempt_state(text, sizeof(text), id);
	assert_string_equal(text, "2 10 timeout false");
	assert_int_equal(store_outbox_failed(db_conn(), id, "x", 600, 172800),
			 STORE_OK);
	attempt_state(text, sizeof(text), id);
	assert_string_equal(text, "3 20 x false");
	/* Capped at retry_max_seconds. */
	assert_int_equal(store_outbox_failed(db_conn(), id, "y", 30, 172800),
			 STORE_OK);
	attempt_state(text, sizeof(text), id);
	assert_string_equal(text, "4 30 y false");
	/* Once due, handed out with the attempts so far; sent clears the
	 * last error. */
	testdb_exec("UPDATE outbox SET next_attempt_at = now()");
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(item.id, id);
	assert_int_equal(item.attempts, 4);
	store_outbox_item_clear(&item);
	assert_int_equal(store_outbox_sent(db_conn(), id), STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT attempts || ' ' || coalesce(last_error, 'none')"
		 " || ' ' || (sent_at = last_attempt_at)"
		 " FROM outbox WHERE id = $1",
		 id);
	assert_string_equal(text, "5 none true");
}

static void test_store_outbox__the_back_off_stops_growing(void **state)
{
	long long id = queue("long");
	char text[128];

	(void)state;
	/* 5 * 2^20 s is the most; retry_max above it does not matter. */
	testdb_exec("UPDATE outbox SET attempts = 40");
	assert_int_equal(
	    store_outbox_failed(db_conn(), id, "z", 4000000000u, 4000000000u),
	    STORE_OK);
	attempt_state(text, sizeof(text), id);
	assert_string_equal(text, "41 5242880 z false");
}

static void test_store_outbox__an_old_report_is_given_up(void **state)
{
	struct store_outbox_item item;
	long long young = queue("young"), old = queue("old");
	char id_text[STORE_INT_TEXT], text[128];
	const char *params[1] = {store_int_text(id_text, old)};
	PGresult *r;

	(void)state;
	r = db_exec(db_conn(),
		    "UPDATE outbox SET created_at = now() - interval '3 days'"
		    " WHERE id = $1",
		    1, params);
	assert_non_null(r);
	PQclear(r);
	assert_int_equal(
	    store_outbox_failed(db_conn(), old, "gone", 600, 172800),
	    STORE_OK);
	assert_int_equal(
	    store_outbox_failed(db_conn(), young, "busy", 600, 172800),
	    STORE_OK);
	attempt_state(text, sizeof(text), old);
	assert_string_equal(text, "1 5 gone true");
	attempt_state(text, sizeof(text), young);
	assert_string_equal(text, "1 5 busy false");
	/* Given up, it stays out even once due; the young one comes. */
	testdb_exec("UPDATE outbox SET next_attempt_at = now()");
	assert_int_equal(store_outbox_next(&item, db_conn()), STORE_OK);
	assert_int_equal(item.id, young);
	store_outbox_item_clear(&item);
}

static void test_store_outbox__an_unknown_report_changes_nothing(void **state)
{
	long long id = queue("kept");
	char text[128];

	(void)state;
	assert_int_equal(store_outbox_sent(db_conn(), NO_REPORT), STORE_OK);
	assert_int_equal(
	    store_outbox_failed(db_conn(), NO_REPORT, "e", 600, 172800),
	    STORE_OK);
	sql_text(text, sizeof(text),
		 "SELECT count(*) FILTER (WHERE attempts = 0 AND sent_at IS"
		 " NULL) || '/' || count(*) FROM outbox WHERE $1 > 0",
		 id);
	assert_string_equal(text, "1/1");
}

#define OUTBOX_TEST(name)                                                     \
	cmocka_unit_test_setup(test_store_outbox__##name, empty_outbox)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    OUTBOX_TEST(a_report_is_stored_as_queued),
	    OUTBOX_TEST(next_on_an_empty_outbox),
	    OUTBOX_TEST(next_hands_out_the_oldest),
	    OUTBOX_TEST(nobody_to_tell_is_never_due),
	    OUTBOX_TEST(a_future_attempt_is_not_due),
	    OUTBOX_TEST(a_locked_report_is_skipped),
	    OUTBOX_TEST(a_rolled_back_attempt_leaves_it),
	    OUTBOX_TEST(failed_attempts_back_off),
	    OUTBOX_TEST(the_back_off_stops_growing),
	    OUTBOX_TEST(an_old_report_is_given_up),
	    OUTBOX_TEST(an_unknown_report_changes_nothing),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
