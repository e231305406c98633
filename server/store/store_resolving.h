/*
 * The resolver's queue (issue 11): jobs accepted in state 'resolving'
 * whose candidates the resolver thread (server/resolver.c) lists in the
 * background.  Conventions as store.h; every function runs inside the
 * caller's transaction.
 */
#ifndef STATBISECT_STORE_RESOLVING_H
#define STATBISECT_STORE_RESOLVING_H

#include <libpq-fe.h>

#include "store.h"

/* A claimed job; the text points into `result`. */
struct store_resolving {
	PGresult *result;
	long long job_id;
	const char *good_sha, *bad_sha, *repo, *repo_url;
};

void store_resolving_clear(struct store_resolving *job);

/*
 * Claims the oldest queued job that no other transaction holds: its queue
 * row stays locked (FOR UPDATE SKIP LOCKED) until the caller's
 * transaction ends, so a second server passes it by, and a server that
 * dies mid-way leaves it to the next.  The job's own row is not locked.
 * STORE_NOT_FOUND when there is nothing to claim.
 */
int store_resolving_claim(struct store_resolving *out, PGconn *conn);

/*
 * Takes job `job_id` off the queue and, when it is still 'resolving',
 * sets it 'queued' (its candidates stored) or, with `failure` not NULL,
 * 'failed' with that message.  A job cancelled meanwhile is left as it is.
 */
int store_resolving_end(PGconn *conn, long long job_id, const char *failure);

#endif
