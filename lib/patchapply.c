#include "patchapply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gitrepo.h"

/* The patch's signature; an empty name becomes the address's user part,
 * since libgit2 refuses empty names. */
static int patch_signature(git_signature **out,
			   const struct patchapply_patch *patch)
{
	const char *email =
	    patch->author_email != NULL && patch->author_email[0] != '\0'
		? patch->author_email
		: "unknown@unknown";
	const char *name = patch->author_name;

	if (name == NULL || name[0] == '\0')
		name = email;
	return git_signature_new(out, name, email, (git_time_t)patch->date,
				 patch->date_offset);
}

/* Applies one patch onto `parent`, writing its commit to *out. */
static int apply_one(git_oid *out, git_repository *repo,
		     const git_oid *parent_oid,
		     const struct patchapply_patch *patch, char **err)
{
	git_commit *parent = NULL;
	git_tree *tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	git_index *index = NULL;
	git_signature *signature = NULL;
	git_oid tree_oid;
	int error = -1;

	if (git_commit_lookup(&parent, repo, parent_oid) < 0 ||
	    git_commit_tree(&tree, parent) < 0) {
		gitrepo_set_error(err, "reading the base");
		goto out;
	}
	if (git_diff_from_buffer(&diff, patch->diff, patch->diff_len) < 0) {
		gitrepo_set_error(err, "reading the diff");
		goto out;
	}
	if (git_apply_to_tree(&index, repo, tree, diff, NULL) < 0) {
		gitrepo_set_error(err, "applying");
		goto out;
	}
	if (git_index_write_tree_to(&tree_oid, index, repo) < 0 ||
	    git_tree_lookup(&new_tree, repo, &tree_oid) < 0 ||
	    patch_signature(&signature, patch) < 0 ||
	    git_commit_create(out, repo, NULL, signature, signature, NULL,
			      patch->message, new_tree, 1,
			      (const git_commit **)&parent) < 0) {
		gitrepo_set_error(err, "writing the commit");
		goto out;
	}
	error = 0;
out:
	git_signature_free(signature);
	git_index_free(index);
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(tree);
	git_commit_free(parent);
	return error;
}

int patchapply_series(git_oid *out, git_repository *repo, const git_oid *base,
		      const struct patchapply_patch *patches, size_t count,
		      size_t *failed, char **err)
{
	git_commit *base_commit = NULL;
	size_t i;

	*err = NULL;
	*failed = count;
	if (git_commit_lookup(&base_commit, repo, base) < 0) {
		gitrepo_set_error(err, "reading the base");
		return -1;
	}
	git_commit_free(base_commit);
	for (i = 0; i < count; i++) {
		if (apply_one(&out[i], repo, i == 0 ? base : &out[i - 1],
			      &patches[i], err) < 0) {
			*failed = i;
			return -1;
		}
	}
	return 0;
}
