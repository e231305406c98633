/*
 * Unit tests of the git helpers (lib/gitrepo.c) on real repositories that
 * the tests build with the git command line in a temporary directory.
 *
 * Every commit gets its own fixed date and author, so the SHAs differ from
 * run to run only if git itself changes; the tests compare with what
 * `git rev-parse` says rather than with literal SHAs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gitrepo.h"

#define LINEAR_COMMITS 11 /* c0 .. c10 */

static char tmp_root[PATH_MAX];
static long clock_tick; /* minutes since the first commit */

/* The shared read-only fixture: a linear source and its mirror. */
static char linear_src[PATH_MAX];
static char linear_sha[LINEAR_COMMITS][GITREPO_SHA_LEN + 1];
static git_repository *linear_mirror;

/* A history whose paths change shape, for the checkout (make_shapes). */
static char shapes_src[PATH_MAX];
static char shapes_sha[2][GITREPO_SHA_LEN + 1];

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void capture(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Runs a shell command, which must succeed. */
static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, cmd);
}

/* The first line a shell command prints, without the newline. */
static void capture(char *out, size_t size, const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(out, (int)size, p) == NULL)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	assert_int_equal(pclose(p), 0);
}

static void path_join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	path_join(path, dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The whole content of dir/name; NULL (errno ENOENT) if it is missing. */
static char *read_file(const char *dir, const char *name)
{
	char path[PATH_MAX], *text;
	long size;
	FILE *f;

	path_join(path, dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	text = calloc((size_t)size + 1, 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	return text;
}

static void assert_file(const char *dir, const char *name, const char *want)
{
	char *text = read_file(dir, name);

	if (text == NULL)
		fail_msg("%s/%s is missing", dir, name);
	assert_string_equal(text, want);
	free(text);
}

static void assert_no_file(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	path_join(path, dir, name);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* Commits everything in `repo` as author n at the next fixed date. */
static void commit_all(const char *repo, int author, const char *subject,
		       char *sha_out)
{
	char date[64], name[64], email[64];

	clock_tick++;
	snprintf(date, sizeof(date), "@%ld +0000",
		 1700000000L + clock_tick * 60);
	snprintf(name, sizeof(name), "Author %d", author);
	snprintf(email, sizeof(email), "author%d@example.com", author);
	setenv("GIT_AUTHOR_DATE", date, 1);
	setenv("GIT_COMMITTER_DATE", date, 1);
	setenv("GIT_AUTHOR_NAME", name, 1);
	setenv("GIT_AUTHOR_EMAIL", email, 1);
	run("cd '%s' && git add -A && git commit -q -m '%s' "
	    "-m 'Body of %s.'",
	    repo, subject, subject);
	if (sha_out != NULL)
		capture(sha_out, GITREPO_SHA_LEN + 1,
			"git -C '%s' rev-parse HEAD", repo);
}

static void init_repo(char *path_out, const char *name)
{
	path_join(path_out, tmp_root, name);
	run("git -c init.defaultBranch=main init -q '%s'", path_out);
}

/*
 * A linear history c0 .. c(n-1) on main by authors 0 .. n-1, subjects
 * "commit <i>": c0 adds keep.txt, change.txt and gone.txt; every later
 * commit rewrites change.txt ("v<i>"); c1 also deletes gone.txt.
 */
static void make_linear(char *path_out, const char *name, int n,
			char sha[][GITREPO_SHA_LEN + 1])
{
	char subject[32], text[32];
	int i;

	init_repo(path_out, name);
	for (i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "v%d\n", i);
		write_file(path_out, "change.txt", text);
		if (i == 0) {
			write_file(path_out, "keep.txt", "unchanged\n");
			write_file(path_out, "gone.txt", "deleted in c1\n");
		}
		if (i == 1)
			run("rm '%s/gone.txt'", path_out);
		snprintf(subject, sizeof(subject), "commit %d", i);
		commit_all(path_out, i, subject, sha[i]);
	}
}

/*
 * Two commits whose paths change shape.  s0: keep.txt, victim.txt and
 * tree/x.txt (the same in s1), link -> keep.txt, ln2 -> victim.txt,
 * dir2file/in.txt, file2dir, mode.sh (not executable).  s1: link ->
 * victim.txt, ln2 a regular file, dir2file a file, file2dir/in.txt,
 * mode.sh executable.
 */
static void make_shapes(char *path_out, const char *name,
			char sha[][GITREPO_SHA_LEN + 1])
{
	char *src = path_out;

	init_repo(src, name);
	run("mkdir '%s/tree' '%s/dir2file'", src, src);
	write_file(src, "keep.txt", "keep\n");
	write_file(src, "victim.txt", "victim\n");
	write_file(src, "tree/x.txt", "x\n");
	write_file(src, "dir2file/in.txt", "in\n");
	write_file(src, "file2dir", "a file\n");
	write_file(src, "mode.sh", "echo mode\n");
	run("cd '%s' && ln -s keep.txt link && ln -s victim.txt ln2", src);
	commit_all(src, 0, "shapes 0", sha[0]);
	run("cd '%s' && rm -r link ln2 dir2file file2dir && "
	    "ln -s victim.txt link && chmod +x mode.sh && mkdir file2dir",
	    src);
	write_file(src, "ln2", "a file now\n");
	write_file(src, "dir2file", "a file now\n");
	write_file(src, "file2dir/in.txt", "in\n");
	commit_all(src, 1, "shapes 1", sha[1]);
}

static void oid_str(char *out, const git_oid *oid)
{
	git_oid_tostr(out, GITREPO_SHA_LEN + 1, oid);
}

static int group_setup(void **state)
{
	char mirror[PATH_MAX];
	char *err = NULL;

	(void)state;
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/test_gitrepo.XXXXXX");
	if (mkdtemp(tmp_root) == NULL)
		return -1;
	/* Keep the user's and the system's git configuration out. */
	setenv("HOME", tmp_root, 1);
	setenv("XDG_CONFIG_HOME", tmp_root, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Author", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "Committer", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.com", 1);
	setenv("GIT_AUTHOR_DATE", "@1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "@1700000000 +0000", 1);
	if (gitrepo_global_init() < 0)
		return -1;
	make_linear(linear_src, "linear", LINEAR_COMMITS, linear_sha);
	run("git -C '%s' tag -a v1.0 -m 'release 1.0' %s", linear_src,
	    linear_sha[5]);
	run("git -C '%s' tag light %s", linear_src, linear_sha[3]);
	run("git -C '%s' branch topic %s", linear_src, linear_sha[7]);
	make_shapes(shapes_src, "shapes", shapes_sha);
	path_join(mirror, tmp_root, "linear.git");
	if (gitrepo_mirror(&linear_mirror, mirror, linear_src, &err) < 0) {
		fprintf(stderr, "mirror: %s\n", err);
		free(err);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	git_repository_free(linear_mirror);
	git_libgit2_shutdown();
	if (tmp_root[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* ----------------------------------------------------------------------
 * gitrepo_mirror
 */

static void test_gitrepo__mirror_creates_bare_clone_with_refs(void **state)
{
	char src[PATH_MAX], path[PATH_MAX], sha[3][GITREPO_SHA_LEN + 1];
	char got[GITREPO_SHA_LEN + 1];
	git_repository *repo = NULL;
	git_reference *head = NULL;
	git_oid oid;
	char *err = NULL;
	struct stat st;

	(void)state;
	make_linear(src, "mirror-src", 3, sha);
	run("git -C '%s' branch side %s", src, sha[1]);
	run("git -C '%s' tag t1 %s", src, sha[0]);
	path_join(path, tmp_root, "mirror-new.git");
	assert_int_equal(stat(path, &st), -1);

	assert_int_equal(gitrepo_mirror(&repo, path, src, &err), 0);
	assert_null(err);
	assert_non_null(repo);
	assert_int_equal(git_repository_is_bare(repo), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	assert_int_equal(gitrepo_resolve(&oid, repo, "main", "src", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, sha[2]);
	assert_int_equal(gitrepo_resolve(&oid, repo, "side", "src", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, sha[1]);
	assert_int_equal(gitrepo_resolve(&oid, repo, "t1", "src", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, sha[0]);

	/* HEAD is the main branch, so "HEAD" and "HEAD~1" resolve */
	assert_int_equal(git_repository_head(&head, repo), 0);
	assert_string_equal(git_reference_name(head), "refs/heads/main");
	git_reference_free(head);
	assert_int_equal(gitrepo_resolve(&oid, repo, "HEAD", "src", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, sha[2]);
	assert_int_equal(gitrepo_resolve(&oid, repo, "HEAD~1", "src", &err),
			 0);
	oid_str(got, &oid);
	assert_string_equal(got, sha[1]);
	assert_null(err);
	git_repository_free(repo);

	/* the mirror opens without fetching */
	assert_int_equal(gitrepo_open(&repo, path, &err), 0);
	assert_null(err);
	assert_int_equal(gitrepo_resolve(&oid, repo, "main", "src", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, sha[2]);
	git_repository_free(repo);
}

static void test_gitrepo__mirror_again_fetches_and_prunes(void **state)
{
	char src[PATH_MAX], path[PATH_MAX], sha[2][GITREPO_SHA_LEN + 1];
	char newer[GITREPO_SHA_LEN + 1], got[GITREPO_SHA_LEN + 1];
	git_repository *repo = NULL;
	git_oid oid;
	char *err = NULL;

	(void)state;
	make_linear(src, "fetch-src", 2, sha);
	run("git -C '%s' branch doomed %s", src, sha[0]);
	path_join(path, tmp_root, "fetch.git");
	assert_int_equal(gitrepo_mirror(&repo, path, src, &err), 0);
	assert_int_equal(gitrepo_resolve(&oid, repo, "doomed", "f", &err), 0);
	git_repository_free(repo);
	repo = NULL;

	write_file(src, "change.txt", "after the first mirror\n");
	commit_all(src, 9, "commit after mirror", newer);
	run("git -C '%s' tag -a v2 -m 'two' HEAD", src);
	run("git -C '%s' branch -q -D doomed", src);

	/* the old mirror does not know the new commit yet */
	assert_int_equal(gitrepo_open(&repo, path, &err), 0);
	assert_int_equal(gitrepo_resolve(&oid, repo, newer, "f", &err), -1);
	free(err);
	err = NULL;
	git_repository_free(repo);
	repo = NULL;

	assert_int_equal(gitrepo_mirror(&repo, path, src, &err), 0);
	assert_null(err);
	assert_int_equal(gitrepo_resolve(&oid, repo, "main", "f", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, newer);
	assert_int_equal(gitrepo_resolve(&oid, repo, newer, "f", &err), 0);
	assert_int_equal(gitrepo_resolve(&oid, repo, "v2", "f", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, newer);
	assert_int_equal(gitrepo_resolve(&oid, repo, "HEAD", "f", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, newer);
	/* a branch deleted at the source is deleted in the mirror */
	assert_int_equal(gitrepo_resolve(&oid, repo, "doomed", "f", &err), -1);
	assert_string_equal(err, "revision 'doomed' not found in repository "
				 "'f'");
	free(err);
	git_repository_free(repo);
}

static void test_gitrepo__mirror_of_missing_source_fails(void **state)
{
	char path[PATH_MAX], src[PATH_MAX];
	git_repository *repo = NULL;
	char *err = NULL;

	(void)state;
	path_join(path, tmp_root, "missing.git");
	path_join(src, tmp_root, "no-such-source");
	assert_true(gitrepo_mirror(&repo, path, src, &err) < 0);
	assert_null(repo);
	assert_non_null(err);
	assert_memory_equal(err, "cannot fetch repository: ", 25);
	free(err);
}

/* A first mirror attempt that failed (wrong URL) leaves a directory behind;
 * the next call with the right URL must still produce a working mirror. */
static void test_gitrepo__mirror_recovers_after_failed_fetch(void **state)
{
	char path[PATH_MAX], wrong[PATH_MAX], got[GITREPO_SHA_LEN + 1];
	git_repository *repo = NULL;
	char *err = NULL;
	git_oid oid;

	(void)state;
	path_join(path, tmp_root, "recover.git");
	path_join(wrong, tmp_root, "wrong-url");
	assert_true(gitrepo_mirror(&repo, path, wrong, &err) < 0);
	free(err);
	err = NULL;
	assert_int_equal(gitrepo_mirror(&repo, path, linear_src, &err), 0);
	assert_null(err);
	assert_int_equal(gitrepo_resolve(&oid, repo, "main", "r", &err), 0);
	oid_str(got, &oid);
	assert_string_equal(got, linear_sha[10]);
	git_repository_free(repo);
}

/*
 * The source's HEAD is main; it also keeps an old master branch (a
 * project that renamed its default branch).  "HEAD" in the mirror must be
 * what "HEAD" is in the source, i.e. main's tip, not master's.
 */
static void test_gitrepo__mirror_head_is_source_head_not_master(void **state)
{
	char src[PATH_MAX], path[PATH_MAX], sha[3][GITREPO_SHA_LEN + 1];
	char got[GITREPO_SHA_LEN + 1], source_head[GITREPO_SHA_LEN + 1];
	git_repository *repo = NULL;
	char *err = NULL;
	git_oid oid;

	(void)state;
	make_linear(src, "renamed-src", 3, sha);
	run("git -C '%s' branch master %s", src, sha[0]);
	capture(source_head, sizeof(source_head), "git -C '%s' rev-parse HEAD",
		src);
	assert_string_equal(source_head, sha[2]);
	path_join(path, tmp_root, "renamed.git");
	assert_int_equal(gitrepo_mirror(&repo, path, src, &err), 0);
	assert_int_equal(gitrepo_resolve(&oid, repo, "HEAD", "renamed", &err),
			 0);
	git_repository_free(repo);
	oid_str(got, &oid);
	if (strcmp(got, sha[0]) == 0)
		fail_msg("the mirror's HEAD is the stale master branch (%s), "
			 "the source's HEAD is main (%s)",
			 sha[0], source_head);
	assert_string_equal(got, source_head);
}

/* ----------------------------------------------------------------------
 * gitrepo_branch_of
 */

static void assert_branch_of(git_repository *repo, const char *sha,
			     const char *want)
{
	char *got = (char *)1;
	git_oid oid;

	assert_int_equal(git_oid_fromstr(&oid, sha), 0);
	assert_int_equal(gitrepo_branch_of(&got, repo, &oid), 0);
	if (want == NULL) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* A commit is named by the default branch when that holds it, else by a
 * branch whose tip it is, else by any branch that holds it. */
static void test_gitrepo__branch_of_a_commit(void **state)
{
	char src[PATH_MAX], path[PATH_MAX], sha[3][GITREPO_SHA_LEN + 1];
	char side[2][GITREPO_SHA_LEN + 1];
	git_repository *repo = NULL;
	char *err = NULL;

	(void)state;
	make_linear(src, "branches-src", 3, sha);
	run("git -C '%s' checkout -q -b side %s", src, sha[1]);
	write_file(src, "side.txt", "side\n");
	commit_all(src, 0, "side 1", side[0]);
	write_file(src, "side.txt", "side 2\n");
	commit_all(src, 0, "side 2", side[1]);
	run("git -C '%s' branch aaa-side-tip %s", src, side[0]);
	run("git -C '%s' checkout -q main", src);
	path_join(path, tmp_root, "branches.git");
	assert_int_equal(gitrepo_mirror(&repo, path, src, &err), 0);
	assert_branch_of(repo, sha[2], "main");
	assert_branch_of(repo, sha[0], "main");
	/* aaa-side-tip sorts first but side[1] is side's tip */
	assert_branch_of(repo, side[1], "side");
	assert_branch_of(repo, side[0], "aaa-side-tip");
	assert_branch_of(repo, "0123456789012345678901234567890123456789",
			 NULL);
	git_repository_free(repo);
}

/* ----------------------------------------------------------------------
 * gitrepo_resolve
 */

static void assert_resolves(const char *rev, const char *want)
{
	char got[GITREPO_SHA_LEN + 1];
	char *err = NULL;
	git_oid oid;

	assert_int_equal(
	    gitrepo_resolve(&oid, linear_mirror, rev, "linear", &err), 0);
	assert_null(err);
	oid_str(got, &oid);
	assert_string_equal(got, want);
}

static void test_gitrepo__resolve_full_sha(void **state)
{
	(void)state;
	assert_resolves(linear_sha[4], linear_sha[4]);
}

static void test_gitrepo__resolve_abbreviated_sha(void **state)
{
	char abbrev[8];

	(void)state;
	memcpy(abbrev, linear_sha[6], 7);
	abbrev[7] = '\0';
	assert_resolves(abbrev, linear_sha[6]);
}

static void test_gitrepo__resolve_branch_names(void **state)
{
	(void)state;
	assert_resolves("main", linear_sha[10]);
	assert_resolves("topic", linear_sha[7]);
	assert_resolves("refs/heads/topic", linear_sha[7]);
}

static void test_gitrepo__resolve_tags_to_their_commit(void **state)
{
	(void)state;
	assert_resolves("v1.0", linear_sha[5]);	 /* annotated */
	assert_resolves("light", linear_sha[3]); /* lightweight */
}

static void test_gitrepo__resolve_ancestry_expressions(void **state)
{
	(void)state;
	assert_resolves("main~2", linear_sha[8]);
	assert_resolves("topic^", linear_sha[6]);
	assert_resolves("v1.0~5", linear_sha[0]);
}

static void test_gitrepo__resolve_unknown_names_rev_and_repo(void **state)
{
	char *err = NULL;
	git_oid oid;

	(void)state;
	assert_int_equal(
	    gitrepo_resolve(&oid, linear_mirror, "v6.9-rc9", "linear", &err),
	    -1);
	assert_string_equal(err, "revision 'v6.9-rc9' not found in "
				 "repository 'linear'");
	/* a second error replaces the first message */
	assert_int_equal(
	    gitrepo_resolve(&oid, linear_mirror, "main~99", "linear", &err),
	    -1);
	assert_string_equal(err, "revision 'main~99' not found in "
				 "repository 'linear'");
	free(err);
}

static void test_gitrepo__resolve_refuses_dash_and_empty(void **state)
{
	char *err = NULL;
	git_oid oid;

	(void)state;
	assert_int_equal(
	    gitrepo_resolve(&oid, linear_mirror, "--all", "linear", &err), -1);
	assert_string_equal(err, "revision '--all' is not valid");
	assert_int_equal(
	    gitrepo_resolve(&oid, linear_mirror, "-1", "linear", &err), -1);
	assert_string_equal(err, "revision '-1' is not valid");
	assert_int_equal(
	    gitrepo_resolve(&oid, linear_mirror, "", "linear", &err), -1);
	assert_string_equal(err, "revision '' is not valid");
	free(err);
}

static void test_gitrepo__resolve_tree_is_not_a_commit(void **state)
{
	char *err = NULL;
	git_oid oid;

	(void)state;
	assert_int_equal(gitrepo_resolve(&oid, linear_mirror, "main^{tree}",
					 "linear", &err),
			 -1);
	assert_string_equal(err, "revision 'main^{tree}' of repository "
				 "'linear' is not a commit");
	free(err);
}

/* ----------------------------------------------------------------------
 * gitrepo_range
 */

static void test_gitrepo__range_linear_oldest_first_both_ends(void **state)
{
	struct gitrepo_commit *commits = NULL;
	size_t count = 0, i;
	git_oid good, bad;
	char *err = NULL;

	(void)state;
	assert_int_equal(git_oid_fromstr(&good, linear_sha[0]), 0);
	assert_int_equal(git_oid_fromstr(&bad, linear_sha[10]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 1000, &err),
			 0);
	assert_null(err);
	assert_int_equal(count, 11);
	for (i = 0; i < count; i++) {
		char subject[32], name[32], email[40];

		snprintf(subject, sizeof(subject), "commit %zu", i);
		snprintf(name, sizeof(name), "Author %zu", i);
		snprintf(email, sizeof(email), "author%zu@example.com", i);
		assert_string_equal(commits[i].sha, linear_sha[i]);
		assert_string_equal(commits[i].subject, subject);
		assert_string_equal(commits[i].author_name, name);
		assert_string_equal(commits[i].author_email, email);
	}
	gitrepo_commits_free(commits, count);
}

static void test_gitrepo__range_inner_part_of_history(void **state)
{
	struct gitrepo_commit *commits = NULL;
	size_t count = 0, i;
	git_oid good, bad;
	char *err = NULL;

	(void)state;
	assert_int_equal(git_oid_fromstr(&good, linear_sha[3]), 0);
	assert_int_equal(git_oid_fromstr(&bad, linear_sha[7]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 1000, &err),
			 0);
	assert_int_equal(count, 5);
	for (i = 0; i < count; i++)
		assert_string_equal(commits[i].sha, linear_sha[3 + i]);
	gitrepo_commits_free(commits, count);

	/* adjacent commits: exactly the two */
	assert_int_equal(git_oid_fromstr(&bad, linear_sha[4]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 2, &err),
			 0);
	assert_null(err);
	assert_int_equal(count, 2);
	assert_string_equal(commits[0].sha, linear_sha[3]);
	assert_string_equal(commits[1].sha, linear_sha[4]);
	gitrepo_commits_free(commits, count);
}

static void test_gitrepo__range_same_commit_is_refused(void **state)
{
	struct gitrepo_commit *commits = NULL;
	size_t count = 0;
	git_oid good;
	char *err = NULL;

	(void)state;
	assert_int_equal(git_oid_fromstr(&good, linear_sha[2]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &good, 1000, &err),
			 -1);
	assert_null(commits);
	assert_int_equal(count, 0);
	assert_string_equal(err, "good and bad are the same commit");
	free(err);
}

static void test_gitrepo__range_reversed_says_not_an_ancestor(void **state)
{
	struct gitrepo_commit *commits = NULL;
	size_t count = 0;
	git_oid good, bad;
	char *err = NULL, want[256];

	(void)state;
	assert_int_equal(git_oid_fromstr(&good, linear_sha[8]), 0);
	assert_int_equal(git_oid_fromstr(&bad, linear_sha[2]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 1000, &err),
			 -1);
	assert_null(commits);
	snprintf(want, sizeof(want),
		 "good %.12s is not an ancestor of bad %.12s: the range must "
		 "go from an older good commit to a newer bad one",
		 linear_sha[8], linear_sha[2]);
	assert_string_equal(err, want);
	assert_non_null(strstr(err, "not an ancestor"));
	free(err);
}

static void test_gitrepo__range_over_limit_refused_at_limit_ok(void **state)
{
	struct gitrepo_commit *commits = NULL;
	size_t count = 0;
	git_oid good, bad;
	char *err = NULL;

	(void)state;
	assert_int_equal(git_oid_fromstr(&good, linear_sha[0]), 0);
	assert_int_equal(git_oid_fromstr(&bad, linear_sha[10]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 10, &err),
			 -1);
	assert_null(commits);
	assert_string_equal(err, "the range holds more than 10 commits; "
				 "choose a closer good revision");
	free(err);
	err = NULL;
	/* 11 candidates fit a limit of 11 */
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 11, &err),
			 0);
	assert_null(err);
	assert_int_equal(count, 11);
	gitrepo_commits_free(commits, count);
}

/* Whether a range is short enough to list in the request (issue 11). */
static void test_gitrepo__first_parent_within_a_limit(void **state)
{
	git_oid c0, c3, c10;

	(void)state;
	assert_int_equal(git_oid_fromstr(&c0, linear_sha[0]), 0);
	assert_int_equal(git_oid_fromstr(&c3, linear_sha[3]), 0);
	assert_int_equal(git_oid_fromstr(&c10, linear_sha[10]), 0);
	/* c0 is 10 steps below c10: found within 10, not within 9 */
	assert_int_equal(
	    gitrepo_first_parent_within(linear_mirror, &c0, &c10, 10), 1);
	assert_int_equal(
	    gitrepo_first_parent_within(linear_mirror, &c0, &c10, 9), 2);
	assert_int_equal(
	    gitrepo_first_parent_within(linear_mirror, &c10, &c10, 0), 1);
	/* c10 is not below c3: the line ends at the root first */
	assert_int_equal(
	    gitrepo_first_parent_within(linear_mirror, &c10, &c3, 100), 0);
	assert_int_equal(
	    gitrepo_first_parent_within(linear_mirror, &c10, &c3, 2), 2);
}

static void test_gitrepo__range_with_missing_commit_fails(void **state)
{
	struct gitrepo_commit *commits = NULL;
	size_t count = 0;
	git_oid good, bad;
	char *err = NULL;

	(void)state;
	assert_int_equal(git_oid_fromstr(&good, "0123456789abcdef0123456789"
						"abcdef01234567"),
			 0);
	assert_int_equal(git_oid_fromstr(&bad, linear_sha[10]), 0);
	assert_int_equal(gitrepo_range(&commits, &count, linear_mirror, &good,
				       &bad, 1000, &err),
			 -1);
	assert_null(commits);
	assert_non_null(err);
	assert_memory_equal(err, "cannot compare history: ", 24);
	assert_non_null(
	    strstr(err, "0123456789abcdef0123456789abcdef01234567"));
	free(err);
}

/*
 * main: A - B - M, where M merges side: C - D forked from A.  The
 * candidates of (A, M) are every commit between them, the side branch's
 * included, oldest first, each with its parents inside the range: A, then
 * B, C, D in an order where parents come first, then M with parents B and
 * D in that order.  (D, M) is also a valid range: D is an ancestor of M
 * through the second parent.
 */
static size_t index_of(const struct gitrepo_commit *commits, size_t count,
		       const char *sha)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (strcmp(commits[i].sha, sha) == 0)
			return i;
	fail_msg("commit %s not in the range", sha);
	return count;
}

/*
 * Commit text is UTF-8 whatever the commit holds: a message and author
 * written in Latin-1 under an encoding header are converted, bytes that
 * are not UTF-8 in a commit without the header become U+FFFD.
 */
static void
test_gitrepo__range_text_is_utf8_whatever_the_commit_holds(void **state)
{
	char src[PATH_MAX], mirror[PATH_MAX], sha[3][GITREPO_SHA_LEN + 1];
	struct gitrepo_commit *commits = NULL;
	git_repository *repo = NULL;
	size_t count = 0;
	git_oid good, bad;
	char *err = NULL;

	(void)state;
	init_repo(src, "latin1-src");
	write_file(src, "f.txt", "0\n");
	commit_all(src, 0, "root", sha[0]);
	write_file(src, "f.txt", "1\n");
	/* printf's octal escapes in Latin-1: \351 e acute, \350 e grave,
	 * \374 u umlaut; \377 and \300\257 are never UTF-8. */
	run("cd '%s' && printf 'net: caf\\351 cr\\350me\\n\\nBody.\\n' >../m1"
	    " && git add -A && GIT_AUTHOR_NAME=\"$(printf 'J\\374rgen')\""
	    " git -c i18n.commitEncoding=ISO-8859-1 commit -q -F ../m1",
	    src);
	capture(sha[1], sizeof(sha[1]), "git -C '%s' rev-parse HEAD", src);
	/* git commit would take these bytes for Latin-1 and convert them,
	 * so the object is written raw, as older git and importers did. */
	run("cd '%s' && printf 'tree %%s\\nparent %%s\\n"
	    "author Z\\351ro <z@example.com> 1700000000 +0000\\n"
	    "committer Z <z@example.com> 1700000000 +0000\\n\\n"
	    "mm: bad \\377 and \\300\\257 bytes\\n'"
	    " $(git rev-parse 'HEAD^{tree}') $(git rev-parse HEAD) >../m2"
	    " && git update-ref refs/heads/main"
	    " $(git hash-object -t commit -w ../m2)",
	    src);
	capture(sha[2], sizeof(sha[2]), "git -C '%s' rev-parse HEAD", src);

	path_join(mirror, tmp_root, "latin1.git");
	assert_int_equal(gitrepo_mirror(&repo, mirror, src, &err), 0);
	assert_int_equal(git_oid_fromstr(&good, sha[0]), 0);
	assert_int_equal(git_oid_fromstr(&bad, sha[2]), 0);
	assert_int_equal(
	    gitrepo_range(&commits, &count, repo, &good, &bad, 1000, &err), 0);
	assert_null(err);
	assert_int_equal(count, 3);
	assert_string_equal(commits[1].sha, sha[1]);
	assert_string_equal(commits[1].subject,
			    "net: caf\xc3\xa9 cr\xc3\xa8me");
	assert_string_equal(commits[1].author_name, "J\xc3\xbcrgen");
	assert_string_equal(commits[2].subject,
			    "mm: bad \xef\xbf\xbd and \xef\xbf\xbd\xef\xbf\xbd"
			    " bytes");
	assert_string_equal(commits[2].author_name, "Z\xef\xbf\xbdro");
	gitrepo_commits_free(commits, count);
	git_repository_free(repo);
}

static void test_gitrepo__range_with_merge_has_every_commit(void **state)
{
	char src[PATH_MAX], mirror[PATH_MAX];
	char a[41], b[41], c[41], d[41], m[41], parent[41];
	struct gitrepo_commit *commits = NULL;
	git_repository *repo = NULL;
	size_t count = 0;
	git_oid good, bad;
	char *err = NULL;

	(void)state;
	init_repo(src, "merge-src");
	write_file(src, "a.txt", "a\n");
	commit_all(src, 1, "A", a);
	run("git -C '%s' checkout -q -b side", src);
	write_file(src, "c.txt", "c\n");
	commit_all(src, 3, "C", c);
	write_file(src, "d.txt", "d\n");
	commit_all(src, 4, "D", d);
	run("git -C '%s' checkout -q main", src);
	write_file(src, "b.txt", "b\n");
	commit_all(src, 2, "B", b);
	clock_tick++;
	run("cd '%s' && GIT_AUTHOR_DATE='@%ld +0000' "
	    "GIT_COMMITTER_DATE='@%ld +0000' git merge -q --no-ff "
	    "-m 'M merges side' side",
	    src, 1700000000L + clock_tick * 60, 1700000000L + clock_tick * 60);
	capture(m, sizeof(m), "git -C '%s' rev-parse HEAD", src);
	capture(parent, sizeof(parent), "git -C '%s' rev-parse HEAD^1", src);
	assert_string_equal(parent, b);
	capture(parent, sizeof(parent), "git -C '%s' rev-parse HEAD^2", src);
	assert_string_equal(parent, d);

	path_join(mirror, tmp_root, "merge.git");
	assert_int_equal(gitrepo_mirror(&repo, mirror, src, &err), 0);

	assert_int_equal(git_oid_fromstr(&good, a), 0);
	assert_int_equal(git_oid_fromstr(&bad, m), 0);
	assert_int_equal(
	    gitrepo_range(&commits, &count, repo, &good, &bad, 1000, &err), 0);
	assert_null(err);
	assert_int_equal(count, 5);
	assert_string_equal(commits[0].sha, a);
	assert_int_equal(commits[0].parent_count, 0);
	assert_string_equal(commits[4].sha, m);
	assert_string_equal(commits[4].subject, "M merges side");
	{
		size_t ib = index_of(commits, count, b);
		size_t ic = index_of(commits, count, c);
		size_t id = index_of(commits, count, d);
		size_t i, k;

		assert_int_equal(commits[ib].parent_count, 1);
		assert_int_equal(commits[ib].parents[0], 0);
		assert_int_equal(commits[ic].parent_count, 1);
		assert_int_equal(commits[ic].parents[0], 0);
		assert_int_equal(commits[id].parent_count, 1);
		assert_int_equal(commits[id].parents[0], ic);
		assert_int_equal(commits[4].parent_count, 2);
		assert_int_equal(commits[4].parents[0], ib);
		assert_int_equal(commits[4].parents[1], id);
		for (i = 0; i < count; i++)
			for (k = 0; k < commits[i].parent_count; k++)
				assert_true(commits[i].parents[k] < i);
	}
	gitrepo_commits_free(commits, count);

	/* good on the merged branch: B and M, whose history holds D */
	assert_int_equal(git_oid_fromstr(&good, d), 0);
	assert_int_equal(
	    gitrepo_range(&commits, &count, repo, &good, &bad, 1000, &err), 0);
	assert_int_equal(count, 3);
	assert_string_equal(commits[0].sha, d);
	assert_string_equal(commits[1].sha, b);
	assert_int_equal(commits[1].parent_count, 0); /* A: before good */
	assert_string_equal(commits[2].sha, m);
	assert_int_equal(commits[2].parent_count, 2);
	assert_int_equal(commits[2].parents[0], 1);
	assert_int_equal(commits[2].parents[1], 0);
	gitrepo_commits_free(commits, count);

	/* B and D are on different branches: neither is an ancestor */
	assert_int_equal(git_oid_fromstr(&good, b), 0);
	assert_int_equal(git_oid_fromstr(&bad, d), 0);
	assert_int_equal(
	    gitrepo_range(&commits, &count, repo, &good, &bad, 1000, &err),
	    -1);
	assert_non_null(strstr(err, "not an ancestor"));
	free(err);
	git_repository_free(repo);
}

/* ----------------------------------------------------------------------
 * gitrepo_checkout
 */

static void mirror_linear(git_repository **repo, const char *name)
{
	char path[PATH_MAX];
	char *err = NULL;

	path_join(path, tmp_root, name);
	assert_int_equal(gitrepo_mirror(repo, path, linear_src, &err), 0);
	assert_null(err);
}

static void pause_past_timestamp_granularity(void)
{
	struct timespec ts = {1, 100000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void stat_in(struct stat *st, const char *dir, const char *name)
{
	char path[PATH_MAX];

	path_join(path, dir, name);
	assert_int_equal(stat(path, st), 0);
}

static void test_gitrepo__checkout_new_worktree_writes_files(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;
	struct stat st;

	(void)state;
	mirror_linear(&repo, "co-new.git");
	path_join(wt, tmp_root, "co-new-wt");
	assert_int_equal(stat(wt, &st), -1);
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[0], &err), 0);
	assert_null(err);
	assert_file(wt, "keep.txt", "unchanged\n");
	assert_file(wt, "change.txt", "v0\n");
	assert_file(wt, "gone.txt", "deleted in c1\n");
	git_repository_free(repo);
}

static void test_gitrepo__checkout_mirror_head_new_worktree(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_linear(&repo, "co-head.git");
	path_join(wt, tmp_root, "co-head-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[10], &err), 0);
	assert_null(err);
	assert_file(wt, "keep.txt", "unchanged\n");
	assert_file(wt, "change.txt", "v10\n");
	assert_no_file(wt, "gone.txt");
	git_repository_free(repo);
}

static void test_gitrepo__checkout_next_rewrites_only_changed(void **state)
{
	struct stat keep_before, keep_after, change_before, change_after;
	struct stat build_before, build_after;
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_linear(&repo, "co-next.git");
	path_join(wt, tmp_root, "co-next-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[0], &err), 0);
	write_file(wt, "build.o", "object code\n");
	stat_in(&keep_before, wt, "keep.txt");
	stat_in(&change_before, wt, "change.txt");
	stat_in(&build_before, wt, "build.o");
	pause_past_timestamp_granularity();

	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[1], &err), 0);
	assert_null(err);
	stat_in(&keep_after, wt, "keep.txt");
	stat_in(&change_after, wt, "change.txt");
	stat_in(&build_after, wt, "build.o");
	/* unchanged in the commit: not touched */
	assert_int_equal(keep_after.st_ino, keep_before.st_ino);
	assert_int_equal(keep_after.st_mtim.tv_sec,
			 keep_before.st_mtim.tv_sec);
	assert_int_equal(keep_after.st_mtim.tv_nsec,
			 keep_before.st_mtim.tv_nsec);
	assert_file(wt, "keep.txt", "unchanged\n");
	/* changed: new content, written after the pause */
	assert_file(wt, "change.txt", "v1\n");
	assert_true(change_after.st_mtim.tv_sec >
		    change_before.st_mtim.tv_sec);
	/* deleted in the commit: gone */
	assert_no_file(wt, "gone.txt");
	/* untracked build product: kept as it was */
	assert_file(wt, "build.o", "object code\n");
	assert_int_equal(build_after.st_ino, build_before.st_ino);
	assert_int_equal(build_after.st_mtim.tv_sec,
			 build_before.st_mtim.tv_sec);
	assert_int_equal(build_after.st_mtim.tv_nsec,
			 build_before.st_mtim.tv_nsec);

	/* and back again: the deleted file returns */
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[0], &err), 0);
	assert_file(wt, "change.txt", "v0\n");
	assert_file(wt, "gone.txt", "deleted in c1\n");
	assert_file(wt, "build.o", "object code\n");
	stat_in(&keep_after, wt, "keep.txt");
	assert_int_equal(keep_after.st_ino, keep_before.st_ino);
	assert_int_equal(keep_after.st_mtim.tv_nsec,
			 keep_before.st_mtim.tv_nsec);
	git_repository_free(repo);
}

/*
 * A file the switch changes is replaced by a new file, as git does, not
 * truncated and written in place (which ext4 flushes to disk at close,
 * docs/PERFORMANCE.md): a hard link a build made to it keeps the old
 * content.
 */
static void test_gitrepo__checkout_replaces_changed_files(void **state)
{
	struct stat before, after;
	git_repository *repo = NULL;
	char wt[PATH_MAX], file[PATH_MAX], link_path[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_linear(&repo, "co-replace.git");
	path_join(wt, tmp_root, "co-replace-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[0], &err), 0);
	path_join(file, wt, "change.txt");
	path_join(link_path, tmp_root, "co-replace-link");
	assert_int_equal(link(file, link_path), 0);
	stat_in(&before, wt, "change.txt");

	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[1], &err), 0);
	assert_null(err);
	stat_in(&after, wt, "change.txt");
	assert_file(wt, "change.txt", "v1\n");
	assert_true(after.st_ino != before.st_ino);
	assert_file(tmp_root, "co-replace-link", "v0\n");
	git_repository_free(repo);
}

static void test_gitrepo__checkout_overwrites_local_edits(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_linear(&repo, "co-edit.git");
	path_join(wt, tmp_root, "co-edit-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[2], &err), 0);
	write_file(wt, "keep.txt", "edited by a benchmark\n");
	write_file(wt, "change.txt", "edited too\n");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[3], &err), 0);
	assert_null(err);
	assert_file(wt, "keep.txt", "unchanged\n");
	assert_file(wt, "change.txt", "v3\n");
	git_repository_free(repo);
}

static void mirror_shapes(git_repository **repo, const char *name)
{
	char path[PATH_MAX];
	char *err = NULL;

	path_join(path, tmp_root, name);
	assert_int_equal(gitrepo_mirror(repo, path, shapes_src, &err), 0);
	assert_null(err);
}

static void assert_link(const char *dir, const char *name, const char *want)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	path_join(path, dir, name);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		fail_msg("%s is not a symlink", path);
	target[n] = '\0';
	assert_string_equal(target, want);
}

/* A regular file (not a symlink) with the executable bit or not. */
static void assert_regular(const char *dir, const char *name, bool exec)
{
	char path[PATH_MAX];
	struct stat st;

	path_join(path, dir, name);
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		fail_msg("%s is not a regular file", path);
	assert_int_equal((st.st_mode & S_IXUSR) != 0, exec);
}

static void assert_same_file(const struct stat *before, const char *dir,
			     const char *name)
{
	struct stat after;
	char path[PATH_MAX];

	path_join(path, dir, name);
	assert_int_equal(lstat(path, &after), 0);
	if (after.st_ino != before->st_ino ||
	    after.st_mtim.tv_sec != before->st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != before->st_mtim.tv_nsec)
		fail_msg("%s was rewritten", path);
}

static void assert_shapes_at(const char *wt, int commit)
{
	assert_file(wt, "keep.txt", "keep\n");
	assert_file(wt, "victim.txt", "victim\n");
	assert_file(wt, "tree/x.txt", "x\n");
	if (commit == 0) {
		assert_link(wt, "link", "keep.txt");
		assert_link(wt, "ln2", "victim.txt");
		assert_file(wt, "dir2file/in.txt", "in\n");
		assert_regular(wt, "file2dir", false);
		assert_file(wt, "file2dir", "a file\n");
		assert_regular(wt, "mode.sh", false);
	} else {
		assert_link(wt, "link", "victim.txt");
		assert_regular(wt, "ln2", false);
		assert_file(wt, "ln2", "a file now\n");
		assert_regular(wt, "dir2file", false);
		assert_file(wt, "dir2file", "a file now\n");
		assert_file(wt, "file2dir/in.txt", "in\n");
		assert_regular(wt, "mode.sh", true);
	}
	assert_file(wt, "mode.sh", "echo mode\n");
}

/* A switch only looks at what changed: these are the changes of shape it
 * must get right, both ways, leaving the unchanged files alone. */
static void test_gitrepo__checkout_changes_types_and_modes(void **state)
{
	struct stat keep, tree_x;
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_shapes(&repo, "co-shapes.git");
	path_join(wt, tmp_root, "co-shapes-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	assert_shapes_at(wt, 0);
	stat_in(&keep, wt, "keep.txt");
	stat_in(&tree_x, wt, "tree/x.txt");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[1], &err), 0);
	assert_null(err);
	assert_shapes_at(wt, 1);
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	assert_null(err);
	assert_shapes_at(wt, 0);
	assert_same_file(&keep, wt, "keep.txt");
	assert_same_file(&tree_x, wt, "tree/x.txt");
	git_repository_free(repo);
}

/*
 * What a build did to tracked files that the switch does not change is
 * undone all the same: an edit, a deletion, a whole directory deleted, an
 * executable bit; its untracked outputs stay.
 */
static void
test_gitrepo__checkout_resets_build_changes_to_unchanged_files(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX], path[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_shapes(&repo, "co-reset.git");
	path_join(wt, tmp_root, "co-reset-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	write_file(wt, "keep.txt", "edited by the build\n");
	path_join(path, wt, "victim.txt");
	assert_int_equal(unlink(path), 0);
	run("rm -r '%s/tree'", wt);
	path_join(path, wt, "mode.sh");
	assert_int_equal(chmod(path, 0755), 0);
	write_file(wt, "out.o", "object\n");
	write_file(wt, "dir2file/in.o", "object\n");

	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	assert_null(err);
	assert_shapes_at(wt, 0);
	assert_file(wt, "out.o", "object\n");
	assert_file(wt, "dir2file/in.o", "object\n");

	/* and when the switch changes other files */
	write_file(wt, "keep.txt", "edited again\n");
	path_join(path, wt, "victim.txt");
	assert_int_equal(unlink(path), 0);
	write_file(wt, "tree/x.o", "object\n");
	run("rm -r '%s/dir2file'", wt);
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[1], &err), 0);
	assert_null(err);
	assert_shapes_at(wt, 1);
	assert_file(wt, "out.o", "object\n");
	assert_file(wt, "tree/x.o", "object\n");
	git_repository_free(repo);
}

/*
 * A build that put a symlink where a tracked file was, or a file where a
 * tracked directory was: the switch restores the file and the directory,
 * and writes nothing through the symlink (main wrote keep.txt's content
 * into victim.txt).
 */
static void
test_gitrepo__checkout_replaces_what_a_build_put_in_the_way(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_shapes(&repo, "co-inway.git");
	path_join(wt, tmp_root, "co-inway-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	run("cd '%s' && rm keep.txt && ln -s victim.txt keep.txt && "
	    "rm -r tree && echo 'not a directory' > tree",
	    wt);

	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[1], &err), 0);
	assert_null(err);
	assert_regular(wt, "keep.txt", false);
	assert_shapes_at(wt, 1);
	git_repository_free(repo);
}

/*
 * An untracked output in a tracked directory that the commit replaces by
 * a file: the checkout cannot write the file without deleting the
 * output, so it fails and says where, and keeps the output.
 */
static void
test_gitrepo__checkout_fails_on_output_in_replaced_dir(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_shapes(&repo, "co-blocked.git");
	path_join(wt, tmp_root, "co-blocked-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	write_file(wt, "dir2file/in.o", "object\n");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[1], &err), -1);
	assert_non_null(err);
	if (strstr(err, "dir2file") == NULL)
		fail_msg("the error does not name the path: %s", err);
	free(err);
	assert_file(wt, "dir2file/in.o", "object\n");
	git_repository_free(repo);
}

/*
 * Two worktrees of one mirror (the worker's slots): each checkout moves
 * the mirror's HEAD, which must not make the other worktree's next switch
 * go wrong.  main compared with that HEAD: it wrote ln2's new content
 * through the old symlink into victim.txt, and rewrote files that were
 * already right.
 */
static void test_gitrepo__checkout_beside_another_worktree(void **state)
{
	struct stat keep, ln2, mode;
	git_repository *repo = NULL;
	char wt[PATH_MAX], other[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_shapes(&repo, "co-slots.git");
	path_join(wt, tmp_root, "co-slots-wt");
	path_join(other, tmp_root, "co-slots-other");
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[0], &err), 0);
	assert_int_equal(gitrepo_checkout(repo, other, shapes_sha[1], &err),
			 0);
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[1], &err), 0);
	assert_null(err);
	assert_shapes_at(wt, 1);
	stat_in(&keep, wt, "keep.txt");
	stat_in(&ln2, wt, "ln2");
	stat_in(&mode, wt, "mode.sh");
	pause_past_timestamp_granularity();

	assert_int_equal(gitrepo_checkout(repo, other, shapes_sha[0], &err),
			 0);
	assert_shapes_at(other, 0);
	assert_int_equal(gitrepo_checkout(repo, wt, shapes_sha[1], &err), 0);
	assert_null(err);
	assert_shapes_at(wt, 1);
	assert_same_file(&keep, wt, "keep.txt");
	assert_same_file(&ln2, wt, "ln2");
	assert_same_file(&mode, wt, "mode.sh");
	git_repository_free(repo);
}

/*
 * libgit2's filters (here CRLF conversion) still apply to what a switch
 * writes when attributes or configuration ask for them: a tracked
 * .gitattributes, one a build left in the worktree, the mirror's
 * info/attributes, core.autocrlf.  Without any, the checkout skips the
 * filter lookups.
 */
static void
test_gitrepo__checkout_applies_attributes_and_autocrlf(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX], mirror[PATH_MAX], src[PATH_MAX];
	char sha[2][GITREPO_SHA_LEN + 1];
	char *err = NULL;

	(void)state;
	init_repo(src, "attrs-src");
	write_file(src, ".gitattributes", "*.txt text eol=crlf\n");
	write_file(src, "a.txt", "one\n");
	commit_all(src, 0, "attributes 0", sha[0]);
	write_file(src, "a.txt", "two\n");
	commit_all(src, 1, "attributes 1", sha[1]);
	path_join(mirror, tmp_root, "co-attrs.git");
	assert_int_equal(gitrepo_mirror(&repo, mirror, src, &err), 0);
	path_join(wt, tmp_root, "co-attrs-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, sha[0], &err), 0);
	assert_file(wt, "a.txt", "one\r\n");
	assert_int_equal(gitrepo_checkout(repo, wt, sha[1], &err), 0);
	assert_file(wt, "a.txt", "two\r\n");
	git_repository_free(repo);

	/* linear has no .gitattributes: one the build wrote applies */
	mirror_linear(&repo, "co-attrs-linear.git");
	path_join(wt, tmp_root, "co-attrs-linear-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[0], &err), 0);
	assert_file(wt, "change.txt", "v0\n");
	write_file(wt, ".gitattributes", "change.txt text eol=crlf\n");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[1], &err), 0);
	assert_file(wt, "change.txt", "v1\r\n");
	run("rm '%s/.gitattributes'", wt);
	/* the mirror's info/attributes */
	path_join(mirror, tmp_root, "co-attrs-linear.git/info");
	run("mkdir -p '%s'", mirror);
	write_file(mirror, "attributes", "change.txt text eol=crlf\n");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[2], &err), 0);
	assert_file(wt, "change.txt", "v2\r\n");
	run("rm '%s/attributes'", mirror);
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[3], &err), 0);
	assert_file(wt, "change.txt", "v3\n");
	/* core.autocrlf */
	path_join(mirror, tmp_root, "co-attrs-linear.git");
	run("git -C '%s' config core.autocrlf true", mirror);
	git_repository_free(repo);
	assert_int_equal(gitrepo_open(&repo, mirror, &err), 0);
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[4], &err), 0);
	assert_null(err);
	assert_file(wt, "change.txt", "v4\r\n");
	git_repository_free(repo);
}

/* The worker keeps mirrors and worktrees apart: a worktree removed by an
 * operator is rebuilt in full from the same mirror. */
static void
test_gitrepo__checkout_recreated_worktree_gets_all_files(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_linear(&repo, "co-again.git");
	path_join(wt, tmp_root, "co-again-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[4], &err), 0);
	run("rm -rf '%s'", wt);
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[4], &err), 0);
	assert_null(err);
	assert_file(wt, "keep.txt", "unchanged\n");
	assert_file(wt, "change.txt", "v4\n");
	git_repository_free(repo);
}

/*
 * "detaching HEAD there": git in the worktree must see the checked-out
 * commit.  The worker keeps its trees under its work dir, which may itself
 * lie in a git checkout (var/worker in the statbisect tree), so the
 * worktree here is nested in another repository: a build script running
 * `git rev-parse HEAD` or `git describe` must not see the outer one.
 */
static void test_gitrepo__checkout_detaches_head_in_worktree(void **state)
{
	char outer[PATH_MAX], trees[PATH_MAX], wt[PATH_MAX];
	char got[GITREPO_SHA_LEN + 1], outer_sha[GITREPO_SHA_LEN + 1];
	git_repository *repo = NULL;
	char *err = NULL;

	(void)state;
	init_repo(outer, "outer");
	write_file(outer, "outer.txt", "the enclosing project\n");
	commit_all(outer, 0, "outer project", outer_sha);
	path_join(trees, outer, "trees");
	assert_int_equal(mkdir(trees, 0755), 0);
	path_join(wt, trees, "linear");

	mirror_linear(&repo, "co-head-detach.git");
	assert_int_equal(gitrepo_checkout(repo, wt, linear_sha[6], &err), 0);
	assert_null(err);
	assert_file(wt, "change.txt", "v6\n");
	git_repository_free(repo);

	capture(got, sizeof(got), "git -C '%s' rev-parse HEAD", wt);
	if (strcmp(got, outer_sha) == 0)
		fail_msg("git in the worktree sees the enclosing repository "
			 "(HEAD %s), not the checkout of %s",
			 outer_sha, linear_sha[6]);
	assert_string_equal(got, linear_sha[6]);
}

static void test_gitrepo__checkout_unknown_sha_fails(void **state)
{
	const char *unknown = "0123456789abcdef0123456789abcdef01234567";
	git_repository *repo = NULL;
	char wt[PATH_MAX];
	char *err = NULL;

	(void)state;
	mirror_linear(&repo, "co-unknown.git");
	path_join(wt, tmp_root, "co-unknown-wt");
	assert_int_equal(gitrepo_checkout(repo, wt, unknown, &err), -1);
	assert_string_equal(err,
			    "commit 0123456789abcdef0123456789abcdef01234567"
			    " not found in mirror");
	free(err);
	git_repository_free(repo);
}

static void test_gitrepo__checkout_refuses_non_hex_and_short(void **state)
{
	git_repository *repo = NULL;
	char wt[PATH_MAX], long_sha[GITREPO_SHA_LEN + 2];
	char *err = NULL;
	struct stat st;

	(void)state;
	mirror_linear(&repo, "co-bad.git");
	path_join(wt, tmp_root, "co-bad-wt");
	assert_int_equal(
	    gitrepo_checkout(repo, wt,
			     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", &err),
	    -1);
	assert_string_equal(err, "'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz' "
				 "is not a full commit id");
	assert_int_equal(gitrepo_checkout(repo, wt, "main", &err), -1);
	assert_string_equal(err, "'main' is not a full commit id");
	/* an abbreviated SHA is not enough */
	assert_int_equal(gitrepo_checkout(repo, wt, "0123456", &err), -1);
	assert_string_equal(err, "'0123456' is not a full commit id");
	snprintf(long_sha, sizeof(long_sha), "%s0", linear_sha[1]);
	assert_int_equal(gitrepo_checkout(repo, wt, long_sha, &err), -1);
	assert_memory_equal(err, "'", 1);
	assert_memory_equal(err + 1, long_sha, GITREPO_SHA_LEN + 1);
	assert_string_equal(err + GITREPO_SHA_LEN + 2,
			    "' is not a full commit id");
	free(err);
	/* nothing was created for a refused id */
	assert_int_equal(stat(wt, &st), -1);
	git_repository_free(repo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_gitrepo__mirror_creates_bare_clone_with_refs),
	    cmocka_unit_test(test_gitrepo__mirror_again_fetches_and_prunes),
	    cmocka_unit_test(test_gitrepo__mirror_of_missing_source_fails),
	    cmocka_unit_test(test_gitrepo__mirror_recovers_after_failed_fetch),
	    cmocka_unit_test(
		test_gitrepo__mirror_head_is_source_head_not_master),
	    cmocka_unit_test(test_gitrepo__branch_of_a_commit),
	    cmocka_unit_test(test_gitrepo__resolve_full_sha),
	    cmocka_unit_test(test_gitrepo__resolve_abbreviated_sha),
	    cmocka_unit_test(test_gitrepo__resolve_branch_names),
	    cmocka_unit_test(test_gitrepo__resolve_tags_to_their_commit),
	    cmocka_unit_test(test_gitrepo__resolve_ancestry_expressions),
	    cmocka_unit_test(test_gitrepo__resolve_unknown_names_rev_and_repo),
	    cmocka_unit_test(test_gitrepo__resolve_refuses_dash_and_empty),
	    cmocka_unit_test(test_gitrepo__resolve_tree_is_not_a_commit),
	    cmocka_unit_test(
		test_gitrepo__range_linear_oldest_first_both_ends),
	    cmocka_unit_test(test_gitrepo__range_inner_part_of_history),
	    cmocka_unit_test(test_gitrepo__range_same_commit_is_refused),
	    cmocka_unit_test(
		test_gitrepo__range_reversed_says_not_an_ancestor),
	    cmocka_unit_test(
		test_gitrepo__range_over_limit_refused_at_limit_ok),
	    cmocka_unit_test(test_gitrepo__first_parent_within_a_limit),
	    cmocka_unit_test(test_gitrepo__range_with_missing_commit_fails),
	    cmocka_unit_test(
		test_gitrepo__range_text_is_utf8_whatever_the_commit_holds),
	    cmocka_unit_test(test_gitrepo__range_with_merge_has_every_commit),
	    cmocka_unit_test(test_gitrepo__checkout_new_worktree_writes_files),
	    cmocka_unit_test(test_gitrepo__checkout_mirror_head_new_worktree),
	    cmocka_unit_test(
		test_gitrepo__checkout_next_rewrites_only_changed),
	    cmocka_unit_test(test_gitrepo__checkout_replaces_changed_files),
	    cmocka_unit_test(test_gitrepo__checkout_overwrites_local_edits),
	    cmocka_unit_test(test_gitrepo__checkout_changes_types_and_modes),
	    cmocka_unit_test(
		test_gitrepo__checkout_resets_build_changes_to_unchanged_files),
	    cmocka_unit_test(
		test_gitrepo__checkout_replaces_what_a_build_put_in_the_way),
	    cmocka_unit_test(
		test_gitrepo__checkout_fails_on_output_in_replaced_dir),
	    cmocka_unit_test(test_gitrepo__checkout_beside_another_worktree),
	    cmocka_unit_test(
		test_gitrepo__checkout_applies_attributes_and_autocrlf),
	    cmocka_unit_test(
		test_gitrepo__checkout_recreated_worktree_gets_all_files),
	    cmocka_unit_test(test_gitrepo__checkout_detaches_head_in_worktree),
	    cmocka_unit_test(test_gitrepo__checkout_unknown_sha_fails),
	    cmocka_unit_test(test_gitrepo__checkout_refuses_non_hex_and_short),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
