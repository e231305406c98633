/*
 * server/store/store_repos.c against a real PostgreSQL (testdb.h):
 * repositories and testcases registered, found by name, listed by name,
 * a taken name refused, changed, and deleted softly (issue 15).
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

#include "../../server/store/store_repos.h"
#include "testdb.h"

static void test_store_repos__a_repo_is_found_by_name(void **state)
{
	struct store_repo made, found;

	(void)state;
	assert_int_equal(store_repos_create(&made, db_conn(), "linux",
					    "https://u:pw@git.example/linux",
					    "https://git.example/c/{sha}"),
			 STORE_OK);
	assert_true(made.id > 0);
	assert_string_equal(made.name, "linux");
	assert_string_equal(made.url, "https://u:pw@git.example/linux");
	assert_string_equal(made.web_url, "https://git.example/c/{sha}");
	assert_int_equal(strlen(made.created_at), 20);
	assert_int_equal(store_repos_find(&found, db_conn(), "linux"),
			 STORE_OK);
	assert_int_equal(found.id, made.id);
	assert_string_equal(found.url, made.url);
	store_repo_clear(&found);
	assert_int_equal(store_repos_find(&found, db_conn(), "nope"),
			 STORE_NOT_FOUND);
	store_repo_clear(&made);
}

static void test_store_repos__a_taken_name_is_refused(void **state)
{
	struct store_repo made;

	(void)state;
	assert_int_equal(
	    store_repos_create(&made, db_conn(), "twice", "/srv/a", NULL),
	    STORE_OK);
	assert_null(made.web_url);
	store_repo_clear(&made);
	assert_int_equal(
	    store_repos_create(&made, db_conn(), "twice", "/srv/b", NULL),
	    STORE_EXISTS);
	assert_null(made.held);
}

static void test_store_repos__repos_are_listed_by_name(void **state)
{
	struct store_repo_list list;
	struct store_repo made;
	size_t i;

	(void)state;
	store_repos_create(&made, db_conn(), "aaa-first", "/srv/x", NULL);
	store_repo_clear(&made);
	store_repos_create(&made, db_conn(), "zzz-last", "/srv/y", NULL);
	store_repo_clear(&made);
	assert_int_equal(store_repos_list(&list, db_conn()), STORE_OK);
	assert_true(list.count >= 2);
	assert_string_equal(list.items[0].name, "aaa-first");
	assert_string_equal(list.items[list.count - 1].name, "zzz-last");
	for (i = 1; i < list.count; i++)
		assert_true(
		    strcmp(list.items[i - 1].name, list.items[i].name) < 0);
	store_repo_list_clear(&list);
}

static struct store_testcase_fields bench(const char *name)
{
	struct store_testcase_fields f = {
	    .name = name,
	    .build = "make -j4",
	    .run = "./bench --quick\n./bench --full",
	    .kpi = "bench.score",
	    .higher_is_better = true,
	    .min_change_pct = 2.5,
	    .runs_min = 5,
	    .runs_max = 40,
	    .timeout_s = 120,
	    .params = "{\"threads\":4}",
	    .monitors = "[\"vmstat\"]",
	    .notify = "[\"perf@example.org\"]",
	    .notify_author = true,
	    .group = "rack-2",
	};

	return f;
}

static void test_store_repos__a_testcase_keeps_every_field(void **state)
{
	struct store_testcase_fields fields = bench("bench");
	struct store_testcase made, found;

	(void)state;
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_OK);
	assert_int_equal(store_testcases_find(&found, db_conn(), "bench"),
			 STORE_OK);
	assert_int_equal(found.id, made.id);
	assert_string_equal(found.fields.build, "make -j4");
	assert_string_equal(found.fields.run,
			    "./bench --quick\n./bench --full");
	assert_string_equal(found.fields.kpi, "bench.score");
	assert_true(found.fields.higher_is_better);
	assert_true(found.fields.min_change_pct == 2.5);
	assert_int_equal(found.fields.runs_min, 5);
	assert_int_equal(found.fields.runs_max, 40);
	assert_int_equal(found.fields.timeout_s, 120);
	/* jsonb answers in its own spelling. */
	assert_string_equal(found.fields.params, "{\"threads\": 4}");
	assert_string_equal(found.fields.monitors, "[\"vmstat\"]");
	assert_string_equal(found.fields.notify, "[\"perf@example.org\"]");
	assert_true(found.fields.notify_author);
	assert_string_equal(found.fields.group, "rack-2");
	assert_int_equal(strlen(found.created_at), 20);
	store_testcase_clear(&found);
	store_testcase_clear(&made);
	/* Without a group it runs on the one workers get by default. */
	fields = bench("nogroup");
	fields.group = NULL;
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_OK);
	assert_string_equal(made.fields.group, "default");
	store_testcase_clear(&made);
	assert_int_equal(store_testcases_find(&found, db_conn(), "none"),
			 STORE_NOT_FOUND);
}

static void test_store_repos__a_testcase_name_is_taken_once(void **state)
{
	struct store_testcase_fields fields = bench("once");
	struct store_testcase made;

	(void)state;
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_OK);
	store_testcase_clear(&made);
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_EXISTS);
	/* What the table refuses otherwise is a failure. */
	fields = bench("zero-runs");
	fields.runs_min = 1;
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_FAILED);
	assert_string_equal(db_last_failure(), "23514");
}

static void test_store_repos__testcases_are_listed_by_name(void **state)
{
	struct store_testcase_fields fields = bench("aaa-tc");
	struct store_testcase_list list;
	struct store_testcase made;

	(void)state;
	store_testcases_create(&made, db_conn(), &fields);
	store_testcase_clear(&made);
	assert_int_equal(store_testcases_list(&list, db_conn()), STORE_OK);
	assert_true(list.count >= 1);
	assert_string_equal(list.items[0].fields.name, "aaa-tc");
	assert_int_equal(list.items[0].fields.runs_max, 40);
	store_testcase_list_clear(&list);
}

static void
test_store_repos__a_repo_is_changed_and_deleted_softly(void **state)
{
	struct store_repo made, changed, again;
	struct store_repo_list list;
	size_t i;

	(void)state;
	assert_int_equal(
	    store_repos_create(&made, db_conn(), "soft", "/srv/1", NULL),
	    STORE_OK);
	assert_int_equal(store_repos_update(&changed, db_conn(), "soft",
					    "/srv/2", "https://x/{sha}"),
			 STORE_OK);
	assert_int_equal(changed.id, made.id);
	assert_string_equal(changed.url, "/srv/2");
	assert_string_equal(changed.web_url, "https://x/{sha}");
	store_repo_clear(&changed);
	assert_int_equal(
	    store_repos_update(&changed, db_conn(), "nope", "/srv/2", NULL),
	    STORE_NOT_FOUND);
	assert_int_equal(store_repos_delete(db_conn(), "soft"), STORE_OK);
	assert_int_equal(store_repos_delete(db_conn(), "soft"),
			 STORE_NOT_FOUND);
	assert_int_equal(store_repos_find(&changed, db_conn(), "soft"),
			 STORE_NOT_FOUND);
	assert_int_equal(
	    store_repos_update(&changed, db_conn(), "soft", "/srv/3", NULL),
	    STORE_NOT_FOUND);
	assert_int_equal(store_repos_list(&list, db_conn()), STORE_OK);
	for (i = 0; i < list.count; i++)
		assert_string_not_equal(list.items[i].name, "soft");
	store_repo_list_clear(&list);
	/* The name is free again; the deleted row stays for old jobs. */
	assert_int_equal(
	    store_repos_create(&again, db_conn(), "soft", "/srv/4", NULL),
	    STORE_OK);
	assert_true(again.id != made.id);
	store_repo_clear(&again);
	store_repo_clear(&made);
}

static void
test_store_repos__in_use_is_not_deleted_and_hold_sees_deletion(void **state)
{
	struct store_testcase_fields fields = bench("used-tc");
	struct store_testcase testcase;
	struct store_repo repo;
	char sql[512];

	(void)state;
	assert_int_equal(
	    store_repos_create(&repo, db_conn(), "used", "/srv/u", NULL),
	    STORE_OK);
	assert_int_equal(store_testcases_create(&testcase, db_conn(), &fields),
			 STORE_OK);
	assert_int_equal(store_repos_hold(db_conn(), repo.id, testcase.id),
			 STORE_OK);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO jobs (repo_id, testcase_id, good_rev, bad_rev,"
		 " good_sha, bad_sha, state) VALUES (%lld, %lld, 'a', 'b',"
		 " 'a', 'b', 'running')",
		 repo.id, testcase.id);
	testdb_exec(sql);
	assert_int_equal(store_repos_delete(db_conn(), "used"),
			 STORE_CONFLICT);
	assert_int_equal(store_testcases_delete(db_conn(), "used-tc"),
			 STORE_CONFLICT);
	testdb_exec("UPDATE jobs SET state = 'done'");
	assert_int_equal(store_repos_delete(db_conn(), "used"), STORE_OK);
	assert_int_equal(store_testcases_delete(db_conn(), "used-tc"),
			 STORE_OK);
	assert_int_equal(store_repos_hold(db_conn(), repo.id, testcase.id),
			 STORE_NOT_FOUND);
	store_testcase_clear(&testcase);
	store_repo_clear(&repo);
}

static void
test_store_repos__a_testcase_is_changed_but_keeps_its_name(void **state)
{
	struct store_testcase_fields fields = bench("change-tc");
	struct store_testcase made, changed;

	(void)state;
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_OK);
	fields.kpi = "other.metric";
	fields.runs_max = 12;
	fields.notify_author = false;
	fields.monitors = "[]";
	assert_int_equal(store_testcases_update(&changed, db_conn(), &fields),
			 STORE_OK);
	assert_int_equal(changed.id, made.id);
	assert_string_equal(changed.fields.name, "change-tc");
	assert_string_equal(changed.fields.kpi, "other.metric");
	assert_int_equal(changed.fields.runs_max, 12);
	assert_false(changed.fields.notify_author);
	assert_string_equal(changed.fields.monitors, "[]");
	store_testcase_clear(&changed);
	store_testcase_clear(&made);
	assert_int_equal(store_testcases_delete(db_conn(), "change-tc"),
			 STORE_OK);
	assert_int_equal(store_testcases_update(&changed, db_conn(), &fields),
			 STORE_NOT_FOUND);
	assert_int_equal(store_testcases_create(&made, db_conn(), &fields),
			 STORE_OK);
	store_testcase_clear(&made);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_repos__a_repo_is_found_by_name),
	    cmocka_unit_test(test_store_repos__a_taken_name_is_refused),
	    cmocka_unit_test(test_store_repos__repos_are_listed_by_name),
	    cmocka_unit_test(test_store_repos__a_testcase_keeps_every_field),
	    cmocka_unit_test(test_store_repos__a_testcase_name_is_taken_once),
	    cmocka_unit_test(test_store_repos__testcases_are_listed_by_name),
	    cmocka_unit_test(
		test_store_repos__a_repo_is_changed_and_deleted_softly),
	    cmocka_unit_test(
		test_store_repos__in_use_is_not_deleted_and_hold_sees_deletion),
	    cmocka_unit_test(
		test_store_repos__a_testcase_is_changed_but_keeps_its_name),
	};

	return cmocka_run_group_tests(tests, testdb_setup, testdb_teardown);
}
