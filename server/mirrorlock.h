/*
 * mirrorlock: one lock per repository mirror.  Two fetches into one bare
 * mirror must not overlap, but work on one repository must not wait for
 * another (issue 11: registering a 100,000-commit repository held one
 * global lock for 130 s, and every job submission waited behind it).
 */
#ifndef STATBISECT_MIRRORLOCK_H
#define STATBISECT_MIRRORLOCK_H

struct mirrorlock;

/*
 * Waits for and takes the lock of the mirror of repository `name` (any
 * string; compared exactly).  Returns the held lock, to be given to
 * mirrorlock_release(); never NULL (out of memory, it takes one lock
 * shared by all repositories: slower, still safe).  Thread-safe; not
 * recursive.
 */
struct mirrorlock *mirrorlock_acquire(const char *name);

/* Releases a lock taken by mirrorlock_acquire(); NULL does nothing. */
void mirrorlock_release(struct mirrorlock *lock);

#endif
