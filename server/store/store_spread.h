/*
 * The store of jobs spread over several machines (lib/spread.h, issue
 * 14): their machines, their tasks for each machine or for the next to
 * join, and how the job settles on one.  The only SQL on job_machines.
 * Conventions as store.h.
 */
#ifndef STATBISECT_STORE_SPREAD_H
#define STATBISECT_STORE_SPREAD_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* Lets job `job_id` use up to `machines` (1 to 8) machines at once; more
 * than one starts its k-section. */
int store_spread_start(PGconn *conn, long long job_id, long long machines);

/* Whether job `job_id` is spread now, and over how many machines at
 * most; STORE_NOT_FOUND when there is no such job. */
int store_spread_state(bool *spread, long long *machines, PGconn *conn,
		       long long job_id);

/* A machine of a spread job, in the order they joined, with the commits
 * of its tasks still queued or running. */
struct store_spread_machine {
	long long worker_id;
	long long *open;
	size_t open_count;
};

struct store_spread_machines {
	struct store_spread_machine *items;
	size_t count;
	long long joins_queued; /* tasks waiting for a machine to join */
};

void store_spread_machines_clear(struct store_spread_machines *list);

/* The machines of job `job_id` that have not left it. */
int store_spread_machines(struct store_spread_machines *out, PGconn *conn,
			  long long job_id);

/* Withdraws job `job_id`'s tasks still waiting for a machine to join. */
int store_spread_cancel_joins(PGconn *conn, long long job_id);

/*
 * Settles job `job_id` on worker `worker_id` (0: on the next machine to
 * claim it) for `reason`: it is spread no more, bound to that worker, the
 * other machines' runs kept but superseded and their open tasks and the
 * joins withdrawn.  The machines stay listed as the job's (job_machines
 * left_at is for a machine that was gone).
 */
int store_spread_settle(PGconn *conn, long long job_id, long long worker_id,
			const char *reason);

/* A spread job as its answer shows it. */
struct store_spread_summary {
	long long machines; /* most at once; 1: an ordinary job */
	bool spread;	    /* the k-section still runs */
	const char *reason; /* why it settled, or NULL */
	const char **names; /* the machines that joined, in order */
	bool *left;	    /* names[i] left the job */
	size_t count;
	PGresult *result[2]; /* behind the strings */
};

void store_spread_summary_clear(struct store_spread_summary *s);

/* Job `job_id`'s; STORE_NOT_FOUND when there is no such job. */
int store_spread_summary(struct store_spread_summary *out, PGconn *conn,
			 long long job_id);

/*
 * For a claim by worker `worker_id`: a spread job of its group one of
 * whose machines was not seen for `timeout_s` leaves that machine behind
 * (its open tasks withdrawn; the job's first machine, if it was, becomes
 * the next).  The job's id into *job_id and the machine's into
 * *lost_worker; STORE_NOT_FOUND when there is none.
 */
int store_spread_drop_lost(long long *job_id, long long *lost_worker,
			   PGconn *conn, long long worker_id,
			   unsigned timeout_s);

#endif
