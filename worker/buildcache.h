/*
 * buildcache: the worker's builds, kept on disk under a size budget and
 * found again by everything that shapes them.
 *
 * A build is named by its key, a hash of its inputs: the repository, the
 * commit, the build command, the testcase's parameters and the environment
 * the build inherits from the worker (buildcache_key()).  A build is reused
 * only for the same key, so a testcase never measures another testcase's
 * binaries, and a worker restarted with another CC or PATH builds afresh.
 * The configuration of a build is the same hash without the commit: two
 * builds of one configuration differ only in the source they built.
 *
 * Each build lives in a build tree of its own, DIR/<id> (with git's index
 * beside it in DIR/<id>.index, and the benchmark's checkout, if any, in
 * DIR/<id>.bench), and is run where it was built.  Trees are
 * never copied or moved: a build may record its own absolute path (an
 * rpath, a CMake cache, a config.status), and a copy would then run, or
 * rebuild, the original's files.  Keeping several trees costs a full build
 * for each new tree; reusing a tree of the same configuration in place
 * keeps builds incremental (only what the checkout changed is rebuilt) but
 * loses the build it held.  The cache takes a new tree while the budget
 * allows one more tree of the configuration's size, so that no commit is
 * built twice in a job; over budget it gives up the least recently used
 * build: a tree of the same configuration is then rebuilt in place
 * (incrementally), a tree of another configuration is deleted.  A budget of
 * 0 thus keeps one tree per configuration (and one per commit of a running
 * task) and always builds incrementally.
 *
 * The cache's state is DIR/index, a text file rewritten (atomically) at
 * every change; trees it does not list are deleted when it is opened.  One
 * worker process uses a DIR at a time.
 *
 * Errors: 0 on success, negative on failure with a malloc'd message in
 * *err that the caller frees.
 */
#ifndef STATBISECT_BUILDCACHE_H
#define STATBISECT_BUILDCACHE_H

#include <stdbool.h>
#include <stddef.h>

/* Hex digits of a key or configuration hash, without the NUL. */
#define BUILDCACHE_HASH_LEN 40

/* What shapes a build. */
struct buildcache_inputs {
	const char *repo;   /* repository name */
	const char *commit; /* full commit id */
	const char *build;  /* the build command */
	/* The testcase's parameters as JSON text (serialised with sorted
	 * keys), or NULL for none. */
	const char *params;
	/* The environment the build inherits, "NAME=value" entries, NULL
	 * terminated, in any order; NULL for none.  STATBISECT_* entries
	 * (the worker's settings and per-task values: the commit is an input
	 * of its own) and the shell's PWD, OLDPWD, SHLVL and _ are left out.
	 */
	const char *const *environ;
	/* The commit of the benchmark's repository the build and its runs
	 * see in $STATBISECT_BENCH_DIR, or NULL when the testcase has none.
	 * Part of the key, not of the configuration: a new bench commit
	 * rebuilds a tree of the configuration in place. */
	const char *bench;
};

/*
 * Fills `key` and `config` (each BUILDCACHE_HASH_LEN + 1 bytes) with the
 * hex hashes of `in`: the key of all inputs, the configuration of all
 * inputs but the commit.  Fields are length-prefixed, so that no two
 * different inputs give the same text to hash, and the environment is
 * sorted first.  Returns -1 (and *err) when a required field is NULL.
 */
int buildcache_key(char *key, char *config, const struct buildcache_inputs *in,
		   char **err);

/* One build tree, as the index lists it. */
struct buildcache_entry {
	unsigned long long id;	 /* the tree is DIR/<id> */
	unsigned long long used; /* last use; larger is more recent */
	unsigned long long size; /* bytes on disk after its last build */
	/* The build it holds; "" while it holds none (being built, or its
	 * last build failed). */
	char key[BUILDCACHE_HASH_LEN + 1];
	char config[BUILDCACHE_HASH_LEN + 1];
	bool busy; /* held by the running task: neither reused nor evicted */
};

enum buildcache_action {
	BUILDCACHE_HIT,	  /* entry `index` holds the build */
	BUILDCACHE_REUSE, /* rebuild entry `index` in place */
	BUILDCACHE_NEW,	  /* build in a new tree */
};

/* What to do for one build: the action, and the entries to delete first. */
struct buildcache_plan {
	enum buildcache_action action;
	size_t index;  /* for HIT and REUSE */
	size_t *evict; /* indices into the entries, oldest first */
	size_t evict_count;
};

/*
 * Decides, without touching the disk, where the build `key` of
 * configuration `config` goes among `entries` under `budget` bytes:
 * HIT when an entry holds it; else REUSE of a tree of the configuration
 * that is not busy and holds no build (its last build failed); else,
 * while the entries' total size plus
 * the size of the largest tree of the configuration (0 when it has none)
 * exceeds the budget, the least recently used entry that is not busy is
 * given up: one of the same configuration is the one to REUSE, one of
 * another is evicted; NEW when the budget is met or nothing is left to
 * give up.  Free the plan with buildcache_plan_clear().
 */
int buildcache_plan(struct buildcache_plan *out,
		    const struct buildcache_entry *entries, size_t count,
		    const char *key, const char *config,
		    unsigned long long budget, char **err);

/*
 * The entries to delete, least recently used first, so that the total
 * size is within `budget`; busy entries are kept whatever it costs.
 */
int buildcache_plan_trim(struct buildcache_plan *out,
			 const struct buildcache_entry *entries, size_t count,
			 unsigned long long budget, char **err);

void buildcache_plan_clear(struct buildcache_plan *plan);

/*
 * Reads "SIZE" as bytes: a non-negative integer with an optional K, M, G
 * or T suffix (powers of 1024, case-insensitive, "B" or "iB" after it
 * allowed).  Returns -1 for anything else or an overflow.
 */
int buildcache_parse_size(unsigned long long *out, const char *text);

struct buildcache;

/*
 * Opens (creating it) the cache in directory `dir` with a budget of
 * `budget` bytes, deleting trees the index does not list.  Free with
 * buildcache_free(), which also releases every busy tree.
 */
int buildcache_open(struct buildcache **out, const char *dir,
		    unsigned long long budget, char **err);

void buildcache_free(struct buildcache *cache);

/*
 * Finds or makes the tree for build `key` of `config` and holds it (busy)
 * until buildcache_free().  On success the tree's path is in `path`
 * (`path_size` bytes), *built is true when the tree already holds the
 * build (nothing to do but run it), and *id names the tree for
 * buildcache_done().  When *built is false the caller checks the commit
 * out into `path` (which may be missing, or hold an older checkout of the
 * same configuration), builds it and calls buildcache_done().
 */
int buildcache_acquire(char *path, size_t path_size, bool *built,
		       unsigned long long *id, struct buildcache *cache,
		       const char *key, const char *config, char **err);

/*
 * Records the outcome of the build of tree `id`: when `ok`, the tree holds
 * build `key` from now on and its size is measured; else it holds none
 * (its files stay, for the next build of its configuration).  Then trees
 * are evicted, least recently used first, while the cache is over budget.
 */
int buildcache_done(struct buildcache *cache, unsigned long long id,
		    const char *key, bool ok, char **err);

/*
 * Forgets the build tree `id` holds (it was acquired built) and deletes
 * its files, so that the commit is checked out and built again from a
 * clean tree: a rebuild a retry asks for (issue 15).  The tree stays held
 * for that build, which ends with buildcache_done().
 */
int buildcache_discard(struct buildcache *cache, unsigned long long id,
		       const char *key, char **err);

/* Bytes the cache's trees take, as last measured. */
unsigned long long buildcache_size(const struct buildcache *cache);

#endif
