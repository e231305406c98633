#include "gitrepo.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cause.h"
#include "utf8.h"

void gitrepo_set_error(char **err, const char *what)
{
	const git_error *e = git_error_last();

	cause_set(err, "%s: %s", what,
		  e != NULL && e->message != NULL ? e->message
						  : "unknown error");
}

int gitrepo_global_init(void)
{
	return git_libgit2_init() < 0 ? -1 : 0;
}

/*
 * Points the mirror's HEAD at the branch the source's HEAD names, so that
 * "HEAD" means there what it means in the source.  A source that does not
 * say (or cannot be asked) keeps the mirror's HEAD, or gets main or master
 * when the mirror's HEAD is unborn.
 */
static void follow_source_head(git_repository *repo, git_remote *remote)
{
	static const char *const fallbacks[] = {"refs/heads/main",
						"refs/heads/master"};
	git_buf branch = {0};
	git_reference *ref = NULL;
	size_t i;

	if (git_remote_connect(remote, GIT_DIRECTION_FETCH, NULL, NULL,
			       NULL) == 0) {
		if (git_remote_default_branch(&branch, remote) == 0 &&
		    git_reference_lookup(&ref, repo, branch.ptr) == 0) {
			git_reference_free(ref);
			git_repository_set_head(repo, branch.ptr);
		}
		git_buf_dispose(&branch);
		git_remote_disconnect(remote);
	}
	if (git_repository_head_unborn(repo) != 1)
		return;
	for (i = 0; i < sizeof(fallbacks) / sizeof(fallbacks[0]); i++) {
		if (git_reference_lookup(&ref, repo, fallbacks[i]) == 0) {
			git_reference_free(ref);
			git_repository_set_head(repo, fallbacks[i]);
			return;
		}
	}
}

int gitrepo_open(git_repository **out, const char *path, char **err)
{
	if (git_repository_open_bare(out, path) < 0) {
		gitrepo_set_error(err, "cannot open mirror");
		return -1;
	}
	return 0;
}

int gitrepo_mirror(git_repository **out, const char *path, const char *url,
		   char **err)
{
	/* Every ref of the source under its own name: a mirror. */
	char *mirror_spec = "+refs/*:refs/*";
	git_strarray refspecs = {&mirror_spec, 1};
	git_fetch_options fetch_opts;
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	struct stat st;
	int error = -1;

	if (stat(path, &st) == 0) {
		if (git_repository_open_bare(&repo, path) < 0) {
			gitrepo_set_error(err, "cannot open mirror");
			goto out;
		}
	} else if (git_repository_init(&repo, path, 1) < 0) {
		gitrepo_set_error(err, "cannot create mirror");
		goto out;
	}
	/* An anonymous remote keeps the URL out of the mirror's config, so
	 * the registered URL is always the one fetched, and avoids libgit2
	 * 1.5's leak in named-remote config lookups. */
	if (git_remote_create_anonymous(&remote, repo, url) < 0) {
		gitrepo_set_error(err, "cannot use the repository URL");
		goto out;
	}
	git_fetch_options_init(&fetch_opts, GIT_FETCH_OPTIONS_VERSION);
	fetch_opts.prune = GIT_FETCH_PRUNE;
	fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
	if (git_remote_fetch(remote, &refspecs, &fetch_opts, NULL) < 0) {
		gitrepo_set_error(err, "cannot fetch repository");
		goto out;
	}
	follow_source_head(repo, remote);
	*out = repo;
	repo = NULL;
	error = 0;
out:
	git_remote_free(remote);
	git_repository_free(repo);
	return error;
}

int gitrepo_resolve(git_oid *out, git_repository *repo, const char *rev,
		    const char *repo_name, char **err)
{
	git_object *obj = NULL;
	git_object *commit = NULL;
	int error = -1;

	if (rev == NULL || rev[0] == '\0' || rev[0] == '-' ||
	    strlen(rev) > 255) {
		cause_set(err, "revision '%s' is not valid",
			  rev != NULL ? rev : "");
		return -1;
	}
	if (git_revparse_single(&obj, repo, rev) < 0) {
		cause_set(err, "revision '%s' not found in repository '%s'",
			  rev, repo_name);
		goto out;
	}
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		cause_set(err,
			  "revision '%s' of repository '%s' is not a commit",
			  rev, repo_name);
		goto out;
	}
	git_oid_cpy(out, git_object_id(commit));
	error = 0;
out:
	git_object_free(commit);
	git_object_free(obj);
	return error;
}

/*
 * Commit text as valid UTF-8: git keeps the bytes it was given and at most
 * names their character set in the commit's encoding header, which covers
 * the author line as well as the message.  Everything the rest of
 * statbisect stores and shows comes through here.
 */
static int commit_text(char **out, const char *text, const char *encoding)
{
	char *fit;

	if (text == NULL)
		text = "";
	if (utf8_from_encoding(out, text, strlen(text), encoding) < 0)
		return -1;
	/* The conversion's buffer has room for 256 bytes at least; a range
	 * keeps three texts of each of up to 100,000 commits, which made
	 * 77 MB of a 99,999-commit listing's peak (docs/PERFORMANCE.md). */
	fit = realloc(*out, strlen(*out) + 1);
	if (fit != NULL)
		*out = fit;
	return 0;
}

static int commit_describe(struct gitrepo_commit *out, git_repository *repo,
			   const git_oid *oid)
{
	git_commit *commit = NULL;
	const git_signature *author;
	const char *encoding;
	int error = -1;

	if (git_commit_lookup(&commit, repo, oid) < 0)
		return -1;
	git_oid_tostr(out->sha, sizeof(out->sha), oid);
	encoding = git_commit_message_encoding(commit);
	author = git_commit_author(commit);
	if (commit_text(&out->subject, git_commit_summary(commit), encoding) ==
		0 &&
	    commit_text(&out->author_name, author->name, encoding) == 0 &&
	    commit_text(&out->author_email, author->email, encoding) == 0)
		error = 0;
	git_commit_free(commit);
	return error;
}

int gitrepo_first_parent_within(git_repository *repo, const git_oid *good,
				const git_oid *bad, size_t limit)
{
	git_oid at;
	size_t steps;

	git_oid_cpy(&at, bad);
	for (steps = 0; steps <= limit; steps++) {
		git_commit *commit = NULL;
		int found;

		if (git_oid_equal(&at, good))
			return 1;
		if (git_commit_lookup(&commit, repo, &at) < 0)
			return -1;
		found = git_commit_parentcount(commit) > 0;
		if (found)
			git_oid_cpy(&at, git_commit_parent_id(commit, 0));
		git_commit_free(commit);
		if (!found)
			return 0;
	}
	return 2;
}

void gitrepo_commits_free(struct gitrepo_commit *commits, size_t count)
{
	size_t i;

	if (commits == NULL)
		return;
	for (i = 0; i < count; i++) {
		free(commits[i].subject);
		free(commits[i].author_name);
		free(commits[i].author_email);
		free(commits[i].parents);
	}
	free(commits);
}

struct oid_index {
	git_oid oid;
	size_t index;
};

static int oid_index_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct oid_index *)a)->oid,
			   &((const struct oid_index *)b)->oid);
}

/* Fills each commit's parents inside the range (by index), through a
 * sorted table of the range's ids. */
static int link_parents(struct gitrepo_commit *commits, size_t count,
			git_repository *repo)
{
	struct oid_index *table = malloc(count * sizeof(*table)), key;
	size_t i, k;
	int error = -1;

	if (table == NULL)
		return -1;
	for (i = 0; i < count; i++) {
		if (git_oid_fromstr(&table[i].oid, commits[i].sha) < 0)
			goto out;
		table[i].index = i;
	}
	qsort(table, count, sizeof(*table), oid_index_cmp);
	for (i = 1; i < count; i++) {
		git_commit *commit = NULL;
		unsigned int parent_count;

		if (git_oid_fromstr(&key.oid, commits[i].sha) < 0 ||
		    git_commit_lookup(&commit, repo, &key.oid) < 0)
			goto out;
		parent_count = git_commit_parentcount(commit);
		commits[i].parents = calloc(
		    parent_count != 0 ? parent_count : 1, sizeof(size_t));
		if (commits[i].parents == NULL) {
			git_commit_free(commit);
			goto out;
		}
		for (k = 0; k < parent_count; k++) {
			const struct oid_index *hit;

			git_oid_cpy(&key.oid,
				    git_commit_parent_id(commit, (unsigned)k));
			hit = bsearch(&key, table, count, sizeof(*table),
				      oid_index_cmp);
			if (hit != NULL && hit->index < i)
				commits[i].parents[commits[i].parent_count++] =
				    hit->index;
		}
		git_commit_free(commit);
	}
	error = 0;
out:
	free(table);
	return error;
}

int gitrepo_range(struct gitrepo_commit **out, size_t *count,
		  git_repository *repo, const git_oid *good,
		  const git_oid *bad, size_t limit, char **err)
{
	struct gitrepo_commit *commits = NULL;
	git_revwalk *walk = NULL;
	git_oid *oids = NULL;
	size_t n = 0, cap = 0, i;
	git_oid oid;
	int error = -1, rc;

	if (git_oid_equal(good, bad)) {
		cause_set(err, "good and bad are the same commit");
		return -1;
	}
	rc = git_graph_descendant_of(repo, bad, good);
	if (rc < 0) {
		gitrepo_set_error(err, "cannot compare history");
		return -1;
	}
	if (rc == 0) {
		char g[GITREPO_SHA_LEN + 1], b[GITREPO_SHA_LEN + 1];

		git_oid_tostr(g, sizeof(g), good);
		git_oid_tostr(b, sizeof(b), bad);
		cause_set(err,
			  "good %.12s is not an ancestor of bad %.12s: "
			  "the range must go from an older good commit to a "
			  "newer bad one",
			  g, b);
		return -1;
	}
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL) < 0 ||
	    git_revwalk_push(walk, bad) < 0 ||
	    git_revwalk_hide(walk, good) < 0) {
		gitrepo_set_error(err, "cannot walk history");
		goto out;
	}
	while ((rc = git_revwalk_next(&oid, walk)) == 0) {
		if (n + 1 >= limit) {
			cause_set(err,
				  "the range holds more than %zu commits; "
				  "choose a closer good revision",
				  limit);
			goto out;
		}
		if (n == cap) {
			size_t new_cap = cap != 0 ? cap * 2 : 64;
			git_oid *grown =
			    realloc(oids, new_cap * sizeof(*oids));

			if (grown == NULL)
				goto out;
			oids = grown;
			cap = new_cap;
		}
		git_oid_cpy(&oids[n++], &oid);
	}
	if (rc != GIT_ITEROVER) {
		gitrepo_set_error(err, "cannot walk history");
		goto out;
	}
	commits = calloc(n + 1, sizeof(*commits));
	if (commits == NULL)
		goto out;
	if (commit_describe(&commits[0], repo, good) < 0)
		goto describe_failed;
	/* The walk went newest first; candidates are kept oldest first. */
	for (i = 0; i < n; i++) {
		if (commit_describe(&commits[i + 1], repo, &oids[n - 1 - i]) <
		    0)
			goto describe_failed;
	}
	if (link_parents(commits, n + 1, repo) < 0)
		goto describe_failed;
	*out = commits;
	*count = n + 1;
	commits = NULL;
	error = 0;
	goto out;
describe_failed:
	gitrepo_set_error(err, "cannot read commit");
out:
	gitrepo_commits_free(commits, n + 1);
	free(oids);
	git_revwalk_free(walk);
	return error;
}

/* Whether branch `ref` has `commit` as its tip (tip_only) or in its
 * history. */
static bool branch_holds(git_repository *repo, git_reference *ref,
			 const git_oid *commit, bool tip_only)
{
	const git_oid *tip = git_reference_target(ref);

	if (tip == NULL)
		return false;
	if (git_oid_equal(tip, commit))
		return true;
	return !tip_only && git_graph_descendant_of(repo, tip, commit) == 1;
}

/* The short name of the first branch that holds `commit`, or NULL. */
static char *first_branch(git_repository *repo, const git_oid *commit,
			  bool tip_only)
{
	git_branch_iterator *it = NULL;
	git_reference *ref = NULL;
	git_branch_t type;
	char *name = NULL;

	if (git_branch_iterator_new(&it, repo, GIT_BRANCH_LOCAL) < 0)
		return NULL;
	while (name == NULL && git_branch_next(&ref, &type, it) == 0) {
		const char *short_name = NULL;

		if (branch_holds(repo, ref, commit, tip_only) &&
		    git_branch_name(&short_name, ref) == 0)
			name = strdup(short_name);
		git_reference_free(ref);
	}
	git_branch_iterator_free(it);
	return name;
}

int gitrepo_branch_of(char **out, git_repository *repo, const git_oid *commit)
{
	git_reference *head = NULL;
	const char *short_name = NULL;

	*out = NULL;
	/* The default branch first, then one whose tip it is, then any. */
	if (git_repository_head(&head, repo) == 0 &&
	    git_reference_is_branch(head) &&
	    branch_holds(repo, head, commit, false) &&
	    git_branch_name(&short_name, head) == 0)
		*out = strdup(short_name);
	git_reference_free(head);
	if (*out == NULL)
		*out = first_branch(repo, commit, true);
	if (*out == NULL)
		*out = first_branch(repo, commit, false);
	return 0;
}
