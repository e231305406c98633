/* The perf-stat monitor: `perf stat -x,` output as perf-stat.* metrics,
 * and the probe whether perf counts anything on this machine. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor_private.h"
#include "runner.h"

/* Seconds the perf probe may take. */
#define MONITOR_PROBE_TIMEOUT_S 20.0

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
		    !monitor_parse_number(
			field[0], (size_t)(field_end[0] - field[0]), &value))
			continue;
		if ((size_t)(field_end[2] - field[2]) + 10 > METRICS_NAME_MAX)
			continue;
		snprintf(name, sizeof(name), "perf-stat.%.*s",
			 (int)(field_end[2] - field[2]), field[2]);
		if (!metrics_name_valid(name))
			continue;
		if ((error = monitor_add_new(into, name, value)) < 0)
			return error;
		n++;
	}
	instructions = metrics_find(into, "perf-stat.instructions");
	cycles = metrics_find(into, "perf-stat.cycles");
	if (instructions != NULL && cycles != NULL &&
	    instructions->value > 0 && cycles->value > 0) {
		double ipc = instructions->value / cycles->value;
		double cpi = cycles->value / instructions->value;

		if ((error = monitor_add_new(into, "perf-stat.ipc", ipc)) <
			0 ||
		    (error = monitor_add_new(into, "perf-stat.cpi", cpi)) < 0)
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

bool monitor_perf_available(const char *perf)
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
			monitor_note_once(
			    NOTE_NO_PERF,
			    "perf-stat skipped: '%s stat' counts "
			    "nothing here (exit %d): no perf-stat "
			    "metrics",
			    perf, result.exit_code);
		else if (metrics_find(m, "perf-stat.instructions") == NULL)
			monitor_note_once(
			    NOTE_PERF_SOFTWARE,
			    "perf-stat: no hardware counters here "
			    "(instructions not supported); only "
			    "software events are counted");
		runner_result_clear(&result);
	} else {
		monitor_note_once(NOTE_NO_PERF, "perf-stat skipped: %s",
				  cause != NULL ? cause : "cannot run perf");
	}
	free(cause);
	metrics_free(m);
	snprintf(probe_path, sizeof(probe_path), "%s", perf);
	probe_state = available ? 1 : -1;
	pthread_mutex_unlock(&probe_lock);
	return available;
}
