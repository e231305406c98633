/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../worker/buildcache.h"

#define SHA_A "1111111111111111111111111111111111111111"
#define SHA_B "2222222222222222222222222222222222222222"

static const char *const base_env[] = {"PATH=/usr/bin:/bin", "CC=cc",
				       "HOME=/home/bench", NULL};

static struct buildcache_inputs base_inputs(void)
{
	return (struct buildcache_inputs){.repo = "proj",
					  .commit = SHA_A,
					  .build = "make -j8",
					  .params = "{\"threads\":8}",
					  .environ = base_env};
}

static void key_of(const struct buildcache_inputs *in, char *key, char *config)
{
	char *err = NULL;

	assert_int_equal(buildcache_key(key, config, in, &err), 0);
	assert_null(err);
	assert_int_equal(strlen(key), BUILDCACHE_HASH_LEN);
	assert_int_equal(strlen(config), BUILDCACHE_HASH_LEN);
}

static void test_buildcache__key_is_stable(void **state)
{
	struct buildcache_inputs in = base_inputs();
	char k1[41], c1[41], k2[41], c2[41];

	(void)state;
	key_of(&in, k1, c1);
	key_of(&in, k2, c2);
	assert_string_equal(k1, k2);
	assert_string_equal(c1, c2);
	assert_string_not_equal(k1, c1);
}

/* Every input shapes the key; all but the commit shape the config. */
static void test_buildcache__every_input_counts(void **state)
{
	static const char *const other_cc[] = {
	    "PATH=/usr/bin:/bin", "CC=clang", "HOME=/home/bench", NULL};
	static const char *const more_env[] = {"PATH=/usr/bin:/bin", "CC=cc",
					       "HOME=/home/bench",
					       "CFLAGS=-O3", NULL};
	struct buildcache_inputs base = base_inputs(), in;
	char k0[41], c0[41], k[41], c[41];

	(void)state;
	key_of(&base, k0, c0);

	in = base;
	in.commit = SHA_B;
	key_of(&in, k, c);
	assert_string_not_equal(k, k0);
	assert_string_equal(c, c0);

	in = base;
	in.build = "false";
	key_of(&in, k, c);
	assert_string_not_equal(k, k0);
	assert_string_not_equal(c, c0);

	in = base;
	in.params = "{\"threads\":4}";
	key_of(&in, k, c);
	assert_string_not_equal(k, k0);
	assert_string_not_equal(c, c0);

	in = base;
	in.params = NULL;
	key_of(&in, k, c);
	assert_string_not_equal(c, c0);

	in = base;
	in.repo = "other";
	key_of(&in, k, c);
	assert_string_not_equal(c, c0);

	in = base;
	in.environ = other_cc;
	key_of(&in, k, c);
	assert_string_not_equal(c, c0);

	in = base;
	in.environ = more_env;
	key_of(&in, k, c);
	assert_string_not_equal(c, c0);
}

/* The bench commit shapes the key, not the configuration (a tree of it
 * is rebuilt in place), and no bench leaves the key as it was. */
static void test_buildcache__bench_commit_counts(void **state)
{
	struct buildcache_inputs base = base_inputs(), in;
	char k0[41], c0[41], k1[41], c1[41], k2[41], c2[41];

	(void)state;
	key_of(&base, k0, c0);
	in = base;
	in.bench = SHA_A;
	key_of(&in, k1, c1);
	in.bench = SHA_B;
	key_of(&in, k2, c2);
	assert_string_not_equal(k1, k0);
	assert_string_not_equal(k2, k1);
	assert_string_equal(c1, c0);
	assert_string_equal(c2, c0);
	/* The key of no bench is the one made before benches existed. */
	assert_string_equal(k0, "aecedf677cf04677088909b17cfc0b1be94922ee");
}

/* The order of the environment and the worker's own variables do not. */
static void test_buildcache__environment_noise_ignored(void **state)
{
	static const char *const shuffled[] = {"HOME=/home/bench",
					       "STATBISECT_JOB=17",
					       "CC=cc",
					       "STATBISECT_COMMIT=" SHA_B,
					       "STATBISECT_TOKEN=t0k3n",
					       "PWD=/somewhere/else",
					       "OLDPWD=/tmp",
					       "SHLVL=3",
					       "_=/usr/bin/env",
					       "INVOCATION_ID=5f2c0a8e",
					       "SSH_CONNECTION=10.0.0.1 22",
					       "PATH=/usr/bin:/bin",
					       NULL};
	struct buildcache_inputs base = base_inputs(), in = base;
	char k0[41], c0[41], k[41], c[41];

	(void)state;
	key_of(&base, k0, c0);
	in.environ = shuffled;
	key_of(&in, k, c);
	assert_string_equal(k, k0);
	assert_string_equal(c, c0);
}

/* Moving text from one field to the next is another key. */
static void test_buildcache__fields_do_not_run_together(void **state)
{
	struct buildcache_inputs a = base_inputs(), b = base_inputs();
	char ka[41], ca[41], kb[41], cb[41];

	(void)state;
	a.build = "make x";
	a.params = "";
	b.build = "make ";
	b.params = "x";
	key_of(&a, ka, ca);
	key_of(&b, kb, cb);
	assert_string_not_equal(ca, cb);
	a.build = "make\nparams 1:x";
	a.params = NULL;
	b.build = "make";
	b.params = "x";
	key_of(&a, ka, ca);
	key_of(&b, kb, cb);
	assert_string_not_equal(ca, cb);
}

static void test_buildcache__key_needs_inputs(void **state)
{
	struct buildcache_inputs in = base_inputs();
	char k[41], c[41], *err = NULL;

	(void)state;
	in.build = NULL;
	assert_int_equal(buildcache_key(k, c, &in, &err), -1);
	assert_non_null(err);
	free(err);
	err = NULL;
	in = base_inputs();
	in.commit = NULL;
	assert_int_equal(buildcache_key(k, c, &in, &err), -1);
	free(err);
}

/* An entry: key "" when kbyte is 0... see the helpers below. */
static struct buildcache_entry entry(unsigned long long id,
				     unsigned long long used,
				     unsigned long long size, char key,
				     char config)
{
	struct buildcache_entry e = {.id = id, .used = used, .size = size};

	if (key != 0)
		memset(e.key, key, BUILDCACHE_HASH_LEN);
	memset(e.config, config, BUILDCACHE_HASH_LEN);
	return e;
}

static void hash_of(char *out, char c)
{
	memset(out, c, BUILDCACHE_HASH_LEN);
	out[BUILDCACHE_HASH_LEN] = '\0';
}

static void plan(struct buildcache_plan *p,
		 const struct buildcache_entry *entries, size_t count,
		 char key, char config, unsigned long long budget)
{
	char k[41], c[41], *err = NULL;

	hash_of(k, key);
	hash_of(c, config);
	assert_int_equal(
	    buildcache_plan(p, entries, count, k, c, budget, &err), 0);
	assert_null(err);
}

static void test_buildcache__plan_hit(void **state)
{
	struct buildcache_entry e[] = {entry(1, 5, 100, 'a', 'x'),
				       entry(2, 6, 100, 'b', 'x')};
	struct buildcache_plan p;

	(void)state;
	plan(&p, e, 2, 'b', 'x', 0);
	assert_int_equal(p.action, BUILDCACHE_HIT);
	assert_int_equal(p.index, 1);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
}

static void test_buildcache__plan_new_while_budget_allows(void **state)
{
	struct buildcache_entry e[] = {entry(1, 5, 100, 'a', 'x'),
				       entry(2, 6, 300, 'b', 'x'),
				       entry(3, 7, 50, 'c', 'y')};
	struct buildcache_plan p;

	(void)state;
	plan(&p, NULL, 0, 'd', 'x', 0);
	assert_int_equal(p.action, BUILDCACHE_NEW);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
	/* 450 used + 300 (the largest tree of config x) fits in 750. */
	plan(&p, e, 3, 'd', 'x', 750);
	assert_int_equal(p.action, BUILDCACHE_NEW);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
	/* ... but not in 749: the oldest tree of x is rebuilt in place. */
	plan(&p, e, 3, 'd', 'x', 749);
	assert_int_equal(p.action, BUILDCACHE_REUSE);
	assert_int_equal(p.index, 0);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
	/* A first tree of config z is 0 bytes to the estimate. */
	plan(&p, e, 3, 'd', 'z', 450);
	assert_int_equal(p.action, BUILDCACHE_NEW);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
}

static void test_buildcache__plan_evicts_least_recently_used(void **state)
{
	struct buildcache_entry e[] = {
	    entry(1, 9, 100, 'a', 'x'), entry(2, 3, 100, 'b', 'y'),
	    entry(3, 1, 100, 'c', 'y'), entry(4, 5, 100, 'd', 'x')};
	struct buildcache_plan p;

	(void)state;
	/* 400 + 100 > 300: y's two trees go (oldest first), leaving 200 +
	 * 100 within 300. */
	plan(&p, e, 4, 'e', 'x', 300);
	assert_int_equal(p.action, BUILDCACHE_NEW);
	assert_int_equal(p.evict_count, 2);
	assert_int_equal(p.evict[0], 2);
	assert_int_equal(p.evict[1], 1);
	buildcache_plan_clear(&p);
	/* Within 250 not even then: the next oldest is x's own (id 4). */
	plan(&p, e, 4, 'e', 'x', 250);
	assert_int_equal(p.action, BUILDCACHE_REUSE);
	assert_int_equal(p.index, 3);
	assert_int_equal(p.evict_count, 2);
	buildcache_plan_clear(&p);
	/* Budget 0 of config y: its oldest tree is rebuilt in place. */
	plan(&p, e, 4, 'e', 'y', 0);
	assert_int_equal(p.action, BUILDCACHE_REUSE);
	assert_int_equal(p.index, 2);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
}

static void test_buildcache__plan_keeps_busy_trees(void **state)
{
	struct buildcache_entry e[] = {entry(1, 1, 100, 'a', 'x'),
				       entry(2, 2, 100, 'b', 'y'),
				       entry(3, 3, 100, 'c', 'x')};
	struct buildcache_plan p;

	(void)state;
	e[0].busy = true;
	plan(&p, e, 3, 'd', 'x', 0);
	assert_int_equal(p.action, BUILDCACHE_REUSE);
	assert_int_equal(p.index, 2);
	assert_int_equal(p.evict_count, 1);
	assert_int_equal(p.evict[0], 1);
	buildcache_plan_clear(&p);
	e[1].busy = e[2].busy = true;
	plan(&p, e, 3, 'd', 'x', 0);
	assert_int_equal(p.action, BUILDCACHE_NEW);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
	/* A busy tree holding the build is still a hit. */
	plan(&p, e, 3, 'c', 'x', 0);
	assert_int_equal(p.action, BUILDCACHE_HIT);
	assert_int_equal(p.index, 2);
	buildcache_plan_clear(&p);
}

static void test_buildcache__plan_reuses_a_tree_without_build(void **state)
{
	struct buildcache_entry e[] = {entry(1, 1, 100, 'a', 'x'),
				       entry(2, 2, 100, 0, 'x'),
				       entry(3, 3, 100, 0, 'y')};
	struct buildcache_plan p;

	(void)state;
	plan(&p, e, 3, 'd', 'x', 1000000);
	assert_int_equal(p.action, BUILDCACHE_REUSE);
	assert_int_equal(p.index, 1);
	buildcache_plan_clear(&p);
	e[1].busy = true;
	plan(&p, e, 3, 'd', 'x', 1000000);
	assert_int_equal(p.action, BUILDCACHE_NEW);
	buildcache_plan_clear(&p);
}

static void test_buildcache__trim(void **state)
{
	struct buildcache_entry e[] = {
	    entry(1, 4, 100, 'a', 'x'), entry(2, 2, 100, 'b', 'y'),
	    entry(3, 1, 100, 'c', 'x'), entry(4, 3, 100, 'd', 'x')};
	struct buildcache_plan p;
	char *err = NULL;

	(void)state;
	assert_int_equal(buildcache_plan_trim(&p, e, 4, 400, &err), 0);
	assert_int_equal(p.evict_count, 0);
	buildcache_plan_clear(&p);
	assert_int_equal(buildcache_plan_trim(&p, e, 4, 250, &err), 0);
	assert_int_equal(p.evict_count, 2);
	assert_int_equal(p.evict[0], 2);
	assert_int_equal(p.evict[1], 1);
	buildcache_plan_clear(&p);
	e[0].busy = true;
	assert_int_equal(buildcache_plan_trim(&p, e, 4, 0, &err), 0);
	assert_int_equal(p.evict_count, 3);
	assert_int_equal(p.evict[2], 3);
	buildcache_plan_clear(&p);
	assert_null(err);
	buildcache_plan_clear(NULL);
}

static void test_buildcache__parse_size(void **state)
{
	static const struct {
		const char *text;
		unsigned long long want;
	} good[] = {
	    {"0", 0},
	    {"123", 123},
	    {"10K", 10240},
	    {"10k", 10240},
	    {"3M", 3ULL << 20},
	    {"4G", 4ULL << 30},
	    {"4GiB", 4ULL << 30},
	    {"4gb", 4ULL << 30},
	    {"2T", 2ULL << 40},
	    {"512B", 512},
	};
	static const char *const bad[] = {
	    "",
	    "-1",
	    "1X",
	    "K",
	    "1.5G",
	    " 1G",
	    "1G ",
	    "1GG",
	    "18446744073709551616",
	    "17179869184G",
	    "1iB",
	};
	unsigned long long v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 99;
		assert_int_equal(buildcache_parse_size(&v, good[i].text), 0);
		assert_true(v == good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(buildcache_parse_size(&v, bad[i]), -1);
	assert_int_equal(buildcache_parse_size(&v, NULL), -1);
	assert_int_equal(buildcache_parse_size(&v, "18446744073709551615"), 0);
	assert_true(v == 18446744073709551615ULL);
}

/* A fresh directory for one test. */
static char *temp_dir(void)
{
	char *dir = strdup("/tmp/test_buildcache.XXXXXX");

	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_dir(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Writes `bytes` bytes into path/out.bin, as a build would. */
static void fake_build(const char *path, size_t bytes)
{
	char file[4200], *data = calloc(1, bytes + 1);
	FILE *f;

	assert_non_null(data);
	mkdir(path, 0755);
	snprintf(file, sizeof(file), "%s/out.bin", path);
	f = fopen(file, "w");
	assert_non_null(f);
	memset(data, 'x', bytes);
	assert_int_equal(fwrite(data, 1, bytes, f), bytes);
	fclose(f);
	free(data);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void acquire(struct buildcache *cache, char key, char config,
		    char *path, bool *built, unsigned long long *id)
{
	char k[41], c[41], *err = NULL;

	hash_of(k, key);
	hash_of(c, config);
	assert_int_equal(
	    buildcache_acquire(path, 4200, built, id, cache, k, c, &err), 0);
	assert_null(err);
}

static void done(struct buildcache *cache, unsigned long long id, char key,
		 bool ok)
{
	char k[41], *err = NULL;

	hash_of(k, key);
	assert_int_equal(buildcache_done(cache, id, k, ok, &err), 0);
	assert_null(err);
}

static void test_buildcache__builds_are_found_again(void **state)
{
	char *dir = temp_dir(), cdir[4200], pa[4200], pb[4200], p[4200];
	struct buildcache *cache = NULL;
	unsigned long long ida, idb, id;
	char *err = NULL;
	bool built;

	(void)state;
	snprintf(cdir, sizeof(cdir), "%s/builds", dir);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	acquire(cache, 'a', '8', pa, &built, &ida);
	assert_false(built);
	fake_build(pa, 100000);
	done(cache, ida, 'a', true);
	assert_true(buildcache_size(cache) >= 100000);
	acquire(cache, 'b', '8', pb, &built, &idb);
	assert_false(built);
	assert_string_not_equal(pa, pb);
	fake_build(pb, 100000);
	done(cache, idb, 'b', true);
	buildcache_free(cache);

	/* A new task (a reopened cache) finds both. */
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	acquire(cache, 'a', '8', p, &built, &id);
	assert_true(built);
	assert_int_equal(id, ida);
	assert_string_equal(p, pa);
	acquire(cache, 'b', '8', p, &built, &id);
	assert_true(built);
	assert_string_equal(p, pb);
	/* Another configuration of the same commit is another build. */
	acquire(cache, 'c', '9', p, &built, &id);
	assert_false(built);
	assert_string_not_equal(p, pa);
	assert_string_not_equal(p, pb);
	buildcache_free(cache);
	remove_dir(dir);
	free(dir);
}

static void test_buildcache__budget_evicts_oldest(void **state)
{
	char *dir = temp_dir(), cdir[4200], pa[4200], pb[4200], pc[4200];
	struct buildcache *cache = NULL;
	unsigned long long ida, idb, idc;
	char *err = NULL;
	bool built;

	(void)state;
	snprintf(cdir, sizeof(cdir), "%s/builds", dir);
	/* Room for two trees of about 100 kB, not three. */
	assert_int_equal(buildcache_open(&cache, cdir, 250000, &err), 0);
	acquire(cache, 'a', '9', pa, &built, &ida);
	fake_build(pa, 100000);
	done(cache, ida, 'a', true);
	buildcache_free(cache);
	assert_int_equal(buildcache_open(&cache, cdir, 250000, &err), 0);
	acquire(cache, 'b', '8', pb, &built, &idb);
	fake_build(pb, 100000);
	done(cache, idb, 'b', true);
	buildcache_free(cache);
	assert_int_equal(buildcache_open(&cache, cdir, 250000, &err), 0);
	/* A second tree of x would pass the budget: y's tree, the oldest,
	 * is deleted. */
	acquire(cache, 'c', '8', pc, &built, &idc);
	assert_false(built);
	assert_false(exists(pa));
	assert_true(exists(pb));
	assert_string_not_equal(pc, pb);
	fake_build(pc, 100000);
	done(cache, idc, 'c', true);
	buildcache_free(cache);
	assert_int_equal(buildcache_open(&cache, cdir, 250000, &err), 0);
	/* Now the oldest is x's own: rebuilt in place, incrementally. */
	acquire(cache, 'd', '8', pa, &built, &ida);
	assert_false(built);
	assert_string_equal(pa, pb);
	assert_true(exists(pb));
	assert_true(exists(pc));
	done(cache, ida, 'd', true);
	buildcache_free(cache);
	/* b is gone, c and d are there. */
	assert_int_equal(buildcache_open(&cache, cdir, 250000, &err), 0);
	acquire(cache, 'c', '8', pa, &built, &ida);
	assert_true(built);
	acquire(cache, 'd', '8', pa, &built, &ida);
	assert_true(built);
	buildcache_free(cache);
	/* A smaller budget trims after the next build, oldest first. */
	assert_int_equal(buildcache_open(&cache, cdir, 0, &err), 0);
	acquire(cache, 'e', '7', pa, &built, &ida);
	fake_build(pa, 1000);
	done(cache, ida, 'e', true);
	assert_false(exists(pb));
	assert_false(exists(pc));
	assert_true(exists(pa));
	buildcache_free(cache);
	assert_null(err);
	remove_dir(dir);
	free(dir);
}

static void test_buildcache__failed_build_holds_nothing(void **state)
{
	char *dir = temp_dir(), cdir[4200], p[4200], q[4200];
	struct buildcache *cache = NULL;
	unsigned long long id, id2;
	char *err = NULL;
	bool built;

	(void)state;
	snprintf(cdir, sizeof(cdir), "%s/builds", dir);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	acquire(cache, 'a', '8', p, &built, &id);
	fake_build(p, 1000);
	done(cache, id, 'a', false);
	buildcache_free(cache);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	/* Not a hit, and its tree is the one to build in again. */
	acquire(cache, 'a', '8', q, &built, &id2);
	assert_false(built);
	assert_int_equal(id2, id);
	assert_string_equal(q, p);
	assert_true(exists(q));
	buildcache_free(cache);
	assert_null(err);
	remove_dir(dir);
	free(dir);
}

/* A rebuild asked for: the build is forgotten and its files deleted, so
 * it is made again from a clean checkout, and found once it is. */
static void test_buildcache__discard_forgets_and_cleans(void **state)
{
	char *dir = temp_dir(), cdir[4200], p[4200], q[4200], stale[4300];
	struct buildcache *cache = NULL;
	unsigned long long id, id2;
	char k[41], *err = NULL;
	bool built;

	(void)state;
	snprintf(cdir, sizeof(cdir), "%s/builds", dir);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	acquire(cache, 'a', '8', p, &built, &id);
	fake_build(p, 1000);
	done(cache, id, 'a', true);
	buildcache_free(cache);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	acquire(cache, 'a', '8', q, &built, &id2);
	assert_true(built);
	/* A file the earlier build left, that a clean tree has not. */
	snprintf(stale, sizeof(stale), "%s/stale.o", q);
	fclose(fopen(stale, "w"));
	assert_true(exists(stale));
	hash_of(k, 'a');
	assert_int_equal(buildcache_discard(cache, id2, k, &err), 0);
	assert_false(exists(q));
	/* Built again in the same place, and found after that. */
	fake_build(q, 1000);
	done(cache, id2, 'a', true);
	buildcache_free(cache);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	acquire(cache, 'a', '8', q, &built, &id2);
	assert_true(built);
	assert_string_equal(q, p);
	assert_false(exists(stale));
	buildcache_free(cache);
	assert_null(err);
	remove_dir(dir);
	free(dir);
}

static void test_buildcache__strays_and_bad_index(void **state)
{
	char *dir = temp_dir(), cdir[4000], path[4200], p[4200];
	struct buildcache *cache = NULL;
	unsigned long long id;
	char *err = NULL;
	bool built;
	FILE *f;

	(void)state;
	snprintf(cdir, sizeof(cdir), "%s/builds", dir);
	assert_int_equal(mkdir(cdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/7", cdir);
	fake_build(path, 10);
	snprintf(path, sizeof(path), "%s/index", cdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("garbage\n", f);
	fclose(f);
	assert_int_equal(buildcache_open(&cache, cdir, 1ULL << 30, &err), 0);
	snprintf(path, sizeof(path), "%s/7", cdir);
	assert_false(exists(path));
	acquire(cache, 'a', '8', p, &built, &id);
	assert_false(built);
	assert_int_equal(buildcache_done(cache, id + 1, p, true, &err), -1);
	assert_non_null(err);
	free(err);
	err = NULL;
	assert_int_equal(buildcache_acquire(p, sizeof(p), &built, &id, cache,
					    "not a key", "nor this", &err),
			 -1);
	assert_non_null(err);
	free(err);
	buildcache_free(cache);
	buildcache_free(NULL);
	remove_dir(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_buildcache__key_is_stable),
	    cmocka_unit_test(test_buildcache__every_input_counts),
	    cmocka_unit_test(test_buildcache__bench_commit_counts),
	    cmocka_unit_test(test_buildcache__environment_noise_ignored),
	    cmocka_unit_test(test_buildcache__fields_do_not_run_together),
	    cmocka_unit_test(test_buildcache__key_needs_inputs),
	    cmocka_unit_test(test_buildcache__plan_hit),
	    cmocka_unit_test(test_buildcache__plan_new_while_budget_allows),
	    cmocka_unit_test(test_buildcache__plan_evicts_least_recently_used),
	    cmocka_unit_test(test_buildcache__plan_keeps_busy_trees),
	    cmocka_unit_test(
		test_buildcache__plan_reuses_a_tree_without_build),
	    cmocka_unit_test(test_buildcache__trim),
	    cmocka_unit_test(test_buildcache__parse_size),
	    cmocka_unit_test(test_buildcache__builds_are_found_again),
	    cmocka_unit_test(test_buildcache__budget_evicts_oldest),
	    cmocka_unit_test(test_buildcache__failed_build_holds_nothing),
	    cmocka_unit_test(test_buildcache__discard_forgets_and_cleans),
	    cmocka_unit_test(test_buildcache__strays_and_bad_index),
	};

	git_libgit2_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
