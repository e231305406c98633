/*
 * Carrying out one claimed task on the worker: bring the commit into the
 * persistent worktree, build it unless this worktree already built it, run
 * the benchmark the requested number of times, and collect the runs as the
 * JSON the server's upload route takes.
 */
#ifndef STATBISECT_TASK_H
#define STATBISECT_TASK_H

#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

struct task_env {
	const char *work_dir;        /* mirrors/ and trees/ live here */
	volatile sig_atomic_t *stop; /* set by a signal: give up soon */
	atomic_bool *lease_lost;     /* set by the heartbeat thread */
};

/*
 * Carries out `task` (the "task" object of a claim reply).  On success
 * returns 0 and the upload body in *out: {"runs": [...], "build_failed":
 * bool, "build_log": text}.  Returns -1 with a message in *err when the
 * task could not be attempted at all (bad task, git failure) or was
 * abandoned (stop requested, lease lost); nothing is to be uploaded then.
 */
int task_execute(json_t **out, json_t *task, const struct task_env *env,
		 char **err);

/* The last `max` bytes of a build's output, for the build log. */
char *task_tail(const char *out, size_t out_len, const char *err,
		size_t err_len, size_t max);

#endif
