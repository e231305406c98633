/* Unit tests of lib/id.c: the one parser of ids in URLs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "id.h"

static void test_id__valid_ids(void **state)
{
	long long id = -1;

	(void)state;
	assert_int_equal(id_parse(&id, "1"), 0);
	assert_int_equal(id, 1);
	assert_int_equal(id_parse(&id, "42"), 0);
	assert_int_equal(id, 42);
	assert_int_equal(id_parse(&id, "1000000"), 0);
	assert_int_equal(id, 1000000);
	assert_int_equal(id_parse(&id, "999999999999999999"), 0);
	assert_int_equal(id, 999999999999999999LL);
}

static void test_id__invalid_ids_leave_out_alone(void **state)
{
	static const char *const refused[] = {
	    "",
	    "0",
	    "00",
	    "01",
	    "007",
	    "-1",
	    "+1",
	    " 1",
	    "1 ",
	    "1x",
	    "x1",
	    "1e3",
	    "0x10",
	    "1.0",
	    "abc",
	    "1000000000000000000",
	    "99999999999999999999",
	    "9223372036854775808",
	};
	long long id = 7;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(id_parse(&id, refused[i]), -EINVAL);
		assert_int_equal(id, 7);
	}
	assert_int_equal(id_parse(&id, NULL), -EINVAL);
	assert_int_equal(id, 7);
}

/* Commits in URLs: 4 to 40 hex digits, folded to lower case. */
static void test_id__sha_prefixes(void **state)
{
	char sha[41];

	(void)state;
	assert_int_equal(id_parse_sha_prefix(sha, "1A2b"), 0);
	assert_string_equal(sha, "1a2b");
	assert_int_equal(id_parse_sha_prefix(
			     sha, "0123456789ABCDEF0123456789abcdef01234567"),
			 0);
	assert_string_equal(sha, "0123456789abcdef0123456789abcdef01234567");
	assert_int_equal(id_parse_sha_prefix(sha, "abc"), -EINVAL);
	assert_int_equal(id_parse_sha_prefix(
			     sha, "0123456789abcdef0123456789abcdef012345678"),
			 -EINVAL);
	assert_int_equal(id_parse_sha_prefix(sha, "12g4"), -EINVAL);
	assert_int_equal(id_parse_sha_prefix(sha, "12 4"), -EINVAL);
	assert_int_equal(id_parse_sha_prefix(sha, ""), -EINVAL);
	assert_int_equal(id_parse_sha_prefix(sha, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_id__valid_ids),
	    cmocka_unit_test(test_id__invalid_ids_leave_out_alone),
	    cmocka_unit_test(test_id__sha_prefixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
