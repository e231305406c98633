/*
 * worker/: statbisect-worker, which claims tasks from the server, builds
 * and runs the benchmark, and uploads the runs (docs/ARCHITECTURE.md).
 *
 * Carrying out one claimed task on the worker: find the build of each
 * commit in the build cache (buildcache.h), or check the commit out into
 * the cache's tree and build it there, run
 * the benchmark the requested number of times, and collect the runs as the
 * JSON the server's upload route takes.
 */
#ifndef STATBISECT_TASK_H
#define STATBISECT_TASK_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

/* The build cache's budget when the worker is given none: 10 GiB. */
#define TASK_BUILD_CACHE_MAX_DEFAULT (10ULL << 30)

/*
 * What a task does now, in words, for its heartbeats (issue 15): written
 * by the task (task_activity_set), read by the heartbeat thread
 * (task_activity_get).  Initialize with TASK_ACTIVITY_INIT.
 */
struct task_activity {
	pthread_mutex_t lock;
	char text[200];
	unsigned long long changes; /* one more at each new text */
};

#define TASK_ACTIVITY_INIT                                                    \
	{                                                                     \
		PTHREAD_MUTEX_INITIALIZER, "", 0                              \
	}

void task_activity_set(struct task_activity *activity, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Copies the text into `buf` (`size` bytes); returns the change count. */
unsigned long long task_activity_get(struct task_activity *activity, char *buf,
				     size_t size);

struct task_env {
	const char *work_dir; /* mirrors/ and builds/ live here */
	/* Bytes the build trees (buildcache.h) may take. */
	unsigned long long build_cache_max;
	volatile sig_atomic_t *stop;	/* set by a signal: give up soon */
	atomic_bool *lease_lost;	/* set by the heartbeat thread */
	struct task_activity *activity; /* what it does now; may be NULL */
};

/*
 * Carries out `task` (the "task" object of a claim reply).  On success
 * returns 0 and the upload body in *out: {"runs": [...],
 * "build_failures": [{"commit_index", "log"}], "builds": the number of
 * builds done for it (0 when every build was in the cache), "outcomes":
 * [{"commit_index", "status", "exit_code", "signal", "metrics_seen",
 * "run_output", "build_log"}]: per commit what happened (lib/outcome.h;
 * the run described is the last that failed, else the last), the tail of
 * that run's output and of the build's when this task built it}.
 * Returns -1 with a message in *err when the task could not be attempted
 * at all (bad task, git failure) or was abandoned (stop requested, lease
 * lost); nothing is to be uploaded then.
 */
int task_execute(json_t **out, json_t *task, const struct task_env *env,
		 char **err);

/* The last `max` bytes of a command's output and error, for a log. */
char *task_tail(const char *out, size_t out_len, const char *err,
		size_t err_len, size_t max);

#endif
