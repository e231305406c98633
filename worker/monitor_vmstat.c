/* The vmstat monitor: the columns of vmstat(8) over the run, from the
 * sampler's /proc samples. */
#include <stdio.h>
#include <unistd.h>

#include "monitor_private.h"

static double raw_delta(const struct monitor_run *monitoring, const char *name,
			bool *ok)
{
	const struct counter *c = monitor_counter_get(&monitoring->raw, name);

	if (c == NULL || c->samples < 2) {
		*ok = false;
		return 0;
	}
	return c->last - c->first;
}

static double raw_mean(const struct monitor_run *monitoring, const char *name,
		       bool *ok)
{
	const struct counter *c = monitor_counter_get(&monitoring->raw, name);

	if (c == NULL || c->samples == 0) {
		*ok = false;
		return 0;
	}
	return c->sum / (double)c->samples;
}

static int add_if(struct metrics *into, const char *name, double value,
		  bool ok)
{
	return ok ? monitor_add_new(into, name, value) : 0;
}

int monitor_vmstat_metrics(const struct monitor_run *monitoring,
			   struct metrics *into)
{
	static const char *const cpu[] = {"user",    "nice",   "system",
					  "idle",    "iowait", "irq",
					  "softirq", "steal"};
	double d[8], total = 0,
		     elapsed = monitoring->last_t - monitoring->first_t;
	double page_kb = (double)sysconf(_SC_PAGESIZE) / 1024.0;
	bool ok, cpu_ok = true,
		 rate_ok = monitoring->samples >= 2 && elapsed > 0;
	char key[32];
	int error = 0;

	ok = true;
	error = add_if(into, "vmstat.procs.r",
		       raw_mean(monitoring, "stat.procs_running", &ok), ok);
	ok = true;
	if (!error)
		error = add_if(into, "vmstat.procs.b",
			       raw_mean(monitoring, "stat.procs_blocked", &ok),
			       ok);
	if (!error) {
		double v;

		ok = true;
		v = raw_mean(monitoring, "mem.SwapTotal", &ok) -
		    raw_mean(monitoring, "mem.SwapFree", &ok);
		error = add_if(into, "vmstat.memory.swpd", v, ok);
	}
	ok = true;
	if (!error)
		error = add_if(into, "vmstat.memory.free",
			       raw_mean(monitoring, "mem.MemFree", &ok), ok);
	ok = true;
	if (!error)
		error = add_if(into, "vmstat.memory.buff",
			       raw_mean(monitoring, "mem.Buffers", &ok), ok);
	if (!error) {
		double v, reclaimable;
		bool has_reclaimable = true;

		ok = true;
		v = raw_mean(monitoring, "mem.Cached", &ok);
		reclaimable =
		    raw_mean(monitoring, "mem.SReclaimable", &has_reclaimable);
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
			v = raw_delta(monitoring, rates[i].raw, &ok) / elapsed;
			if (rates[i].pages)
				v *= page_kb;
			error = add_if(into, rates[i].metric, v, ok);
		}
	}
	for (size_t i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "cpu.%s", cpu[i]);
		d[i] = raw_delta(monitoring, key, &cpu_ok);
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
			error = monitor_add_new(into, pct[i].metric,
						100.0 * pct[i].value / total);
	}
	return error;
}
