/* Unit tests of lib/mailthread.c: series found in an inbox by their threading
 * and numbering, and the subject tags rules match. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "mailthread.h"

#define ITEM(id, parent, number, total)                                       \
	{                                                                     \
		id, parent, number, total, true                               \
	}

/* A shallow series with a cover letter, its messages come out of order. */
static const struct mailthread_item shallow[] = {
    ITEM("p3", "cover", 3, 3),	  ITEM("cover", NULL, 0, 3),
    {"reply", "p3", 0, 0, false}, /* "Re: [PATCH 3/3]" from a reviewer */
    ITEM("p1", "cover", 1, 3),	  ITEM("p2", "cover", 2, 3),
};

static void
test_mailthread__shallow_series_with_cover_is_complete(void **state)
{
	size_t order[8], n, i;
	int missing;

	(void)state;
	for (i = 0; i < 5; i++)
		if (i != 2)
			assert_int_equal(mailthread_head(shallow, 5, i), 1);
	assert_int_equal(mailthread_head(shallow, 5, 2), 2);
	assert_int_equal(mailthread_series(order, &n, &missing, shallow, 5, 1),
			 MAILTHREAD_COMPLETE);
	assert_int_equal(n, 4);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 4);
	assert_int_equal(order[3], 0);
	assert_int_equal(missing, -1);
}

static void test_mailthread__missing_patch_waits_and_is_named(void **state)
{
	size_t order[8], n;
	int missing;

	(void)state;
	/* Without p2: cover, p1 and p3 have come. */
	const struct mailthread_item partial[] = {shallow[0], shallow[1],
						  shallow[3]};
	assert_int_equal(mailthread_series(order, &n, &missing, partial, 3, 1),
			 MAILTHREAD_WAITING);
	assert_int_equal(missing, 2);
	assert_int_equal(n, 3);
}

static void test_mailthread__cover_on_its_way_waits(void **state)
{
	size_t order[8], n;
	int missing;

	(void)state;
	/* Every patch has come; they reply to a cover letter that has not. */
	const struct mailthread_item early[] = {shallow[0], shallow[3],
						shallow[4]};
	assert_int_equal(mailthread_head(early, 3, 0), 1);
	assert_int_equal(mailthread_head(early, 3, 1), 1);
	assert_int_equal(mailthread_head(early, 3, 2), 1);
	assert_int_equal(mailthread_series(order, &n, &missing, early, 3, 1),
			 MAILTHREAD_WAITING);
	assert_int_equal(missing, 0);
	/* Patch 1 alone: patch 2 is the first missing, not the cover. */
	assert_int_equal(
	    mailthread_series(order, &n, &missing, early + 1, 1, 0),
	    MAILTHREAD_WAITING);
	assert_int_equal(missing, 2);
}

static void test_mailthread__deep_and_coverless_series_are_found(void **state)
{
	const struct mailthread_item deep[] = {
	    ITEM("d2", "d1", 2, 3),
	    ITEM("d1", NULL, 1, 3),
	    ITEM("d3", "d2", 3, 3),
	};
	size_t order[8], n;

	(void)state;
	assert_int_equal(mailthread_head(deep, 3, 2), 1);
	assert_int_equal(mailthread_series(order, &n, NULL, deep, 3, 1),
			 MAILTHREAD_COMPLETE);
	assert_int_equal(n, 3);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 0);
	assert_int_equal(order[2], 2);
}

static void test_mailthread__single_patch_is_its_own_series(void **state)
{
	const struct mailthread_item one[] = {
	    ITEM("v1", NULL, 1, 1),
	    ITEM("v2", "v1", 1, 1), /* a v2 sent in reply to v1 */
	};
	size_t order[2], n;

	(void)state;
	assert_int_equal(mailthread_head(one, 2, 1), 1);
	assert_int_equal(mailthread_series(order, &n, NULL, one, 2, 1),
			 MAILTHREAD_COMPLETE);
	assert_int_equal(n, 1);
	assert_int_equal(order[0], 1);
}

static void
test_mailthread__v2_in_reply_to_v1_is_a_series_of_its_own(void **state)
{
	const struct mailthread_item both[] = {
	    ITEM("c1", NULL, 0, 2), ITEM("a1", "c1", 1, 2),
	    ITEM("a2", "c1", 2, 2), ITEM("c2", "c1", 0, 2),
	    ITEM("b1", "c2", 1, 2), ITEM("b2", "c2", 2, 2),
	};
	size_t order[8], n;

	(void)state;
	assert_int_equal(mailthread_head(both, 6, 3), 3);
	assert_int_equal(mailthread_head(both, 6, 5), 3);
	assert_int_equal(mailthread_series(order, &n, NULL, both, 6, 3),
			 MAILTHREAD_COMPLETE);
	assert_int_equal(n, 3);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[2], 5);
	assert_int_equal(mailthread_series(order, &n, NULL, both, 6, 0),
			 MAILTHREAD_COMPLETE);
	assert_int_equal(order[1], 1);
}

static void test_mailthread__repeated_number_is_no_series(void **state)
{
	const struct mailthread_item twice[] = {
	    ITEM("c", NULL, 0, 2),
	    ITEM("x", "c", 1, 2),
	    ITEM("y", "c", 1, 2),
	    ITEM("z", "c", 2, 2),
	};
	const struct mailthread_item reply = {"r", NULL, 0, 0, false};
	size_t order[8], n;

	(void)state;
	assert_int_equal(mailthread_series(order, &n, NULL, twice, 4, 0),
			 MAILTHREAD_NO_SERIES);
	assert_int_equal(mailthread_series(order, &n, NULL, &reply, 1, 0),
			 MAILTHREAD_NO_SERIES);
}

static void test_mailthread__tag_words(void **state)
{
	(void)state;
	assert_true(
	    mailthread_tag_matches("[PATCH net-next 3/4] x", "net-next"));
	assert_true(
	    mailthread_tag_matches("[PATCH v2 NET-NEXT 3/4] x", "net-next"));
	assert_true(mailthread_tag_matches("[RFC PATCH] x", ""));
	assert_true(mailthread_tag_matches("[PATCH] x", ""));
	assert_false(mailthread_tag_matches("[PATCH net 3/4] x", "net-next"));
	assert_false(
	    mailthread_tag_matches("[PATCH net-next-2 1/2] x", "net-next"));
	/* The tag that says PATCH is the one looked at. */
	assert_true(mailthread_tag_matches("[net-next] [PATCH] x", ""));
	assert_false(
	    mailthread_tag_matches("[net-next] [PATCH] x", "net-next"));
	assert_false(mailthread_tag_matches("Re: discussion of net-next", ""));
	assert_false(mailthread_tag_matches("[PATCH unterminated", ""));
	assert_false(mailthread_tag_matches("", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_mailthread__shallow_series_with_cover_is_complete),
	    cmocka_unit_test(
		test_mailthread__missing_patch_waits_and_is_named),
	    cmocka_unit_test(test_mailthread__cover_on_its_way_waits),
	    cmocka_unit_test(
		test_mailthread__deep_and_coverless_series_are_found),
	    cmocka_unit_test(test_mailthread__single_patch_is_its_own_series),
	    cmocka_unit_test(
		test_mailthread__v2_in_reply_to_v1_is_a_series_of_its_own),
	    cmocka_unit_test(test_mailthread__repeated_number_is_no_series),
	    cmocka_unit_test(test_mailthread__tag_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
