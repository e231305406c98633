/*
 * runner: runs one shell command the way the worker runs builds and
 * benchmark runs, in its own process group, with a wall-clock limit, and
 * captures what it prints.
 *
 * The command is run as `/bin/sh -c COMMAND` with standard input from
 * /dev/null, standard output and standard error on pipes, no other
 * descriptor of the worker, every signal at its default action and none
 * blocked.  Values such as the commit under test reach it through the
 * environment (STATBISECT_COMMIT=...), never spliced into the command
 * text, so they are never parsed by the shell.
 *
 * runner_run() may be called from several threads at once: it installs
 * no signal handler, and its only global state is contain.c's registry
 * of runs going on.  It waits for its own child
 * only, so the rest of the program must not reap children it did not start
 * (wait(), waitpid(-1, ...)) and must not set SIGCHLD to SIG_IGN.
 */
#ifndef STATBISECT_RUNNER_H
#define STATBISECT_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of each stream kept when runner_spec.output_limit is 0. */
#define RUNNER_OUTPUT_LIMIT_DEFAULT ((size_t)1 << 20)
/* Seconds between SIGTERM and SIGKILL when the time limit is reached. */
#define RUNNER_TERM_GRACE_S 2.0
/*
 * Seconds the runner keeps reading after the shell has exited, waiting
 * for processes it left behind to close the pipes, before it kills the
 * process group; and again after the kill.
 */
#define RUNNER_DRAIN_S 0.5

struct runner_spec {
	/* Run as /bin/sh -c command; required. */
	const char *command;
	/* Working directory; NULL keeps the worker's. */
	const char *cwd;
	/*
	 * "NAME=value" entries added to the inherited environment, replacing
	 * inherited entries of the same name (a later entry wins over an
	 * earlier one); NULL-terminated; NULL adds none.
	 */
	const char *const *env;
	/* Wall-clock limit in seconds; <= 0 (or NaN) means none. */
	double timeout_s;
	/*
	 * Bytes of standard output kept, and as many of standard error; the
	 * rest is read and dropped and out_truncated / err_truncated say so.
	 * 0 means RUNNER_OUTPUT_LIMIT_DEFAULT.
	 */
	size_t output_limit;
};

struct runner_result {
	/* Exit status of the shell, or -1 when a signal ended it. */
	int exit_code;
	/* The signal that ended the shell, or 0. */
	int term_signal;
	/* The time limit was reached and the group was signalled. */
	bool timed_out;
	/* Seconds from the start to the shell's exit (CLOCK_MONOTONIC). */
	double wall_s;
	/*
	 * CPU seconds of the shell and of the descendants it waited for
	 * (wait4()); processes it left behind are not counted.
	 */
	double user_s, sys_s;
	/* Standard output, NUL-terminated (it may also contain NULs). */
	char *out;
	size_t out_len;
	bool out_truncated;
	/* Standard error, likewise. */
	char *err;
	size_t err_len;
	bool err_truncated;
};

/*
 * Runs spec->command and waits for it; fills *out, which the caller
 * releases with runner_result_clear().
 *
 * The command runs in a new process group.  When spec->timeout_s passes,
 * the group gets SIGTERM (and SIGCONT), then SIGKILL RUNNER_TERM_GRACE_S
 * later if the shell is still there.  Output is read while the command
 * runs, so a chatty command never blocks on a full pipe.  Once the shell
 * has exited the runner reads on for at most RUNNER_DRAIN_S while a
 * process it left behind holds the pipes open, then sends SIGKILL to what
 * remains of the group in every case, so nothing the command started in
 * its group outlives the call.  Once the worker has chosen a containment
 * (contain_setup(), worker/contain.h), neither does a process that moved
 * to another group or session (setsid): each run is in a cgroup of its
 * own that is killed with the group, or the descendants the worker
 * inherited as a subreaper and the processes carrying the run's tag are
 * swept; without it such a process escapes.  The runner then reaps the
 * group members that are its own children (see
 * runner_become_subreaper()).  With a time
 * limit it returns within timeout_s + RUNNER_TERM_GRACE_S +
 * 2 * RUNNER_DRAIN_S plus a moment, whatever the command does (short of a
 * process stuck in the kernel, which even SIGKILL cannot end).
 *
 * Returns 0 when the command was started and waited for, whatever its
 * exit status; the result then tells how it ended.  Returns a negative
 * errno value when it could not be started: -EINVAL (out, spec or command
 * NULL, an env entry without '=' or with an empty name), -ENOENT or
 * another chdir() error for spec->cwd, -ENOMEM, or the error of pipe(),
 * fork(), or execve() of /bin/sh.  Then *out holds no output (clearing it
 * is harmless) and, when `cause` is not NULL, *cause is a message for the
 * user that the caller frees ("cannot change directory to '/x': No such
 * file or directory"); on success *cause is NULL.
 */
int runner_run(struct runner_result *out, const struct runner_spec *spec,
	       char **cause);

/*
 * Frees the output of `r` and resets it to an empty result.
 * runner_result_clear(NULL) does nothing.
 */
void runner_result_clear(struct runner_result *r);

/*
 * Makes this process the reaper of its orphaned descendants
 * (PR_SET_CHILD_SUBREAPER), for the worker to call once at start.  Without
 * it, processes of a killed group whose parent died first go to PID 1,
 * which in a container may reap them late or never: they linger as
 * zombies.  With it they become children of this process and runner_run()
 * reaps those that were in its group; one that left the group (setsid)
 * stays a zombie here once it dies.  Returns 0 or a negative errno value
 * with *cause set as for runner_run().
 */
int runner_become_subreaper(char **cause);

#endif
