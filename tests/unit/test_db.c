/*
 * db_state_transient: which database failures the API answers with 503
 * ("try again") and which with 500 (a fault of the query or its data).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../server/db.h"

static void test_db__connection_and_load_failures_are_transient(void **state)
{
	static const char *const transient[] = {
	    "08000", /* connection exception */
	    "08003", /* connection does not exist */
	    "08006", /* connection failure */
	    "40001", /* serialization failure */
	    "40P01", /* deadlock detected */
	    "53100", /* disk full */
	    "53300", /* too many connections */
	    "57P01", /* admin shutdown */
	    "57P03", /* cannot connect now (starting up) */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(transient) / sizeof(transient[0]); i++) {
		print_message("%s\n", transient[i]);
		assert_true(db_state_transient(transient[i]));
	}
	/* No SQLSTATE (or not one): the connection broke before an
	 * answer. */
	assert_true(db_state_transient(""));
	assert_true(db_state_transient(NULL));
	assert_true(db_state_transient("0800"));
}

static void test_db__query_and_data_faults_are_not(void **state)
{
	static const char *const faults[] = {
	    "22P02", /* invalid text representation */
	    "22021", /* character not in repertoire (bad UTF-8) */
	    "23502", /* not-null violation */
	    "23514", /* check violation */
	    "42P01", /* undefined table */
	    "42703", /* undefined column */
	    "XX000", /* internal error */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		print_message("%s\n", faults[i]);
		assert_false(db_state_transient(faults[i]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_db__connection_and_load_failures_are_transient),
	    cmocka_unit_test(test_db__query_and_data_faults_are_not),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
