/* Unit tests of lib/secret.c: random hex secrets and their comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "secret.h"

static void test_secret__hex_has_the_asked_length_and_alphabet(void **state)
{
	char a[2 * SECRET_BYTES_MAX + 1], b[2 * SECRET_BYTES_MAX + 1];

	(void)state;
	assert_int_equal(secret_hex(a, 24), 0);
	assert_int_equal(strlen(a), 48);
	assert_int_equal(strspn(a, "0123456789abcdef"), 48);
	assert_int_equal(secret_hex(b, 24), 0);
	/* 192 random bits: two draws are never the same. */
	assert_string_not_equal(a, b);
	assert_int_equal(secret_hex(a, SECRET_BYTES_MAX), 0);
	assert_int_equal(strlen(a), 2 * SECRET_BYTES_MAX);
	assert_int_equal(secret_hex(a, 1), 0);
	assert_int_equal(strlen(a), 2);
}

static void test_secret__hex_refuses_bad_sizes(void **state)
{
	char a[2 * SECRET_BYTES_MAX + 3] = "x";

	(void)state;
	assert_int_equal(secret_hex(a, 0), -EINVAL);
	assert_string_equal(a, "");
	assert_int_equal(secret_hex(a, SECRET_BYTES_MAX + 1), -EINVAL);
	assert_string_equal(a, "");
}

static void test_secret__equal_only_for_the_same_text(void **state)
{
	(void)state;
	assert_true(secret_equal("sb_abc", "sb_abc"));
	assert_true(secret_equal("", ""));
	assert_false(secret_equal("sb_abc", "sb_abd"));
	assert_false(secret_equal("sb_abc", "sb_ab"));
	assert_false(secret_equal("sb_ab", "sb_abc"));
	assert_false(secret_equal("", "x"));
	assert_false(secret_equal(NULL, "x"));
	assert_false(secret_equal("x", NULL));
	assert_false(secret_equal(NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_secret__hex_has_the_asked_length_and_alphabet),
	    cmocka_unit_test(test_secret__hex_refuses_bad_sizes),
	    cmocka_unit_test(test_secret__equal_only_for_the_same_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
