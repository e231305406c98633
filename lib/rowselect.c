#include "rowselect.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void rowselect_defaults(struct rowselect_options *out)
{
	out->min_runs = 3;
	out->min_ratio = 1.01;
	out->min_ratio_monitor = 1.05;
	out->perf_profile_min = 5;
	out->fdr = 0.05;
	out->test = ROWSELECT_WELCH;
}

static bool prefix_in(const char *name, size_t len, const char *const *list,
		      size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(list[i]) == len && strncmp(name, list[i], len) == 0)
			return true;
	return false;
}

enum rowselect_kind rowselect_kind_of(const char *name)
{
	static const char *const counters[] = {
	    "vmstat",	  "proc-vmstat", "perf-stat",	 "mpstat",
	    "meminfo",	  "numa-vmstat", "numa-meminfo", "numa-numastat",
	    "interrupts", "softirqs",	 "slabinfo",
	};
	static const char *const monitors[] = {
	    "time",	 "perf-profile", "perf-sched",
	    "perf-c2c",	 "sched_debug",	 "latency_stats",
	    "lock_stat", "turbostat",	 "cpuidle",
	};
	const char *dot = strchr(name, '.');
	size_t len;

	if (dot == NULL)
		return ROWSELECT_BENCHMARK;
	len = (size_t)(dot - name);
	if (prefix_in(name, len, counters,
		      sizeof(counters) / sizeof(counters[0])))
		return ROWSELECT_COUNTER;
	if (prefix_in(name, len, monitors,
		      sizeof(monitors) / sizeof(monitors[0])))
		return ROWSELECT_MONITOR;
	return ROWSELECT_BENCHMARK;
}

static bool all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

static bool side_valid(const double *x, size_t n)
{
	return n > 0 && x != NULL && all_finite(x, n);
}

static double minimum(const double *x, size_t n)
{
	double m = x[0];

	for (size_t i = 1; i < n; i++)
		m = x[i] < m ? x[i] : m;
	return m;
}

static double maximum(const double *x, size_t n)
{
	double m = x[0];

	for (size_t i = 1; i < n; i++)
		m = x[i] > m ? x[i] : m;
	return m;
}

/* The larger magnitude over the smaller; infinite across 0 or a sign. */
static double median_ratio(double a, double b)
{
	double big, small;

	if (a == 0 && b == 0)
		return 1;
	if (a == 0 || b == 0 || (a < 0) != (b < 0))
		return INFINITY;
	big = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	small = fabs(a) > fabs(b) ? fabs(b) : fabs(a);
	return big / small;
}

static bool robot_rule(const struct rowselect_series *s,
		       const struct rowselect_options *o)
{
	const double *a = s->base, *b = s->culprit;
	size_t na = s->base_count, nb = s->culprit_count;
	double med_a, med_b, min_ratio;

	if (na < o->min_runs && nb < o->min_runs)
		return false;
	med_a = stats_median(a, na);
	med_b = stats_median(b, nb);
	if (isnan(med_a) || isnan(med_b))
		return false;
	if (!((minimum(b, nb) > med_a && med_b > maximum(a, na)) ||
	      (maximum(b, nb) < med_a && med_b < minimum(a, na))))
		return false;
	min_ratio = rowselect_kind_of(s->name) == ROWSELECT_MONITOR
			? o->min_ratio_monitor
			: o->min_ratio;
	if (o->min_ratio > min_ratio)
		min_ratio = o->min_ratio;
	if (!(median_ratio(med_a, med_b) > min_ratio))
		return false;
	if (strncmp(s->name, "perf-profile", 12) == 0)
		return stats_mean(a, na) > o->perf_profile_min ||
		       stats_mean(b, nb) > o->perf_profile_min;
	return true;
}

static bool options_valid(const struct rowselect_options *o)
{
	return o->min_runs > 0 && o->min_ratio >= 1 &&
	       o->min_ratio_monitor >= 1 && o->fdr > 0 && o->fdr <= 1 &&
	       !isnan(o->perf_profile_min) &&
	       (o->test == ROWSELECT_WELCH ||
		o->test == ROWSELECT_MANN_WHITNEY);
}

bool rowselect_robot_rule(const struct rowselect_series *s,
			  const struct rowselect_options *opts)
{
	struct rowselect_options defaults;

	if (opts == NULL) {
		rowselect_defaults(&defaults);
		opts = &defaults;
	}
	if (s == NULL || s->name == NULL || !options_valid(opts) ||
	    !side_valid(s->base, s->base_count) ||
	    !side_valid(s->culprit, s->culprit_count))
		return false;
	return robot_rule(s, opts);
}

/* The p-value of the per-row test into *p; 0, 1 when the series cannot
 * be tested, or -ENOMEM. */
static int row_test(double *p, const struct rowselect_series *s,
		    enum rowselect_test test)
{
	struct stats_test result;
	size_t least = test == ROWSELECT_WELCH ? 2 : 1;
	int rc;

	*p = 1;
	if (s->base_count < least || s->culprit_count < least ||
	    !side_valid(s->base, s->base_count) ||
	    !side_valid(s->culprit, s->culprit_count))
		return 1;
	if (test == ROWSELECT_WELCH)
		rc = stats_welch_t(&result, s->base, s->base_count, s->culprit,
				   s->culprit_count);
	else
		rc = stats_mann_whitney(&result, s->base, s->base_count,
					s->culprit, s->culprit_count);
	if (rc == STATS_ENOMEM)
		return -ENOMEM;
	if (rc < 0 || isnan(result.p_value))
		return 1;
	*p = result.p_value < 0 ? 0 : result.p_value > 1 ? 1 : result.p_value;
	return 0;
}

int rowselect_select(struct rowselect_row *out,
		     const struct rowselect_series *series, size_t count,
		     const char *kpi, const struct rowselect_options *opts)
{
	struct rowselect_options defaults;
	double *p = NULL;
	size_t *which = NULL, tested = 0, i;
	int rc, error = 0;

	if (opts == NULL) {
		rowselect_defaults(&defaults);
		opts = &defaults;
	}
	if (count == 0)
		return options_valid(opts) ? 0 : -EINVAL;
	if (out == NULL || series == NULL || !options_valid(opts))
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if (series[i].name == NULL ||
		    (series[i].base == NULL && series[i].base_count > 0) ||
		    (series[i].culprit == NULL && series[i].culprit_count > 0))
			return -EINVAL;
	}
	p = malloc(count * sizeof(*p));
	which = malloc(count * sizeof(*which));
	if (p == NULL || which == NULL) {
		error = -ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		const struct rowselect_series *s = &series[i];
		struct rowselect_row *row = &out[i];

		row->robot = rowselect_robot_rule(s, opts);
		row->p_value = 1;
		row->q_value = 1;
		rc = row_test(&row->p_value, s, opts->test);
		if (rc < 0) {
			error = rc;
			goto out;
		}
		row->tested = rc == 0;
		if (row->tested) {
			p[tested] = row->p_value;
			which[tested++] = i;
		}
	}
	if (tested > 0 && stats_benjamini_hochberg(p, p, tested) < 0) {
		error = -ENOMEM;
		goto out;
	}
	for (i = 0; i < tested; i++)
		out[which[i]].q_value = p[i];
	for (i = 0; i < count; i++) {
		const struct rowselect_series *s = &series[i];
		struct rowselect_row *row = &out[i];
		bool is_kpi = kpi != NULL && strcmp(s->name, kpi) == 0;

		row->shown =
		    row->robot && row->tested && row->q_value <= opts->fdr;
		if (is_kpi && side_valid(s->base, s->base_count) &&
		    side_valid(s->culprit, s->culprit_count))
			row->shown = true;
	}
out:
	free(p);
	free(which);
	return error;
}
