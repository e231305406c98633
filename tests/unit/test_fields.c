/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdlib.h>
#include <string.h>

#include "../../server/db.h"
#include "../../server/fields.h"

static void test_fields__every_error_is_kept_in_order(void **state)
{
	struct field_errors errors;

	(void)state;
	fields_init(&errors);
	assert_true(fields_ok(&errors));
	fields_add(&errors, "runs_max", 400, "invalid_field",
		   "field '%s' must be an integer from %d to %d", "runs_max",
		   2, 1000);
	fields_add(&errors, "good", 422, "unknown_revision",
		   "no revision '%s'", "nope");
	assert_false(fields_ok(&errors));
	assert_int_equal(errors.count, 2);
	assert_string_equal(errors.items[0].message,
			    "field 'runs_max' must be an integer from 2 to "
			    "1000");
	assert_string_equal(fields_find(&errors, "good")->code,
			    "unknown_revision");
	assert_int_equal(fields_find(&errors, "good")->status, 422);
	assert_null(fields_find(&errors, "bad"));
}

static void test_fields__the_api_answers_the_first(void **state)
{
	struct field_errors errors;
	struct http_response res;

	(void)state;
	memset(&res, 0, sizeof(res));
	fields_init(&errors);
	assert_false(fields_answer(&res, &errors));
	assert_null(res.body);
	fields_add(&errors, "name", 409, "exists", "repository '%s' exists",
		   "toy");
	fields_add(&errors, "url", 400, "invalid_field", "second");
	assert_true(fields_answer(&res, &errors));
	assert_int_equal(res.status, 409);
	assert_non_null(strstr(res.body, "\"exists\""));
	assert_non_null(strstr(res.body, "repository 'toy' exists"));
	assert_null(strstr(res.body, "second"));
	http_response_clear(&res);
}

/* The field at fault goes into the answer, and a limit that lapses into
 * Retry-After; an error of the request as a whole names no field. */
static void
test_fields__the_answer_names_the_field_and_when_to_retry(void **state)
{
	struct http_response res;
	struct field_errors errors;

	(void)state;
	memset(&res, 0, sizeof(res));
	fields_init(&errors);
	fields_add(&errors, "runs_min", 422, "runs_conflict", "too many");
	assert_true(fields_answer(&res, &errors));
	assert_string_equal(res.body, "{\"error\":{\"code\":\"runs_conflict\","
				      "\"message\":\"too many\",\"field\":"
				      "\"runs_min\"}}");
	assert_int_equal(res.extra_header_count, 0);
	http_response_clear(&res);
	fields_init(&errors);
	fields_add(&errors, "", 429, "too_many_jobs", "later");
	errors.retry_after_s = 60;
	assert_true(fields_answer(&res, &errors));
	assert_int_equal(res.status, 429);
	assert_null(strstr(res.body, "field"));
	assert_int_equal(res.extra_header_count, 1);
	assert_string_equal(res.extra_headers[0][0], "Retry-After");
	assert_string_equal(res.extra_headers[0][1], "60");
	http_response_clear(&res);
}

static void test_fields__long_text_is_cut_on_a_character(void **state)
{
	struct field_errors errors;
	char text[2 * FIELDS_MESSAGE_MAX + 100];
	size_t i, n;

	(void)state;
	/* "é" is two bytes: a cut at an odd offset would split one. */
	for (i = 0; i + 2 < sizeof(text); i += 2)
		memcpy(text + i, "\xc3\xa9", 2);
	text[i] = '\0';
	fields_init(&errors);
	fields_add(&errors, text, 400, "invalid_field", "x%s", text);
	n = strlen(errors.items[0].message);
	assert_true(n < FIELDS_MESSAGE_MAX);
	/* "x" then whole two-byte characters: an odd length. */
	assert_int_equal(n % 2, 1);
	assert_int_equal(strlen(errors.items[0].field) % 2, 0);
}

static void test_fields__past_the_limit_errors_are_counted(void **state)
{
	struct field_errors errors;
	int i;

	(void)state;
	fields_init(&errors);
	for (i = 0; i < FIELDS_MAX + 3; i++)
		fields_add(&errors, "f", 400, "invalid_field", "%d", i);
	assert_int_equal(errors.count, FIELDS_MAX);
	assert_int_equal(errors.dropped, 3);
	assert_false(fields_ok(&errors));
}

/* A database failure reads as http_db_failed answers it. */
static void test_fields__a_database_failure_answers_as_the_api(void **state)
{
	struct http_response from_fields, from_http;
	struct field_errors errors;

	(void)state;
	memset(&from_fields, 0, sizeof(from_fields));
	memset(&from_http, 0, sizeof(from_http));
	/* No connection: the failure of a broken one, which may pass. */
	assert_null(db_exec(NULL, "SELECT 1", 0, NULL));
	fields_init(&errors);
	fields_db_failed(&errors);
	assert_int_equal(errors.count, 1);
	assert_string_equal(errors.items[0].field, "");
	assert_true(fields_answer(&from_fields, &errors));
	http_db_failed(&from_http);
	assert_int_equal(from_fields.status, 503);
	assert_int_equal(from_http.status, 503);
	assert_string_equal(from_fields.body, from_http.body);
	http_response_clear(&from_fields);
	http_response_clear(&from_http);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fields__every_error_is_kept_in_order),
	    cmocka_unit_test(test_fields__the_api_answers_the_first),
	    cmocka_unit_test(
		test_fields__the_answer_names_the_field_and_when_to_retry),
	    cmocka_unit_test(test_fields__long_text_is_cut_on_a_character),
	    cmocka_unit_test(test_fields__past_the_limit_errors_are_counted),
	    cmocka_unit_test(
		test_fields__a_database_failure_answers_as_the_api),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
