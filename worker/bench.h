/*
 * The benchmark's own repository on the worker (issue 15,
 * docs/BENCHMARKS.md): a testcase may name a git repository and revision
 * of its benchmark.  The worker keeps a bare mirror of it per URL under
 * WORK_DIR/bench/, fetched when a task does not yet know its bench commit
 * (the first task of a job: a branch moves on between jobs, never within
 * one) or names a commit the mirror lacks, and checks the commit out
 * beside each build tree (DIR/<id>.bench, buildcache.h) for the build and
 * run commands to find in $STATBISECT_BENCH_DIR.
 */
#ifndef STATBISECT_WORKER_BENCH_H
#define STATBISECT_WORKER_BENCH_H

#include <git2.h>
#include <jansson.h>

#include "gitrepo.h"

struct bench {
	git_repository *mirror;		  /* NULL when the testcase has none */
	const char *url;		  /* borrowed from the task */
	char commit[GITREPO_SHA_LEN + 1]; /* "" when none */
};

/*
 * Finds the benchmark of `task` (a claim's task object: the testcase's
 * "bench_repo" and "bench_rev", the job's pinned "bench_commit") in the
 * mirror under `work_dir`, fetching when needed, and fills *out (zeroed
 * when the testcase names no benchmark).  Returns 0; 1 when the benchmark
 * cannot be had (the repository cannot be fetched, the revision or pinned
 * commit is not in it) with a sentence naming the repository (password
 * masked) and revision in *err, which ends the job; -1 with *err on any
 * other failure.  Release with bench_close.
 */
int bench_open(struct bench *out, json_t *task, const char *work_dir,
	       char **err);

/*
 * Checks the bench commit out into the directory beside build tree
 * `tree` and writes "STATBISECT_BENCH_DIR=<its absolute path>" into
 * `env_var` (`size` bytes).  Does nothing (and leaves `env_var` alone)
 * when there is no benchmark.  0, or -1 with *err.
 */
int bench_checkout(const struct bench *bench, const char *tree, char *env_var,
		   size_t size, char **err);

void bench_close(struct bench *bench);

#endif
