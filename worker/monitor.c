#include "monitor.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cause.h"
#include "log.h"
#include "runner.h"

/* Seconds the perf probe may take. */
#define MONITOR_PROBE_TIMEOUT_S 20.0

enum monitor_kind {
	MONITOR_VMSTAT,
	MONITOR_PROC_VMSTAT,
	MONITOR_PERF_STAT,
	MONITOR_TIME,
	MONITOR_KINDS
};

static const char *const monitor_names[MONITOR_KINDS] = {
    "vmstat", "proc-vmstat", "perf-stat", "time"};

/* One sampled quantity: its first and last value and the mean's sum. */
struct counter {
	char *name;
	double first, last, sum;
	size_t samples;
};

struct counter_set {
	struct counter *items;
	size_t count, capacity;
};

struct monitor_run {
	bool enabled[MONITOR_KINDS];
	bool ended;
	char proc_dir[1024];
	double interval_s;
	double (*now)(void);

	/* The samplers. */
	struct counter_set raw;
	double first_t, last_t;
	size_t samples;
	bool sampler_running;
	bool stop;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;

	/* The wrappers. */
	char *tmp_dir;
	char *perf_out, *time_out;
	char *command;
	char *env_text[5];
	const char *env[6];
};

/* Notes said once per process, so that 30 runs give one line. */
static atomic_uint notes_said;

enum note {
	NOTE_UNKNOWN = 1,
	NOTE_NO_PERF = 2,
	NOTE_PERF_SOFTWARE = 4,
	NOTE_NO_TIME = 8,
	NOTE_PROC = 16,
};

static void note_once(enum note which, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void note_once(enum note which, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (atomic_fetch_or(&notes_said, (unsigned)which) & (unsigned)which)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_warn("monitor: %s", text);
}

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool monitor_known(const char *name)
{
	if (name == NULL)
		return false;
	for (int k = 0; k < MONITOR_KINDS; k++)
		if (strcmp(name, monitor_names[k]) == 0)
			return true;
	return false;
}

/* Numbers. */

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale = (locale_t)0;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* A plain decimal number in s[0, len): digits, '.', sign, exponent. */
static bool parse_number(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	double v;

	pthread_once(&c_locale_once, c_locale_init);
	if (len == 0 || len >= sizeof(buf) || c_locale == (locale_t)0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]) &&
		    strchr(".+-eE", s[i]) == NULL)
			return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod_l(buf, &end, c_locale);
	if (end != buf + len || !isfinite(v))
		return false;
	*out = v;
	return true;
}

/* Adds `name` unless `into` has it already (the benchmark's own wins). */
static int add_new(struct metrics *into, const char *name, double value)
{
	if (!metrics_name_valid(name) || !isfinite(value) ||
	    metrics_find(into, name) != NULL)
		return 0;
	return metrics_add(into, name, value);
}

/* time -v */

/* "Maximum resident set size (kbytes)" -> "maximum_resident_set_size". */
static void time_label(char *out, size_t size, const char *label, size_t len)
{
	size_t n = 0, depth = 0;
	bool gap = false;

	for (size_t i = 0; i < len && n + 2 < size; i++) {
		unsigned char c = (unsigned char)label[i];

		if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth > 0)
				depth--;
		} else if (depth == 0 && isalnum(c) && c < 0x80) {
			if (gap && n > 0)
				out[n++] = '_';
			gap = false;
			out[n++] = (char)tolower(c);
		} else if (depth == 0) {
			gap = true;
		}
	}
	out[n] = '\0';
}

/* "h:mm:ss" or "m:ss.ss" as seconds. */
static bool parse_clock(const char *s, size_t len, double *out)
{
	double total = 0, part;
	size_t start = 0, fields = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ':')
			continue;
		if (!parse_number(s + start, i - start, &part) || part < 0)
			return false;
		total = total * 60 + part;
		fields++;
		start = i + 1;
	}
	if (fields < 2 || fields > 3)
		return false;
	*out = total;
	return true;
}

static int time_line(struct metrics *into, const char *line, size_t len)
{
	char label[128], name[160];
	const char *sep = NULL, *value, *end = line + len;
	size_t depth = 0;
	bool percent = false;
	double number;

	while (line < end && (*line == ' ' || *line == '\t'))
		line++;
	for (const char *p = line; p + 1 < end; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth > 0)
			depth--;
		else if (depth == 0 && p[0] == ':' && p[1] == ' ') {
			sep = p;
			break;
		}
	}
	if (sep == NULL)
		return 0;
	time_label(label, sizeof(label), line, (size_t)(sep - line));
	if (label[0] == '\0' || strcmp(label, "command_being_timed") == 0 ||
	    strcmp(label, "exit_status") == 0)
		return 0;
	for (value = sep + 2; value < end && (*value == ' ' || *value == '\t');
	     value++)
		;
	while (end > value &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end > value && end[-1] == '%') {
		percent = true;
		end--;
	}
	if (memchr(value, ':', (size_t)(end - value)) != NULL) {
		if (!parse_clock(value, (size_t)(end - value), &number))
			return 0;
	} else if (!parse_number(value, (size_t)(end - value), &number)) {
		return 0;
	}
	snprintf(name, sizeof(name), "time.%s%s", label, percent ? "%" : "");
	return add_new(into, name, number);
}

int monitor_parse_time(struct metrics *into, const char *text, size_t len)
{
	size_t pos = 0, line_len;
	const char *line, *newline;
	int error;

	if (into == NULL || (text == NULL && len > 0))
		return -EINVAL;
	while (pos < len) {
		line = text + pos;
		newline = memchr(line, '\n', len - pos);
		line_len = newline ? (size_t)(newline - line) : len - pos;
		pos += line_len + (newline ? 1 : 0);
		if ((error = time_line(into, line, line_len)) < 0)
			return error;
	}
	return 0;
}

/* perf stat -x, */

int monitor_parse_perf_stat(struct metrics *into, const char *text, size_t len,
			    size_t *counted)
{
	const struct metrics_entry *instructions, *cycles;
	size_t pos = 0, line_len, fields, n = 0;
	const char *line, *newline, *field[3], *field_end[3];
	char name[METRICS_NAME_MAX + 1];
	double value;
	int error;

	if (counted != NULL)
		*counted = 0;
	if (into == NULL || (text == NULL && len > 0))
		return -EINVAL;
	while (pos < len) {
		line = text + pos;
		newline = memchr(line, '\n', len - pos);
		line_len = newline ? (size_t)(newline - line) : len - pos;
		pos += line_len + (newline ? 1 : 0);
		if (line_len > 0 && line[line_len - 1] == '\r')
			line_len--;
		if (line_len == 0 || line[0] == '#')
			continue;
		field[0] = line;
		fields = 0;
		for (size_t i = 0; i <= line_len && fields < 3; i++) {
			if (i < line_len && line[i] != ',')
				continue;
			field_end[fields++] = line + i;
			if (fields < 3)
				field[fields] = line + i + 1;
		}
		if (fields < 3 || field_end[2] == field[2] ||
		    !parse_number(field[0], (size_t)(field_end[0] - field[0]),
				  &value))
			continue;
		if ((size_t)(field_end[2] - field[2]) + 10 > METRICS_NAME_MAX)
			continue;
		snprintf(name, sizeof(name), "perf-stat.%.*s",
			 (int)(field_end[2] - field[2]), field[2]);
		if (!metrics_name_valid(name))
			continue;
		if ((error = add_new(into, name, value)) < 0)
			return error;
		n++;
	}
	instructions = metrics_find(into, "perf-stat.instructions");
	cycles = metrics_find(into, "perf-stat.cycles");
	if (instructions != NULL && cycles != NULL &&
	    instructions->value > 0 && cycles->value > 0) {
		double ipc = instructions->value / cycles->value;
		double cpi = cycles->value / instructions->value;

		if ((error = add_new(into, "perf-stat.ipc", ipc)) < 0 ||
		    (error = add_new(into, "perf-stat.cpi", cpi)) < 0)
			return error;
	}
	if (counted != NULL)
		*counted = n;
	return 0;
}

/*
 * Whether perf counts anything here, probed once per perf program (the
 * last one asked about is remembered).
 */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static char probe_path[512];
static int probe_state; /* 0 unknown, 1 available, -1 not */

static bool perf_available(const char *perf)
{
	char env_perf[600];
	const char *env[2] = {env_perf, NULL};
	struct runner_result result;
	struct metrics *m = NULL;
	char *cause = NULL;
	size_t counted = 0;
	bool available = false;

	pthread_mutex_lock(&probe_lock);
	if (probe_state != 0 && strcmp(probe_path, perf) == 0) {
		available = probe_state > 0;
		pthread_mutex_unlock(&probe_lock);
		return available;
	}
	snprintf(env_perf, sizeof(env_perf), "STATBISECT_MONITOR_PERF=%s",
		 perf);
	if (runner_run(&result,
		       &(struct runner_spec){
			   .command = "exec \"$STATBISECT_MONITOR_PERF\""
				      " stat -x, -- true",
			   .env = env,
			   .timeout_s = MONITOR_PROBE_TIMEOUT_S},
		       &cause) == 0) {
		if (result.exit_code == 0 && metrics_new(&m) == 0 &&
		    monitor_parse_perf_stat(m, result.err, result.err_len,
					    &counted) == 0)
			available = counted > 0;
		if (!available)
			note_once(NOTE_NO_PERF,
				  "perf-stat skipped: '%s stat' counts "
				  "nothing here (exit %d): no perf-stat "
				  "metrics",
				  perf, result.exit_code);
		else if (metrics_find(m, "perf-stat.instructions") == NULL)
			note_once(NOTE_PERF_SOFTWARE,
				  "perf-stat: no hardware counters here "
				  "(instructions not supported); only "
				  "software events are counted");
		runner_result_clear(&result);
	} else {
		note_once(NOTE_NO_PERF, "perf-stat skipped: %s",
			  cause != NULL ? cause : "cannot run perf");
	}
	free(cause);
	metrics_free(m);
	snprintf(probe_path, sizeof(probe_path), "%s", perf);
	probe_state = available ? 1 : -1;
	pthread_mutex_unlock(&probe_lock);
	return available;
}

/* Samples of /proc. */

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

static const struct counter *counter_get(const struct counter_set *set,
					 const char *name)
{
	for (size_t i = 0; i < set->count; i++)
		if (strcmp(set->items[i].name, name) == 0)
			return &set->items[i];
	return NULL;
}

static void counter_set_clear(struct counter_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		free(set->items[i].name);
	free(set->items);
	memset(set, 0, sizeof(*set));
}

/* The whole of a /proc file, NUL-terminated; NULL when unreadable. */
static char *read_proc(const char *dir, const char *file)
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
		if (!parse_number(rest, (size_t)(end - rest), &value))
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
		if (n == 0 || !parse_number(p, n, &value))
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
static int take_sample(struct monitor_run *mon)
{
	static const char *const stat_words[] = {
	    "intr", "ctxt", "procs_running", "procs_blocked", NULL};
	static const char *const meminfo_keys[] = {
	    "MemFree",	 "Buffers",  "Cached", "SReclaimable",
	    "SwapTotal", "SwapFree", NULL};
	char *text;
	int error = 0;

	if (mon->enabled[MONITOR_VMSTAT]) {
		if ((text = read_proc(mon->proc_dir, "stat")) != NULL) {
			error = sample_cpu(&mon->raw, text);
			if (error == 0)
				error = sample_words(&mon->raw, text, "stat.",
						     stat_words);
			free(text);
		}
		if (error == 0 &&
		    (text = read_proc(mon->proc_dir, "meminfo")) != NULL) {
			error = sample_words(&mon->raw, text, "mem.",
					     meminfo_keys);
			free(text);
		}
	}
	if (error == 0 && (mon->enabled[MONITOR_VMSTAT] ||
			   mon->enabled[MONITOR_PROC_VMSTAT])) {
		if ((text = read_proc(mon->proc_dir, "vmstat")) != NULL) {
			error = sample_words(&mon->raw, text, "vm.", NULL);
			free(text);
		}
	}
	if (error == 0) {
		double t = mon->now();

		if (mon->samples == 0)
			mon->first_t = t;
		mon->last_t = t;
		mon->samples++;
	}
	return error;
}

static bool sampling(const struct monitor_run *mon)
{
	return mon->enabled[MONITOR_VMSTAT] ||
	       mon->enabled[MONITOR_PROC_VMSTAT];
}

static void *sampler_main(void *arg)
{
	struct monitor_run *mon = arg;
	struct timespec deadline;
	double next;

	pthread_mutex_lock(&mon->lock);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	next = (double)deadline.tv_sec + (double)deadline.tv_nsec / 1e9;
	while (!mon->stop) {
		int rc = 0;

		next += mon->interval_s;
		deadline.tv_sec = (time_t)next;
		deadline.tv_nsec =
		    (long)((next - (double)deadline.tv_sec) * 1e9);
		while (!mon->stop && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&mon->wake, &mon->lock,
						    &deadline);
		if (!mon->stop && take_sample(mon) < 0)
			break; /* out of memory: the last sample will do */
	}
	pthread_mutex_unlock(&mon->lock);
	return NULL;
}

/* The wrappers. */

/* A malloc'd formatted string, or NULL when out of memory. */
static char *format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	return text;
}

static int wrap(struct monitor_run *mon, const char *command,
		const struct monitor_options *opts, char **cause)
{
	const char *time_path =
	    opts->time_path ? opts->time_path : "/usr/bin/time";
	const char *perf_path = opts->perf_path ? opts->perf_path : "perf";
	const char *tmp = opts->tmp_dir ? opts->tmp_dir : getenv("TMPDIR");
	bool perf, time;
	size_t n = 0;
	int error;

	if (mon->enabled[MONITOR_TIME] && access(time_path, X_OK) != 0) {
		note_once(NOTE_NO_TIME,
			  "time skipped: %s: %s (install Debian's 'time' "
			  "package)",
			  time_path, strerror(errno));
		mon->enabled[MONITOR_TIME] = false;
	}
	if (mon->enabled[MONITOR_PERF_STAT] && !perf_available(perf_path))
		mon->enabled[MONITOR_PERF_STAT] = false;
	perf = mon->enabled[MONITOR_PERF_STAT];
	time = mon->enabled[MONITOR_TIME];
	if (!perf && !time)
		return (mon->command = strdup(command)) ? 0 : -ENOMEM;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	if ((mon->tmp_dir = format("%s/statbisect-monitor-XXXXXX", tmp)) ==
	    NULL)
		return -ENOMEM;
	if (mkdtemp(mon->tmp_dir) == NULL) {
		error = -errno;
		cause_set(cause, "cannot make a directory in %s: %s", tmp,
			  strerror(errno));
		free(mon->tmp_dir);
		mon->tmp_dir = NULL;
		return error;
	}
	mon->env_text[n++] = format("STATBISECT_MONITOR_COMMAND=%s", command);
	if (perf) {
		mon->perf_out = format("%s/perf-stat.csv", mon->tmp_dir);
		mon->env_text[n++] =
		    format("STATBISECT_MONITOR_PERF=%s", perf_path);
		mon->env_text[n++] =
		    format("STATBISECT_MONITOR_PERF_OUT=%s",
			   mon->perf_out ? mon->perf_out : "");
	}
	if (time) {
		mon->time_out = format("%s/time.txt", mon->tmp_dir);
		mon->env_text[n++] =
		    format("STATBISECT_MONITOR_TIME=%s", time_path);
		mon->env_text[n++] =
		    format("STATBISECT_MONITOR_TIME_OUT=%s",
			   mon->time_out ? mon->time_out : "");
	}
	mon->command =
	    format("exec%s%s /bin/sh -c \"$STATBISECT_MONITOR_COMMAND\"",
		   perf ? " \"$STATBISECT_MONITOR_PERF\" stat -x, -o"
			  " \"$STATBISECT_MONITOR_PERF_OUT\" --"
			: "",
		   time ? " \"$STATBISECT_MONITOR_TIME\" -v -o"
			  " \"$STATBISECT_MONITOR_TIME_OUT\""
			: "");
	if (mon->command == NULL || (perf && mon->perf_out == NULL) ||
	    (time && mon->time_out == NULL))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (mon->env_text[i] == NULL)
			return -ENOMEM;
		mon->env[i] = mon->env_text[i];
	}
	mon->env[n] = NULL;
	return 0;
}

int monitor_begin(struct monitor_run **out, const char *const *names,
		  size_t count, const char *command,
		  const struct monitor_options *opts, char **cause)
{
	struct monitor_options defaults = {0};
	struct monitor_run *mon;
	int error, k;

	if (cause != NULL)
		*cause = NULL;
	if (out != NULL)
		*out = NULL;
	if (out == NULL || command == NULL || (names == NULL && count > 0)) {
		cause_set(cause, "monitor_begin: invalid arguments");
		return -EINVAL;
	}
	if (opts == NULL)
		opts = &defaults;
	if ((mon = calloc(1, sizeof(*mon))) == NULL)
		goto nomem;
	pthread_mutex_init(&mon->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&mon->wake, &attr);
		pthread_condattr_destroy(&attr);
	}
	snprintf(mon->proc_dir, sizeof(mon->proc_dir), "%s",
		 opts->proc_dir ? opts->proc_dir : "/proc");
	mon->interval_s = opts->interval_s > 0 ? opts->interval_s : 1.0;
	mon->now = opts->now ? opts->now : monotonic_s;
	for (size_t i = 0; i < count; i++) {
		for (k = 0; k < MONITOR_KINDS; k++)
			if (names[i] != NULL &&
			    strcmp(names[i], monitor_names[k]) == 0)
				break;
		if (k < MONITOR_KINDS)
			mon->enabled[k] = true;
		else
			note_once(NOTE_UNKNOWN,
				  "unknown monitor '%.64s' ignored",
				  names[i] ? names[i] : "(null)");
	}
	if ((error = wrap(mon, command, opts, cause)) < 0)
		goto fail;
	if (sampling(mon)) {
		if ((error = take_sample(mon)) < 0)
			goto fail;
		if (mon->samples == 0 || mon->raw.count == 0) {
			note_once(NOTE_PROC,
				  "vmstat and proc-vmstat skipped: nothing "
				  "readable in %s",
				  mon->proc_dir);
			mon->enabled[MONITOR_VMSTAT] = false;
			mon->enabled[MONITOR_PROC_VMSTAT] = false;
		} else {
			error = -pthread_create(&mon->thread, NULL,
						sampler_main, mon);
			if (error < 0) {
				cause_set(cause, "cannot start a sampler: %s",
					  strerror(-error));
				goto fail;
			}
			mon->sampler_running = true;
		}
	}
	*out = mon;
	return 0;
nomem:
	error = -ENOMEM;
fail:
	if (error == -ENOMEM)
		cause_set(cause, "out of memory");
	monitor_free(mon);
	return error;
}

const char *monitor_command(const struct monitor_run *mon)
{
	return mon != NULL ? mon->command : NULL;
}

const char *const *monitor_env(const struct monitor_run *mon)
{
	return mon != NULL ? mon->env : NULL;
}

static void stop_sampler(struct monitor_run *mon)
{
	if (!mon->sampler_running)
		return;
	pthread_mutex_lock(&mon->lock);
	mon->stop = true;
	pthread_cond_signal(&mon->wake);
	pthread_mutex_unlock(&mon->lock);
	pthread_join(mon->thread, NULL);
	mon->sampler_running = false;
}

static double raw_delta(const struct monitor_run *mon, const char *name,
			bool *ok)
{
	const struct counter *c = counter_get(&mon->raw, name);

	if (c == NULL || c->samples < 2) {
		*ok = false;
		return 0;
	}
	return c->last - c->first;
}

static double raw_mean(const struct monitor_run *mon, const char *name,
		       bool *ok)
{
	const struct counter *c = counter_get(&mon->raw, name);

	if (c == NULL || c->samples == 0) {
		*ok = false;
		return 0;
	}
	return c->sum / (double)c->samples;
}

static int add_if(struct metrics *into, const char *name, double value,
		  bool ok)
{
	return ok ? add_new(into, name, value) : 0;
}

static int vmstat_metrics(const struct monitor_run *mon, struct metrics *into)
{
	static const char *const cpu[] = {"user",    "nice",   "system",
					  "idle",    "iowait", "irq",
					  "softirq", "steal"};
	double d[8], total = 0, elapsed = mon->last_t - mon->first_t;
	double page_kb = (double)sysconf(_SC_PAGESIZE) / 1024.0;
	bool ok, cpu_ok = true, rate_ok = mon->samples >= 2 && elapsed > 0;
	char key[32];
	int error = 0;

	ok = true;
	error = add_if(into, "vmstat.procs.r",
		       raw_mean(mon, "stat.procs_running", &ok), ok);
	ok = true;
	if (!error)
		error = add_if(into, "vmstat.procs.b",
			       raw_mean(mon, "stat.procs_blocked", &ok), ok);
	if (!error) {
		double v;

		ok = true;
		v = raw_mean(mon, "mem.SwapTotal", &ok) -
		    raw_mean(mon, "mem.SwapFree", &ok);
		error = add_if(into, "vmstat.memory.swpd", v, ok);
	}
	ok = true;
	if (!error)
		error = add_if(into, "vmstat.memory.free",
			       raw_mean(mon, "mem.MemFree", &ok), ok);
	ok = true;
	if (!error)
		error = add_if(into, "vmstat.memory.buff",
			       raw_mean(mon, "mem.Buffers", &ok), ok);
	if (!error) {
		double v, reclaimable;
		bool has_reclaimable = true;

		ok = true;
		v = raw_mean(mon, "mem.Cached", &ok);
		reclaimable =
		    raw_mean(mon, "mem.SReclaimable", &has_reclaimable);
		error = add_if(into, "vmstat.memory.cache",
			       v + (has_reclaimable ? reclaimable : 0), ok);
	}
	if (!error && rate_ok) {
		static const struct {
			const char *metric, *raw;
			bool pages;
		} rates[] = {
		    {"vmstat.swap.si", "vm.pswpin", true},
		    {"vmstat.swap.so", "vm.pswpout", true},
		    {"vmstat.io.bi", "vm.pgpgin", false},
		    {"vmstat.io.bo", "vm.pgpgout", false},
		    {"vmstat.system.in", "stat.intr", false},
		    {"vmstat.system.cs", "stat.ctxt", false},
		};

		for (size_t i = 0;
		     !error && i < sizeof(rates) / sizeof(rates[0]); i++) {
			double v;

			ok = true;
			v = raw_delta(mon, rates[i].raw, &ok) / elapsed;
			if (rates[i].pages)
				v *= page_kb;
			error = add_if(into, rates[i].metric, v, ok);
		}
	}
	for (size_t i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "cpu.%s", cpu[i]);
		d[i] = raw_delta(mon, key, &cpu_ok);
		total += d[i];
	}
	if (!error && cpu_ok && total > 0) {
		const struct {
			const char *metric;
			double value;
		} pct[] = {
		    {"vmstat.cpu.us%", d[0] + d[1]},
		    {"vmstat.cpu.sy%", d[2] + d[5] + d[6]},
		    {"vmstat.cpu.id%", d[3]},
		    {"vmstat.cpu.wa%", d[4]},
		    {"vmstat.cpu.st%", d[7]},
		};

		for (size_t i = 0; !error && i < sizeof(pct) / sizeof(pct[0]);
		     i++)
			error = add_new(into, pct[i].metric,
					100.0 * pct[i].value / total);
	}
	return error;
}

static int proc_vmstat_metrics(const struct monitor_run *mon,
			       struct metrics *into)
{
	char name[METRICS_NAME_MAX + 1];
	int error;

	for (size_t i = 0; i < mon->raw.count; i++) {
		const struct counter *c = &mon->raw.items[i];
		const char *counter = c->name + 3;
		double value;

		if (strncmp(c->name, "vm.", 3) != 0)
			continue;
		if (strncmp(counter, "nr_", 3) == 0)
			value = c->sum / (double)c->samples;
		else if (c->samples >= 2)
			value = c->last - c->first;
		else
			continue;
		snprintf(name, sizeof(name), "proc-vmstat.%s", counter);
		if ((error = add_new(into, name, value)) < 0)
			return error;
	}
	return 0;
}

/* Reads a wrapper's report; NULL when missing. */
static char *read_report(const char *path, size_t *len)
{
	char *text;
	const char *slash;
	char dir[1024];

	if (path == NULL)
		return NULL;
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	text = read_proc(dir, slash + 1);
	*len = text != NULL ? strlen(text) : 0;
	return text;
}

int monitor_end(struct monitor_run *mon, struct metrics *into)
{
	char *text;
	size_t len;
	int error = 0;

	if (mon == NULL || into == NULL)
		return -EINVAL;
	if (mon->ended)
		return 0;
	mon->ended = true;
	stop_sampler(mon);
	if (sampling(mon)) {
		if ((error = take_sample(mon)) < 0)
			return error;
		if (mon->enabled[MONITOR_VMSTAT] &&
		    (error = vmstat_metrics(mon, into)) < 0)
			return error;
		if (mon->enabled[MONITOR_PROC_VMSTAT] &&
		    (error = proc_vmstat_metrics(mon, into)) < 0)
			return error;
	}
	if (mon->enabled[MONITOR_PERF_STAT] &&
	    (text = read_report(mon->perf_out, &len)) != NULL) {
		error = monitor_parse_perf_stat(into, text, len, NULL);
		free(text);
		if (error < 0)
			return error;
	}
	if (mon->enabled[MONITOR_TIME] &&
	    (text = read_report(mon->time_out, &len)) != NULL) {
		error = monitor_parse_time(into, text, len);
		free(text);
	}
	return error;
}

void monitor_free(struct monitor_run *mon)
{
	if (mon == NULL)
		return;
	stop_sampler(mon);
	if (mon->perf_out != NULL)
		unlink(mon->perf_out);
	if (mon->time_out != NULL)
		unlink(mon->time_out);
	if (mon->tmp_dir != NULL)
		rmdir(mon->tmp_dir);
	free(mon->perf_out);
	free(mon->time_out);
	free(mon->tmp_dir);
	free(mon->command);
	for (size_t i = 0; i < 5; i++)
		free(mon->env_text[i]);
	counter_set_clear(&mon->raw);
	pthread_mutex_destroy(&mon->lock);
	pthread_cond_destroy(&mon->wake);
	free(mon);
}
