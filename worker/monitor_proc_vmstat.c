/* The proc-vmstat monitor: every /proc/vmstat counter over the run (the
 * change of an event count, the mean of an nr_ gauge). */
#include <stdio.h>
#include <string.h>

#include "monitor_private.h"

int monitor_proc_vmstat_metrics(const struct monitor_run *monitoring,
				struct metrics *into)
{
	char name[METRICS_NAME_MAX + 1];
	int error;

	for (size_t i = 0; i < monitoring->raw.count; i++) {
		const struct counter *c = &monitoring->raw.items[i];
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
		if ((error = monitor_add_new(into, name, value)) < 0)
			return error;
	}
	return 0;
}
