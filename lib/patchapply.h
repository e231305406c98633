/*
 * A patch series made commits: each patch applied with libgit2 onto the
 * tree of the commit before it, the first onto the base.  The server does
 * it to check a series and to name its candidate commits; the worker does
 * it again to build them, with the same code and the same inputs, so both
 * arrive at the same SHAs (author and committer are the patch's author at
 * the patch's date; nothing depends on the clock or the machine).  A SHA
 * therefore names the exact tree built, and the worker's build cache,
 * keyed by SHA, stays correct.
 */
#ifndef STATBISECT_PATCHAPPLY_H
#define STATBISECT_PATCHAPPLY_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

/* One patch as a commit: its diff (bytes) and the commit's metadata. */
struct patchapply_patch {
	const char *diff;
	size_t diff_len;
	const char *message; /* the whole commit message */
	const char *author_name;
	const char *author_email;
	int64_t date;	 /* seconds since the epoch */
	int date_offset; /* minutes east of UTC */
};

/*
 * Applies patches[0 .. count) in order onto commit `base` of `repo`,
 * writing a commit for each into the repository's object database (no ref
 * is moved).  out[i] receives the SHA of patch i's commit; out has room for
 * `count` oids.  On failure returns -1, *failed the index of the patch that
 * did not apply (count when the base itself is the problem) and *err a
 * malloc'd message the caller frees naming libgit2's reason.
 */
int patchapply_series(git_oid *out, git_repository *repo, const git_oid *base,
		      const struct patchapply_patch *patches, size_t count,
		      size_t *failed, char **err);

#endif
