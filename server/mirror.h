/*
 * The server's mirrors of the registered repositories, one bare
 * repository each under data_dir/repos.  libgit2 objects are per thread,
 * but two fetches into one mirror must not overlap: callers hold
 * mirror_lock() of the repository around all its mirror work (a fetch
 * and what reads its result).  Work on one repository never waits for
 * another's (issue 11: registering a large repository held one global
 * lock for minutes and every job submission waited).
 */
#ifndef STATBISECT_MIRROR_H
#define STATBISECT_MIRROR_H

#include <stddef.h>

#include "gitrepo.h"

struct mirrorlock;

/* Takes the lock of repository `repo_name`'s mirror (server/mirrorlock.h);
 * never NULL.  Release it with mirror_unlock(). */
struct mirrorlock *mirror_lock(const char *repo_name);
void mirror_unlock(struct mirrorlock *held);

/* The path of repository `repo_name`'s mirror into `buf`. */
void mirror_path(char *buf, size_t size, const char *repo_name);

/*
 * Fetches `url` into repository `repo_name`'s mirror (created if
 * missing) and opens it into *out.  A source that is down does not stop
 * work on known commits: a failed fetch is logged and the mirror used as
 * it is.  Returns 0, or -1 with *err (malloc'd) when the mirror cannot be
 * read at all.  Call with mirror_lock(repo_name) held.
 */
int mirror_fetch(git_repository **out, const char *repo_name, const char *url,
		 char **err);

#endif
