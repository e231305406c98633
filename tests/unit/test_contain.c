/*
 * Unit tests of worker/contain.c through runner_run(): processes that
 * leave the run's process group and session (setsid, double fork) do not
 * outlive the run, at its end or at its time limit, in both ways of
 * containing it: the sweep of inherited processes and, where the machine
 * allows it, a cgroup per run.  Runs going on at once in other threads
 * keep theirs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/contain.h"
#include "../../worker/runner.h"

static char scratch[64];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A pid written by the command into scratch/NAME. */
static pid_t pid_from(const char *name)
{
	char path[128];
	FILE *f;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	assert_true(pid > 1);
	return (pid_t)pid;
}

/* Gone and reaped: a zombie would still answer kill(pid, 0). */
static void assert_gone(pid_t pid)
{
	errno = 0;
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

/*
 * A command that starts escapees and waits until they are up: `tag`-a
 * holds the run's stdout, `tag`-b has closed its descriptors, `tag`-c
 * cleared its environment, `tag`-d is a shell whose child is a sleep.
 */
static void escaping_command(char *out, size_t size, const char *tag,
			     const char *then)
{
	snprintf(out, size,
		 "cd %s && "
		 "(setsid sh -c 'echo $$ > %s-a; exec sleep 30' &) && "
		 "(setsid sh -c 'echo $$ > %s-b; exec sleep 30' "
		 ">/dev/null 2>&1 </dev/null &) && "
		 "(env -i /usr/bin/setsid /bin/sh -c 'echo $$ > %s-c; "
		 "exec sleep 30' >/dev/null 2>&1 </dev/null &) && "
		 "(setsid sh -c 'sleep 30 & echo $! > %s-d; wait' "
		 ">/dev/null 2>&1 </dev/null &) && "
		 "while [ ! -s %s-a ] || [ ! -s %s-b ] || [ ! -s %s-c ] || "
		 "[ ! -s %s-d ]; do sleep 0.01; done; %s",
		 scratch, tag, tag, tag, tag, tag, tag, tag, tag, then);
}

static void assert_escapees_gone(const char *tag)
{
	static const char *const kinds[] = {"a", "b", "c", "d"};
	char name[64];

	for (size_t i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "%s-%s", tag, kinds[i]);
		assert_gone(pid_from(name));
	}
}

static void test_contain__escapees_end_with_the_run(void **state)
{
	struct runner_result r;
	char command[2048];
	double start = now_s();

	(void)state;
	escaping_command(command, sizeof(command), "end", "echo done");
	assert_int_equal(
	    runner_run(&r, &(struct runner_spec){.command = command}, NULL),
	    0);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.out, "done\n");
	assert_escapees_gone("end");
	/* The one holding stdout costs one drain, not its 30 s. */
	assert_true(now_s() - start < 5.0);
	runner_result_clear(&r);
}

static void test_contain__escapees_end_at_the_time_limit(void **state)
{
	struct runner_result r;
	char command[2048];
	double start = now_s();

	(void)state;
	escaping_command(command, sizeof(command), "limit", "sleep 30");
	assert_int_equal(runner_run(&r,
				    &(struct runner_spec){.command = command,
							  .timeout_s = 1.0},
				    NULL),
			 0);
	assert_true(r.timed_out);
	assert_escapees_gone("limit");
	assert_true(now_s() - start <
		    1.0 + RUNNER_TERM_GRACE_S + 2 * RUNNER_DRAIN_S + 2.0);
	runner_result_clear(&r);
}

struct long_run {
	struct runner_result result;
	int error;
};

static void *long_run_main(void *arg)
{
	struct long_run *run = arg;
	char command[512];

	/* Its daemon must live through the other run's end. */
	snprintf(command, sizeof(command),
		 "cd %s && (setsid sh -c 'echo $$ > long-daemon; exec sleep "
		 "30' >/dev/null 2>&1 </dev/null &) && "
		 "while [ ! -s long-daemon ]; do sleep 0.01; done; "
		 "touch long-started; "
		 "while [ ! -e short-done ]; do sleep 0.01; done; "
		 "kill -0 $(cat long-daemon) && echo alive",
		 scratch);
	run->error = runner_run(
	    &run->result,
	    &(struct runner_spec){.command = command, .timeout_s = 20}, NULL);
	return NULL;
}

static void test_contain__a_run_leaves_other_runs_alone(void **state)
{
	struct long_run other = {0};
	struct runner_result r;
	pthread_t thread;
	char command[2048];

	(void)state;
	assert_int_equal(pthread_create(&thread, NULL, long_run_main, &other),
			 0);
	escaping_command(command, sizeof(command), "short",
			 "while [ ! -e long-started ]; do sleep 0.01; done");
	assert_int_equal(
	    runner_run(&r, &(struct runner_spec){.command = command}, NULL),
	    0);
	assert_escapees_gone("short");
	runner_result_clear(&r);
	snprintf(command, sizeof(command), "%s/short-done", scratch);
	fclose(fopen(command, "w"));
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(other.error, 0);
	assert_string_equal(other.result.out, "alive\n");
	assert_gone(pid_from("long-daemon"));
	runner_result_clear(&other.result);
}

static int setup_mode(const char *mode)
{
	char *cause = NULL, *note = NULL;

	snprintf(scratch, sizeof(scratch), "/tmp/test-contain-XXXXXX");
	if (mkdtemp(scratch) == NULL)
		return -1;
	if (contain_setup(mode, &note, &cause) < 0) {
		fprintf(stderr, "contain_setup(%s): %s\n", mode, cause);
		free(cause);
		return -1;
	}
	free(note);
	return 0;
}

static int setup_sweep(void **state)
{
	(void)state;
	return setup_mode("sweep");
}

static int setup_cgroup(void **state)
{
	(void)state;
	return setup_mode("cgroup");
}

static int teardown(void **state)
{
	char command[128];

	(void)state;
	contain_shutdown();
	snprintf(command, sizeof(command), "rm -rf %s", scratch);
	return system(command) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_contain__escapees_end_with_the_run),
	    cmocka_unit_test(test_contain__escapees_end_at_the_time_limit),
	    cmocka_unit_test(test_contain__a_run_leaves_other_runs_alone),
	};
	char *note = NULL;
	int failed;

	failed = cmocka_run_group_tests_name("contain_sweep", tests,
					     setup_sweep, teardown);
	/* The cgroup way where the machine allows it (root, cgroup2). */
	if (contain_setup("auto", &note, NULL) == 0 &&
	    contain_mode() == CONTAIN_CGROUP) {
		contain_shutdown();
		failed += cmocka_run_group_tests_name("contain_cgroup", tests,
						      setup_cgroup, teardown);
	} else {
		printf("contain_cgroup: not run, no cgroup here: %s\n",
		       note != NULL ? note : "?");
	}
	free(note);
	return failed;
}
