/* Unit tests of server/connlimit.c: counting connections per address and
 * in total against the soft limits (issue 11). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "../../server/connlimit.h"

static struct sockaddr_in v4(const char *text)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, text, &a.sin_addr), 1);
	return a;
}

static struct sockaddr_in6 v6(const char *text)
{
	struct sockaddr_in6 a;

	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
	return a;
}

static void test_connlimit__per_address_limit_is_per_address(void **state)
{
	struct connlimit *limits;
	struct sockaddr_in one = v4("127.0.0.1"), two = v4("127.0.0.2");
	struct sockaddr_in6 six = v6("::1");

	(void)state;
	assert_int_equal(connlimit_new(&limits, 100, 3), 0);
	for (int i = 0; i < 3; i++)
		assert_true(connlimit_enter(limits, (struct sockaddr *)&one));
	assert_false(connlimit_enter(limits, (struct sockaddr *)&one));
	assert_false(connlimit_enter(limits, (struct sockaddr *)&one));
	assert_true(connlimit_enter(limits, (struct sockaddr *)&two));
	assert_true(connlimit_enter(limits, (struct sockaddr *)&six));
	assert_int_equal(connlimit_count(limits, (struct sockaddr *)&one), 5);
	assert_int_equal(connlimit_count(limits, NULL), 7);
	/* Closing the surplus brings the address back within its limit. */
	connlimit_leave(limits, (struct sockaddr *)&one);
	connlimit_leave(limits, (struct sockaddr *)&one);
	connlimit_leave(limits, (struct sockaddr *)&one);
	assert_true(connlimit_enter(limits, (struct sockaddr *)&one));
	assert_int_equal(connlimit_count(limits, (struct sockaddr *)&one), 3);
	connlimit_free(limits);
}

static void test_connlimit__total_limit_counts_every_address(void **state)
{
	struct connlimit *limits;
	struct sockaddr_in a;
	char text[32];

	(void)state;
	assert_int_equal(connlimit_new(&limits, 200, 1), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(text, sizeof(text), "10.0.%d.%d", i / 250, i % 250);
		a = v4(text);
		assert_true(connlimit_enter(limits, (struct sockaddr *)&a));
	}
	a = v4("10.9.9.9");
	assert_false(connlimit_enter(limits, (struct sockaddr *)&a));
	assert_false(connlimit_enter(limits, NULL));
	connlimit_leave(limits, NULL);
	connlimit_leave(limits, (struct sockaddr *)&a);
	assert_int_equal(connlimit_count(limits, (struct sockaddr *)&a), 0);
	a = v4("10.0.0.7");
	connlimit_leave(limits, (struct sockaddr *)&a);
	a = v4("10.9.9.8");
	assert_true(connlimit_enter(limits, (struct sockaddr *)&a));
	assert_int_equal(connlimit_count(limits, NULL), 200);
	connlimit_free(limits);
}

static void test_connlimit__bad_limits_are_refused(void **state)
{
	struct connlimit *limits = (void *)1;

	(void)state;
	assert_int_equal(connlimit_new(&limits, 0, 1), -EINVAL);
	assert_null(limits);
	assert_int_equal(connlimit_new(&limits, 1, 0), -EINVAL);
	connlimit_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_connlimit__per_address_limit_is_per_address),
	    cmocka_unit_test(test_connlimit__total_limit_counts_every_address),
	    cmocka_unit_test(test_connlimit__bad_limits_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
