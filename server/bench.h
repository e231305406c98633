/*
 * The benchmark's own repository in the worker protocol (issue 15): a
 * testcase may name a git repository and revision of the benchmark
 * (bench_repo, bench_rev) that the worker fetches beside the tree and
 * exposes as $STATBISECT_BENCH_DIR (docs/BENCHMARKS.md).  A claim tells
 * the worker which; the job's first upload pins the bench commit the
 * worker resolved (jobs.bench_sha), and every later claim of the job
 * names that commit, so one job measures one benchmark.  A worker that
 * cannot fetch the repository or find the revision says so in its upload
 * ("bench_error"), which ends the job with that message.
 */
#ifndef STATBISECT_BENCH_H
#define STATBISECT_BENCH_H

#include <jansson.h>
#include <libpq-fe.h>

#include "http.h"
#include "store/store_tasks.h"

/*
 * Adds the claim's benchmark to `task`, a claim reply's task object:
 * "bench_repo" and "bench_rev" to its "testcase" (null when none) and
 * "bench_commit" (the job's pinned commit, or null).  0, or -1 when out
 * of memory.
 */
int bench_claim_fill(json_t *task, const struct store_claim *claim);

/*
 * After an upload's runs of job `job_id` are stored and its task is
 * finished: a "bench_error" (text) in `body` fails the job with it
 * (sched_fail); else a "bench_commit" (40 hex digits) is pinned as the
 * job's bench commit, and the job moves on (sched_advance).  Returns 0,
 * or -1 with the error answered in `res` (400 for a malformed field or
 * a commit other than the pinned one; the caller rolls back).
 */
int bench_upload(struct http_response *res, PGconn *conn, long long job_id,
		 json_t *body, const char *base_url);

#endif
