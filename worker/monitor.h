/*
 * monitor: the monitors a testcase declares, run beside each benchmark run,
 * whose metrics are kept with the run's under their own prefix, as the
 * kernel test robot's monitors do ("vmstat.system.cs",
 * "proc-vmstat.pgfree", "perf-stat.instructions", "time.user_time").
 *
 * Built in:
 *
 * vmstat       /proc/stat, /proc/meminfo and /proc/vmstat sampled when the
 *              run starts, every interval_s during it and when it ends,
 *              reduced to the columns of vmstat(8):
 *              vmstat.procs.r, vmstat.procs.b            mean of the samples
 *              vmstat.memory.swpd, .free, .buff, .cache  mean, in kB
 *              vmstat.swap.si, vmstat.swap.so            kB/s over the run
 *              vmstat.io.bi, vmstat.io.bo                blocks (kB)/s
 *              vmstat.system.in, vmstat.system.cs        per second
 *              vmstat.cpu.us%, .sy%, .id%, .wa%, .st%    percent of the
 *                  CPU time of the run, as vmstat counts them (us = user
 *                  + nice, sy = system + irq + softirq); the '%' makes the
 *                  report show their change as a difference.
 * proc-vmstat  every line of /proc/vmstat, sampled the same way:
 *              proc-vmstat.<name>, for an event counter its increase over
 *              the run, for a gauge (a name starting with "nr_") the mean
 *              of the samples.
 * perf-stat    the run command wrapped as `perf stat -x, -o FILE --`,
 *              when `perf stat` counts at least one event on this machine
 *              (probed once per process): perf-stat.<event> for each
 *              counted event ("perf-stat.task-clock" in msec,
 *              "perf-stat.instructions"), and perf-stat.ipc and
 *              perf-stat.cpi when instructions and cycles were both
 *              counted.  Events perf cannot count here ("<not
 *              supported>") are left out.  Without perf, or without any
 *              countable event, the monitor is skipped with a note in the
 *              log and gives no metrics.
 * time         the run command wrapped as `/usr/bin/time -v -o FILE`:
 *              time.<label> for each line of its report, the label
 *              lower-cased without its parenthesised unit, blanks and
 *              punctuation as '_' ("Maximum resident set size (kbytes)" ->
 *              time.maximum_resident_set_size, in kB; "Elapsed (wall
 *              clock) time" -> time.elapsed_time, in seconds; "Percent of
 *              CPU this job got" -> time.percent_of_cpu_this_job_got%).
 *              "Exit status" and the command line are left out.
 *
 * The wrapped command never holds the benchmark's command text: it is
 *   exec "$STATBISECT_MONITOR_PERF" stat -x, -o "$STATBISECT_MONITOR_PERF_OUT"
 *     -- "$STATBISECT_MONITOR_TIME" -v -o "$STATBISECT_MONITOR_TIME_OUT"
 *     /bin/sh -c "$STATBISECT_MONITOR_COMMAND"
 * (either wrapper alone when only one is declared) with the values in the
 * environment, so the benchmark's command reaches /bin/sh -c exactly as
 * it would unwrapped, and nothing in it is parsed twice.
 *
 * A monitor that cannot start (no perf, no /usr/bin/time, an unreadable
 * /proc file) is skipped with a note in the log, once per process; the
 * run goes on without it.
 *
 * Errors are negated errno values; functions that can fail also set a
 * malloc'd message in *cause when `cause` is not NULL.
 */
#ifndef STATBISECT_MONITOR_H
#define STATBISECT_MONITOR_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"

struct monitor_options {
	/* Where /proc is; NULL means "/proc". */
	const char *proc_dir;
	/* Seconds between samples of vmstat and proc-vmstat; <= 0 means 1. */
	double interval_s;
	/* The GNU time program; NULL means "/usr/bin/time". */
	const char *time_path;
	/* The perf program, looked up in PATH; NULL means "perf". */
	const char *perf_path;
	/* Where the wrappers' output files go; NULL means $TMPDIR or /tmp. */
	const char *tmp_dir;
	/* Seconds on a monotonic clock; NULL means CLOCK_MONOTONIC.  For
	 * tests that need exact rates. */
	double (*now)(void);
};

struct monitor_run;

/*
 * Whether `name` is a built-in monitor: "vmstat", "proc-vmstat",
 * "perf-stat" or "time".
 */
bool monitor_known(const char *name);

/*
 * Prepares the monitors `names[0, count)` for one run of `command` and
 * starts the samplers (the first sample is taken before this returns).
 * Unknown names and repeated names are ignored (an unknown name with a
 * note); a monitor that cannot work here is skipped as said above.  `opts`
 * may be NULL for the defaults.
 *
 * On success *out is the monitor run, which the caller ends with
 * monitor_end() after the run and releases with monitor_free(); then run
 * monitor_command() with monitor_env() added to the environment in place
 * of `command`.  Returns 0, -EINVAL (out or command NULL, names NULL with
 * count > 0) or -ENOMEM, or the error of mkdtemp() or pthread_create();
 * then *out is NULL.
 */
int monitor_begin(struct monitor_run **out, const char *const *names,
		  size_t count, const char *command,
		  const struct monitor_options *opts, char **cause);

/*
 * The command to run: `command` itself, or the wrapper described above.
 * Belongs to `monitoring`.
 */
const char *monitor_command(const struct monitor_run *monitoring);

/*
 * "NAME=value" entries the command of monitor_command() needs in its
 * environment, NULL-terminated (just NULL when it is not wrapped).  They
 * belong to `monitoring`.
 */
const char *const *monitor_env(const struct monitor_run *monitoring);

/*
 * Stops the samplers, takes the last sample, reads the wrappers' reports
 * and adds every monitor's metrics to `into` (an existing name keeps its
 * value: the benchmark's own metrics win).  Call once, after the run
 * ended; a second call adds nothing.  Returns 0 or -ENOMEM (or -EINVAL for
 * NULL arguments).  Reports that are missing or malformed (a run killed
 * before the wrapper wrote it) only leave their metrics out.
 */
int monitor_end(struct monitor_run *monitoring, struct metrics *into);

/*
 * Stops what still runs, removes the wrappers' files and frees `monitoring`.
 * monitor_free(NULL) does nothing.
 */
void monitor_free(struct monitor_run *monitoring);

/*
 * Adds the metrics of a GNU `time -v` report (text[0, len)) to `into` as
 * time.<label>, named as above.  Lines that are not "label: number" are
 * ignored; "h:mm:ss" and "m:ss.ss" values become seconds, "25%" 25, "?%"
 * nothing.  Returns 0, -EINVAL or -ENOMEM.
 */
int monitor_parse_time(struct metrics *into, const char *text, size_t len);

/*
 * Adds the metrics of a `perf stat -x,` report (text[0, len)) to `into`
 * as perf-stat.<event>, plus perf-stat.ipc and perf-stat.cpi when
 * instructions and cycles are both counted and non-zero.  Comment lines,
 * blank lines and events not counted are ignored.  *counted, when not
 * NULL, receives the number of events counted.  Returns 0, -EINVAL or
 * -ENOMEM.
 */
int monitor_parse_perf_stat(struct metrics *into, const char *text, size_t len,
			    size_t *counted);

#endif
