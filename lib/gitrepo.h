/*
 * Git helpers on libgit2 shared by the server (resolving revisions, listing a
 * job's candidate commits) and the worker (keeping a mirror and a persistent
 * worktree).  Errors: every function returns 0 on success and a negative
 * value on failure, with a malloc'd message for the user in *err that the
 * caller frees.
 */
#ifndef STATBISECT_GITREPO_H
#define STATBISECT_GITREPO_H

#include <git2.h>
#include <stddef.h>

#define GITREPO_SHA_LEN 40

/* The text fields are valid UTF-8 whatever the commit holds: converted
 * from the character set its encoding header declares when that is a
 * single-byte one, with U+FFFD for every invalid byte sequence (utf8.h). */
struct gitrepo_commit {
	char sha[GITREPO_SHA_LEN + 1];
	char *subject; /* first paragraph of the message, on one line */
	char *author_name;
	char *author_email;
	/* Its parents inside the range, as indices into the array (always
	 * below its own); parents outside it are ancestors of `good`. */
	size_t *parents;
	size_t parent_count;
};

/* Initialises libgit2 for the process; call once before anything else. */
int gitrepo_global_init(void);

/*
 * Opens the bare mirror at `path` of the repository at `url`, creating it if
 * needed, and fetches every ref of `url` into it under the same name.  On
 * success *out is an open repository the caller frees with
 * git_repository_free.  A fetch failure on an existing mirror is an error:
 * callers that can live with stale data may retry with gitrepo_open.
 */
int gitrepo_mirror(git_repository **out, const char *path, const char *url,
		   char **err);

/* Opens an existing mirror without fetching. */
int gitrepo_open(git_repository **out, const char *path, char **err);

/*
 * Resolves a revision (full or abbreviated SHA, branch, tag, "HEAD~3", ...) of
 * `repo` to the commit it names.  Messages name the revision and `repo_name`.
 */
int gitrepo_resolve(git_oid *out, git_repository *repo, const char *rev,
		    const char *repo_name, char **err);

/*
 * The candidates of a bisection from `good` to `bad`: every commit that is
 * an ancestor of `bad` but not of `good` (side branches merged in the range
 * included), in topological order oldest first, with `good` itself as
 * element 0 and `bad` as the last, each with its parents inside the range.
 * Fails (err set) when `good` is not an ancestor of `bad`, when they are the
 * same commit, or when the range holds more than `limit` commits.  The caller
 * frees the array with gitrepo_commits_free.
 */
int gitrepo_range(struct gitrepo_commit **out, size_t *count,
		  git_repository *repo, const git_oid *good,
		  const git_oid *bad, size_t limit, char **err);

/*
 * Walks `bad`'s first-parent line down at most `limit` steps looking for
 * `good`: 1 when it is there, 0 when the line ends (a root) first, 2 when
 * `limit` steps passed without either, -1 when the history cannot be
 * read.  It reads at most `limit` + 1 commits, so it is cheap enough to
 * decide in a request thread whether to list a range there or in the
 * background.
 */
int gitrepo_first_parent_within(git_repository *repo, const git_oid *good,
				const git_oid *bad, size_t limit);

void gitrepo_commits_free(struct gitrepo_commit *commits, size_t count);

/*
 * The branch a commit is on, for a report's "[tree:branch]" when a job
 * was submitted by SHA: the default branch (HEAD) when it holds `commit`,
 * else a branch whose tip it is, else any branch that holds it.  Sets
 * *out to the malloc'd short name ("main"), or NULL when no branch holds
 * the commit.  Returns 0.
 */
int gitrepo_branch_of(char **out, git_repository *repo, const git_oid *commit);

/*
 * Checks out commit `sha` of the mirror `repo` into the persistent worktree
 * `workdir` (created if missing), detaching HEAD there.  Files whose content
 * is unchanged are not rewritten, so build outputs stay valid for
 * incremental builds; a file that changes is replaced by a new one (as
 * git does: a hard link to it keeps the old content); what a build did to
 * tracked files is undone (edits, deletions, modes, a symlink or a
 * directory put in a file's place); untracked files (build products) are
 * kept, and the checkout fails when one is in a tracked directory that
 * the commit replaces by a file.  The worktree's index lives beside it in
 * `workdir`.index, so several worktrees of one mirror (the worker's slots)
 * do not disturb each other.  Implemented in gitrepo_checkout.c.
 */
int gitrepo_checkout(git_repository *repo, const char *workdir,
		     const char *sha, char **err);

/* Copies the text of libgit2's last error, prefixed by `what`, into *err. */
void gitrepo_set_error(char **err, const char *what);

#endif
