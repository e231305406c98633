/*
 * gitrepo_checkout(): the switch of a persistent worktree from one commit
 * to another.  libgit2's checkout of a whole tree reads every directory
 * of the worktree and compares every file with the target, which made
 * the worker's switch slower than `git checkout` (docs/PERFORMANCE.md).
 * Here the paths that can need work are found first, as git finds them:
 * the index against the target tree (no worktree access), and each index
 * entry's stat data against fstatat() of its file (no readdir, in a
 * second thread meanwhile).  libgit2 then checks out exactly those paths.
 */
#include "gitrepo.h"

#include <git2/sys/repository.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cause.h"

#define CHECKOUT_PATH_MAX 4200
/* Below this many index entries one thread stats them all. */
#define STAT_THREAD_MIN 1000
/* Entries a thread of the stat pass takes at a time. */
#define STAT_CHUNK 512

/* Worktree paths (relative, each malloc'd) for the checkout. */
struct path_list {
	char **paths;
	size_t count, capacity;
};

static int path_list_add(struct path_list *list, const char *path)
{
	char *copy;

	if (list->count == list->capacity) {
		size_t capacity = list->capacity ? 2 * list->capacity : 64;
		char **grown =
		    realloc(list->paths, capacity * sizeof(*list->paths));

		if (grown == NULL)
			return -1;
		list->paths = grown;
		list->capacity = capacity;
	}
	copy = strdup(path);
	if (copy == NULL)
		return -1;
	list->paths[list->count++] = copy;
	return 0;
}

static int path_list_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the list and drops repeated paths. */
static void path_list_sort_unique(struct path_list *list)
{
	size_t i, kept = 0;

	if (list->count == 0)
		return;
	qsort(list->paths, list->count, sizeof(*list->paths), path_list_cmp);
	for (i = 1; i < list->count; i++) {
		if (strcmp(list->paths[i], list->paths[kept]) == 0)
			free(list->paths[i]);
		else
			list->paths[++kept] = list->paths[i];
	}
	list->count = kept + 1;
}

static void path_list_free(struct path_list *list)
{
	size_t i;

	for (i = 0; i < list->count; i++)
		free(list->paths[i]);
	free(list->paths);
}

/*
 * The stat pass: each entry of the index compared with lstat() of its
 * file.  dirty[i] is set for a file that may differ from its entry:
 * missing, of another type or executable bit, with other stat data, or
 * racily clean (modified no earlier than the index was written, so that
 * the same stat data may hide new content).  libgit2 compares the content
 * of those with the target; the others are as the index says.  Two
 * threads take chunks of entries in turn, the caller's once it has
 * compared the index with the target tree meanwhile.
 */
struct stat_pass {
	const git_index_entry **entries;
	bool *dirty;
	size_t count;
	atomic_size_t next_chunk;
	int root_fd;
	struct timespec index_mtime;
	bool nsec;
	bool threaded;
	pthread_t thread;
};

static bool type_matches(uint32_t mode, mode_t st_mode)
{
	switch (mode) {
	case GIT_FILEMODE_BLOB:
		return S_ISREG(st_mode) && (st_mode & S_IXUSR) == 0;
	case GIT_FILEMODE_BLOB_EXECUTABLE:
		return S_ISREG(st_mode) && (st_mode & S_IXUSR) != 0;
	case GIT_FILEMODE_LINK:
		return S_ISLNK(st_mode);
	default:
		/* A submodule (or anything else): libgit2 decides. */
		return false;
	}
}

static bool time_matches(const git_index_time *t, const struct timespec *ts,
			 bool nsec)
{
	return t->seconds == (int32_t)ts->tv_sec &&
	       (!nsec || t->nanoseconds == (uint32_t)ts->tv_nsec);
}

static bool racily_clean(const git_index_time *t, const struct stat_pass *p)
{
	if (t->seconds != (int32_t)p->index_mtime.tv_sec)
		return t->seconds > (int32_t)p->index_mtime.tv_sec;
	return !p->nsec || t->nanoseconds >= (uint32_t)p->index_mtime.tv_nsec;
}

static bool entry_clean(const git_index_entry *e, const struct stat *st,
			const struct stat_pass *p)
{
	return GIT_INDEX_ENTRY_STAGE(e) == 0 &&
	       type_matches(e->mode, st->st_mode) &&
	       e->file_size == (uint32_t)st->st_size &&
	       e->ino == (uint32_t)st->st_ino && e->uid == st->st_uid &&
	       e->gid == st->st_gid &&
	       time_matches(&e->mtime, &st->st_mtim, p->nsec) &&
	       time_matches(&e->ctime, &st->st_ctim, p->nsec) &&
	       !racily_clean(&e->mtime, p);
}

/*
 * Opens the directory of `path` (its first `dir_len` bytes) under the
 * worktree's descriptor, for fstatat() of the files in it: one path walk
 * a directory instead of one a file.  -1 when it cannot be opened (the
 * files in it then count as dirty).
 */
static int open_dir(int root_fd, const char *path, size_t dir_len)
{
	char dir[CHECKOUT_PATH_MAX];

	if (dir_len == 0)
		return dup(root_fd);
	if (dir_len >= sizeof(dir))
		return -1;
	memcpy(dir, path, dir_len);
	dir[dir_len] = '\0';
	return openat(root_fd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void stat_range(const struct stat_pass *p, size_t begin, size_t end)
{
	const char *dir = NULL;
	size_t dir_len = 0, i;
	int dir_fd = -1;
	struct stat st;

	for (i = begin; i < end; i++) {
		const git_index_entry *e = p->entries[i];
		const char *slash = strrchr(e->path, '/');
		size_t len = slash != NULL ? (size_t)(slash - e->path) : 0;

		if (dir == NULL || len != dir_len ||
		    strncmp(e->path, dir, len) != 0) {
			if (dir_fd >= 0)
				close(dir_fd);
			dir_fd = p->root_fd >= 0
				     ? open_dir(p->root_fd, e->path, len)
				     : -1;
			dir = e->path;
			dir_len = len;
		}
		p->dirty[i] =
		    dir_fd < 0 ||
		    fstatat(dir_fd, slash != NULL ? slash + 1 : e->path, &st,
			    AT_SYMLINK_NOFOLLOW) < 0 ||
		    !entry_clean(e, &st, p);
	}
	if (dir_fd >= 0)
		close(dir_fd);
}

static void *stat_chunks(void *arg)
{
	struct stat_pass *p = arg;
	size_t begin;

	while ((begin = atomic_fetch_add(&p->next_chunk, STAT_CHUNK)) <
	       p->count)
		stat_range(p, begin,
			   p->count - begin > STAT_CHUNK ? begin + STAT_CHUNK
							 : p->count);
	return NULL;
}

static bool is_attributes_file(const char *path)
{
	const char *slash = strrchr(path, '/');

	return strcmp(slash != NULL ? slash + 1 : path, ".gitattributes") == 0;
}

/*
 * Starts the stat pass over the index's entries, in a second thread when
 * there are enough of them (git stats its index in parallel too).  Sets
 * *attributes when a tracked file is a .gitattributes.
 */
static int stat_pass_start(struct stat_pass *p, bool *attributes,
			   git_index *index, const char *workdir,
			   const char *index_path)
{
	struct stat index_st;
	size_t i;

	memset(p, 0, sizeof(*p));
	atomic_init(&p->next_chunk, 0);
	p->count = git_index_entrycount(index);
	p->nsec = (git_libgit2_features() & GIT_FEATURE_NSEC) != 0;
	p->root_fd = open(workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* With no index file, every entry counts as racily clean. */
	if (stat(index_path, &index_st) == 0)
		p->index_mtime = index_st.st_mtim;
	p->entries = malloc((p->count + 1) * sizeof(*p->entries));
	p->dirty = calloc(p->count + 1, sizeof(*p->dirty));
	if (p->entries == NULL || p->dirty == NULL)
		return -1;
	/* Read here, before the thread: the index sorts itself on first
	 * access. */
	for (i = 0; i < p->count; i++) {
		p->entries[i] = git_index_get_byindex(index, i);
		if (is_attributes_file(p->entries[i]->path))
			*attributes = true;
	}
	p->threaded = p->count >= STAT_THREAD_MIN &&
		      pthread_create(&p->thread, NULL, stat_chunks, p) == 0;
	return 0;
}

/* Stats what is left, waits for the other thread and adds the paths of
 * the dirty entries to `out` (when not NULL); frees the pass. */
static int stat_pass_finish(struct stat_pass *p, struct path_list *out)
{
	int error = 0;
	size_t i;

	if (p->entries != NULL && p->dirty != NULL)
		stat_chunks(p);
	if (p->threaded)
		pthread_join(p->thread, NULL);
	for (i = 0; out != NULL && i < p->count && error == 0; i++) {
		if (p->dirty[i])
			error = path_list_add(out, p->entries[i]->path);
	}
	if (p->root_fd >= 0)
		close(p->root_fd);
	free(p->entries);
	free(p->dirty);
	return error;
}

/* The type of `path` under `workdir` (lstat), or 0 when it is missing. */
static mode_t lstat_type(const char *workdir, const char *path, size_t len)
{
	char full[CHECKOUT_PATH_MAX];
	struct stat st;

	if (snprintf(full, sizeof(full), "%s/%.*s", workdir, (int)len, path) >=
		(int)sizeof(full) ||
	    lstat(full, &st) < 0)
		return 0;
	return st.st_mode & S_IFMT;
}

/*
 * libgit2 (1.5) does not write a file that replaces a tracked directory
 * when the directory is missing from the worktree (a build deleted it):
 * an empty directory there makes it take its usual way, remove the
 * directory and write the file.  `d` goes from the target tree to the
 * index: a file of the target that the index lacks.
 */
static void recreate_replaced_dir(const char *workdir, git_index *index,
				  const git_diff_delta *d)
{
	const char *path = d->old_file.path;
	size_t len = strlen(path), pos;
	char full[CHECKOUT_PATH_MAX];

	if (d->status != GIT_DELTA_DELETED ||
	    snprintf(full, sizeof(full), "%s/", path) >= (int)sizeof(full) ||
	    git_index_find_prefix(&pos, index, full) < 0 ||
	    lstat_type(workdir, path, len) != 0 ||
	    snprintf(full, sizeof(full), "%s/%s", workdir, path) >=
		(int)sizeof(full))
		return;
	mkdir(full, 0755);
}

/* Adds the paths where the index differs from the target tree. */
static int add_changed_entries(struct path_list *out, git_repository *repo,
			       git_tree *tree, git_index *index,
			       const char *workdir)
{
	git_diff_options opts;
	git_diff *diff = NULL;
	size_t count, i;
	int error = -1;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (git_diff_tree_to_index(&diff, repo, tree, index, &opts) < 0)
		return -1;
	count = git_diff_num_deltas(diff);
	for (i = 0; i < count; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if ((d->old_file.path != NULL &&
		     path_list_add(out, d->old_file.path) < 0) ||
		    (d->new_file.path != NULL &&
		     path_list_add(out, d->new_file.path) < 0))
			goto out;
		recreate_replaced_dir(workdir, index, d);
	}
	error = 0;
out:
	git_diff_free(diff);
	return error;
}

/* The directories add_obstacles() has looked at. */
struct dir_scan {
	const char *workdir;
	struct path_list *list;
	/* A .gitattributes file in one of them (the root included). */
	bool attributes;
	/* The last ones, up to `verified_len`: real directories. */
	char verified[CHECKOUT_PATH_MAX];
	size_t verified_len;
};

/* How much of `dir` (dir_len bytes) is known to be real directories. */
static size_t verified_prefix(const struct dir_scan *scan, const char *dir,
			      size_t dir_len)
{
	size_t k, common = 0;

	for (k = 0; k < dir_len && k < scan->verified_len &&
		    dir[k] == scan->verified[k];
	     k++) {
		if (dir[k] == '/')
			common = k;
	}
	if ((k == dir_len || dir[k] == '/') &&
	    (k == scan->verified_len || scan->verified[k] == '/'))
		common = k;
	return common;
}

static bool has_attributes_file(const char *workdir, const char *dir,
				size_t len)
{
	char path[CHECKOUT_PATH_MAX];

	return snprintf(path, sizeof(path), "%.*s%s.gitattributes", (int)len,
			dir, len != 0 ? "/" : "") >= (int)sizeof(path) ||
	       lstat_type(workdir, path, strlen(path)) != 0;
}

/*
 * Checks each directory on the way to `dir` (dir_len bytes) that was not
 * checked just before: a file or symlink where the path needs a
 * directory is added to the list, and a .gitattributes file noted.
 */
static int scan_dirs(struct dir_scan *scan, const char *dir, size_t dir_len)
{
	size_t k = verified_prefix(scan, dir, dir_len);

	scan->verified_len = k;
	while (k < dir_len) {
		mode_t type;

		for (k++; k < dir_len && dir[k] != '/'; k++)
			;
		if (k >= sizeof(scan->verified))
			break;
		type = lstat_type(scan->workdir, dir, k);
		if (type != S_IFDIR) {
			char obstacle[CHECKOUT_PATH_MAX];

			if (type != 0 &&
			    snprintf(obstacle, sizeof(obstacle), "%.*s",
				     (int)k, dir) < (int)sizeof(obstacle) &&
			    path_list_add(scan->list, obstacle) < 0)
				return -1;
			break;
		}
		memcpy(scan->verified, dir, k);
		scan->verified_len = k;
		if (!scan->attributes &&
		    has_attributes_file(scan->workdir, dir, k))
			scan->attributes = true;
	}
	return 0;
}

/*
 * Adds what stands in the way of the listed paths, so that libgit2 sees
 * it as a full scan of the worktree would: a file or symlink where a
 * listed path needs a directory, and the whole content ("dir/") of a
 * directory where a listed path is a file or nothing.  Sets *attributes
 * when a directory on the way holds a .gitattributes file.
 */
static int add_obstacles(struct path_list *list, const char *workdir,
			 bool *attributes)
{
	size_t count = list->count, i;
	struct dir_scan scan;
	char dir_path[CHECKOUT_PATH_MAX];

	scan.workdir = workdir;
	scan.list = list;
	scan.attributes = has_attributes_file(workdir, "", 0);
	scan.verified_len = 0;
	for (i = 0; i < count; i++) {
		const char *path = list->paths[i];
		const char *slash = strrchr(path, '/');

		if (scan_dirs(&scan, path,
			      slash != NULL ? (size_t)(slash - path) : 0) < 0)
			return -1;
		if (lstat_type(workdir, path, strlen(path)) == S_IFDIR &&
		    (snprintf(dir_path, sizeof(dir_path), "%s/", path) >=
			 (int)sizeof(dir_path) ||
		     path_list_add(list, dir_path) < 0))
			return -1;
	}
	*attributes = scan.attributes;
	return 0;
}

/* Whether a directory of libgit2's search path for `level` holds `name`;
 * true when it cannot tell. */
static bool in_search_path(int level, const char *name)
{
	git_buf dirs = {0};
	const char *dir, *end;
	bool found = false;
	struct stat st;

	if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, level, &dirs) < 0)
		return true;
	for (dir = dirs.ptr; !found && dir != NULL && *dir != '\0';
	     dir = *end != '\0' ? end + 1 : end) {
		char path[CHECKOUT_PATH_MAX];

		end = strchr(dir, GIT_PATH_LIST_SEPARATOR);
		if (end == NULL)
			end = dir + strlen(dir);
		found =
		    snprintf(path, sizeof(path), "%.*s/%s", (int)(end - dir),
			     dir, name) >= (int)sizeof(path) ||
		    stat(path, &st) == 0;
	}
	git_buf_dispose(&dirs);
	return found;
}

/* Whether the configuration variable `name` is set to anything but one of
 * the `harmless` values (a NULL-terminated list); true on error. */
static bool config_set(git_config *cfg, const char *name,
		       const char *const *harmless)
{
	git_config_entry *entry = NULL;
	bool set = true;
	int rc = git_config_get_entry(&entry, cfg, name);

	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return false;
	}
	if (rc == 0) {
		for (; *harmless != NULL && set; harmless++)
			set = strcasecmp(entry->value, *harmless) != 0;
	}
	git_config_entry_free(entry);
	return set;
}

/*
 * Whether the configuration may make libgit2 filter a file it writes
 * (CRLF conversion, ident, a filter driver): through an attributes file
 * outside the worktree (the mirror's info/attributes, core.attributesFile
 * or its default, the system's gitattributes) or core.autocrlf and
 * core.eol.  Only libgit2's own filters are considered: the worker
 * registers none.
 */
static bool filters_configured(git_repository *repo)
{
	static const char *const autocrlf_off[] = {"false", "no", "off", "0",
						   NULL};
	static const char *const eol_lf[] = {"lf", "native", NULL};
	static const char *const any[] = {NULL};
	char path[CHECKOUT_PATH_MAX];
	git_config *cfg = NULL;
	struct stat st;
	bool configured;

	if (snprintf(path, sizeof(path), "%sinfo/attributes",
		     git_repository_commondir(repo)) >= (int)sizeof(path) ||
	    stat(path, &st) == 0 ||
	    in_search_path(GIT_CONFIG_LEVEL_SYSTEM, "gitattributes") ||
	    in_search_path(GIT_CONFIG_LEVEL_XDG, "attributes") ||
	    git_repository_config_snapshot(&cfg, repo) < 0)
		return true;
	configured = config_set(cfg, "core.attributesfile", any) ||
		     config_set(cfg, "core.autocrlf", autocrlf_off) ||
		     config_set(cfg, "core.eol", eol_lf);
	git_config_free(cfg);
	return configured;
}

/*
 * Removes a file of the worktree that the checkout is about to rewrite,
 * so that it writes a new file, as git does, instead of truncating the old
 * one: ext4 (auto_da_alloc) flushes a file truncated and written again to
 * disk when it is closed, and waiting for that made a switch of a few
 * hundred files twice as slow as `git checkout` (docs/PERFORMANCE.md).
 * The file's content is replaced either way: nothing is lost that FORCE
 * would keep, and a checkout that fails after this writes the file again
 * next time (it is missing, not stale).
 */
static int unlink_before_update(git_checkout_notify_t why, const char *path,
				const git_diff_file *baseline,
				const git_diff_file *target,
				const git_diff_file *workdir, void *payload)
{
	const char *root = payload;
	char full[CHECKOUT_PATH_MAX];

	(void)baseline;
	/* A regular file (executable or not) or a symlink that a regular
	 * file replaces: libgit2 would open a symlink and write through it,
	 * to its target.  A directory is libgit2's to replace. */
	if (why == GIT_CHECKOUT_NOTIFY_UPDATED && workdir != NULL &&
	    target != NULL && S_ISREG(target->mode) &&
	    (S_ISREG(workdir->mode) || S_ISLNK(workdir->mode)) &&
	    snprintf(full, sizeof(full), "%s/%s", root, path) <
		(int)sizeof(full))
		unlink(full);
	return 0;
}

/*
 * Checks out `paths` of `commit` into the worktree: FORCE overwrites
 * local edits and removes tracked files the target lacks; untracked files
 * are left alone.  The index is the baseline, what the worktree holds.
 */
static int checkout_paths(git_repository *repo, git_commit *commit,
			  git_index *index, const char *workdir,
			  struct path_list *paths, bool filters)
{
	git_checkout_options opts;

	git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
	/* The index is written once, by the caller, after HEAD has moved;
	 * checkout's own write would write it twice.  The paths are exact
	 * paths, not patterns. */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE |
				 GIT_CHECKOUT_DONT_WRITE_INDEX |
				 GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
	opts.paths.strings = paths->paths;
	opts.paths.count = paths->count;
	opts.baseline_index = index;
	/* Looking the filters up costs a realpath() and attribute lookups
	 * for each file written; skipped when none can apply. */
	opts.disable_filters = !filters;
	opts.notify_flags = GIT_CHECKOUT_NOTIFY_UPDATED;
	opts.notify_cb = unlink_before_update;
	opts.notify_payload = (void *)workdir;
	return git_checkout_tree(repo, (git_object *)commit, &opts);
}

/*
 * Fills `paths` with what the checkout of `tree` must look at: the paths
 * where the index and the tree differ, the tracked files that may differ
 * from the index, and what stands in their way.  Sets *filters unless no
 * gitattributes nor configuration can make libgit2 filter a file.
 */
static int collect_paths(struct path_list *paths, bool *filters,
			 git_repository *repo, git_tree *tree,
			 git_index *index, const char *workdir,
			 const char *index_path)
{
	bool attributes = false, in_worktree = false;
	struct stat_pass pass;
	int error;
	size_t i;

	error =
	    stat_pass_start(&pass, &attributes, index, workdir, index_path);
	if (error == 0)
		error = add_changed_entries(paths, repo, tree, index, workdir);
	if (stat_pass_finish(&pass, error == 0 ? paths : NULL) < 0 ||
	    error < 0)
		return -1;
	path_list_sort_unique(paths);
	if (add_obstacles(paths, workdir, &in_worktree) < 0)
		return -1;
	path_list_sort_unique(paths);
	for (i = 0; i < paths->count && !attributes; i++)
		attributes = is_attributes_file(paths->paths[i]);
	*filters = attributes || in_worktree || filters_configured(repo);
	return 0;
}

/* Opens the worktree's own index, `workdir`.index, for `repo`. */
static int open_worktree_index(git_index **out, git_repository *repo,
			       char *index_path, size_t size,
			       const char *workdir)
{
	if (snprintf(index_path, size, "%s.index", workdir) >= (int)size ||
	    git_index_open(out, index_path) < 0 ||
	    git_repository_set_index(repo, *out) < 0)
		return -1;
	return 0;
}

int gitrepo_checkout(git_repository *repo, const char *workdir,
		     const char *sha, char **err)
{
	struct path_list paths = {0};
	bool filters = true;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_index *index = NULL;
	char index_path[CHECKOUT_PATH_MAX];
	git_oid oid;
	int error = -1;

	if (git_oid_fromstr(&oid, sha) < 0 || strlen(sha) != GITREPO_SHA_LEN) {
		cause_set(err, "'%s' is not a full commit id", sha);
		return -1;
	}
	if (mkdir(workdir, 0755) < 0 && errno != EEXIST) {
		cause_set(err, "cannot create worktree %s: %s", workdir,
			  strerror(errno));
		return -1;
	}
	/* update_gitlink writes workdir/.git pointing at the mirror, so that
	 * git commands of a build script run in the worktree see the commit
	 * checked out, not some repository around it. */
	if (git_repository_set_workdir(repo, workdir, 1) < 0) {
		gitrepo_set_error(err, "cannot attach worktree");
		goto out;
	}
	/* Each worktree keeps its own index beside it, so several worktrees
	 * of one mirror each rewrite only what changed in them. */
	if (open_worktree_index(&index, repo, index_path, sizeof(index_path),
				workdir) < 0) {
		gitrepo_set_error(err, "cannot open the worktree's index");
		goto out;
	}
	if (git_commit_lookup(&commit, repo, &oid) < 0 ||
	    git_commit_tree(&tree, commit) < 0) {
		cause_set(err, "commit %s not found in mirror", sha);
		goto out;
	}
	if (collect_paths(&paths, &filters, repo, tree, index, workdir,
			  index_path) < 0) {
		gitrepo_set_error(err, "cannot compare the worktree with "
				       "the commit");
		goto out;
	}
	/* No paths would mean all paths to libgit2. */
	if (paths.count > 0 && checkout_paths(repo, commit, index, workdir,
					      &paths, filters) < 0) {
		gitrepo_set_error(err, "checkout failed");
		goto out;
	}
	if (git_repository_set_head_detached(repo, &oid) < 0) {
		gitrepo_set_error(err, "cannot move HEAD");
		goto out;
	}
	if (git_index_write(index) < 0) {
		gitrepo_set_error(err, "cannot write the worktree's index");
		goto out;
	}
	error = 0;
out:
	path_list_free(&paths);
	git_index_free(index);
	git_tree_free(tree);
	git_commit_free(commit);
	return error;
}
