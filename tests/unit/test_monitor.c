/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../worker/monitor.h"
#include "../../worker/runner.h"
#include "metrics.h"

static struct metrics *new_set(void)
{
	struct metrics *m = NULL;

	assert_int_equal(metrics_new(&m), 0);
	return m;
}

static void assert_metric(const struct metrics *m, const char *name,
			  double value)
{
	const struct metrics_entry *e = metrics_find(m, name);

	if (e == NULL)
		fail_msg("no metric %s", name);
	if (!(fabs(e->value - value) <= 1e-9 * fmax(1, fabs(value))))
		fail_msg("%s = %.17g, want %.17g", name, e->value, value);
}

static size_t count_prefix(const struct metrics *m, const char *prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < m->count; i++)
		if (strncmp(m->entries[i].name, prefix, strlen(prefix)) == 0)
			n++;
	return n;
}

static void test_monitor__known_names(void **state)
{
	(void)state;
	assert_true(monitor_known("vmstat"));
	assert_true(monitor_known("proc-vmstat"));
	assert_true(monitor_known("perf-stat"));
	assert_true(monitor_known("time"));
	assert_false(monitor_known("perf-profile"));
	assert_false(monitor_known("Time"));
	assert_false(monitor_known(""));
	assert_false(monitor_known(NULL));
}

/* As GNU time 1.9 writes it for a command that exited with status 3. */
static const char time_report[] =
    "Command exited with non-zero status 3\n"
    "\tCommand being timed: \"sh -c x: 1\"\n"
    "\tUser time (seconds): 1.25\n"
    "\tSystem time (seconds): 0.50\n"
    "\tPercent of CPU this job got: 87%\n"
    "\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:02.01\n"
    "\tAverage shared text size (kbytes): 0\n"
    "\tMaximum resident set size (kbytes): 1428\n"
    "\tMajor (requiring I/O) page faults: 2\n"
    "\tMinor (reclaiming a frame) page faults: 85\n"
    "\tVoluntary context switches: 11\n"
    "\tInvoluntary context switches: 7\n"
    "\tFile system outputs: 16\n"
    "\tPage size (bytes): 4096\n"
    "\tExit status: 3\n";

static const char odd_report[] =
    "\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03\n"
    "\tPercent of CPU this job got: ?%\n"
    "\tSwaps: many\n\tSignals delivered: 0x10\n"
    "\tSocket messages sent: 5\r\n";

static void test_monitor__parse_time(void **state)
{
	struct metrics *m = new_set();

	(void)state;
	assert_int_equal(metrics_add(m, "time.swaps", 99), 0);
	assert_int_equal(
	    monitor_parse_time(m, time_report, strlen(time_report)), 0);
	assert_int_equal(m->count, 13);
	assert_metric(m, "time.swaps", 99);
	assert_metric(m, "time.user_time", 1.25);
	assert_metric(m, "time.system_time", 0.5);
	assert_metric(m, "time.percent_of_cpu_this_job_got%", 87);
	assert_metric(m, "time.elapsed_time", 2.01);
	assert_metric(m, "time.average_shared_text_size", 0);
	assert_metric(m, "time.maximum_resident_set_size", 1428);
	assert_metric(m, "time.major_page_faults", 2);
	assert_metric(m, "time.minor_page_faults", 85);
	assert_metric(m, "time.voluntary_context_switches", 11);
	assert_metric(m, "time.involuntary_context_switches", 7);
	assert_metric(m, "time.file_system_outputs", 16);
	assert_metric(m, "time.page_size", 4096);
	assert_null(metrics_find(m, "time.exit_status"));
	assert_null(metrics_find(m, "time.command_being_timed"));
	metrics_free(m);

	m = new_set();
	assert_int_equal(monitor_parse_time(m, odd_report, strlen(odd_report)),
			 0);
	assert_int_equal(m->count, 2);
	assert_metric(m, "time.elapsed_time", 3723);
	assert_metric(m, "time.socket_messages_sent", 5);
	assert_int_equal(monitor_parse_time(NULL, "", 0), -EINVAL);
	metrics_free(m);
}

/* As perf 6.1 writes `perf stat -x,` on a machine without a PMU, with
 * hardware rows added as a machine with one writes them. */
static const char perf_report[] =
    "# started on Wed Dec  2 11:52:08 2026\n"
    "\n"
    "1.49,msec,task-clock,1491881,100.00,0.685,CPUs utilized\n"
    "0,,context-switches,1491881,100.00,0.000,/sec\n"
    "63,,page-faults,1491881,100.00,42.229,K/sec\n"
    "4000000,,cycles,1491881,100.00,,\n"
    "<not supported>,,branches,0,100.00,,\n"
    "<not counted>,,branch-misses,0,0.00,,\n"
    "6000000,,instructions,1491881,100.00,1.50,insn per cycle\n"
    "garbage line\n"
    "5,,,1,100.00,,\n";

static void test_monitor__parse_perf_stat(void **state)
{
	struct metrics *m = new_set();
	size_t counted = 99;

	(void)state;
	assert_int_equal(metrics_add(m, "perf-stat.page-faults", 1), 0);
	assert_int_equal(monitor_parse_perf_stat(
			     m, perf_report, strlen(perf_report), &counted),
			 0);
	assert_int_equal(counted, 5);
	assert_int_equal(m->count, 7);
	assert_metric(m, "perf-stat.page-faults", 1); /* was there */
	assert_metric(m, "perf-stat.task-clock", 1.49);
	assert_metric(m, "perf-stat.context-switches", 0);
	assert_metric(m, "perf-stat.cycles", 4e6);
	assert_metric(m, "perf-stat.instructions", 6e6);
	assert_metric(m, "perf-stat.ipc", 1.5);
	assert_metric(m, "perf-stat.cpi", 4.0 / 6.0);
	assert_null(metrics_find(m, "perf-stat.branches"));
	metrics_free(m);

	m = new_set();
	assert_int_equal(
	    monitor_parse_perf_stat(
		m, "<not supported>,,instructions,0,100.00,,\n", 41, &counted),
	    0);
	assert_int_equal(counted, 0);
	assert_int_equal(m->count, 0);
	metrics_free(m);
}

static char *make_dir(void)
{
	char *dir = strdup("/tmp/sbmonitor-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_dir(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

static size_t entries_in(const char *dir)
{
	struct dirent *e;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static double fake_time;

static double fake_clock(void)
{
	double t = fake_time;

	fake_time += 2;
	return t;
}

static void test_monitor__vmstat_and_proc_vmstat_from_samples(void **state)
{
	static const char *const names[] = {"vmstat", "proc-vmstat"};
	struct monitor_options o = {0};
	struct monitor_run *mon = NULL;
	struct metrics *m = new_set();
	char *proc = make_dir(), *cause = (char *)1;
	double page_kb = (double)sysconf(_SC_PAGESIZE) / 1024.0;

	(void)state;
	write_file(proc, "stat",
		   "cpu  100 10 50 800 20 5 5 10 0 0\n"
		   "cpu0 100 10 50 800 20 5 5 10 0 0\n"
		   "intr 1000 1 2 3\nctxt 5000\nbtime 1\n"
		   "procs_running 3\nprocs_blocked 1\n");
	write_file(proc, "meminfo",
		   "MemTotal:  4000 kB\nMemFree:   1000 kB\n"
		   "Buffers:    100 kB\nCached:     500 kB\n"
		   "SwapCached:   9 kB\nSReclaimable: 50 kB\n"
		   "SwapTotal: 2000 kB\nSwapFree:  1500 kB\n");
	write_file(proc, "vmstat",
		   "nr_free_pages 250\npgpgin 1000\npgpgout 2000\n"
		   "pswpin 10\npswpout 20\npgfault 100\njunk\n"
		   "weird notanumber\n");
	fake_time = 10;
	o.proc_dir = proc;
	o.interval_s = 3600; /* no sample between the first and last */
	o.now = fake_clock;
	assert_int_equal(monitor_begin(&mon, names, 2, "true", &o, &cause), 0);
	assert_null(cause);
	assert_string_equal(monitor_command(mon), "true");
	assert_null(monitor_env(mon)[0]);

	write_file(proc, "stat",
		   "cpu  160 20 80 1000 30 10 10 10 0 0\n"
		   "intr 1600 1 2 3\nctxt 6000\n"
		   "procs_running 5\nprocs_blocked 3\n");
	write_file(proc, "meminfo",
		   "MemFree:    800 kB\nBuffers:    100 kB\n"
		   "Cached:     700 kB\nSReclaimable: 70 kB\n"
		   "SwapTotal: 2000 kB\nSwapFree:  1000 kB\n");
	write_file(proc, "vmstat",
		   "nr_free_pages 200\npgpgin 1400\npgpgout 2600\n"
		   "pswpin 14\npswpout 20\npgfault 250\nnewcounter 5\n");
	assert_int_equal(metrics_add(m, "vmstat.procs.r", 99), 0);
	assert_int_equal(monitor_end(mon, m), 0);
	/* elapsed 2 s by the fake clock; cpu total 320 jiffies */
	assert_metric(m, "vmstat.procs.r", 99); /* the benchmark's wins */
	assert_metric(m, "vmstat.procs.b", 2);
	assert_metric(m, "vmstat.memory.swpd", 750);
	assert_metric(m, "vmstat.memory.free", 900);
	assert_metric(m, "vmstat.memory.buff", 100);
	assert_metric(m, "vmstat.memory.cache", 660);
	assert_metric(m, "vmstat.swap.si", 2 * page_kb);
	assert_metric(m, "vmstat.swap.so", 0);
	assert_metric(m, "vmstat.io.bi", 200);
	assert_metric(m, "vmstat.io.bo", 300);
	assert_metric(m, "vmstat.system.in", 300);
	assert_metric(m, "vmstat.system.cs", 500);
	assert_metric(m, "vmstat.cpu.us%", 100.0 * 70 / 320);
	assert_metric(m, "vmstat.cpu.sy%", 100.0 * 40 / 320);
	assert_metric(m, "vmstat.cpu.id%", 100.0 * 200 / 320);
	assert_metric(m, "vmstat.cpu.wa%", 100.0 * 10 / 320);
	assert_metric(m, "vmstat.cpu.st%", 0);
	assert_int_equal(count_prefix(m, "vmstat."), 17);
	assert_metric(m, "proc-vmstat.nr_free_pages", 225);
	assert_metric(m, "proc-vmstat.pgpgin", 400);
	assert_metric(m, "proc-vmstat.pgpgout", 600);
	assert_metric(m, "proc-vmstat.pswpin", 4);
	assert_metric(m, "proc-vmstat.pswpout", 0);
	assert_metric(m, "proc-vmstat.pgfault", 150);
	/* seen once only: no increase to tell */
	assert_null(metrics_find(m, "proc-vmstat.newcounter"));
	assert_int_equal(count_prefix(m, "proc-vmstat."), 6);
	/* a second end adds nothing */
	assert_int_equal(monitor_end(mon, m), 0);
	assert_int_equal(m->count, 23);
	monitor_free(mon);
	metrics_free(m);
	remove_dir(proc);
	free(proc);
}

static void run_command(struct runner_result *r, const char *command,
			const char *const *env)
{
	char *cause = NULL;

	assert_int_equal(runner_run(r,
				    &(struct runner_spec){.command = command,
							  .env = env,
							  .timeout_s = 30},
				    &cause),
			 0);
	assert_null(cause);
}

/* Quotes, $ and the environment reach the wrapped command unchanged. */
static const char hostile_command[] =
    "printf '%s|' \"a b\" '$HOME' \"$STATBISECT_RUN\" \"$(echo sub)\"; "
    "echo; echo 'x: 1'; exit 3";

static void test_monitor__time_wraps_the_command(void **state)
{
	static const char *const names[] = {"bogus", "time", "time"};
	struct monitor_options o = {0};
	struct monitor_run *mon = NULL;
	struct runner_result direct, wrapped;
	const char *env[8];
	const char *const *extra;
	struct metrics *m = new_set();
	char *tmp = make_dir();
	size_t n = 0;

	(void)state;
	o.tmp_dir = tmp;
	assert_int_equal(
	    monitor_begin(&mon, names, 3, hostile_command, &o, NULL), 0);
	assert_string_equal(monitor_command(mon),
			    "exec \"$STATBISECT_MONITOR_TIME\" -v -o"
			    " \"$STATBISECT_MONITOR_TIME_OUT\" /bin/sh -c"
			    " \"$STATBISECT_MONITOR_COMMAND\"");
	for (extra = monitor_env(mon); *extra != NULL; extra++)
		env[n++] = *extra;
	assert_int_equal(n, 3);
	env[n++] = "STATBISECT_RUN=7";
	env[n] = NULL;
	assert_int_equal(entries_in(tmp), 1);

	run_command(&wrapped, monitor_command(mon), env);
	run_command(&direct, hostile_command, env + 3);
	assert_string_equal(wrapped.out, "a b|$HOME|7|sub|\nx: 1\n");
	assert_string_equal(wrapped.out, direct.out);
	assert_int_equal(wrapped.exit_code, 3);
	assert_int_equal(direct.exit_code, 3);

	assert_int_equal(monitor_end(mon, m), 0);
	assert_metric(m, "time.page_size", (double)sysconf(_SC_PAGESIZE));
	assert_true(metrics_find(m, "time.maximum_resident_set_size")->value >
		    0);
	assert_true(metrics_find(m, "time.elapsed_time")->value >= 0);
	assert_true(metrics_find(m, "time.user_time")->value >= 0);
	assert_int_equal(count_prefix(m, "time."), m->count);
	/* 21 report lines; the CPU percent is "?%" when no time passed */
	assert_int_equal(
	    m->count,
	    metrics_find(m, "time.percent_of_cpu_this_job_got%") ? 21 : 20);
	monitor_free(mon);
	assert_int_equal(entries_in(tmp), 0);
	runner_result_clear(&wrapped);
	runner_result_clear(&direct);
	metrics_free(m);
	rmdir(tmp);
	free(tmp);
}

static void test_monitor__missing_programs_are_skipped(void **state)
{
	static const char *const names[] = {"perf-stat", "time", "vmstat"};
	struct monitor_options o = {0};
	struct monitor_run *mon = NULL;
	struct metrics *m = new_set();

	(void)state;
	o.perf_path = "/nonexistent/perf";
	o.time_path = "/nonexistent/time";
	o.proc_dir = "/nonexistent/proc";
	assert_int_equal(monitor_begin(&mon, names, 3, "echo hi", &o, NULL),
			 0);
	assert_string_equal(monitor_command(mon), "echo hi");
	assert_null(monitor_env(mon)[0]);
	assert_int_equal(monitor_end(mon, m), 0);
	assert_int_equal(m->count, 0);
	monitor_free(mon);
	metrics_free(m);
}

/* perf counts at least software events here, or the monitor is off: in
 * either case what it gives matches what the probe found. */
static void test_monitor__perf_stat_wraps_when_perf_counts(void **state)
{
	static const char *const names[] = {"perf-stat", "time"};
	struct monitor_run *mon = NULL;
	struct runner_result r;
	struct metrics *m = new_set();
	const char *command = "echo 'bench.x: 5'";

	(void)state;
	assert_int_equal(monitor_begin(&mon, names, 2, command, NULL, NULL),
			 0);
	run_command(&r, monitor_command(mon), monitor_env(mon));
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.out, "bench.x: 5\n");
	assert_int_equal(monitor_end(mon, m), 0);
	assert_true(count_prefix(m, "time.") > 10);
	if (strstr(monitor_command(mon), "STATBISECT_MONITOR_PERF") != NULL) {
		assert_string_equal(
		    monitor_command(mon),
		    "exec \"$STATBISECT_MONITOR_PERF\" stat -x, -o"
		    " \"$STATBISECT_MONITOR_PERF_OUT\" --"
		    " \"$STATBISECT_MONITOR_TIME\" -v -o"
		    " \"$STATBISECT_MONITOR_TIME_OUT\" /bin/sh -c"
		    " \"$STATBISECT_MONITOR_COMMAND\"");
		assert_true(count_prefix(m, "perf-stat.") > 0);
		assert_true(metrics_find(m, "perf-stat.task-clock")->value >
			    0);
	} else {
		print_message("perf counts nothing here: checked the skip\n");
		assert_int_equal(count_prefix(m, "perf-stat."), 0);
	}
	monitor_free(mon);
	runner_result_clear(&r);
	metrics_free(m);
}

/* The real /proc, sampled every 20 ms during a 0.3 s run. */
static void test_monitor__samples_the_real_proc(void **state)
{
	static const char *const names[] = {"vmstat", "proc-vmstat"};
	struct monitor_options o = {0};
	struct monitor_run *mon = NULL;
	struct runner_result r;
	struct metrics *m = new_set();
	double cpu = 0;

	(void)state;
	o.interval_s = 0.02;
	assert_int_equal(monitor_begin(&mon, names, 2, "sleep 0.3", &o, NULL),
			 0);
	run_command(&r, monitor_command(mon), monitor_env(mon));
	assert_int_equal(monitor_end(mon, m), 0);
	assert_int_equal(count_prefix(m, "vmstat."), 17);
	cpu = metrics_find(m, "vmstat.cpu.us%")->value +
	      metrics_find(m, "vmstat.cpu.sy%")->value +
	      metrics_find(m, "vmstat.cpu.id%")->value +
	      metrics_find(m, "vmstat.cpu.wa%")->value +
	      metrics_find(m, "vmstat.cpu.st%")->value;
	assert_true(fabs(cpu - 100) < 1e-9);
	assert_true(metrics_find(m, "vmstat.system.cs")->value > 0);
	assert_true(metrics_find(m, "vmstat.memory.free")->value > 0);
	assert_true(count_prefix(m, "proc-vmstat.") > 20);
	assert_true(metrics_find(m, "proc-vmstat.nr_free_pages")->value > 0);
	assert_true(metrics_find(m, "proc-vmstat.pgfault")->value >= 0);
	monitor_free(mon);
	runner_result_clear(&r);
	metrics_free(m);
}

static void test_monitor__invalid_arguments(void **state)
{
	struct monitor_run *mon = (struct monitor_run *)1;
	struct metrics *m = new_set();
	char *cause = NULL;

	(void)state;
	assert_int_equal(monitor_begin(&mon, NULL, 1, "x", NULL, &cause),
			 -EINVAL);
	assert_null(mon);
	assert_non_null(cause);
	free(cause);
	assert_int_equal(monitor_begin(&mon, NULL, 0, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(monitor_begin(NULL, NULL, 0, "x", NULL, NULL),
			 -EINVAL);
	assert_int_equal(monitor_end(NULL, m), -EINVAL);
	assert_null(monitor_command(NULL));
	monitor_free(NULL);
	/* no monitor at all: the command as it is */
	assert_int_equal(monitor_begin(&mon, NULL, 0, "x", NULL, NULL), 0);
	assert_string_equal(monitor_command(mon), "x");
	assert_int_equal(monitor_end(mon, m), 0);
	assert_int_equal(m->count, 0);
	monitor_free(mon);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_monitor__known_names),
	    cmocka_unit_test(test_monitor__parse_time),
	    cmocka_unit_test(test_monitor__parse_perf_stat),
	    cmocka_unit_test(
		test_monitor__vmstat_and_proc_vmstat_from_samples),
	    cmocka_unit_test(test_monitor__time_wraps_the_command),
	    cmocka_unit_test(test_monitor__missing_programs_are_skipped),
	    cmocka_unit_test(test_monitor__perf_stat_wraps_when_perf_counts),
	    cmocka_unit_test(test_monitor__samples_the_real_proc),
	    cmocka_unit_test(test_monitor__invalid_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
