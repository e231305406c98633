/* Unit tests of lib/cause.c: the char **cause convention. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cause.h"

static void test_cause__set_formats_and_replaces(void **state)
{
	char *cause = NULL;

	(void)state;
	cause_set(&cause, "cannot run %s: %d", "make", 2);
	assert_string_equal(cause, "cannot run make: 2");
	/* A second cause replaces the first (ASan would see a leak). */
	cause_set(&cause, "out of memory");
	assert_string_equal(cause, "out of memory");
	free(cause);
	cause_set(NULL, "nobody asked: %s", "fine");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cause__set_formats_and_replaces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
