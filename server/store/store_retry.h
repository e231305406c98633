/*
 * The store of a retry of one commit of a job (issue 15): more runs of
 * it, or a rebuild, after the engine has passed it.  Runs on the caller's
 * connection, inside the caller's transaction; returns STORE_OK,
 * STORE_NOT_FOUND where it says, or STORE_FAILED (store.h).
 */
#ifndef STATBISECT_STORE_RETRY_H
#define STATBISECT_STORE_RETRY_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "store.h"

/* What a retry needs to know of its job and commit. */
struct store_retry_target {
	char state[16];
	char kind[16];
	long long runs_min, runs_max; /* the job's own, else its testcase's */
	long long matches;	      /* commits of the job with the prefix */
	long long index;	      /* the commit's index when one matches */
	char sha[41];
};

/*
 * Locks job `job_id` (FOR UPDATE) and fills *out with its state, kind and
 * runs bounds, and the commits of its range whose SHA starts with
 * `prefix` (lower-case hex; the caller checks it).  STORE_NOT_FOUND when
 * there is no such job.
 */
int store_retry_target(struct store_retry_target *out, PGconn *conn,
		       long long job_id, const char *prefix);

/*
 * Reopens job `job_id` for more runs of commit `index`: the job runs
 * again, its verdict is cleared until the engine decides again, and with
 * `rebuild` the commit's build failure and outcome are forgotten.
 */
int store_retry_reopen(PGconn *conn, long long job_id, long long index,
		       bool rebuild);

#endif
