/*
 * The server's mirrors of the registered repositories, one bare
 * repository each under data_dir/repos.  libgit2 objects are per thread,
 * but two fetches into one mirror must not overlap: callers hold
 * mirror_lock() around all mirror work (a fetch and what reads its
 * result).
 */
#ifndef STATBISECT_MIRROR_H
#define STATBISECT_MIRROR_H

#include <stddef.h>

#include "gitrepo.h"

void mirror_lock(void);
void mirror_unlock(void);

/* The path of repository `repo_name`'s mirror into `buf`. */
void mirror_path(char *buf, size_t size, const char *repo_name);

/*
 * Fetches `url` into repository `repo_name`'s mirror (created if
 * missing) and opens it into *out.  A source that is down does not stop
 * work on known commits: a failed fetch is logged and the mirror used as
 * it is.  Returns 0, or -1 with *err (malloc'd) when the mirror cannot be
 * read at all.  Call with mirror_lock() held.
 */
int mirror_fetch(git_repository **out, const char *repo_name, const char *url,
		 char **err);

#endif
