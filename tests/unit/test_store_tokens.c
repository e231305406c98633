/*
 * server/store/store_tokens.c against a real PostgreSQL (testdb.h):
 * tokens made, found by their secret, listed and revoked; web sessions
 * opened, found and ended.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <string.h>

#include "../../server/store/store_tokens.h"
#include "testdb.h"

/* A timestamp as every answer shows it: 2026-12-03T08:21:03Z. */
static void assert_timestamp(const char *text)
{
	assert_non_null(text);
	assert_int_equal(strlen(text), 20);
	assert_int_equal(text[4], '-');
	assert_int_equal(text[10], 'T');
	assert_int_equal(text[19], 'Z');
}

static void test_store_tokens__a_token_is_found_by_its_secret(void **state)
{
	struct store_token made, found;

	(void)state;
	assert_int_equal(store_tokens_create(&made, db_conn(), "ci", "submit",
					     "sb_secret-of-ci"),
			 STORE_OK);
	assert_true(made.id > 0);
	assert_string_equal(made.name, "ci");
	assert_string_equal(made.role, "submit");
	assert_timestamp(made.created_at);
	assert_null(made.revoked_at);
	assert_int_equal(
	    store_tokens_find(&found, db_conn(), "sb_secret-of-ci"), STORE_OK);
	assert_int_equal(found.id, made.id);
	assert_string_equal(found.role, "submit");
	store_token_clear(&found);
	assert_int_equal(store_tokens_find(&found, db_conn(), "sb_other"),
			 STORE_NOT_FOUND);
	assert_null(found.held);
	store_token_clear(&made);
}

/* A token's job limits: -1 (null, the server's) unless given, 0 kept as
 * no limit, and read back as they were stored. */
static void test_store_tokens__job_limits_are_kept(void **state)
{
	struct store_token made, plain;

	(void)state;
	assert_int_equal(store_tokens_create_limited(&made, db_conn(), "lim",
						     "submit", "sb_lim", 0, 2),
			 STORE_OK);
	assert_int_equal(made.max_jobs_per_hour, 0);
	assert_int_equal(made.max_open_jobs, 2);
	assert_int_equal(store_tokens_create(&plain, db_conn(), "plain",
					     "submit", "sb_plain"),
			 STORE_OK);
	assert_int_equal(plain.max_jobs_per_hour, -1);
	assert_int_equal(plain.max_open_jobs, -1);
	store_token_clear(&plain);
	assert_int_equal(store_tokens_find(&plain, db_conn(), "sb_lim"),
			 STORE_OK);
	assert_int_equal(plain.max_open_jobs, 2);
	store_token_clear(&plain);
	store_token_clear(&made);
}

static void test_store_tokens__only_the_hash_is_stored(void **state)
{
	struct store_token made;
	PGresult *r;

	(void)state;
	store_tokens_create(&made, db_conn(), "hashed", "read", "abc");
	store_token_clear(&made);
	r = db_exec(db_conn(),
		    "SELECT token_hash FROM tokens WHERE name = 'hashed'", 0,
		    NULL);
	assert_non_null(r);
	/* sha256("abc") */
	assert_string_equal(db_text(r, 0, 0),
			    "ba7816bf8f01cfea414140de5dae2223"
			    "b00361a396177a9cb410ff61f20015ad");
	PQclear(r);
}

static void test_store_tokens__a_role_the_table_refuses_fails(void **state)
{
	struct store_token made;

	(void)state;
	assert_int_equal(
	    store_tokens_create(&made, db_conn(), "x", "root", "sb_root"),
	    STORE_FAILED);
	assert_string_equal(db_last_failure(), "23514");
}

static void test_store_tokens__revoked_once_then_a_conflict(void **state)
{
	struct store_token made, revoked, found;

	(void)state;
	assert_int_equal(store_tokens_create(&made, db_conn(), "to revoke",
					     "read", "sb_to-revoke"),
			 STORE_OK);
	assert_int_equal(store_tokens_revoke(&revoked, db_conn(), made.id),
			 STORE_OK);
	assert_int_equal(revoked.id, made.id);
	assert_string_equal(revoked.name, "to revoke");
	assert_timestamp(revoked.revoked_at);
	assert_int_equal(store_tokens_revoke(&found, db_conn(), made.id),
			 STORE_CONFLICT);
	assert_int_equal(store_tokens_revoke(&found, db_conn(), 999999),
			 STORE_NOT_FOUND);
	assert_int_equal(store_tokens_find(&found, db_conn(), "sb_to-revoke"),
			 STORE_NOT_FOUND);
	store_token_clear(&revoked);
	store_token_clear(&made);
}

static void test_store_tokens__the_list_is_in_id_order(void **state)
{
	struct store_token_list list;
	struct store_token made;
	size_t i;

	(void)state;
	store_tokens_create(&made, db_conn(), "listed", "worker", "sb_listed");
	store_token_clear(&made);
	assert_int_equal(store_tokens_list(&list, db_conn()), STORE_OK);
	assert_true(list.count >= 1);
	for (i = 1; i < list.count; i++)
		assert_true(list.items[i - 1].id < list.items[i].id);
	assert_string_equal(list.items[list.count - 1].name, "listed");
	assert_string_equal(list.items[list.count - 1].role, "worker");
	store_token_list_clear(&list);
	store_token_list_clear(NULL);
}

static void test_store_tokens__a_session_lives_until_it_ends(void **state)
{
	struct store_token made, revoked;
	struct store_session session;

	(void)state;
	store_tokens_create(&made, db_conn(), "person", "admin", "sb_person");
	assert_int_equal(store_sessions_create(db_conn(), "cookie-1", made.id,
					       "admin", "csrf-1", 3600),
			 STORE_OK);
	assert_int_equal(store_sessions_find(&session, db_conn(), "cookie-1"),
			 STORE_OK);
	assert_string_equal(session.role, "admin");
	assert_string_equal(session.csrf, "csrf-1");
	assert_string_equal(session.name, "person");
	assert_int_equal(session.token_id, made.id);
	store_session_clear(&session);
	assert_int_equal(store_sessions_delete(db_conn(), "cookie-1"),
			 STORE_OK);
	assert_int_equal(store_sessions_find(&session, db_conn(), "cookie-1"),
			 STORE_NOT_FOUND);

	/* Revoking the token ends its sessions. */
	store_sessions_create(db_conn(), "cookie-2", made.id, "admin",
			      "csrf-2", 3600);
	store_tokens_revoke(&revoked, db_conn(), made.id);
	assert_int_equal(store_sessions_find(&session, db_conn(), "cookie-2"),
			 STORE_NOT_FOUND);
	store_token_clear(&revoked);
	store_token_clear(&made);
}

static void test_store_tokens__the_bootstrap_admin_session(void **state)
{
	struct store_session session;

	(void)state;
	assert_int_equal(store_sessions_create(db_conn(), "cookie-boot", 0,
					       "admin", "csrf-boot", 3600),
			 STORE_OK);
	assert_int_equal(
	    store_sessions_find(&session, db_conn(), "cookie-boot"), STORE_OK);
	assert_int_equal(session.token_id, 0);
	assert_string_equal(session.name, "bootstrap admin");
	store_session_clear(&session);
}

static void test_store_tokens__ended_sessions_are_gone(void **state)
{
	struct store_session session;
	PGresult *r;

	(void)state;
	store_sessions_create(db_conn(), "cookie-old", 0, "read", "c", 3600);
	testdb_exec("UPDATE sessions SET expires_at = now() - interval '1 s'"
		    " WHERE csrf_token = 'c'");
	assert_int_equal(
	    store_sessions_find(&session, db_conn(), "cookie-old"),
	    STORE_NOT_FOUND);
	/* The next session opened deletes it. */
	store_sessions_create(db_conn(), "cookie-new", 0, "read", "d", 3600);
	r = db_exec(db_conn(),
		    "SELECT count(*) FROM sessions WHERE csrf_token = 'c'", 0,
		    NULL);
	assert_string_equal(db_text(r, 0, 0), "0");
	PQclear(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_store_tokens__a_token_is_found_by_its_secret),
	    cmocka_unit_test(test_store_tokens__only_the_hash_is_stored),
	    cmocka_unit_test(test_store_tokens__job_limits_are_kept),
	    cmocka_unit_test(
		test_store_tokens__a_role_the_table_refuses_fails),
	    cmocka_unit_test(test_store_tokens__revoked_once_then_a_conflict),
	    cmocka_unit_test(test_store_tokens__the_list_is_in_id_order),
	    cmocka_unit_test(test_store_tokens__a_session_lives_until_it_ends),
	    cmocka_unit_test(test_store_tokens__the_bootstrap_admin_session),
	    cmocka_unit_test(test_store_tokens__ended_sessions_are_gone),
	};

	return cmocka_run_group_tests(tests, testdb_setup, testdb_teardown);
}
