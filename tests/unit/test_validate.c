/*
 * The validators of the tokens, repositories and testcases resources:
 * server/validate.c's rules, and the request readers that find every
 * field's error at once while the API still answers the first one it
 * always answered.  No database: validation comes before any query.
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

#include "../../server/repos.h"
#include "../../server/testcases.h"
#include "../../server/tokens.h"
#include "../../server/validate.h"

static void test_validate__names(void **state)
{
	char long_name[66];

	(void)state;
	assert_true(validate_name("linux"));
	assert_true(validate_name("a.b_c-9"));
	assert_false(validate_name(""));
	assert_false(validate_name(".hidden"));
	assert_false(validate_name("-flag"));
	assert_false(validate_name("bad name"));
	assert_false(validate_name("../x"));
	assert_false(validate_name("caf\xc3\xa9"));
	memset(long_name, 'x', 65);
	long_name[65] = '\0';
	assert_false(validate_name(long_name));
	long_name[64] = '\0';
	assert_true(validate_name(long_name));
}

static void test_validate__text_and_metric_names(void **state)
{
	(void)state;
	assert_true(validate_text("make -j4\tall", 100, false));
	assert_false(validate_text("a\nb", 100, false));
	assert_true(validate_text("a\r\nb", 100, true));
	assert_false(validate_text("bell\a", 100, true));
	assert_false(validate_text("del\x7f", 100, true));
	assert_true(validate_text("caf\xc3\xa9", 5, false));
	assert_false(validate_text("caf\xc3\xa9", 4, false));
	assert_true(validate_metric_name("perf-stat.cycles%"));
	assert_false(validate_metric_name(""));
	assert_false(validate_metric_name("a b"));
	assert_false(validate_metric_name("caf\xc3\xa9"));
}

/* A group is what a worker may register with: 1 to 64 bytes, no control
 * character, anything else (spaces, UTF-8) allowed. */
static void test_validate__groups(void **state)
{
	char longest[VALIDATE_GROUP_MAX + 2];

	(void)state;
	assert_true(validate_group("default"));
	assert_true(validate_group("rack 7 (x86, caf\xc3\xa9)"));
	assert_false(validate_group(""));
	assert_false(validate_group("a\tb"));
	assert_false(validate_group("caf\xe9")); /* Latin-1, not UTF-8 */
	assert_false(validate_group("a\xc3"));	 /* cut short */
	assert_false(validate_group("a\x7f"));	 /* DEL */
	assert_false(validate_group("a\nb"));
	memset(longest, 'g', sizeof(longest));
	longest[VALIDATE_GROUP_MAX] = '\0';
	assert_true(validate_group(longest));
	longest[VALIDATE_GROUP_MAX] = 'g';
	longest[VALIDATE_GROUP_MAX + 1] = '\0';
	assert_false(validate_group(longest));
}

static void test_validate__notify_lists(void **state)
{
	struct field_errors errors;
	json_t *list;
	size_t i;

	(void)state;
	fields_init(&errors);
	assert_true(validate_notify(&errors, NULL));
	assert_true(validate_notify(&errors, json_null()));
	list = json_pack("[s,s]", "a@example.org", "b@example.org");
	assert_true(validate_notify(&errors, list));
	json_array_append_new(list, json_string("not an address"));
	assert_false(validate_notify(&errors, list));
	assert_string_equal(errors.items[0].field, "notify");
	assert_string_equal(errors.items[0].code, "invalid_email");
	assert_string_equal(errors.items[0].message,
			    "'notify' entry 2 is not a plain email address "
			    "(local@domain)");
	assert_string_equal(errors.items[0].value, "not an address");
	json_decref(list);
	/* Every bad entry has its error, with the entry for a form to quote.
	 */
	fields_init(&errors);
	list = json_pack("[s,i,s]", "x@", 5, "ok@example.org");
	assert_false(validate_notify(&errors, list));
	assert_int_equal(errors.count, 2);
	assert_string_equal(errors.items[0].value, "x@");
	assert_string_equal(errors.items[1].message,
			    "'notify' entry 1 is not a plain email address "
			    "(local@domain)");
	assert_string_equal(errors.items[1].value, "");
	json_decref(list);
	list = json_array();
	for (i = 0; i < 51; i++)
		json_array_append_new(list, json_string("a@example.org"));
	assert_false(validate_notify(&errors, list));
	assert_string_equal(errors.items[2].message,
			    "'notify' must be a list of at most 50 addresses");
	json_decref(list);
}

/* The errors of a body as the testcase reader finds them. */
static void read_testcase(struct field_errors *errors, const char *body_text)
{
	struct testcase_request request;
	json_error_t e;
	json_t *body = json_loads(body_text, 0, &e);

	assert_non_null(body);
	fields_init(errors);
	testcases_request_read(&request, errors, body);
	testcases_request_clear(&request);
	json_decref(body);
}

static void test_validate__a_testcase_has_every_error_at_once(void **state)
{
	struct field_errors errors;

	(void)state;
	read_testcase(&errors, "{\"name\": \"bad name\", \"run\": \"\","
			       " \"kpi\": \"a b\", \"min_change_pct\": 0,"
			       " \"runs_min\": 20, \"runs_max\": 10,"
			       " \"monitors\": [\"nosuch\"]}");
	assert_int_equal(errors.count, 8);
	/* The API answers the first: a missing field before any rule. */
	assert_string_equal(errors.items[0].field, "build");
	assert_string_equal(errors.items[0].message,
			    "field 'build' is required");
	assert_string_equal(errors.items[1].field, "name");
	assert_string_equal(errors.items[2].field, "run");
	assert_string_equal(errors.items[2].message,
			    "'build' and 'run' must be shell commands ('run' "
			    "not empty)");
	assert_string_equal(errors.items[3].field, "kpi");
	assert_string_equal(errors.items[4].field, "higher_is_better");
	assert_string_equal(errors.items[5].field, "min_change_pct");
	assert_string_equal(errors.items[6].field, "runs_max");
	assert_string_equal(errors.items[6].message,
			    "'runs_max' must not be below 'runs_min'");
	assert_string_equal(errors.items[7].field, "monitors");
}

static void test_validate__a_testcase_in_the_api_s_order(void **state)
{
	static const struct {
		const char *body, *field, *message;
	} cases[] = {
	    {"{\"name\": 5}", "name", "field 'name' must be a string"},
	    {"{\"name\": \"t\", \"build\": \"\", \"run\": \"r\","
	     " \"kpi\": \"k\", \"timeout_s\": -5, \"higher_is_better\": 1}",
	     "timeout_s",
	     "field 'timeout_s' must be an integer from 1 to "
	     "604800"},
	    {"{\"name\": \"t\", \"build\": \"\", \"run\": \"r\","
	     " \"kpi\": \"k\", \"higher_is_better\": \"yes\","
	     " \"params\": [1]}",
	     "higher_is_better",
	     "field 'higher_is_better' is required and must be true or "
	     "false"},
	    {"{\"name\": \"t\", \"build\": \"\", \"run\": \"r\","
	     " \"kpi\": \"k\", \"higher_is_better\": true,"
	     " \"params\": {\"a/b\": 1}, \"monitors\": 3}",
	     "params",
	     "'params' entry 'a/b' must be a string or number without '/' "
	     "or control characters"},
	    {"{\"name\": \"t\", \"build\": \"\", \"run\": \"r\","
	     " \"kpi\": \"k\", \"higher_is_better\": true,"
	     " \"notify\": [\"x\"], \"notify_author\": 1}",
	     "notify_author", "'notify_author' must be true or false"},
	};
	struct field_errors errors;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("%s\n", cases[i].body);
		read_testcase(&errors, cases[i].body);
		assert_true(errors.count >= 1);
		assert_string_equal(errors.items[0].field, cases[i].field);
		assert_string_equal(errors.items[0].message, cases[i].message);
		assert_int_equal(errors.items[0].status, 400);
	}
}

static void test_validate__a_good_testcase_gets_the_defaults(void **state)
{
	struct testcase_request request;
	struct field_errors errors;
	json_t *body =
	    json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", "t", "build", "", "run",
		      "./b", "kpi", "k", "higher_is_better", 0);

	(void)state;
	fields_init(&errors);
	testcases_request_read(&request, &errors, body);
	assert_true(fields_ok(&errors));
	assert_int_equal(request.fields.runs_min, 5);
	assert_int_equal(request.fields.runs_max, 50);
	assert_int_equal(request.fields.timeout_s, 600);
	assert_true(request.fields.min_change_pct == 1.0);
	assert_false(request.fields.higher_is_better);
	assert_string_equal(request.fields.params, "{}");
	assert_string_equal(request.fields.monitors, "[]");
	assert_string_equal(request.fields.notify, "[]");
	assert_false(request.fields.notify_author);
	testcases_request_clear(&request);
	json_decref(body);
}

static void test_validate__a_repo_has_every_error_at_once(void **state)
{
	struct repo_request request = {0};
	struct field_errors errors;
	json_t *body = json_pack("{s:s,s:s,s:s}", "name", "../bad", "url",
				 "-uhack", "web_url", "https://x/");

	(void)state;
	fields_init(&errors);
	repos_request_read(&request, &errors, body);
	assert_int_equal(errors.count, 3);
	assert_string_equal(errors.items[0].field, "name");
	assert_string_equal(errors.items[0].message,
			    "'name' must be 1 to 64 of A-Z a-z 0-9 . _ -");
	assert_string_equal(errors.items[1].field, "url");
	assert_string_equal(errors.items[1].message,
			    "'url' must be a git URL or path");
	assert_string_equal(errors.items[2].field, "web_url");
	json_decref(body);

	body = json_pack("{s:[s]}", "name", "proj");
	fields_init(&errors);
	repos_request_read(&request, &errors, body);
	assert_int_equal(errors.count, 2);
	assert_string_equal(errors.items[0].message,
			    "field 'name' must be a string");
	assert_string_equal(errors.items[1].message,
			    "field 'url' is required");
	json_decref(body);
}

static void test_validate__a_token_has_every_error_at_once(void **state)
{
	char secret[TOKENS_SECRET_SIZE];
	struct token_request request;
	struct field_errors errors;
	struct store_token token;
	json_t *body =
	    json_pack("{s:s,s:s}", "name", "bell\a", "role", "root");

	(void)state;
	fields_init(&errors);
	tokens_request_read(&request, &errors, body);
	assert_int_equal(tokens_create(&token, secret, &errors, &request), -1);
	assert_int_equal(errors.count, 2);
	assert_string_equal(errors.items[0].field, "name");
	assert_string_equal(errors.items[0].message,
			    "'name' must be 1 to 128 printable characters");
	assert_string_equal(errors.items[1].field, "role");
	assert_string_equal(
	    errors.items[1].message,
	    "'role' must be one of admin, submit, read, worker");
	json_decref(body);

	body = json_pack("{s:s}", "name", "no role");
	fields_init(&errors);
	tokens_request_read(&request, &errors, body);
	assert_int_equal(tokens_create(&token, secret, &errors, &request), -1);
	assert_int_equal(errors.count, 1);
	assert_string_equal(errors.items[0].code, "missing_field");
	assert_string_equal(errors.items[0].message,
			    "field 'role' is required");
	json_decref(body);
}

static void test_validate__a_web_secret_has_one_shape(void **state)
{
	(void)state;
	assert_true(tokens_is_web_secret("0123456789abcdef0123456789abcdef0123"
					 "456789abcdef0123456789abcdef"));
	assert_false(tokens_is_web_secret("0123456789ABCDEF0123456789abcdef012"
					  "3456789abcdef0123456789abcdef"));
	assert_false(tokens_is_web_secret("0123"));
	assert_false(tokens_is_web_secret(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_validate__names),
	    cmocka_unit_test(test_validate__text_and_metric_names),
	    cmocka_unit_test(test_validate__groups),
	    cmocka_unit_test(test_validate__notify_lists),
	    cmocka_unit_test(
		test_validate__a_testcase_has_every_error_at_once),
	    cmocka_unit_test(test_validate__a_testcase_in_the_api_s_order),
	    cmocka_unit_test(test_validate__a_good_testcase_gets_the_defaults),
	    cmocka_unit_test(test_validate__a_repo_has_every_error_at_once),
	    cmocka_unit_test(test_validate__a_token_has_every_error_at_once),
	    cmocka_unit_test(test_validate__a_web_secret_has_one_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
