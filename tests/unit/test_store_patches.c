/*
 * server/store/store_patches.c against a real PostgreSQL (testdb.h): the
 * repository and testcase looked up by name, a patch job stored with its
 * base and one candidate per patch, and read back as the worker's series,
 * a report's reply and the API's list; what a rolled back insert leaves;
 * the names the patch form offers.
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
#include "../../server/store/store_patches.h"
#include "testdb.h"

#define NO_JOB 999999

static long long repo_id, testcase_id, token_id;

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

static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	repo_id = sql_int("INSERT INTO repos (name, url) VALUES ('zulu',"
			  " 'https://git.example/zulu') RETURNING id",
			  0, NULL);
	testdb_exec("INSERT INTO repos (name, url) VALUES ('alpha', '/a')");
	testcase_id = sql_int(
	    "INSERT INTO testcases (name, build, run, kpi, higher_is_better)"
	    " VALUES ('mini', 'make', './b', 'k', true) RETURNING id",
	    0, NULL);
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better) VALUES ('bench', 'make', './b', 'k',"
		    " true)");
	token_id = sql_int("INSERT INTO tokens (name, role, token_hash)"
			   " VALUES ('ci', 'submit', 'h') RETURNING id",
			   0, NULL);
	return 0;
}

/* Every byte value a diff may hold, NUL and high bytes too. */
static const char diff_bytes[] = "--- a/f\n+++ b/f\n\0\x01\xff\xc3\x28\n";

/* Two patches of a series; patches[0] replies to a cover letter. */
static void fill_patches(struct store_patch patches[2], json_t *to[2])
{
	memset(patches, 0, 2 * sizeof(*patches));
	to[0] = json_pack("[s,s]", "dev@example.org", "list@example.org");
	to[1] = json_array();
	patches[0] = (struct store_patch){
	    .sha = "1111111111111111111111111111111111111111",
	    .message_id = "p1@example.org",
	    .in_reply_to = "cover@example.org",
	    .subject = "[PATCH 1/2] mm: one",
	    .title = "mm: one",
	    .author_name = "Ada",
	    .author_email = "ada@example.org",
	    .date = 1764750000,
	    .date_offset = -300,
	    .recipients = to[0],
	    .message = "mm: one\n\nWhy.\n",
	    .diff = diff_bytes,
	    .diff_len = sizeof(diff_bytes) - 1,
	    .link = "https://lore.example/p1@example.org/",
	};
	patches[1] = (struct store_patch){
	    .sha = "2222222222222222222222222222222222222222",
	    .subject = "[PATCH 2/2] mm: two",
	    .title = "mm: two",
	    .author_name = "Bo",
	    .author_email = "bo@example.org",
	    .date = 1764750060,
	    .date_offset = 60,
	    .recipients = to[1],
	    .message = "mm: two\n",
	    .diff = "+x\n",
	    .diff_len = 3,
	};
}

static struct store_patch_job base_job(void)
{
	struct store_patch_job job = {
	    .repo_id = repo_id,
	    .testcase_id = testcase_id,
	    .base_rev = "v6.1",
	    .base_sha = "0000000000000000000000000000000000000000",
	    .base_subject = "Linux 6.1",
	    .base_author_name = "Linus",
	    .base_author_email = "linus@example.org",
	};

	return job;
}

/* A patch job of the two patches; its id. */
static long long make_patch_job(void)
{
	struct store_patch_job job = base_job();
	struct store_patch patches[2];
	json_t *to[2];
	long long id = 0;

	fill_patches(patches, to);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(
	    store_patches_insert_job(db_conn(), &job, patches, 2, &id), 0);
	assert_int_equal(db_commit(db_conn()), 0);
	json_decref(to[0]);
	json_decref(to[1]);
	return id;
}

static long long make_bisect_job(void)
{
	long long id;
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {id_text};
	PGresult *r;

	id = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		     " bad_rev, good_sha, bad_sha) SELECT r.id, t.id, 'g',"
		     " 'b', 'c0', 'c1' FROM repos r, testcases t"
		     " WHERE r.name = 'zulu' AND t.name = 'mini' RETURNING id",
		     0, NULL);
	store_int_text(id_text, id);
	r = db_exec(db_conn(),
		    "INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email) SELECT $1, i, 'c' || i, 's',"
		    " 'Ada', 'ada@example.org' FROM generate_series(0, 1) i",
		    1, params);
	assert_non_null(r);
	PQclear(r);
	return id;
}

static void test_store_patches__lookup_by_name(void **state)
{
	long long repo = 0, testcase = 0;
	const char *which = NULL;
	char *url = NULL;
	bool found = false;

	(void)state;
	assert_int_equal(store_patches_lookup(db_conn(), "zulu", "mini", &repo,
					      &url, &testcase, &found, &which),
			 0);
	assert_true(found);
	assert_int_equal(repo, repo_id);
	assert_string_equal(url, "https://git.example/zulu");
	assert_int_equal(testcase, testcase_id);
	free(url);
	assert_int_equal(store_patches_lookup(db_conn(), "nope", "mini", &repo,
					      &url, &testcase, &found, &which),
			 0);
	assert_false(found);
	assert_null(url);
	assert_string_equal(which, "repo");
	assert_int_equal(store_patches_lookup(db_conn(), "zulu", "nope", &repo,
					      &url, &testcase, &found, &which),
			 0);
	assert_false(found);
	assert_null(url);
	assert_string_equal(which, "testcase");
	/* Both unknown: the repository is named first. */
	assert_int_equal(store_patches_lookup(db_conn(), "x", "y", &repo, &url,
					      &testcase, &found, &which),
			 0);
	assert_false(found);
	assert_string_equal(which, "repo");
}

static void test_store_patches__a_job_of_two_patches(void **state)
{
	long long job = make_patch_job();
	char text[512];

	(void)state;
	assert_true(job > 0);
	sql_text(text, sizeof(text),
		 "SELECT kind || '|' || good_rev || '|' || bad_rev || '|' ||"
		 " good_sha || '|' || bad_sha || '|' || notify::text || '|' ||"
		 " coalesce(created_by::text, 'NULL') || '|' ||"
		 " coalesce(runs_min::text, 'NULL') || '|' ||"
		 " coalesce(runs_max::text, 'NULL') || '|' || state"
		 " FROM jobs WHERE id = $1",
		 job);
	assert_string_equal(text, "patch|v6.1|2 patches|"
				  "0000000000000000000000000000000000000000|"
				  "2222222222222222222222222222222222222222|"
				  "[]|NULL|NULL|NULL|queued");
	/* The base is candidate 0; patch i candidate i + 1, parent i. */
	sql_text(text, sizeof(text),
		 "SELECT string_agg(idx || ':' || left(sha, 4) || ':' ||"
		 " subject || ':' || author_name || ':' || parents::text, ' '"
		 " ORDER BY idx) FROM job_commits WHERE job_id = $1",
		 job);
	assert_string_equal(text, "0:0000:Linux 6.1:Linus:{} 1:1111:mm: one:"
				  "Ada:{0} 2:2222:mm: two:Bo:{1}");
	sql_text(text, sizeof(text),
		 "SELECT string_agg(idx || ':' || coalesce(message_id, 'NULL')"
		 " || ':' || coalesce(in_reply_to, 'NULL') || ':' || subject"
		 " || ':' || date || ':' || date_offset || ':' ||"
		 " recipients::text || ':' || length(diff) || ':' ||"
		 " coalesce(link, 'NULL'), ' ' ORDER BY idx)"
		 " FROM job_patches WHERE job_id = $1",
		 job);
	assert_string_equal(
	    text,
	    "1:p1@example.org:cover@example.org:[PATCH 1/2] mm: one:"
	    "1764750000:-300:[\"dev@example.org\", \"list@example.org\"]:"
	    "22:https://lore.example/p1@example.org/ "
	    "2:NULL:NULL:[PATCH 2/2] mm: two:1764750060:60:[]:3:NULL");
}

static void test_store_patches__one_patch_with_limits(void **state)
{
	struct store_patch_job job = base_job();
	struct store_patch patches[2];
	json_t *to[2];
	long long id = 0;
	char text[256];

	(void)state;
	fill_patches(patches, to);
	job.token_id = token_id;
	job.notify = to[0];
	job.runs_min = 4;
	job.runs_max = 9;
	assert_int_equal(
	    store_patches_insert_job(db_conn(), &job, patches, 1, &id), 0);
	sql_text(text, sizeof(text),
		 "SELECT bad_rev || '|' || bad_sha || '|' || notify::text ||"
		 " '|' || (created_by = (SELECT id FROM tokens WHERE name ="
		 " 'ci')) || '|' || runs_min || '|' || runs_max"
		 " FROM jobs WHERE id = $1",
		 id);
	assert_string_equal(text,
			    "1 patch|"
			    "1111111111111111111111111111111111111111|"
			    "[\"dev@example.org\", \"list@example.org\"]|"
			    "true|4|9");
	json_decref(to[0]);
	json_decref(to[1]);
}

static void test_store_patches__a_rolled_back_insert_leaves_none(void **state)
{
	struct store_patch_job job = base_job();
	struct store_patch patches[2];
	json_t *to[2];
	long long id = 0;
	char text[64];

	(void)state;
	fill_patches(patches, to);
	job.base_rev = "rolled-back";
	patches[1].subject = NULL; /* the table refuses the second */
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(
	    store_patches_insert_job(db_conn(), &job, patches, 2, &id), -1);
	assert_string_equal(db_last_failure(), "23502");
	db_rollback(db_conn());
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM jobs WHERE good_rev = 'rolled-back'"
		 " AND $1 > 0",
		 1);
	assert_string_equal(text, "0");
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM job_commits WHERE job_id = $1", id);
	assert_string_equal(text, "0");
	json_decref(to[0]);
	json_decref(to[1]);
}

static void test_store_patches__the_series_for_a_worker(void **state)
{
	long long job = make_patch_job();
	json_t *series = NULL, *p;
	char *expected_hex;
	size_t i;

	(void)state;
	assert_int_equal(store_patches_series_json(&series, db_conn(), job),
			 0);
	assert_non_null(series);
	assert_string_equal(json_string_value(json_object_get(series, "base")),
			    "0000000000000000000000000000000000000000");
	assert_int_equal(json_array_size(json_object_get(series, "patches")),
			 2);
	p = json_array_get(json_object_get(series, "patches"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "commit")),
			    "1111111111111111111111111111111111111111");
	/* The diff byte for byte, as hex. */
	expected_hex = malloc(2 * (sizeof(diff_bytes) - 1) + 1);
	assert_non_null(expected_hex);
	for (i = 0; i < sizeof(diff_bytes) - 1; i++)
		snprintf(expected_hex + 2 * i, 3, "%02x",
			 (unsigned char)diff_bytes[i]);
	assert_string_equal(json_string_value(json_object_get(p, "diff")),
			    expected_hex);
	free(expected_hex);
	assert_string_equal(json_string_value(json_object_get(p, "message")),
			    "mm: one\n\nWhy.\n");
	assert_string_equal(
	    json_string_value(json_object_get(p, "author_name")), "Ada");
	assert_string_equal(
	    json_string_value(json_object_get(p, "author_email")),
	    "ada@example.org");
	assert_int_equal(json_integer_value(json_object_get(p, "date")),
			 1764750000);
	assert_int_equal(json_integer_value(json_object_get(p, "date_offset")),
			 -300);
	p = json_array_get(json_object_get(series, "patches"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "commit")),
			    "2222222222222222222222222222222222222222");
	assert_string_equal(json_string_value(json_object_get(p, "diff")),
			    "2b780a");
	assert_int_equal(json_integer_value(json_object_get(p, "date_offset")),
			 60);
	json_decref(series);
	/* Not a patch job, or no job: no series. */
	assert_int_equal(
	    store_patches_series_json(&series, db_conn(), make_bisect_job()),
	    0);
	assert_null(series);
	assert_int_equal(store_patches_series_json(&series, db_conn(), NO_JOB),
			 0);
	assert_null(series);
}

static void test_store_patches__the_reply_to_a_patch(void **state)
{
	long long job = make_patch_job();
	json_t *reply = NULL;
	char *text;

	(void)state;
	assert_int_equal(store_patches_reply_json(&reply, db_conn(), job, 1),
			 0);
	assert_non_null(reply);
	text = json_dumps(reply, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(
	    text, "{\"base\":\"0000000000000000000000000000000000000000\","
		  "\"in_reply_to\":\"cover@example.org\","
		  "\"link\":\"https://lore.example/p1@example.org/\","
		  "\"message_id\":\"p1@example.org\",\"number\":1,"
		  "\"recipients\":[\"dev@example.org\",\"list@example.org\"],"
		  "\"repo_url\":\"https://git.example/zulu\","
		  "\"subject\":\"[PATCH 1/2] mm: one\"}");
	free(text);
	json_decref(reply);
	/* The base: the last patch's, its NULLs as null. */
	assert_int_equal(store_patches_reply_json(&reply, db_conn(), job, 0),
			 0);
	text = json_dumps(reply, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(
	    text, "{\"base\":\"0000000000000000000000000000000000000000\","
		  "\"in_reply_to\":null,\"link\":null,\"message_id\":null,"
		  "\"number\":2,\"recipients\":[],"
		  "\"repo_url\":\"https://git.example/zulu\","
		  "\"subject\":\"[PATCH 2/2] mm: two\"}");
	free(text);
	json_decref(reply);
	assert_int_equal(store_patches_reply_json(&reply, db_conn(), job, 3),
			 0);
	assert_null(reply);
	assert_int_equal(
	    store_patches_reply_json(&reply, db_conn(), make_bisect_job(), 1),
	    0);
	assert_null(reply);
}

static void test_store_patches__the_list_for_the_api(void **state)
{
	long long job = make_patch_job();
	json_t *list = NULL;
	char *text;

	(void)state;
	assert_int_equal(store_patches_list_json(&list, db_conn(), job), 0);
	text = json_dumps(list, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(
	    text,
	    "[{\"author_email\":\"ada@example.org\","
	    "\"author_name\":\"Ada\","
	    "\"commit\":\"1111111111111111111111111111111111111111\","
	    "\"index\":1,\"message_id\":\"p1@example.org\","
	    "\"subject\":\"[PATCH 1/2] mm: one\"},"
	    "{\"author_email\":\"bo@example.org\",\"author_name\":\"Bo\","
	    "\"commit\":\"2222222222222222222222222222222222222222\","
	    "\"index\":2,\"message_id\":null,"
	    "\"subject\":\"[PATCH 2/2] mm: two\"}]");
	free(text);
	json_decref(list);
	list = NULL;
	assert_int_equal(
	    store_patches_list_json(&list, db_conn(), make_bisect_job()), 0);
	assert_true(json_is_array(list));
	assert_int_equal(json_array_size(list), 0);
	json_decref(list);
}

static void test_store_patches__names_for_the_form(void **state)
{
	json_t *names = NULL;
	char *text;

	(void)state;
	assert_int_equal(store_patches_names(&names, db_conn(), true), 0);
	text = json_dumps(names, JSON_COMPACT);
	assert_string_equal(text, "[\"bench\",\"mini\"]");
	free(text);
	json_decref(names);
	assert_int_equal(store_patches_names(&names, db_conn(), false), 0);
	text = json_dumps(names, JSON_COMPACT);
	assert_string_equal(text, "[\"alpha\",\"zulu\"]");
	free(text);
	json_decref(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_patches__lookup_by_name),
	    cmocka_unit_test(test_store_patches__a_job_of_two_patches),
	    cmocka_unit_test(test_store_patches__one_patch_with_limits),
	    cmocka_unit_test(
		test_store_patches__a_rolled_back_insert_leaves_none),
	    cmocka_unit_test(test_store_patches__the_series_for_a_worker),
	    cmocka_unit_test(test_store_patches__the_reply_to_a_patch),
	    cmocka_unit_test(test_store_patches__the_list_for_the_api),
	    cmocka_unit_test(test_store_patches__names_for_the_form),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
