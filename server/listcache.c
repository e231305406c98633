#include "listcache.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobcache.h"
#include "strbuf.h"

/* Pages kept; the page of a filter can only be kept in the entry its
 * key hashes to, so a busy entry holds the last filter asked for. */
#define LISTCACHE_ENTRIES 64
/* When the jobs of slot id % LISTCACHE_JOB_SLOTS were last notified. */
#define LISTCACHE_JOB_SLOTS 4096
/* How long a lookup waits for another's fill before reading itself. */
#define LISTCACHE_JOIN_S 30

struct entry {
	char *key; /* the filter's; NULL: unused */
	/* The page's rows followed by their text, in one block of `size`
	 * bytes; NULL while none is kept. */
	struct store_jobs_row *rows;
	size_t size, count;
	long long total;
	/* What the lookup of the fill that made it saw. */
	unsigned long generation, seq;
	double kept_at;	      /* monotonic seconds */
	unsigned long serial; /* which page this is */
	/* The views made of it, and the whole seconds since kept_at when
	 * they were made (of views that time changes). */
	char *texts[LISTCACHE_VIEWS];
	long long text_elapsed[LISTCACHE_VIEWS];
	/* A fill of this key runs, begun with this lookup's figures. */
	bool filling;
	unsigned long fill_generation, fill_seq;
};

/* What a lookup saw. */
struct ticket {
	unsigned long generation, seq;
	bool live;
};

/* Which kept page a copy was made of (serial 0: none), its ages moved on
 * by `elapsed` seconds. */
struct stamp {
	unsigned long serial;
	long long elapsed;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t filled = PTHREAD_COND_INITIALIZER;
static bool live;		 /* the listener listens */
static unsigned long generation; /* bumped: every page forgotten */
static unsigned long seq;	 /* bumped by each job notified */
static unsigned long serials;	 /* of the pages kept */
static unsigned long job_seq[LISTCACHE_JOB_SLOTS];
static struct entry entries[LISTCACHE_ENTRIES];
static struct listcache_stats stats;
/* The names of listcache_names, and the generation they were read in. */
static json_t *names[2];
static unsigned long names_generation[2];

/* The text fields of a row, which a kept block holds. */
static const size_t text_fields[] = {
    offsetof(struct store_jobs_row, state),
    offsetof(struct store_jobs_row, verdict),
    offsetof(struct store_jobs_row, repo),
    offsetof(struct store_jobs_row, testcase),
    offsetof(struct store_jobs_row, good_sha),
    offsetof(struct store_jobs_row, bad_sha),
    offsetof(struct store_jobs_row, culprit),
    offsetof(struct store_jobs_row, culprit_subject),
    offsetof(struct store_jobs_row, created_at),
    offsetof(struct store_jobs_row, finished_at),
    offsetof(struct store_jobs_row, group)};
#define TEXT_FIELDS (sizeof(text_fields) / sizeof(text_fields[0]))

static const char **text_field(struct store_jobs_row *row, size_t i)
{
	return (const char **)(void *)((char *)row + text_fields[i]);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The page's rows and their text in one block (malloc'd), its size in
 * *size; NULL when out of memory. */
static struct store_jobs_row *pack(size_t *size,
				   const struct store_jobs_page *page)
{
	size_t rows_size = (page->count + 1) * sizeof(*page->rows);
	size_t total = rows_size, i, f;
	struct store_jobs_row *block;
	char *text;

	for (i = 0; i < page->count; i++)
		for (f = 0; f < TEXT_FIELDS; f++) {
			const char *s = *text_field(&page->rows[i], f);

			if (s != NULL)
				total += strlen(s) + 1;
		}
	block = malloc(total);
	if (block == NULL)
		return NULL;
	memset(block, 0, rows_size);
	memcpy(block, page->rows, page->count * sizeof(*page->rows));
	text = (char *)block + rows_size;
	for (i = 0; i < page->count; i++)
		for (f = 0; f < TEXT_FIELDS; f++) {
			const char **s = text_field(&block[i], f);
			size_t n;

			if (*s == NULL)
				continue;
			n = strlen(*s) + 1;
			memcpy(text, *s, n);
			*s = text;
			text += n;
		}
	*size = total;
	return block;
}

/* A copy of kept entry `e` as a page into *out, its ages `elapsed`
 * seconds on; false when out of memory. */
static bool copy_out(struct store_jobs_page *out, struct stamp *stamp,
		     const struct entry *e)
{
	struct store_jobs_row *rows = malloc(e->size);
	long long elapsed = (long long)(now_s() - e->kept_at);
	size_t i, f;

	if (rows == NULL)
		return false;
	memcpy(rows, e->rows, e->size);
	for (i = 0; i < e->count; i++) {
		rows[i].age_seconds += elapsed;
		for (f = 0; f < TEXT_FIELDS; f++) {
			const char **s = text_field(&rows[i], f);

			if (*s != NULL)
				*s = (const char *)rows +
				     (*s - (const char *)e->rows);
		}
	}
	memset(out, 0, sizeof(*out));
	out->rows = rows;
	out->count = e->count;
	out->total = e->total;
	stamp->serial = e->serial;
	stamp->elapsed = elapsed;
	return true;
}

/* The filter as a key (malloc'd), or NULL when out of memory. */
static char *key_of(const struct store_jobs_filter *filter)
{
	const char *const parts[] = {filter->repo, filter->testcase,
				     filter->state, filter->verdict,
				     filter->group};
	struct strbuf b = STRBUF_INIT;
	char *key;
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (parts[i] == NULL)
			strbuf_append(&b, "-|");
		else
			strbuf_printf(&b, "%zu:%s|", strlen(parts[i]),
				      parts[i]);
	}
	strbuf_printf(&b, "%lld,%lld", filter->limit, filter->offset);
	if (strbuf_finish(&key, NULL, &b) < 0)
		return NULL;
	return key;
}

static struct entry *entry_of(const char *key)
{
	unsigned long long hash = 14695981039346656037ULL;
	const unsigned char *p;

	for (p = (const unsigned char *)key; *p != '\0'; p++)
		hash = (hash ^ *p) * 1099511628211ULL;
	return &entries[hash % LISTCACHE_ENTRIES];
}

static void entry_free(struct entry *e)
{
	size_t v;

	free(e->key);
	free(e->rows);
	for (v = 0; v < LISTCACHE_VIEWS; v++)
		free(e->texts[v]);
	memset(e, 0, sizeof(*e));
}

static unsigned long *job_slot(long long job_id)
{
	return &job_seq[(unsigned long long)job_id % LISTCACHE_JOB_SLOTS];
}

/* Whether `e` keeps key's page and nothing it shows was notified since
 * its fill's lookup. */
static bool fresh(const struct entry *e, const char *key)
{
	size_t i;

	if (e->rows == NULL || e->key == NULL || strcmp(e->key, key) != 0 ||
	    e->generation != generation)
		return false;
	for (i = 0; i < e->count; i++)
		if (*job_slot(e->rows[i].id) > e->seq)
			return false;
	return true;
}

/* Whether `e` holds the page of a fill of key begun with what `t` saw. */
static bool made_as_seen(const struct entry *e, const char *key,
			 const struct ticket *t, bool filling)
{
	if (e->key == NULL || strcmp(e->key, key) != 0)
		return false;
	if (filling)
		return e->filling && e->fill_generation == t->generation &&
		       e->fill_seq == t->seq;
	return e->rows != NULL && e->generation == t->generation &&
	       e->seq == t->seq;
}

/*
 * Under the lock: a copy of key's page into *out when one is kept or
 * another's fill, begun with what this lookup saw, makes it (1; 2 when
 * out of memory); else marks the entry filled by this lookup (0).
 */
static int lookup(struct store_jobs_page *out, struct stamp *stamp,
		  struct entry *e, const char *key, const struct ticket *t)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += LISTCACHE_JOIN_S;
	if (!fresh(e, key) && made_as_seen(e, key, t, true)) {
		while (made_as_seen(e, key, t, true))
			if (pthread_cond_timedwait(&filled, &lock,
						   &deadline) == ETIMEDOUT)
				break;
		if (made_as_seen(e, key, t, false)) {
			stats.joined++;
			stats.hits++;
			return copy_out(out, stamp, e) ? 1 : 2;
		}
	}
	if (fresh(e, key)) {
		stats.hits++;
		return copy_out(out, stamp, e) ? 1 : 2;
	}
	stats.misses++;
	if (e->key == NULL || strcmp(e->key, key) != 0) {
		char *copy = strdup(key);

		if (copy == NULL)
			return 0;
		entry_free(e);
		e->key = copy;
	}
	e->filling = true;
	e->fill_generation = t->generation;
	e->fill_seq = t->seq;
	return 0;
}

/* Under the lock: keeps the page read after the lookup `t` (NULL: the
 * read failed) and wakes the lookups waiting for it. */
static void keep(struct stamp *stamp, struct entry *e, const char *key,
		 const struct ticket *t, struct store_jobs_row *block,
		 size_t size, const struct store_jobs_page *page)
{
	size_t v;

	/* A page made from a later lookup is kept rather than this. */
	bool later = e->rows != NULL &&
		     (e->generation > t->generation ||
		      (e->generation == t->generation && e->seq > t->seq));

	if (made_as_seen(e, key, t, true))
		e->filling = false;
	if (block != NULL && e->key != NULL && strcmp(e->key, key) == 0 &&
	    !later) {
		free(e->rows);
		for (v = 0; v < LISTCACHE_VIEWS; v++) {
			free(e->texts[v]);
			e->texts[v] = NULL;
		}
		e->rows = block;
		e->size = size;
		e->count = page->count;
		e->total = page->total;
		e->generation = t->generation;
		e->seq = t->seq;
		e->kept_at = now_s();
		e->serial = ++serials;
		stamp->serial = e->serial;
		stamp->elapsed = 0;
		block = NULL;
	}
	free(block);
	/* Also those that joined a fill this one overtook. */
	pthread_cond_broadcast(&filled);
}

/* The page of `filter` (whose key is `key`, kept in `e`) into *out, and
 * which kept page it is into *stamp. */
static int page_get(struct store_jobs_page *out, struct stamp *stamp,
		    PGconn *conn, const struct store_jobs_filter *filter,
		    const char *key, struct entry *e)
{
	struct store_jobs_row *block = NULL;
	struct ticket t;
	size_t size = 0;
	int rc;

	stamp->serial = 0;
	pthread_mutex_lock(&lock);
	t.generation = generation;
	t.seq = seq;
	t.live = live;
	rc = t.live ? lookup(out, stamp, e, key, &t) : 0;
	pthread_mutex_unlock(&lock);
	if (rc == 1 || !t.live)
		return rc == 1 ? 0 : store_jobs_list(out, conn, filter);
	rc = rc == 2 ? STORE_FAILED : store_jobs_list(out, conn, filter);
	if (rc == 0)
		block = pack(&size, out);
	pthread_mutex_lock(&lock);
	keep(stamp, e, key, &t, block, size, out);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* Under the lock: a copy of view `view` of key's page into *out when one
 * is kept that still holds. */
static bool text_lookup(struct listcache_text *out, struct entry *e,
			const char *key, int view, bool timeless)
{
	if (view < 0 || view >= LISTCACHE_VIEWS || !live || !fresh(e, key) ||
	    e->texts[view] == NULL ||
	    (!timeless &&
	     e->text_elapsed[view] != (long long)(now_s() - e->kept_at)))
		return false;
	out->text = strdup(e->texts[view]);
	if (out->text == NULL)
		return false;
	out->total = e->total;
	out->count = e->count;
	stats.hits++;
	return true;
}

int listcache_text(struct listcache_text *out, PGconn *conn,
		   const struct store_jobs_filter *filter, int view,
		   bool timeless, listcache_render *render, const void *arg)
{
	struct store_jobs_page page;
	char *key = key_of(filter);
	struct stamp stamp;
	struct entry *e;
	bool hit;
	int rc;

	memset(out, 0, sizeof(*out));
	if (key == NULL)
		return STORE_FAILED;
	e = entry_of(key);
	pthread_mutex_lock(&lock);
	hit = text_lookup(out, e, key, view, timeless);
	pthread_mutex_unlock(&lock);
	if (hit || (rc = page_get(&page, &stamp, conn, filter, key, e)) < 0) {
		free(key);
		return hit ? 0 : rc;
	}
	out->text = render(&page, filter, arg);
	out->total = page.total;
	out->count = page.count;
	store_jobs_page_clear(&page);
	/* Kept only with the page it was made of. */
	pthread_mutex_lock(&lock);
	if (out->text != NULL && stamp.serial != 0 &&
	    e->serial == stamp.serial && view >= 0 && view < LISTCACHE_VIEWS) {
		free(e->texts[view]);
		e->texts[view] = strdup(out->text);
		e->text_elapsed[view] = stamp.elapsed;
	}
	pthread_mutex_unlock(&lock);
	free(key);
	return out->text != NULL ? 0 : STORE_FAILED;
}

json_t *listcache_names(bool testcases, json_t *(*load)(bool testcases))
{
	unsigned long seen;
	json_t *got = NULL, *copy, *old = NULL;
	bool was_live;

	pthread_mutex_lock(&lock);
	seen = generation;
	was_live = live;
	if (live && names[testcases] != NULL &&
	    names_generation[testcases] == generation)
		got = json_deep_copy(names[testcases]);
	pthread_mutex_unlock(&lock);
	if (got != NULL)
		return got;
	got = load(testcases);
	if (got == NULL || !was_live || (copy = json_deep_copy(got)) == NULL)
		return got;
	pthread_mutex_lock(&lock);
	if (live && generation == seen) {
		old = names[testcases];
		names[testcases] = copy;
		names_generation[testcases] = seen;
		copy = NULL;
	}
	pthread_mutex_unlock(&lock);
	json_decref(copy);
	json_decref(old);
	return got;
}

void listcache_forget_all(void)
{
	pthread_mutex_lock(&lock);
	generation++;
	pthread_mutex_unlock(&lock);
}

static void set_live(bool now_live)
{
	pthread_mutex_lock(&lock);
	live = now_live;
	generation++;
	pthread_mutex_unlock(&lock);
}

/* Each handler tells this cache first: a page is never older than the
 * job's answer in jobcache. */
static void listening(void *arg)
{
	set_live(true);
	jobcache_listener.listening(arg);
}

static void lost(void *arg)
{
	set_live(false);
	jobcache_listener.lost(arg);
}

/* A notification: the job named, or any list for anything else. */
static void note(const char *payload, void *arg)
{
	char *end;
	long long job_id;

	errno = 0;
	job_id = strtoll(payload, &end, 10);
	pthread_mutex_lock(&lock);
	if (payload[0] < '0' || payload[0] > '9' || *end != '\0' ||
	    errno != 0 || job_id <= 0) {
		generation++;
	} else {
		seq++;
		*job_slot(job_id) = seq;
	}
	pthread_mutex_unlock(&lock);
	jobcache_listener.note(payload, arg);
}

const struct notify_handlers listcache_listener = {
    .listening = listening, .lost = lost, .note = note};

void listcache_stats(struct listcache_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}

void listcache_clear(void)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < LISTCACHE_ENTRIES; i++)
		entry_free(&entries[i]);
	for (i = 0; i < 2; i++) {
		json_decref(names[i]);
		names[i] = NULL;
	}
	live = false;
	generation++;
	pthread_mutex_unlock(&lock);
}
