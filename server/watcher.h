/*
 * The watcher (issue 12, robot mode): a background thread that fetches
 * each due watch's repository with libgit2, takes up new heads of the
 * watched branches and has each measured by a job of two endpoints (the
 * branch's last measured head and the new one), which the scheduler and
 * the workers run like any job.  When the engine's endpoint test finds
 * the two differ by at least the testcase's min_change_pct, the same job
 * goes on to bisect the range and report; otherwise it ends quietly.
 * While a head is measured, further pushes wait: the next measurement
 * compares the newest head with the last measured one.  The state is in
 * PostgreSQL (store/store_watches.h): a restart loses nothing.
 */
#ifndef STATBISECT_WATCHER_H
#define STATBISECT_WATCHER_H

#include <libpq-fe.h>
#include <stddef.h>

#include "scheduler.h"

/* Starts the watcher thread; 0, or -1 (logged) when it cannot. */
int watcher_start(void);

/* Stops it and waits for it (a no-op when it is not running). */
void watcher_stop(void);

/* Makes the watcher look at due watches now (the push hook, a new or
 * resumed watch); callable from any thread. */
void watcher_wake(void);

/*
 * The scheduler's hook, called by sched_advance inside its transaction
 * (job row locked) once the engine answered for `job`.  A job the watcher
 * did not make is left alone (0).  A measuring job gets the endpoint
 * test's answer instead: more endpoint runs (left in job->result, 0), or
 * its end: the head recorded as measured and the job finished without a
 * report (1), or, when the endpoints differ, the job turned into a
 * bisection of the range (0: the scheduler carries on with the engine's
 * answer).  A bisection gets job->watched_branch set for its report.
 * Returns -1 on a database error.
 */
int watcher_advance(PGconn *conn, struct sched_job *job);

/*
 * Whether the report of culprit `which` of finished job `job` is sent: 1
 * for every job the watcher did not make; for a watcher's bisection 0
 * when the culprit was reported for the testcase before, or is an
 * improvement the watch does not report (each noted on the job), and 0
 * while jobs of other testcases of the same head run: the report is held,
 * and the watcher sends it with theirs once all ended.  -1 on a database
 * error.
 */
int watcher_report_wanted(PGconn *conn, const struct sched_job *job,
			  size_t which);

struct report_samples;

/*
 * The report of culprit `which` of `job` as reportjob_queue builds it:
 * adds the KPI runs of the other testcases that moved at the same culprit
 * in the same head, when their reports were held to share this one
 * (nothing for any other report).  Returns 0 or -1.
 */
int watcher_report_samples(PGconn *conn, const struct sched_job *job,
			   size_t which, size_t base_idx, size_t new_idx,
			   struct report_samples *samples);

#endif
