#include "buildcache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <git2.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"

#define BUILDCACHE_MAGIC "statbisect-buildcache 1"

struct buildcache {
	char *dir;
	unsigned long long budget, next_id, clock;
	struct buildcache_entry *entries;
	size_t count, capacity;
};

static void set_errorf(char **err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

/* Entries that are no input of a build: the worker's own settings, the
 * task's values (the commit is an input of its own), and what names the
 * shell, login or service session the worker was started from rather than
 * the build (systemd sets a new INVOCATION_ID at every start). */
static bool env_ignored(const char *entry)
{
	static const char *const names[] = {
	    "PWD",
	    "OLDPWD",
	    "SHLVL",
	    "_",
	    "INVOCATION_ID",
	    "JOURNAL_STREAM",
	    "SYSTEMD_EXEC_PID",
	    "MANAGERPID",
	    "NOTIFY_SOCKET",
	    "LISTEN_PID",
	    "LISTEN_FDS",
	    "LISTEN_FDNAMES",
	    "WATCHDOG_PID",
	    "WATCHDOG_USEC",
	    "SSH_CLIENT",
	    "SSH_CONNECTION",
	    "SSH_TTY",
	    "SSH_AUTH_SOCK",
	    "XDG_SESSION_ID",
	    "TMUX",
	    "TMUX_PANE",
	    "STY",
	    "WINDOWID",
	    "TERM_SESSION_ID",
	};
	size_t len = strcspn(entry, "="), i;

	if (strncmp(entry, "STATBISECT_", 11) == 0)
		return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i]) == len &&
		    strncmp(entry, names[i], len) == 0)
			return true;
	}
	return false;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "name LEN:text\n", so that no field's text can pose as another's. */
static void add_field(struct strbuf *sb, const char *name, const char *text)
{
	strbuf_printf(sb, "%s %zu:", name, strlen(text));
	strbuf_appendn(sb, text, strlen(text));
	strbuf_appendn(sb, "\n", 1);
}

static int hash_text(char *out, const struct strbuf *sb, char **err)
{
	git_oid oid;

	/* git's blob hash (SHA-1): a name, not a defence against forgery. */
	if (git_odb_hash(&oid, sb->data != NULL ? sb->data : "", sb->len,
			 GIT_OBJECT_BLOB) < 0) {
		set_errorf(err, "cannot hash the build inputs");
		return -1;
	}
	git_oid_tostr(out, BUILDCACHE_HASH_LEN + 1, &oid);
	return 0;
}

int buildcache_key(char *key, char *config, const struct buildcache_inputs *in,
		   char **err)
{
	struct strbuf sb = STRBUF_INIT;
	const char **env = NULL;
	size_t count = 0, kept = 0, i;
	int error = -1;

	if (in == NULL || in->repo == NULL || in->commit == NULL ||
	    in->build == NULL) {
		set_errorf(err, "a build needs a repository, a commit and a "
				"build command");
		return -1;
	}
	while (in->environ != NULL && in->environ[count] != NULL)
		count++;
	env = calloc(count + 1, sizeof(*env));
	if (env == NULL) {
		set_errorf(err, "out of memory");
		return -1;
	}
	for (i = 0; i < count; i++) {
		if (!env_ignored(in->environ[i]))
			env[kept++] = in->environ[i];
	}
	qsort(env, kept, sizeof(*env), compare_strings);
	strbuf_printf(&sb, "statbisect build configuration 1\n");
	add_field(&sb, "repo", in->repo);
	add_field(&sb, "build", in->build);
	add_field(&sb, "params", in->params != NULL ? in->params : "");
	for (i = 0; i < kept; i++)
		add_field(&sb, "env", env[i]);
	if (sb.failed) {
		set_errorf(err, "out of memory");
		goto out;
	}
	if (hash_text(config, &sb, err) < 0)
		goto out;
	add_field(&sb, "commit", in->commit);
	/* Only when there is one, so that the keys of builds without a
	 * benchmark repository stay what they were. */
	if (in->bench != NULL)
		add_field(&sb, "bench", in->bench);
	if (sb.failed) {
		set_errorf(err, "out of memory");
		goto out;
	}
	if (hash_text(key, &sb, err) < 0)
		goto out;
	error = 0;
out:
	strbuf_clear(&sb);
	free(env);
	return error;
}

static size_t *plan_grow(struct buildcache_plan *plan, size_t count)
{
	if (plan->evict == NULL)
		plan->evict = calloc(count > 0 ? count : 1, sizeof(size_t));
	return plan->evict;
}

/* The least recently used entry neither busy nor in `taken`, or count. */
static size_t oldest(const struct buildcache_entry *entries, size_t count,
		     const bool *taken)
{
	size_t i, best = count;

	for (i = 0; i < count; i++) {
		if (entries[i].busy || taken[i])
			continue;
		if (best == count || entries[i].used < entries[best].used)
			best = i;
	}
	return best;
}

int buildcache_plan(struct buildcache_plan *out,
		    const struct buildcache_entry *entries, size_t count,
		    const char *key, const char *config,
		    unsigned long long budget, char **err)
{
	unsigned long long total = 0, estimate = 0;
	bool *taken = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < count; i++) {
		if (strcmp(entries[i].key, key) == 0 && key[0] != '\0') {
			out->action = BUILDCACHE_HIT;
			out->index = i;
			return 0;
		}
	}
	/* A tree of the configuration that holds no build costs nothing to
	 * reuse. */
	for (i = 0; i < count; i++) {
		if (!entries[i].busy && entries[i].key[0] == '\0' &&
		    strcmp(entries[i].config, config) == 0) {
			out->action = BUILDCACHE_REUSE;
			out->index = i;
			return 0;
		}
	}
	taken = calloc(count > 0 ? count : 1, sizeof(*taken));
	if (taken == NULL || plan_grow(out, count) == NULL) {
		free(taken);
		set_errorf(err, "out of memory");
		return -1;
	}
	for (i = 0; i < count; i++) {
		total += entries[i].size;
		if (strcmp(entries[i].config, config) == 0 &&
		    entries[i].size > estimate)
			estimate = entries[i].size;
	}
	out->action = BUILDCACHE_NEW;
	while (total + estimate > budget) {
		size_t victim = oldest(entries, count, taken);

		if (victim == count)
			break;
		if (strcmp(entries[victim].config, config) == 0) {
			out->action = BUILDCACHE_REUSE;
			out->index = victim;
			break;
		}
		taken[victim] = true;
		out->evict[out->evict_count++] = victim;
		total -= entries[victim].size;
	}
	free(taken);
	return 0;
}

int buildcache_plan_trim(struct buildcache_plan *out,
			 const struct buildcache_entry *entries, size_t count,
			 unsigned long long budget, char **err)
{
	unsigned long long total = 0;
	bool *taken;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->action = BUILDCACHE_NEW;
	taken = calloc(count > 0 ? count : 1, sizeof(*taken));
	if (taken == NULL || plan_grow(out, count) == NULL) {
		free(taken);
		set_errorf(err, "out of memory");
		return -1;
	}
	for (i = 0; i < count; i++)
		total += entries[i].size;
	while (total > budget) {
		size_t victim = oldest(entries, count, taken);

		if (victim == count)
			break;
		taken[victim] = true;
		out->evict[out->evict_count++] = victim;
		total -= entries[victim].size;
	}
	free(taken);
	return 0;
}

void buildcache_plan_clear(struct buildcache_plan *plan)
{
	if (plan == NULL)
		return;
	free(plan->evict);
	memset(plan, 0, sizeof(*plan));
}

int buildcache_parse_size(unsigned long long *out, const char *text)
{
	unsigned long long value = 0, unit = 1;
	const char *p = text;

	if (text == NULL || !isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (value > (ULLONG_MAX - (unsigned)(*p - '0')) / 10)
			return -1;
		value = value * 10 + (unsigned)(*p - '0');
	}
	switch (tolower((unsigned char)*p)) {
	case 't':
		unit <<= 10; /* fall through */
	case 'g':
		unit <<= 10; /* fall through */
	case 'm':
		unit <<= 10; /* fall through */
	case 'k':
		unit <<= 10;
		p++;
		if (*p == 'i' || *p == 'I')
			p++;
		break;
	default:
		break;
	}
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p != '\0' || (value > 0 && unit > ULLONG_MAX / value))
		return -1;
	*out = value * unit;
	return 0;
}

/* The size on disk of everything under a path, for nftw(). */
static unsigned long long walk_total;

static int add_size(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	walk_total += (unsigned long long)st->st_blocks * 512;
	return 0;
}

static unsigned long long tree_size(const char *path)
{
	walk_total = 0;
	if (nftw(path, add_size, 16, FTW_PHYS) < 0)
		return walk_total;
	return walk_total;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Deletes tree `id` and its index; a tree already gone is no error. */
static void delete_tree(const struct buildcache *cache, unsigned long long id)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%llu", cache->dir, id);
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(path, sizeof(path), "%s/%llu.index", cache->dir, id);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%llu.bench", cache->dir, id);
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(path, sizeof(path), "%s/%llu.bench.index", cache->dir, id);
	unlink(path);
}

static int save_index(const struct buildcache *cache, char **err)
{
	char path[4200], tmp[4200];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/index", cache->dir);
	snprintf(tmp, sizeof(tmp), "%s/index.tmp", cache->dir);
	f = fopen(tmp, "w");
	if (f == NULL) {
		set_errorf(err, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "%s %llu %llu\n", BUILDCACHE_MAGIC, cache->next_id,
		cache->clock);
	for (i = 0; i < cache->count; i++) {
		const struct buildcache_entry *e = &cache->entries[i];

		fprintf(f, "%llu %llu %llu %s %s\n", e->id, e->used, e->size,
			e->key[0] != '\0' ? e->key : "-", e->config);
	}
	if (fflush(f) != 0 || ferror(f) != 0) {
		fclose(f);
		set_errorf(err, "cannot write %s", tmp);
		return -1;
	}
	fclose(f);
	if (rename(tmp, path) < 0) {
		set_errorf(err, "cannot replace %s: %s", path,
			   strerror(errno));
		return -1;
	}
	return 0;
}

static bool is_hash(const char *s)
{
	size_t i;

	for (i = 0; i < BUILDCACHE_HASH_LEN; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return s[i] == '\0';
}

static struct buildcache_entry *add_entry(struct buildcache *cache)
{
	if (cache->count == cache->capacity) {
		size_t capacity = cache->capacity ? cache->capacity * 2 : 16;
		struct buildcache_entry *grown = realloc(
		    cache->entries, capacity * sizeof(*cache->entries));

		if (grown == NULL)
			return NULL;
		cache->entries = grown;
		cache->capacity = capacity;
	}
	memset(&cache->entries[cache->count], 0, sizeof(*cache->entries));
	return &cache->entries[cache->count++];
}

/* Reads DIR/index; a missing or unreadable index is an empty cache. */
static int load_index(struct buildcache *cache, char **err)
{
	char path[4200], line[256], key[64], config[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/index", cache->dir);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) == NULL ||
	    strncmp(line, BUILDCACHE_MAGIC " ",
		    strlen(BUILDCACHE_MAGIC) + 1) != 0 ||
	    sscanf(line + strlen(BUILDCACHE_MAGIC), "%llu %llu",
		   &cache->next_id, &cache->clock) != 2) {
		fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		struct buildcache_entry e = {0}, *slot;

		if (sscanf(line, "%llu %llu %llu %63s %63s", &e.id, &e.used,
			   &e.size, key, config) != 5 ||
		    !is_hash(config) ||
		    (strcmp(key, "-") != 0 && !is_hash(key)) ||
		    e.id >= cache->next_id)
			continue;
		memcpy(e.config, config, sizeof(e.config));
		if (strcmp(key, "-") != 0)
			memcpy(e.key, key, sizeof(e.key));
		slot = add_entry(cache);
		if (slot == NULL) {
			fclose(f);
			set_errorf(err, "out of memory");
			return -1;
		}
		*slot = e;
	}
	fclose(f);
	return 0;
}

static const struct buildcache_entry *find_id(const struct buildcache *cache,
					      unsigned long long id)
{
	size_t i;

	for (i = 0; i < cache->count; i++) {
		if (cache->entries[i].id == id)
			return &cache->entries[i];
	}
	return NULL;
}

/* Deletes the trees (and stray files) in DIR that the index does not
 * list: what a crash between a build and the index left behind. */
static void delete_strays(struct buildcache *cache)
{
	DIR *d = opendir(cache->dir);
	struct dirent *ent;

	while (d != NULL && (ent = readdir(d)) != NULL) {
		unsigned long long id;
		char *end;

		if (!isdigit((unsigned char)ent->d_name[0]))
			continue;
		errno = 0;
		id = strtoull(ent->d_name, &end, 10);
		if (errno != 0 ||
		    (*end != '\0' && strcmp(end, ".index") != 0 &&
		     strcmp(end, ".bench") != 0 &&
		     strcmp(end, ".bench.index") != 0))
			continue;
		if (find_id(cache, id) == NULL)
			delete_tree(cache, id);
	}
	if (d != NULL)
		closedir(d);
}

int buildcache_open(struct buildcache **out, const char *dir,
		    unsigned long long budget, char **err)
{
	struct buildcache *cache = calloc(1, sizeof(*cache));

	*out = NULL;
	if (cache == NULL || (cache->dir = strdup(dir)) == NULL) {
		free(cache);
		set_errorf(err, "out of memory");
		return -1;
	}
	cache->budget = budget;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		set_errorf(err, "cannot create %s: %s", dir, strerror(errno));
		buildcache_free(cache);
		return -1;
	}
	if (load_index(cache, err) < 0) {
		buildcache_free(cache);
		return -1;
	}
	delete_strays(cache);
	*out = cache;
	return 0;
}

void buildcache_free(struct buildcache *cache)
{
	if (cache == NULL)
		return;
	free(cache->entries);
	free(cache->dir);
	free(cache);
}

/* Deletes the planned evictions; entries after them move down. */
static void evict(struct buildcache *cache, const struct buildcache_plan *plan)
{
	unsigned long long *ids;
	size_t i, j;

	if (plan->evict_count == 0)
		return;
	ids = calloc(plan->evict_count, sizeof(*ids));
	for (i = 0; ids != NULL && i < plan->evict_count; i++)
		ids[i] = cache->entries[plan->evict[i]].id;
	for (i = 0; ids != NULL && i < plan->evict_count; i++) {
		delete_tree(cache, ids[i]);
		for (j = 0; j < cache->count; j++) {
			if (cache->entries[j].id != ids[i])
				continue;
			memmove(&cache->entries[j], &cache->entries[j + 1],
				(cache->count - j - 1) *
				    sizeof(*cache->entries));
			cache->count--;
			break;
		}
	}
	free(ids);
}

int buildcache_acquire(char *path, size_t path_size, bool *built,
		       unsigned long long *id, struct buildcache *cache,
		       const char *key, const char *config, char **err)
{
	struct buildcache_plan plan;
	struct buildcache_entry *e;

	if (!is_hash(key) || !is_hash(config)) {
		set_errorf(err, "not a build key: '%s'", key);
		return -1;
	}
	if (buildcache_plan(&plan, cache->entries, cache->count, key, config,
			    cache->budget, err) < 0)
		return -1;
	if (plan.action == BUILDCACHE_NEW) {
		evict(cache, &plan);
		e = add_entry(cache);
		if (e == NULL) {
			buildcache_plan_clear(&plan);
			set_errorf(err, "out of memory");
			return -1;
		}
		e->id = cache->next_id++;
		snprintf(e->config, sizeof(e->config), "%s", config);
		/* What a crash left in a tree of this number is not ours. */
		delete_tree(cache, e->id);
	} else {
		unsigned long long target = cache->entries[plan.index].id;

		evict(cache, &plan);
		e = (struct buildcache_entry *)find_id(cache, target);
	}
	*built = plan.action == BUILDCACHE_HIT;
	buildcache_plan_clear(&plan);
	/* Until buildcache_done(), a tree being built holds no build. */
	if (!*built)
		e->key[0] = '\0';
	e->busy = true;
	e->used = ++cache->clock;
	*id = e->id;
	if (snprintf(path, path_size, "%s/%llu", cache->dir, e->id) >=
	    (int)path_size) {
		set_errorf(err, "build tree path too long");
		return -1;
	}
	return save_index(cache, err);
}

int buildcache_done(struct buildcache *cache, unsigned long long id,
		    const char *key, bool ok, char **err)
{
	struct buildcache_entry *e =
	    (struct buildcache_entry *)find_id(cache, id);
	struct buildcache_plan plan;
	char path[4200];

	if (e == NULL || (ok && !is_hash(key))) {
		set_errorf(err, "no build tree %llu in the cache", id);
		return -1;
	}
	snprintf(e->key, sizeof(e->key), "%s", ok ? key : "");
	snprintf(path, sizeof(path), "%s/%llu", cache->dir, id);
	e->size = tree_size(path);
	snprintf(path, sizeof(path), "%s/%llu.index", cache->dir, id);
	e->size += tree_size(path);
	e->used = ++cache->clock;
	if (buildcache_plan_trim(&plan, cache->entries, cache->count,
				 cache->budget, err) < 0)
		return -1;
	evict(cache, &plan);
	buildcache_plan_clear(&plan);
	return save_index(cache, err);
}

unsigned long long buildcache_size(const struct buildcache *cache)
{
	unsigned long long total = 0;
	size_t i;

	for (i = 0; i < cache->count; i++)
		total += cache->entries[i].size;
	return total;
}

int buildcache_discard(struct buildcache *cache, unsigned long long id,
		       const char *key, char **err)
{
	delete_tree(cache, id);
	return buildcache_done(cache, id, key, false, err);
}
