/*
 * The resolver (issue 11): a background thread that lists the candidates
 * of jobs accepted in state 'resolving' (ranges too long to list while a
 * request waits), stores them with one COPY and starts the job as
 * jobs_create would have; a range that cannot be listed (too long, good
 * not an ancestor of bad) fails the job with the reason.  It has its own
 * database connection and claims jobs FOR UPDATE SKIP LOCKED
 * (store/store_resolving.h), so several servers share the work and a
 * restart mid-way lists the job again.
 */
#ifndef STATBISECT_RESOLVER_H
#define STATBISECT_RESOLVER_H

/* Starts the resolver thread; 0, or -1 (logged) when it cannot. */
int resolver_start(void);

/* Stops it and waits for it (a no-op when it is not running). */
void resolver_stop(void);

/* Makes the resolver look for work now; callable from any thread. */
void resolver_wake(void);

#endif
