/*
 * A job spread over several machines of its group (lib/spread.h, issue
 * 14), as the scheduler runs it: after each upload, spread_step() on
 * every machine's runs plans the free machines' next tasks (each task for
 * one machine), queues tasks for machines still to join, or settles the
 * job on one machine, after which it is an ordinary job.
 */
#ifndef STATBISECT_SPREADJOB_H
#define STATBISECT_SPREADJOB_H

#include <libpq-fe.h>

/*
 * Moves spread job `job_id` on, inside the caller's transaction, which
 * has locked the job row.  Returns 0 when the job is still spread (its
 * tasks queued), 1 when it is not (or no longer) spread and the ordinary
 * scheduler goes on with it, -1 on a database error.
 */
int spreadjob_advance(PGconn *conn, long long job_id);

/*
 * For a claim by worker `worker_id`: leaves behind a machine of a spread
 * job of its group that was not seen for the machine timeout, and plans
 * the job again.  Returns 1 when one was, 0 when none, -1 on a database
 * error.
 */
int spreadjob_drop_lost(PGconn *conn, long long worker_id);

#endif
