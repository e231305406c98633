/*
 * The commits of a patch job (issue 13), made again on the worker: a task
 * of a patch job carries its series ({"base", "patches": [{"commit",
 * "diff" (hex), "message", "author_name", "author_email", "date",
 * "date_offset"}]}, see server/store/store_patches.h), and the worker
 * applies it onto the base in its mirror with lib/patchapply.h, as the
 * server did, arriving at the same SHAs.  A SHA that comes out different
 * is an error, never a silent build of another tree.
 */
#ifndef STATBISECT_SERIES_H
#define STATBISECT_SERIES_H

#include <git2.h>
#include <jansson.h>

/*
 * Writes into `repo` (which holds the base) the commits of `series` up to
 * and including the one whose SHA is `sha`.  0, or -1 with *err a malloc'd
 * message: `sha` is not in the series, a patch does not apply, or a commit
 * comes out with another SHA than the server's.
 */
int series_build(git_repository *repo, json_t *series, const char *sha,
		 char **err);

#endif
