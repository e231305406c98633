/*
 * The validators of a job request (server/jobs.c): every field error is
 * listed, in the order the API answers them, with the API's words and the
 * value at fault for a form to quote.
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

#include "../../server/jobs.h"

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_ALLOW_NUL, &e);

	assert_non_null(v);
	return v;
}

static void test_jobs__every_missing_field_is_listed_in_order(void **state)
{
	struct jobs_request request;
	struct field_errors errors;
	json_t *body = parse("{}");

	(void)state;
	fields_init(&errors);
	jobs_request_from_json(&request, body, &errors);
	assert_int_equal(errors.count, 4);
	assert_string_equal(errors.items[0].field, "repo");
	assert_string_equal(errors.items[0].code, "missing_field");
	assert_int_equal(errors.items[0].status, 400);
	assert_string_equal(errors.items[0].message,
			    "field 'repo' is required");
	assert_string_equal(errors.items[1].field, "testcase");
	assert_string_equal(errors.items[2].field, "good");
	assert_string_equal(errors.items[3].field, "bad");
	assert_null(request.repo);
	assert_null(request.notify);
	assert_int_equal(request.runs_min, 0);
	json_decref(body);
}

static void test_jobs__wrong_types_and_ranges_are_refused(void **state)
{
	struct jobs_request request;
	struct field_errors errors;
	json_t *body = parse("{\"repo\": 5, \"testcase\": \"t\", \"good\": "
			     "\"a\\u0000b\", \"bad\": \"v2\", \"runs_min\": 1,"
			     " \"runs_max\": 10001, \"notify\": null}");

	(void)state;
	fields_init(&errors);
	jobs_request_from_json(&request, body, &errors);
	assert_int_equal(errors.count, 4);
	assert_string_equal(errors.items[0].message,
			    "field 'repo' must be a string");
	assert_string_equal(errors.items[1].message,
			    "field 'good' contains a NUL character");
	assert_string_equal(errors.items[2].message,
			    "field 'runs_min' must be an integer from 2 to "
			    "1000");
	assert_string_equal(errors.items[3].message,
			    "field 'runs_max' must be an integer from 2 to "
			    "10000");
	assert_string_equal(request.testcase, "t");
	assert_string_equal(request.bad, "v2");
	assert_int_equal(request.runs_min, 0);
	assert_int_equal(request.runs_max, 0);
	assert_null(request.notify);
	json_decref(body);
}

static void test_jobs__runs_max_below_runs_min_is_refused(void **state)
{
	struct jobs_request request = {.runs_min = 9, .runs_max = 3};
	struct field_errors errors;

	(void)state;
	fields_init(&errors);
	jobs_request_check(&request, &errors);
	assert_int_equal(errors.count, 1);
	assert_string_equal(errors.items[0].field, "runs_max");
	assert_string_equal(errors.items[0].message,
			    "'runs_max' must not be below 'runs_min'");
	assert_string_equal(errors.items[0].value, "");
	request.runs_max = 9;
	fields_init(&errors);
	jobs_request_check(&request, &errors);
	assert_true(fields_ok(&errors));
}

/* A runs bound alone must not contradict the testcase's other bound;
 * both bounds given replace the testcase's. */
static void test_jobs__a_bound_alone_must_fit_the_testcase(void **state)
{
	struct store_testcase_fields testcase = {
	    .name = "tc", .runs_min = 5, .runs_max = 40};
	struct jobs_request request = {.runs_min = 41};
	struct field_errors errors;

	(void)state;
	fields_init(&errors);
	jobs_runs_against_testcase(&request, &testcase, &errors);
	assert_int_equal(errors.count, 1);
	assert_string_equal(errors.items[0].field, "runs_min");
	assert_string_equal(errors.items[0].code, "runs_conflict");
	assert_int_equal(errors.items[0].status, 422);
	assert_non_null(strstr(errors.items[0].message, "runs_max 40"));
	request = (struct jobs_request){.runs_max = 4};
	fields_init(&errors);
	jobs_runs_against_testcase(&request, &testcase, &errors);
	assert_int_equal(errors.count, 1);
	assert_string_equal(errors.items[0].field, "runs_max");
	assert_non_null(strstr(errors.items[0].message, "runs_min 5"));
	/* At the testcase's bound, or with both bounds: taken. */
	request = (struct jobs_request){.runs_min = 40};
	fields_init(&errors);
	jobs_runs_against_testcase(&request, &testcase, &errors);
	request = (struct jobs_request){.runs_max = 5};
	jobs_runs_against_testcase(&request, &testcase, &errors);
	request = (struct jobs_request){.runs_min = 60, .runs_max = 80};
	jobs_runs_against_testcase(&request, &testcase, &errors);
	request = (struct jobs_request){.runs_min = 2, .runs_max = 3};
	jobs_runs_against_testcase(&request, &testcase, &errors);
	assert_true(fields_ok(&errors));
}

static void test_jobs__every_bad_address_is_named(void **state)
{
	struct jobs_request request = {0};
	struct field_errors errors;
	json_t *notify = parse("[\"dev@example.org\", \"bob@\", 7, "
			       "\"a@example.org\\r\\nBcc: x@example.org\"]");

	(void)state;
	request.notify = notify;
	fields_init(&errors);
	jobs_request_check(&request, &errors);
	assert_int_equal(errors.count, 3);
	assert_string_equal(errors.items[0].code, "invalid_email");
	assert_string_equal(errors.items[0].message,
			    "'notify' entry 1 is not a plain email address "
			    "(local@domain)");
	assert_string_equal(errors.items[0].value, "bob@");
	assert_string_equal(errors.items[1].value, "");
	assert_string_equal(errors.items[2].message,
			    "'notify' entry 3 is not a plain email address "
			    "(local@domain)");
	json_decref(notify);
}

static void test_jobs__notify_must_be_a_short_list(void **state)
{
	struct jobs_request request = {0};
	struct field_errors errors;
	json_t *list = json_array();
	int i;

	(void)state;
	for (i = 0; i < JOBS_NOTIFY_MOST + 1; i++)
		json_array_append_new(list, json_string("a@example.org"));
	request.notify = list;
	fields_init(&errors);
	jobs_request_check(&request, &errors);
	assert_int_equal(errors.count, 1);
	assert_string_equal(errors.items[0].code, "invalid_field");
	assert_string_equal(errors.items[0].message,
			    "'notify' must be a list of at most 50 addresses");
	json_array_remove(list, 0);
	fields_init(&errors);
	jobs_request_check(&request, &errors);
	assert_true(fields_ok(&errors));
	json_decref(list);
	request.notify = json_string("a@example.org");
	fields_init(&errors);
	jobs_request_check(&request, &errors);
	assert_int_equal(errors.count, 1);
	json_decref(request.notify);
}

/* A compare request reads "revisions" in place of good and bad; a SHA
 * names its column by its first 12 digits. */
static void test_jobs__a_compare_request_reads_its_revisions(void **state)
{
	struct jobs_request request;
	struct field_errors errors;
	json_t *body = parse(
	    "{\"kind\": \"compare\", \"repo\": \"r\", \"testcase\": \"t\","
	    " \"revisions\": [\"v1.0\","
	    " \"2b0cfa6e49566c8fa6759734cf8271a9e1234567\", \"main~1\"]}");

	(void)state;
	fields_init(&errors);
	jobs_request_from_json(&request, body, &errors);
	assert_int_equal(errors.count, 0);
	assert_int_equal(request.revision_count, 3);
	assert_string_equal(request.good, "v1.0");
	assert_string_equal(request.bad, "main~1");
	assert_string_equal(request.labels[0], "v1.0");
	assert_string_equal(request.labels[1], "2b0cfa6e4956");
	assert_string_equal(request.revisions[1],
			    "2b0cfa6e49566c8fa6759734cf8271a9e1234567");
	json_decref(body);
}

static void test_jobs__compare_revisions_are_two_to_four(void **state)
{
	static const char *const bodies[] = {
	    "{\"kind\": \"compare\", \"revisions\": [\"a\"]}",
	    "{\"kind\": \"compare\", \"revisions\": [\"a\", \"b\", \"c\","
	    " \"d\", \"e\"]}",
	    "{\"kind\": \"compare\", \"revisions\": \"a\"}",
	    "{\"kind\": \"compare\"}",
	    "{\"kind\": \"compare\", \"revisions\": [\"a\", \"\"]}",
	};
	static const char *const codes[] = {"invalid_field", "invalid_field",
					    "invalid_field", "missing_field",
					    "invalid_field"};
	static const int statuses[] = {422, 422, 422, 400, 400};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		struct jobs_request request;
		struct field_errors errors;
		json_t *body = parse(bodies[i]);

		fields_init(&errors);
		jobs_request_from_json(&request, body, &errors);
		/* repo and testcase are missing too, listed first */
		assert_int_equal(errors.count, 3);
		assert_string_equal(errors.items[2].field, "revisions");
		assert_string_equal(errors.items[2].code, codes[i]);
		assert_int_equal(errors.items[2].status, statuses[i]);
		assert_int_equal(request.revision_count, 0);
		json_decref(body);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_jobs__every_missing_field_is_listed_in_order),
	    cmocka_unit_test(test_jobs__wrong_types_and_ranges_are_refused),
	    cmocka_unit_test(test_jobs__runs_max_below_runs_min_is_refused),
	    cmocka_unit_test(test_jobs__a_bound_alone_must_fit_the_testcase),
	    cmocka_unit_test(test_jobs__every_bad_address_is_named),
	    cmocka_unit_test(test_jobs__notify_must_be_a_short_list),
	    cmocka_unit_test(test_jobs__a_compare_request_reads_its_revisions),
	    cmocka_unit_test(test_jobs__compare_revisions_are_two_to_four),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
