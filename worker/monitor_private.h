/*
 * The parts of the worker's monitors (monitor.h) that their files share:
 * monitor.c (notes, numbers, the wrapper command, begin/end/free),
 * monitor_sampler.c (the /proc sampler thread), and one file per monitor:
 * monitor_vmstat.c, monitor_proc_vmstat.c, monitor_perf_stat.c,
 * monitor_time.c.  Not for callers outside worker/monitor*.c.
 */
#ifndef STATBISECT_MONITOR_PRIVATE_H
#define STATBISECT_MONITOR_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"
#include "monitor.h"

enum monitor_kind {
	MONITOR_VMSTAT,
	MONITOR_PROC_VMSTAT,
	MONITOR_PERF_STAT,
	MONITOR_TIME,
	MONITOR_KINDS
};

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

/* The notes logged once per process, so that 30 runs give one line. */
enum note {
	NOTE_UNKNOWN = 1,
	NOTE_NO_PERF = 2,
	NOTE_PERF_SOFTWARE = 4,
	NOTE_NO_TIME = 8,
	NOTE_PROC = 16,
};

/* Logs the printf-style warning unless note `which` was logged before. */
void monitor_note_once(enum note which, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses s[0, len) as a plain decimal number (digits, '.', sign,
 * exponent; C locale) into *out; false when it is none or not finite. */
bool monitor_parse_number(const char *s, size_t len, double *out);

/* Adds metric `name` unless `into` has it already (the benchmark's own
 * wins) or the name or value is not valid; 0 or a metrics_add error. */
int monitor_add_new(struct metrics *into, const char *name, double value);

/* The whole of file `file` in `dir`, malloc'd and NUL-terminated; NULL
 * when it cannot be read. */
char *monitor_read_file(const char *dir, const char *file);

/* monitor_sampler.c: the counter of that name in `set`, or NULL. */
const struct counter *monitor_counter_get(const struct counter_set *set,
					  const char *name);

/* Frees the counters; the set is empty afterwards. */
void monitor_counters_clear(struct counter_set *set);

/* Whether an enabled monitor needs /proc samples (vmstat, proc-vmstat). */
bool monitor_sampler_wanted(const struct monitor_run *monitoring);

/* Takes one sample of everything the enabled monitors need into
 * monitoring->raw; 0 or -ENOMEM. */
int monitor_sampler_sample(struct monitor_run *monitoring);

/* Starts the thread sampling every monitoring->interval_s; 0 or a negative
 * errno of pthread_create. */
int monitor_sampler_start(struct monitor_run *monitoring);

/* Stops and joins the sampler thread, when it runs. */
void monitor_sampler_stop(struct monitor_run *monitoring);

/* monitor_perf_stat.c: whether `perf stat` counts anything here (probed
 * once per perf program; a note says why not). */
bool monitor_perf_available(const char *perf);

/* monitor_vmstat.c: the vmstat.* metrics of the samples; 0 or an error
 * of metrics_add. */
int monitor_vmstat_metrics(const struct monitor_run *monitoring,
			   struct metrics *into);

/* monitor_proc_vmstat.c: the proc-vmstat.* metrics of the samples. */
int monitor_proc_vmstat_metrics(const struct monitor_run *monitoring,
				struct metrics *into);

#endif
