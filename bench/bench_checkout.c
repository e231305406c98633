/*
 * bench_checkout: the worker's switch of a build tree from one commit to
 * another (gitrepo_checkout(), what worker/task.c's prepare_tree does for
 * each task: open the mirror, check out, free) against `git checkout` of
 * the same switch in a clone of its own, side by side in one run.
 *
 * The repository (bench/genrepo.py tree) has 20,000 files and 5,000
 * commits; the switch goes between its tags bench-a and bench-b, 100
 * commits apart, and back.  Both trees are checked out at bench-a first;
 * the disk is synced; then ROUNDS rounds each switch both trees to
 * bench-b and back, the
 * two tools taking turns at going first.  Every file of the worker's tree
 * that the switch does not change must keep its modification time and
 * inode (incremental builds depend on it), and at the end both trees must
 * hold the same files.
 *
 * Prints the medians of the switches and `checkout_ratio_libgit2_git`;
 * the issue asks for a ratio of at most 1.0: the exit status is 1 when it
 * is above.
 */
#include <ftw.h>
#include <git2.h>

#include "bench_util.h"
#include "gitrepo.h"

#define ROUNDS 5
#define SWITCHES (2 * ROUNDS)
#define RATIO_MAX 1.0

static char mirror[BENCH_PATH_MAX], clone_dir[BENCH_PATH_MAX];
static char worktree[BENCH_PATH_MAX];

/* ---- the worker's tree: every file's path, inode and mtime ----------- */

struct file_stamp {
	char *path;
	ino_t ino;
	struct timespec mtime;
};

static struct file_stamp *stamps;
static size_t stamp_count, stamp_capacity;
static size_t stamp_prefix;

static int stamp_one(const char *path, const struct stat *st, int type,
		     struct FTW *ftw)
{
	(void)ftw;
	/* The worktree's .git is libgit2's link to the mirror. */
	if (type != FTW_F || strcmp(path + stamp_prefix, ".git") == 0)
		return 0;
	if (stamp_count == stamp_capacity) {
		stamp_capacity = stamp_capacity ? 2 * stamp_capacity : 1024;
		stamps = realloc(stamps, stamp_capacity * sizeof(*stamps));
		if (stamps == NULL)
			bench_die("out of memory");
	}
	stamps[stamp_count].path = strdup(path + stamp_prefix);
	stamps[stamp_count].ino = st->st_ino;
	stamps[stamp_count].mtime = st->st_mtim;
	if (stamps[stamp_count].path == NULL)
		bench_die("out of memory");
	stamp_count++;
	return 0;
}

static int stamp_cmp(const void *a, const void *b)
{
	return strcmp(((const struct file_stamp *)a)->path,
		      ((const struct file_stamp *)b)->path);
}

/* Every file under `dir` but .git, sorted by path; the caller frees. */
static struct file_stamp *stamp_tree(size_t *count, const char *dir)
{
	struct file_stamp *out;

	stamps = NULL;
	stamp_count = stamp_capacity = 0;
	stamp_prefix = strlen(dir) + 1;
	if (nftw(dir, stamp_one, 32, FTW_PHYS) < 0)
		bench_die("cannot walk %s", dir);
	qsort(stamps, stamp_count, sizeof(*stamps), stamp_cmp);
	out = stamps;
	*count = stamp_count;
	stamps = NULL;
	return out;
}

static void stamps_free(struct file_stamp *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].path);
	free(s);
}

/* The paths that differ between the two tags, one a line, from git. */
static char **changed_paths(size_t *count)
{
	char cmd[2 * BENCH_PATH_MAX], line[BENCH_PATH_MAX];
	char **paths = NULL;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "git -C '%s' diff --name-only bench-a bench-b", mirror);
	fflush(NULL);
	p = popen(cmd, "r");
	if (p == NULL)
		bench_die("cannot run git diff");
	while (fgets(line, sizeof(line), p) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		paths = realloc(paths, (n + 1) * sizeof(*paths));
		if (paths == NULL || (paths[n] = strdup(line)) == NULL)
			bench_die("out of memory");
		n++;
	}
	if (pclose(p) != 0)
		bench_die("git diff failed");
	*count = n;
	return paths;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Files of the worker's tree rewritten by the switch (a new inode or
 * mtime, or new): every one must be among the changed paths, and every
 * file kept must keep its stamp.  Returns how many were rewritten.
 */
static size_t check_untouched(const struct file_stamp *before, size_t nb,
			      char **changed, size_t nc)
{
	struct file_stamp *after;
	size_t na, i, rewritten = 0;

	after = stamp_tree(&na, worktree);
	for (i = 0; i < na; i++) {
		const struct file_stamp *old =
		    bsearch(&after[i], before, nb, sizeof(*before), stamp_cmp);
		const char *path = after[i].path;

		if (old != NULL && old->ino == after[i].ino &&
		    old->mtime.tv_sec == after[i].mtime.tv_sec &&
		    old->mtime.tv_nsec == after[i].mtime.tv_nsec)
			continue;
		rewritten++;
		if (bsearch(&path, changed, nc, sizeof(*changed), path_cmp) ==
		    NULL)
			bench_die("%s was rewritten by the switch but did not "
				  "change",
				  path);
	}
	stamps_free(after, na);
	return rewritten;
}

/* ---- the two switches ------------------------------------------------ */

/* One switch of the worker's tree to `sha`, as a task makes it. */
static double switch_libgit2(const char *sha)
{
	git_repository *repo = NULL;
	char *err = NULL;
	double t0 = bench_now_ms(), t;

	if (gitrepo_open(&repo, mirror, &err) < 0 ||
	    gitrepo_checkout(repo, worktree, sha, &err) < 0)
		bench_die("gitrepo_checkout %s: %s", sha, err);
	git_repository_free(repo);
	t = bench_now_ms() - t0;
	return t;
}

static double switch_git(const char *sha)
{
	char *argv[] = {
	    "git",	"-C", clone_dir,   "-c", "advice.detachedHead=false",
	    "checkout", "-q", (char *)sha, NULL};
	double t0 = bench_now_ms();

	if (bench_spawn(argv, 1) != 0)
		bench_die("git checkout %s failed", sha);
	return bench_now_ms() - t0;
}

static void resolve(char *out, const char *tag)
{
	git_repository *repo = NULL;
	char *err = NULL;
	git_oid oid;

	if (gitrepo_open(&repo, mirror, &err) < 0 ||
	    gitrepo_resolve(&oid, repo, tag, "bench", &err) < 0)
		bench_die("%s", err);
	git_oid_tostr(out, GITREPO_SHA_LEN + 1, &oid);
	git_repository_free(repo);
}

static void clone_repos(const char *source)
{
	char *bare[] = {
	    "git",	    "clone", "-q", "--bare", "--no-hardlinks",
	    (char *)source, mirror,  NULL};
	char *work[] = {
	    "git",	    "clone",   "-q", "--no-checkout", "--no-hardlinks",
	    (char *)source, clone_dir, NULL};

	if (bench_spawn(bare, 1) != 0 || bench_spawn(work, 1) != 0)
		bench_die("git clone %s failed", source);
}

int main(void)
{
	char source[BENCH_PATH_MAX], a[GITREPO_SHA_LEN + 1],
	    b[GITREPO_SHA_LEN + 1];
	double lg[SWITCHES], gt[SWITCHES], lg_first, gt_first;
	double lg_median, gt_median, ratio;
	struct file_stamp *before;
	size_t nb, nc, rewritten = 0, i;
	char **changed;
	int round;

	if (gitrepo_global_init() < 0)
		bench_die("cannot initialise libgit2");
	bench_repo(source, sizeof(source), "tree");
	snprintf(mirror, sizeof(mirror), "%s/mirror.git", bench_tmp());
	snprintf(clone_dir, sizeof(clone_dir), "%s/clone", bench_tmp());
	snprintf(worktree, sizeof(worktree), "%s/worktree", bench_tmp());
	clone_repos(source);
	resolve(a, "bench-a");
	resolve(b, "bench-b");
	changed = changed_paths(&nc);
	qsort(changed, nc, sizeof(*changed), path_cmp);

	lg_first = switch_libgit2(a);
	gt_first = switch_git(a);
	/* The 40,000 files just written are flushed before the timed
	 * switches, so that neither side's switches wait on the writeback
	 * of both full checkouts (it made the ratio follow the disk). */
	sync();
	before = stamp_tree(&nb, worktree);
	printf("checkout_files: %zu\n", nb);
	printf("checkout_files_differing: %zu (bench-a..bench-b, 100 "
	       "commits)\n",
	       nc);
	printf("checkout_first_libgit2_ms: %.1f\n", lg_first);
	printf("checkout_first_git_ms: %.1f\n", gt_first);
	for (round = 0; round < ROUNDS; round++) {
		/* To bench-b and back; who goes first alternates. */
		if (round % 2 == 0) {
			lg[2 * round] = switch_libgit2(b);
			gt[2 * round] = switch_git(b);
		} else {
			gt[2 * round] = switch_git(b);
			lg[2 * round] = switch_libgit2(b);
		}
		if (round == 0)
			rewritten = check_untouched(before, nb, changed, nc);
		if (round % 2 == 0) {
			gt[2 * round + 1] = switch_git(a);
			lg[2 * round + 1] = switch_libgit2(a);
		} else {
			lg[2 * round + 1] = switch_libgit2(a);
			gt[2 * round + 1] = switch_git(a);
		}
	}
	{
		char *argv[] = {"diff",	  "-rq",     "--exclude=.git",
				worktree, clone_dir, NULL};

		if (bench_spawn(argv, 0) != 0)
			bench_die("the two trees differ after the switches");
	}
	for (i = 0; i < SWITCHES; i++)
		printf("checkout_switch_%zu: libgit2 %.1f ms, git %.1f ms\n",
		       i + 1, lg[i], gt[i]);
	lg_median = bench_median(lg, SWITCHES);
	gt_median = bench_median(gt, SWITCHES);
	ratio = lg_median / gt_median;
	printf("checkout_files_rewritten_by_switch: %zu (mtime and inode of "
	       "the other %zu kept)\n",
	       rewritten, nb - rewritten);
	printf("checkout_switch_libgit2_ms: %.1f\n", lg_median);
	printf("checkout_switch_git_ms: %.1f\n", gt_median);
	printf("checkout_ratio_libgit2_git: %.2f\n", ratio);
	stamps_free(before, nb);
	for (i = 0; i < nc; i++)
		free(changed[i]);
	free(changed);
	bench_tmp_cleanup();
	git_libgit2_shutdown();
	return ratio <= RATIO_MAX ? 0 : 1;
}
