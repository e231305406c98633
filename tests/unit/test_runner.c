#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/runner.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs `command` with `spec` (command replaced), expecting a start. */
static void run(struct runner_result *r, struct runner_spec spec,
		const char *command)
{
	char *cause = (char *)1;

	spec.command = command;
	assert_int_equal(runner_run(r, &spec, &cause), 0);
	assert_null(cause);
	assert_non_null(r->out);
	assert_non_null(r->err);
	assert_int_equal(r->out[r->out_len], '\0');
	assert_int_equal(r->err[r->err_len], '\0');
}

static void assert_output(const struct runner_result *r, const char *out,
			  const char *err)
{
	assert_string_equal(r->out, out);
	assert_int_equal(r->out_len, strlen(out));
	assert_false(r->out_truncated);
	assert_string_equal(r->err, err);
	assert_int_equal(r->err_len, strlen(err));
	assert_false(r->err_truncated);
}

static void assert_process_gone(pid_t pid)
{
	assert_true(pid > 1);
	errno = 0;
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static pid_t first_number(const char *text)
{
	return (pid_t)strtol(text + strcspn(text, "0123456789"), NULL, 10);
}

static int setup(void **state)
{
	char *cause = NULL;

	(void)state;
	/* As the worker does: orphans of a killed group come back to us. */
	if (runner_become_subreaper(&cause) != 0) {
		fprintf(stderr, "%s\n", cause);
		free(cause);
		return -1;
	}
	return 0;
}

static void test_runner__exit_codes(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;

	(void)state;
	run(&r, spec, "true");
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.term_signal, 0);
	assert_false(r.timed_out);
	assert_output(&r, "", "");
	runner_result_clear(&r);

	run(&r, spec, "exit 3");
	assert_int_equal(r.exit_code, 3);
	assert_int_equal(r.term_signal, 0);
	runner_result_clear(&r);

	run(&r, spec, "exit 255");
	assert_int_equal(r.exit_code, 255);
	runner_result_clear(&r);

	run(&r, spec, "kill -KILL $$");
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_false(r.timed_out);
	runner_result_clear(&r);

	run(&r, spec, "kill -SEGV $$");
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.term_signal, SIGSEGV);
	runner_result_clear(&r);

	/* A command the shell cannot find still counts as started. */
	run(&r, spec, "statbisect-no-such-command-xyz");
	assert_int_equal(r.exit_code, 127);
	assert_int_equal(r.term_signal, 0);
	assert_true(r.err_len > 0);
	assert_int_equal(r.out_len, 0);
	runner_result_clear(&r);
}

static void test_runner__captures_stdout_and_stderr(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;

	(void)state;
	run(&r, spec, "echo out; echo err >&2; printf 'no newline'; exit 4");
	assert_int_equal(r.exit_code, 4);
	assert_output(&r, "out\nno newline", "err\n");
	runner_result_clear(&r);

	/* Output is counted, not NUL-terminated. */
	run(&r, spec, "printf 'a\\000b'");
	assert_int_equal(r.out_len, 3);
	assert_memory_equal(r.out, "a\0b", 4);
	runner_result_clear(&r);

	/* Standard input is /dev/null: cat ends at once. */
	run(&r, spec, "cat; echo done");
	assert_output(&r, "done\n", "");
	runner_result_clear(&r);
}

static void test_runner__both_streams_large(void **state)
{
	struct runner_spec spec = {.output_limit = 4 << 20};
	struct runner_result r;

	(void)state;
	/* Neither pipe may fill up while the other one is written. */
	run(&r, spec,
	    "yes out | head -c 3000000; yes err | head -c 3000001 >&2;"
	    "yes out | head -c 1000000");
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.out_len, 4000000);
	assert_int_equal(r.err_len, 3000001);
	assert_false(r.out_truncated);
	assert_false(r.err_truncated);
	assert_memory_equal(r.out, "out\nout\n", 8);
	assert_memory_equal(r.out + 3999996, "out\n", 4);
	assert_memory_equal(r.err + 2999996, "err\ne", 5);
	runner_result_clear(&r);
}

static void test_runner__env_passed(void **state)
{
	const char *const env[] = {"STATBISECT_COMMIT=abc", "STATBISECT_RUN=2",
				   NULL};
	struct runner_spec spec = {.env = env};
	struct runner_result r;

	(void)state;
	run(&r, spec, "echo $STATBISECT_COMMIT; echo \"run $STATBISECT_RUN\"");
	assert_int_equal(r.exit_code, 0);
	assert_output(&r, "abc\nrun 2\n", "");
	runner_result_clear(&r);
}

static void test_runner__env_inherited_and_overridden(void **state)
{
	const char *const env[] = {"RUNNER_TEST_OVERRIDE=first",
				   "RUNNER_TEST_OVERRIDE=new", "EMPTY=", NULL};
	struct runner_spec spec = {.env = env};
	struct runner_result r;

	(void)state;
	/* /proc/$$/environ is what the shell got, before it tidied it. */
	assert_int_equal(setenv("RUNNER_TEST_INHERITED", "kept", 1), 0);
	assert_int_equal(setenv("RUNNER_TEST_OVERRIDE", "old", 1), 0);
	run(&r, spec,
	    "echo \"$RUNNER_TEST_INHERITED $RUNNER_TEST_OVERRIDE\";"
	    "tr '\\000' '\\n' </proc/$$/environ |"
	    "grep -c '^RUNNER_TEST_OVERRIDE=';"
	    "echo \"${EMPTY-unset}.\"");
	unsetenv("RUNNER_TEST_INHERITED");
	unsetenv("RUNNER_TEST_OVERRIDE");
	assert_int_equal(r.exit_code, 0);
	assert_output(&r, "kept new\n1\n.\n", "");
	runner_result_clear(&r);
}

static void test_runner__env_values_never_executed(void **state)
{
	char dir[] = "/tmp/statbisect-runner-XXXXXX", marker[64];
	char value[256], expected[512];
	const char *env[] = {value, NULL};
	struct runner_spec spec = {.env = env};
	struct runner_result r;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(marker, sizeof(marker), "%s/pwned", dir);
	snprintf(value, sizeof(value),
		 "STATBISECT_COMMIT=$(touch %s) `touch %s`; touch %s", marker,
		 marker, marker);
	snprintf(expected, sizeof(expected), "%s\n%s\n", value + 18,
		 value + 18);
	run(&r, spec, "echo \"$STATBISECT_COMMIT\"; echo $STATBISECT_COMMIT");
	assert_int_equal(r.exit_code, 0);
	assert_output(&r, expected, "");
	assert_int_equal(stat(marker, &st), -1);
	assert_int_equal(errno, ENOENT);
	runner_result_clear(&r);
	assert_int_equal(rmdir(dir), 0);
}

static void test_runner__invalid_env_entry(void **state)
{
	const char *const no_equals[] = {"A=1", "NOEQUALS", NULL};
	const char *const no_name[] = {"=value", NULL};
	struct runner_spec spec = {.command = "true", .env = no_equals};
	struct runner_result r;
	char *cause = NULL;

	(void)state;
	assert_int_equal(runner_run(&r, &spec, &cause), -EINVAL);
	assert_string_equal(cause, "invalid environment entry 'NOEQUALS': "
				   "expected NAME=value");
	assert_null(r.out);
	assert_null(r.err);
	free(cause);
	runner_result_clear(&r);

	spec.env = no_name;
	assert_int_equal(runner_run(&r, &spec, NULL), -EINVAL);
	runner_result_clear(&r);
}

static void test_runner__cwd_honoured(void **state)
{
	char dir[] = "/tmp/statbisect-runner-XXXXXX", real[PATH_MAX];
	char expected[PATH_MAX + 2], here[PATH_MAX];
	struct runner_spec spec = {0};
	struct runner_result r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(dir, real));
	spec.cwd = dir;
	snprintf(expected, sizeof(expected), "%s\n", real);
	run(&r, spec, "pwd -P");
	assert_int_equal(r.exit_code, 0);
	assert_output(&r, expected, "");
	runner_result_clear(&r);
	assert_int_equal(rmdir(dir), 0);

	/* No cwd: the caller's. */
	spec.cwd = NULL;
	assert_non_null(getcwd(here, sizeof(here)));
	assert_non_null(realpath(here, real));
	snprintf(expected, sizeof(expected), "%s\n", real);
	run(&r, spec, "pwd -P");
	assert_output(&r, expected, "");
	runner_result_clear(&r);
}

static void test_runner__missing_cwd_is_an_error(void **state)
{
	struct runner_spec spec = {.command = "echo ran",
				   .cwd = "/nonexistent/statbisect-runner"};
	struct runner_result r;
	char *cause = NULL;

	(void)state;
	assert_int_equal(runner_run(&r, &spec, &cause), -ENOENT);
	assert_string_equal(cause,
			    "cannot change directory to "
			    "'/nonexistent/statbisect-runner': No such file "
			    "or directory");
	assert_null(r.out);
	assert_int_equal(r.out_len, 0);
	free(cause);
	runner_result_clear(&r);

	spec.cwd = "/dev/null";
	assert_int_equal(runner_run(&r, &spec, &cause), -ENOTDIR);
	assert_string_equal(cause, "cannot change directory to '/dev/null': "
				   "Not a directory");
	free(cause);
	runner_result_clear(&r);
}

static void test_runner__timeout_kills_sleep(void **state)
{
	struct runner_spec spec = {.timeout_s = 0.3};
	struct runner_result r;
	double start = now_s(), elapsed;

	(void)state;
	run(&r, spec, "sleep 30");
	elapsed = now_s() - start;
	assert_true(r.timed_out);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.term_signal, SIGTERM);
	assert_true(r.wall_s >= 0.3 && r.wall_s < 1.0);
	assert_true(elapsed < 1.5);
	assert_output(&r, "", "");
	runner_result_clear(&r);
}

static void test_runner__timeout_kills_grandchild(void **state)
{
	struct runner_spec spec = {.timeout_s = 0.3};
	struct runner_result r;
	char expected[32];
	pid_t grandchild;

	(void)state;
	run(&r, spec, "sleep 30 & echo $!; wait");
	assert_true(r.timed_out);
	assert_int_equal(r.term_signal, SIGTERM);
	grandchild = first_number(r.out);
	snprintf(expected, sizeof(expected), "%d\n", (int)grandchild);
	assert_output(&r, expected, "");
	assert_process_gone(grandchild);
	runner_result_clear(&r);
}

static void test_runner__ignored_sigterm_gets_sigkill(void **state)
{
	struct runner_spec spec = {.timeout_s = 0.2};
	struct runner_result r;

	(void)state;
	run(&r, spec, "trap '' TERM; sleep 30 & echo $!; wait");
	assert_true(r.timed_out);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_true(r.wall_s >= 0.2 + RUNNER_TERM_GRACE_S);
	assert_true(r.wall_s < 0.2 + RUNNER_TERM_GRACE_S + 1.0);
	assert_process_gone(first_number(r.out));
	runner_result_clear(&r);
}

static void test_runner__daemon_holding_stdout_does_not_hang(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;
	double start = now_s(), elapsed;
	char expected[64];
	pid_t daemon;

	(void)state;
	run(&r, spec, "sleep 30 & echo started $!");
	elapsed = now_s() - start;
	assert_int_equal(r.exit_code, 0);
	assert_false(r.timed_out);
	assert_true(r.wall_s < 0.5);
	assert_true(elapsed >= RUNNER_DRAIN_S);
	assert_true(elapsed < RUNNER_DRAIN_S + 1.0);
	daemon = first_number(r.out);
	snprintf(expected, sizeof(expected), "started %d\n", (int)daemon);
	assert_output(&r, expected, "");
	assert_process_gone(daemon);
	runner_result_clear(&r);
}

static void test_runner__leftover_daemon_is_killed(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;
	double start = now_s(), elapsed;

	(void)state;
	/* Its output is closed, so the pipes end with the shell. */
	run(&r, spec, "sleep 30 </dev/null >/dev/null 2>&1 & echo $!");
	elapsed = now_s() - start;
	assert_int_equal(r.exit_code, 0);
	assert_true(elapsed < RUNNER_DRAIN_S);
	assert_process_gone(first_number(r.out));
	runner_result_clear(&r);
}

static void test_runner__output_limit_truncates(void **state)
{
	struct runner_spec spec = {.output_limit = 1 << 20};
	struct runner_result r;

	(void)state;
	run(&r, spec, "yes | head -c 5000000; echo done >&2");
	/* head finished, so all 5 MB were read (and dropped). */
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.out_len, 1 << 20);
	assert_true(r.out_truncated);
	for (size_t i = 0; i < r.out_len; i += 2)
		assert_memory_equal(r.out + i, "y\n", 2);
	assert_string_equal(r.err, "done\n");
	assert_false(r.err_truncated);
	runner_result_clear(&r);

	spec.output_limit = 1000;
	run(&r, spec, "yes err | head -c 100000 >&2");
	assert_int_equal(r.err_len, 1000);
	assert_true(r.err_truncated);
	assert_memory_equal(r.err + 996, "err\n", 4);
	assert_int_equal(r.out_len, 0);
	assert_false(r.out_truncated);
	runner_result_clear(&r);
}

static void test_runner__output_at_limit_is_not_truncated(void **state)
{
	struct runner_spec spec = {.output_limit = 10};
	struct runner_result r;

	(void)state;
	run(&r, spec, "printf 0123456789");
	assert_output(&r, "0123456789", "");
	runner_result_clear(&r);

	run(&r, spec, "printf 0123456789a");
	assert_string_equal(r.out, "0123456789");
	assert_true(r.out_truncated);
	runner_result_clear(&r);

	/* 0 is the default limit. */
	spec.output_limit = 0;
	run(&r, spec, "head -c 1048576 /dev/zero; printf x >&2");
	assert_int_equal(r.out_len, RUNNER_OUTPUT_LIMIT_DEFAULT);
	assert_false(r.out_truncated);
	assert_string_equal(r.err, "x");
	runner_result_clear(&r);

	run(&r, spec, "head -c 1048577 /dev/zero");
	assert_int_equal(r.out_len, RUNNER_OUTPUT_LIMIT_DEFAULT);
	assert_true(r.out_truncated);
	runner_result_clear(&r);
}

static void test_runner__no_descriptor_leaks(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;
	int fd, fds[2];

	(void)state;
	/* Descriptors the worker left inheritable must not reach the child. */
	fd = open("/dev/null", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pipe(fds), 0);
	run(&r, spec, "ls /proc/self/fd");
	assert_int_equal(r.exit_code, 0);
	assert_output(&r, "0\n1\n2\n3\n", "");
	runner_result_clear(&r);
	close(fd);
	close(fds[0]);
	close(fds[1]);
}

static int count_open_descriptors(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *entry;
	int count = 0;

	assert_non_null(dir);
	while ((entry = readdir(dir)) != NULL)
		if (entry->d_name[0] != '.')
			count++;
	closedir(dir);
	return count;
}

static void test_runner__leaves_no_descriptors_or_children(void **state)
{
	const char *const bad_env[] = {"BAD", NULL};
	struct runner_spec spec = {.timeout_s = 0.2};
	struct runner_result r;
	int before = count_open_descriptors();

	(void)state;
	run(&r, spec, "echo hi; sleep 30 & sleep 30 >/dev/null 2>&1 & wait");
	assert_true(r.timed_out);
	runner_result_clear(&r);
	run(&r, spec, "(sleep 30 &); exit 2");
	assert_int_equal(r.exit_code, 2);
	runner_result_clear(&r);
	spec.cwd = "/nonexistent";
	spec.command = "true";
	assert_int_equal(runner_run(&r, &spec, NULL), -ENOENT);
	spec.cwd = NULL;
	spec.env = bad_env;
	assert_int_equal(runner_run(&r, &spec, NULL), -EINVAL);

	assert_int_equal(count_open_descriptors(), before);
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_runner__child_signals_are_default(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old_pipe, old_int;
	sigset_t block, before, after;

	(void)state;
	sigemptyset(&ignore.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	assert_int_equal(sigaction(SIGPIPE, &ignore, &old_pipe), 0);
	assert_int_equal(sigaction(SIGINT, &ignore, &old_int), 0);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &block, &before), 0);

	run(&r, spec, "grep -E '^Sig(Blk|Ign)' /proc/self/status");
	{
		unsigned long long blocked = 1, ignored = 1;
		/* Signals 32 and 33 belong to glibc, which refuses to change
		 * them; a parent process may have left them ignored, and
		 * every glibc program installs its own handlers for them. */
		const unsigned long long glibc_reserved = 3ULL << 31;

		assert_int_equal(sscanf(r.out, "SigBlk: %llx SigIgn: %llx",
					&blocked, &ignored),
				 2);
		assert_int_equal(blocked, 0);
		assert_int_equal(ignored & ~glibc_reserved, 0);
		assert_string_equal(r.err, "");
	}
	runner_result_clear(&r);

	/* With SIGPIPE at its default, yes ends quietly. */
	run(&r, spec, "yes | head -c 4");
	assert_int_equal(r.exit_code, 0);
	assert_output(&r, "y\ny\n", "");
	runner_result_clear(&r);

	/* The caller's mask is as it was. */
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &before, &after), 0);
	assert_true(sigismember(&after, SIGTERM));
	assert_true(sigismember(&after, SIGUSR1));
	assert_false(sigismember(&after, SIGCHLD));
	assert_int_equal(sigaction(SIGPIPE, &old_pipe, NULL), 0);
	assert_int_equal(sigaction(SIGINT, &old_int, NULL), 0);
}

static void test_runner__wall_and_cpu_time(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;

	(void)state;
	run(&r, spec, "sleep 0.2");
	assert_int_equal(r.exit_code, 0);
	assert_true(r.wall_s >= 0.2 && r.wall_s < 0.6);
	assert_true(r.user_s + r.sys_s < 0.1);
	runner_result_clear(&r);

	/* CPU time of a child the shell waited for is counted. */
	run(&r, spec,
	    "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'");
	assert_int_equal(r.exit_code, 0);
	assert_true(r.user_s + r.sys_s > 0.05);
	assert_true(r.user_s + r.sys_s < r.wall_s + 0.05);
	runner_result_clear(&r);
}

struct concurrent_run {
	const char *command;
	const char *value;
	double timeout_s;
	struct runner_result result;
	int error;
};

static void *concurrent_main(void *arg)
{
	struct concurrent_run *c = arg;
	char entry[64];
	const char *env[] = {entry, NULL};
	struct runner_spec spec = {
	    .command = c->command, .env = env, .timeout_s = c->timeout_s};

	snprintf(entry, sizeof(entry), "RUNNER_VALUE=%s", c->value);
	c->error = runner_run(&c->result, &spec, NULL);
	return NULL;
}

static void test_runner__concurrent_runs(void **state)
{
	struct concurrent_run runs[] = {
	    {"sleep 0.3; echo $RUNNER_VALUE", "a", 0, {0}, 0},
	    {"echo $RUNNER_VALUE; exit 7", "b", 0, {0}, 0},
	    {"echo $RUNNER_VALUE; sleep 30", "c", 0.4, {0}, 0},
	    {"yes $RUNNER_VALUE | head -c 200000", "d", 0, {0}, 0},
	};
	enum { count = sizeof(runs) / sizeof(runs[0]) };
	pthread_t threads[count];

	(void)state;
	for (int i = 0; i < count; i++)
		assert_int_equal(pthread_create(&threads[i], NULL,
						concurrent_main, &runs[i]),
				 0);
	for (int i = 0; i < count; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
	for (int i = 0; i < count; i++)
		assert_int_equal(runs[i].error, 0);

	assert_int_equal(runs[0].result.exit_code, 0);
	assert_output(&runs[0].result, "a\n", "");
	assert_int_equal(runs[1].result.exit_code, 7);
	assert_output(&runs[1].result, "b\n", "");
	assert_true(runs[2].result.timed_out);
	assert_int_equal(runs[2].result.term_signal, SIGTERM);
	assert_output(&runs[2].result, "c\n", "");
	assert_false(runs[3].result.timed_out);
	assert_int_equal(runs[3].result.out_len, 200000);
	assert_memory_equal(runs[3].result.out + 199998, "d\n", 2);
	for (int i = 0; i < count; i++)
		runner_result_clear(&runs[i].result);
}

static void test_runner__invalid_arguments(void **state)
{
	struct runner_spec spec = {0};
	struct runner_result r;
	char *cause = NULL;

	(void)state;
	assert_int_equal(runner_run(NULL, &spec, NULL), -EINVAL);
	assert_int_equal(runner_run(&r, NULL, &cause), -EINVAL);
	assert_string_equal(cause, "no command to run");
	free(cause);
	assert_int_equal(runner_run(&r, &spec, NULL), -EINVAL);
	assert_null(r.out);
	assert_int_equal(r.exit_code, -1);
	runner_result_clear(&r);
	runner_result_clear(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runner__exit_codes),
	    cmocka_unit_test(test_runner__captures_stdout_and_stderr),
	    cmocka_unit_test(test_runner__both_streams_large),
	    cmocka_unit_test(test_runner__env_passed),
	    cmocka_unit_test(test_runner__env_inherited_and_overridden),
	    cmocka_unit_test(test_runner__env_values_never_executed),
	    cmocka_unit_test(test_runner__invalid_env_entry),
	    cmocka_unit_test(test_runner__cwd_honoured),
	    cmocka_unit_test(test_runner__missing_cwd_is_an_error),
	    cmocka_unit_test(test_runner__timeout_kills_sleep),
	    cmocka_unit_test(test_runner__timeout_kills_grandchild),
	    cmocka_unit_test(test_runner__ignored_sigterm_gets_sigkill),
	    cmocka_unit_test(test_runner__daemon_holding_stdout_does_not_hang),
	    cmocka_unit_test(test_runner__leftover_daemon_is_killed),
	    cmocka_unit_test(test_runner__output_limit_truncates),
	    cmocka_unit_test(test_runner__output_at_limit_is_not_truncated),
	    cmocka_unit_test(test_runner__no_descriptor_leaks),
	    cmocka_unit_test(test_runner__leaves_no_descriptors_or_children),
	    cmocka_unit_test(test_runner__child_signals_are_default),
	    cmocka_unit_test(test_runner__wall_and_cpu_time),
	    cmocka_unit_test(test_runner__concurrent_runs),
	    cmocka_unit_test(test_runner__invalid_arguments),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
