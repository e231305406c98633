/*
 * What the monitors share: the notes said once, numbers, the wrapper
 * command that runs the benchmark under perf and time, and
 * monitor_begin/end/free, which call the monitors of monitor_vmstat.c,
 * monitor_proc_vmstat.c, monitor_perf_stat.c, monitor_time.c and the
 * sampler of monitor_sampler.c.
 */
#include "monitor.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cause.h"
#include "log.h"
#include "monitor_private.h"

static const char *const monitor_names[MONITOR_KINDS] = {
    "vmstat", "proc-vmstat", "perf-stat", "time"};

/* Notes said once per process, so that 30 runs give one line. */
static atomic_uint notes_said;

void monitor_note_once(enum note which, const char *fmt, ...)
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
bool monitor_parse_number(const char *s, size_t len, double *out)
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
int monitor_add_new(struct metrics *into, const char *name, double value)
{
	if (!metrics_name_valid(name) || !isfinite(value) ||
	    metrics_find(into, name) != NULL)
		return 0;
	return metrics_add(into, name, value);
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

static int wrap(struct monitor_run *monitoring, const char *command,
		const struct monitor_options *opts, char **cause)
{
	const char *time_path =
	    opts->time_path ? opts->time_path : "/usr/bin/time";
	const char *perf_path = opts->perf_path ? opts->perf_path : "perf";
	const char *tmp = opts->tmp_dir ? opts->tmp_dir : getenv("TMPDIR");
	bool perf, time;
	size_t n = 0;
	int error;

	if (monitoring->enabled[MONITOR_TIME] &&
	    access(time_path, X_OK) != 0) {
		monitor_note_once(
		    NOTE_NO_TIME,
		    "time skipped: %s: %s (install Debian's 'time' "
		    "package)",
		    time_path, strerror(errno));
		monitoring->enabled[MONITOR_TIME] = false;
	}
	if (monitoring->enabled[MONITOR_PERF_STAT] &&
	    !monitor_perf_available(perf_path))
		monitoring->enabled[MONITOR_PERF_STAT] = false;
	perf = monitoring->enabled[MONITOR_PERF_STAT];
	time = monitoring->enabled[MONITOR_TIME];
	if (!perf && !time)
		return (monitoring->command = strdup(command)) ? 0 : -ENOMEM;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	if ((monitoring->tmp_dir =
		 format("%s/statbisect-monitor-XXXXXX", tmp)) == NULL)
		return -ENOMEM;
	if (mkdtemp(monitoring->tmp_dir) == NULL) {
		error = -errno;
		cause_set(cause, "cannot make a directory in %s: %s", tmp,
			  strerror(errno));
		free(monitoring->tmp_dir);
		monitoring->tmp_dir = NULL;
		return error;
	}
	monitoring->env_text[n++] =
	    format("STATBISECT_MONITOR_COMMAND=%s", command);
	if (perf) {
		monitoring->perf_out =
		    format("%s/perf-stat.csv", monitoring->tmp_dir);
		monitoring->env_text[n++] =
		    format("STATBISECT_MONITOR_PERF=%s", perf_path);
		monitoring->env_text[n++] =
		    format("STATBISECT_MONITOR_PERF_OUT=%s",
			   monitoring->perf_out ? monitoring->perf_out : "");
	}
	if (time) {
		monitoring->time_out =
		    format("%s/time.txt", monitoring->tmp_dir);
		monitoring->env_text[n++] =
		    format("STATBISECT_MONITOR_TIME=%s", time_path);
		monitoring->env_text[n++] =
		    format("STATBISECT_MONITOR_TIME_OUT=%s",
			   monitoring->time_out ? monitoring->time_out : "");
	}
	monitoring->command =
	    format("exec%s%s /bin/sh -c \"$STATBISECT_MONITOR_COMMAND\"",
		   perf ? " \"$STATBISECT_MONITOR_PERF\" stat -x, -o"
			  " \"$STATBISECT_MONITOR_PERF_OUT\" --"
			: "",
		   time ? " \"$STATBISECT_MONITOR_TIME\" -v -o"
			  " \"$STATBISECT_MONITOR_TIME_OUT\""
			: "");
	if (monitoring->command == NULL ||
	    (perf && monitoring->perf_out == NULL) ||
	    (time && monitoring->time_out == NULL))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (monitoring->env_text[i] == NULL)
			return -ENOMEM;
		monitoring->env[i] = monitoring->env_text[i];
	}
	monitoring->env[n] = NULL;
	return 0;
}

int monitor_begin(struct monitor_run **out, const char *const *names,
		  size_t count, const char *command,
		  const struct monitor_options *opts, char **cause)
{
	struct monitor_options defaults = {0};
	struct monitor_run *monitoring;
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
	if ((monitoring = calloc(1, sizeof(*monitoring))) == NULL)
		goto nomem;
	pthread_mutex_init(&monitoring->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&monitoring->wake, &attr);
		pthread_condattr_destroy(&attr);
	}
	snprintf(monitoring->proc_dir, sizeof(monitoring->proc_dir), "%s",
		 opts->proc_dir ? opts->proc_dir : "/proc");
	monitoring->interval_s = opts->interval_s > 0 ? opts->interval_s : 1.0;
	monitoring->now = opts->now ? opts->now : monotonic_s;
	for (size_t i = 0; i < count; i++) {
		for (k = 0; k < MONITOR_KINDS; k++)
			if (names[i] != NULL &&
			    strcmp(names[i], monitor_names[k]) == 0)
				break;
		if (k < MONITOR_KINDS)
			monitoring->enabled[k] = true;
		else
			monitor_note_once(NOTE_UNKNOWN,
					  "unknown monitor '%.64s' ignored",
					  names[i] ? names[i] : "(null)");
	}
	if ((error = wrap(monitoring, command, opts, cause)) < 0)
		goto fail;
	if (monitor_sampler_wanted(monitoring)) {
		if ((error = monitor_sampler_sample(monitoring)) < 0)
			goto fail;
		if (monitoring->samples == 0 || monitoring->raw.count == 0) {
			monitor_note_once(
			    NOTE_PROC,
			    "vmstat and proc-vmstat skipped: nothing "
			    "readable in %s",
			    monitoring->proc_dir);
			monitoring->enabled[MONITOR_VMSTAT] = false;
			monitoring->enabled[MONITOR_PROC_VMSTAT] = false;
		} else {
			error = monitor_sampler_start(monitoring);
			if (error < 0) {
				cause_set(cause, "cannot start a sampler: %s",
					  strerror(-error));
				goto fail;
			}
		}
	}
	*out = monitoring;
	return 0;
nomem:
	error = -ENOMEM;
fail:
	if (error == -ENOMEM)
		cause_set(cause, "out of memory");
	monitor_free(monitoring);
	return error;
}

const char *monitor_command(const struct monitor_run *monitoring)
{
	return monitoring != NULL ? monitoring->command : NULL;
}

const char *const *monitor_env(const struct monitor_run *monitoring)
{
	return monitoring != NULL ? monitoring->env : NULL;
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
	text = monitor_read_file(dir, slash + 1);
	*len = text != NULL ? strlen(text) : 0;
	return text;
}

int monitor_end(struct monitor_run *monitoring, struct metrics *into)
{
	char *text;
	size_t len;
	int error = 0;

	if (monitoring == NULL || into == NULL)
		return -EINVAL;
	if (monitoring->ended)
		return 0;
	monitoring->ended = true;
	monitor_sampler_stop(monitoring);
	if (monitor_sampler_wanted(monitoring)) {
		if ((error = monitor_sampler_sample(monitoring)) < 0)
			return error;
		if (monitoring->enabled[MONITOR_VMSTAT] &&
		    (error = monitor_vmstat_metrics(monitoring, into)) < 0)
			return error;
		if (monitoring->enabled[MONITOR_PROC_VMSTAT] &&
		    (error = monitor_proc_vmstat_metrics(monitoring, into)) <
			0)
			return error;
	}
	if (monitoring->enabled[MONITOR_PERF_STAT] &&
	    (text = read_report(monitoring->perf_out, &len)) != NULL) {
		error = monitor_parse_perf_stat(into, text, len, NULL);
		free(text);
		if (error < 0)
			return error;
	}
	if (monitoring->enabled[MONITOR_TIME] &&
	    (text = read_report(monitoring->time_out, &len)) != NULL) {
		error = monitor_parse_time(into, text, len);
		free(text);
	}
	return error;
}

void monitor_free(struct monitor_run *monitoring)
{
	if (monitoring == NULL)
		return;
	monitor_sampler_stop(monitoring);
	if (monitoring->perf_out != NULL)
		unlink(monitoring->perf_out);
	if (monitoring->time_out != NULL)
		unlink(monitoring->time_out);
	if (monitoring->tmp_dir != NULL)
		rmdir(monitoring->tmp_dir);
	free(monitoring->perf_out);
	free(monitoring->time_out);
	free(monitoring->tmp_dir);
	free(monitoring->command);
	for (size_t i = 0; i < 5; i++)
		free(monitoring->env_text[i]);
	monitor_counters_clear(&monitoring->raw);
	pthread_mutex_destroy(&monitoring->lock);
	pthread_cond_destroy(&monitoring->wake);
	free(monitoring);
}
