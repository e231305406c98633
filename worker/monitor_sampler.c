/* The sampler: a thread reading /proc (stat, meminfo, vmstat) at an
 * interval while the benchmark runs, for the vmstat and proc-vmstat
 * monitors. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "monitor_private.h"

static int counter_put(struct counter_set *set, size_t *hint, const char *name,
		       size_t name_len, double value)
{
	struct counter *c = NULL;
	size_t i;

	/* /proc lists its lines in the same order each time: try the next
	 * position first. */
	if (*hint < set->count &&
	    strncmp(set->items[*hint].name, name, name_len) == 0 &&
	    set->items[*hint].name[name_len] == '\0')
		c = &set->items[*hint];
	for (i = 0; c == NULL && i < set->count; i++) {
		if (strncmp(set->items[i].name, name, name_len) == 0 &&
		    set->items[i].name[name_len] == '\0')
			c = &set->items[i];
	}
	if (c == NULL) {
		if (set->count == set->capacity) {
			size_t capacity =
			    set->capacity ? set->capacity * 2 : 256;
			struct counter *grown =
			    realloc(set->items, capacity * sizeof(*grown));

			if (grown == NULL)
				return -ENOMEM;
			set->items = grown;
			set->capacity = capacity;
		}
		c = &set->items[set->count];
		memset(c, 0, sizeof(*c));
		c->name = strndup(name, name_len);
		if (c->name == NULL)
			return -ENOMEM;
		c->first = value;
		set->count++;
	}
	c->last = value;
	c->sum += value;
	c->samples++;
	*hint = (size_t)(c - set->items) + 1;
	return 0;
}

const struct counter *monitor_counter_get(const struct counter_set *set,
					  const char *name)
{
	for (size_t i = 0; i < set->count; i++)
		if (strcmp(set->items[i].name, name) == 0)
			return &set->items[i];
	return NULL;
}

void monitor_counters_clear(struct counter_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		free(set->items[i].name);
	free(set->items);
	memset(set, 0, sizeof(*set));
}

/* The whole of a /proc file, NUL-terminated; NULL when unreadable. */
char *monitor_read_file(const char *dir, const char *file)
{
	char path[1200], *buf = NULL, *grown;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 16384;
			if ((grown = realloc(buf, cap)) == NULL) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = grown;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* Puts "<key_prefix><word>" for each "word value" line (the first number
 * after the word; a trailing ':' of the word is dropped). */
static int sample_words(struct counter_set *set, char *text,
			const char *key_prefix, const char *const *only)
{
	char key[300], *line, *save = NULL, *word, *rest, *end;
	size_t hint = 0, word_len;
	double value;
	int error;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		word = line;
		word_len = strcspn(word, " \t");
		rest = word + word_len;
		if (word_len > 0 && word[word_len - 1] == ':')
			word_len--;
		if (word_len == 0 || word_len > 200)
			continue;
		if (only != NULL) {
			size_t k;

			for (k = 0; only[k] != NULL; k++)
				if (strlen(only[k]) == word_len &&
				    strncmp(only[k], word, word_len) == 0)
					break;
			if (only[k] == NULL)
				continue;
		}
		rest += strspn(rest, " \t");
		end = rest + strcspn(rest, " \t");
		if (!monitor_parse_number(rest, (size_t)(end - rest), &value))
			continue;
		snprintf(key, sizeof(key), "%s%.*s", key_prefix, (int)word_len,
			 word);
		error = counter_put(set, &hint, key, strlen(key), value);
		if (error < 0)
			return error;
	}
	return 0;
}

/* The "cpu" line of /proc/stat, column by column. */
static int sample_cpu(struct counter_set *set, const char *stat)
{
	static const char *const columns[] = {"user",	 "nice",   "system",
					      "idle",	 "iowait", "irq",
					      "softirq", "steal"};
	const char *p;
	char key[64];
	size_t hint = 0;
	double value;
	int error;

	if (strncmp(stat, "cpu ", 4) != 0)
		return 0;
	p = stat + 4;
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		size_t n;

		p += strspn(p, " ");
		n = strcspn(p, " \n");
		if (n == 0 || !monitor_parse_number(p, n, &value))
			break;
		snprintf(key, sizeof(key), "cpu.%s", columns[i]);
		if ((error =
			 counter_put(set, &hint, key, strlen(key), value)) < 0)
			return error;
		p += n;
	}
	return 0;
}

/* One sample of everything the enabled samplers need. */
int monitor_sampler_sample(struct monitor_run *monitoring)
{
	static const char *const stat_words[] = {
	    "intr", "ctxt", "procs_running", "procs_blocked", NULL};
	static const char *const meminfo_keys[] = {
	    "MemFree",	 "Buffers",  "Cached", "SReclaimable",
	    "SwapTotal", "SwapFree", NULL};
	char *text;
	int error = 0;

	if (monitoring->enabled[MONITOR_VMSTAT]) {
		if ((text = monitor_read_file(monitoring->proc_dir, "stat")) !=
		    NULL) {
			error = sample_cpu(&monitoring->raw, text);
			if (error == 0)
				error = sample_words(&monitoring->raw, text,
						     "stat.", stat_words);
			free(text);
		}
		if (error == 0 &&
		    (text = monitor_read_file(monitoring->proc_dir,
					      "meminfo")) != NULL) {
			error = sample_words(&monitoring->raw, text, "mem.",
					     meminfo_keys);
			free(text);
		}
	}
	if (error == 0 && (monitoring->enabled[MONITOR_VMSTAT] ||
			   monitoring->enabled[MONITOR_PROC_VMSTAT])) {
		if ((text = monitor_read_file(monitoring->proc_dir,
					      "vmstat")) != NULL) {
			error =
			    sample_words(&monitoring->raw, text, "vm.", NULL);
			free(text);
		}
	}
	if (error == 0) {
		double t = monitoring->now();

		if (monitoring->samples == 0)
			monitoring->first_t = t;
		monitoring->last_t = t;
		monitoring->samples++;
	}
	return error;
}

bool monitor_sampler_wanted(const struct monitor_run *monitoring)
{
	return monitoring->enabled[MONITOR_VMSTAT] ||
	       monitoring->enabled[MONITOR_PROC_VMSTAT];
}

static void *sampler_main(void *arg)
{
	struct monitor_run *monitoring = arg;
	struct timespec deadline;
	double next;

	pthread_mutex_lock(&monitoring->lock);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	next = (double)deadline.tv_sec + (double)deadline.tv_nsec / 1e9;
	while (!monitoring->stop) {
		int rc = 0;

		next += monitoring->interval_s;
		deadline.tv_sec = (time_t)next;
		deadline.tv_nsec =
		    (long)((next - (double)deadline.tv_sec) * 1e9);
		while (!monitoring->stop && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(
			    &monitoring->wake, &monitoring->lock, &deadline);
		if (!monitoring->stop &&
		    monitor_sampler_sample(monitoring) < 0)
			break; /* out of memory: the last sample will do */
	}
	pthread_mutex_unlock(&monitoring->lock);
	return NULL;
}

int monitor_sampler_start(struct monitor_run *monitoring)
{
	int error = -pthread_create(&monitoring->thread, NULL, sampler_main,
				    monitoring);

	if (error == 0)
		monitoring->sampler_running = true;
	return error;
}

void monitor_sampler_stop(struct monitor_run *monitoring)
{
	if (!monitoring->sampler_running)
		return;
	pthread_mutex_lock(&monitoring->lock);
	monitoring->stop = true;
	pthread_cond_signal(&monitoring->wake);
	pthread_mutex_unlock(&monitoring->lock);
	pthread_join(monitoring->thread, NULL);
	monitoring->sampler_running = false;
}
