/* Unit tests of server/mirrorlock.c: one lock per repository (issue 11). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "../../server/mirrorlock.h"

struct holder {
	const char *name;
	double took; /* seconds to get the lock */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *take(void *arg)
{
	struct holder *h = arg;
	double start = now_s();
	struct mirrorlock *lock = mirrorlock_acquire(h->name);

	h->took = now_s() - start;
	mirrorlock_release(lock);
	return NULL;
}

static double took_while_held(const char *held, const char *wanted)
{
	struct mirrorlock *lock = mirrorlock_acquire(held);
	struct holder h = {wanted, -1};
	pthread_t thread;

	assert_non_null(lock);
	assert_int_equal(pthread_create(&thread, NULL, take, &h), 0);
	usleep(300 * 1000);
	mirrorlock_release(lock);
	assert_int_equal(pthread_join(thread, NULL), 0);
	return h.took;
}

static void test_mirrorlock__other_repositories_do_not_wait(void **state)
{
	(void)state;
	assert_true(took_while_held("linux", "git") < 0.1);
	assert_true(took_while_held("linux", "linux-next") < 0.1);
}

static void test_mirrorlock__one_repository_is_serialised(void **state)
{
	(void)state;
	assert_true(took_while_held("linux", "linux") >= 0.25);
	/* Released and freed: taken again at once. */
	assert_true(took_while_held("x", "y") < 0.1);
	mirrorlock_release(mirrorlock_acquire("linux"));
	mirrorlock_release(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mirrorlock__other_repositories_do_not_wait),
	    cmocka_unit_test(test_mirrorlock__one_repository_is_serialised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
