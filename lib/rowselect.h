/*
 * rowselect: which metrics the comparison table of a report shows.
 *
 * Every metric of every run is kept, so a report compares parent and
 * culprit on hundreds of metrics (the benchmark's own, and those of the
 * monitors beside it: vmstat.*, proc-vmstat.*, perf-stat.*, time.*).  A
 * row is shown when it passes the kernel test robot's rules (see
 * ../shared/REPORT_FORMAT.md, "Which rows are shown") AND a per-row
 * significance test whose p-values are adjusted with Benjamini-Hochberg
 * across all the rows that could be tested, so that the expected share of
 * false discoveries among the shown rows stays below `fdr`.  The KPI row
 * is always shown.
 *
 * The robot's rules, as implemented here:
 *
 * - at least `min_runs` (3) runs on one side;
 * - the two sets barely overlap: the culprit's minimum above the base
 *   median and the culprit's median above the base maximum, or the mirror
 *   image (maximum below the median, median below the minimum);
 * - the ratio of the medians (the larger magnitude over the smaller)
 *   above `min_ratio` (1.01) for every metric, and above
 *   `min_ratio_monitor` (1.05, the robot's newer habit; 1.10 in older
 *   versions) for a metric that is neither a benchmark's own nor a
 *   system-wide counter (see rowselect_kind_of()).  A median of 0 on one
 *   side only, or medians of opposite signs, count as a large ratio;
 * - perf-profile rows only when either mean is above `perf_profile_min`
 *   (5, percent of cycles).
 *
 * The per-row test is Welch's t test by default: with 5 runs a side the
 * exact Mann-Whitney test cannot reach a p-value below 2/252 = 0.008,
 * which Benjamini-Hochberg over a hundred rows never accepts; Welch's test
 * can.  Mann-Whitney can be chosen for long series.
 *
 * Pure: no I/O, no clock, no global state.  Errors are negated errno
 * values: -EINVAL for an argument that breaks a contract below, -ENOMEM.
 */
#ifndef STATBISECT_ROWSELECT_H
#define STATBISECT_ROWSELECT_H

#include <stdbool.h>
#include <stddef.h>

/* One metric's values: one per run, on each side. */
struct rowselect_series {
	const char *name;
	const double *base; /* parent (or good) */
	size_t base_count;
	const double *culprit; /* culprit (or bad) */
	size_t culprit_count;
};

enum rowselect_test {
	ROWSELECT_WELCH,       /* stats_welch_t, >= 2 runs a side */
	ROWSELECT_MANN_WHITNEY /* stats_mann_whitney, >= 1 run a side */
};

struct rowselect_options {
	size_t min_runs;	  /* 3 */
	double min_ratio;	  /* 1.01 */
	double min_ratio_monitor; /* 1.05 */
	double perf_profile_min;  /* 5 */
	double fdr;		  /* 0.05: largest q-value shown */
	enum rowselect_test test; /* ROWSELECT_WELCH */
};

/* What the selector found for one series. */
struct rowselect_row {
	bool shown;	/* the KPI, or robot && tested && q_value <= fdr */
	bool robot;	/* passes the robot's rules */
	bool tested;	/* the per-row test could run */
	double p_value; /* of the per-row test; 1 when not tested */
	double q_value; /* Benjamini-Hochberg over the tested rows; 1 when
			   not tested */
};

/* How a metric's name classes it for the ratio rule. */
enum rowselect_kind {
	/* The benchmark's own output: no monitor prefix. */
	ROWSELECT_BENCHMARK,
	/* A system-wide counter: vmstat, proc-vmstat, perf-stat, mpstat,
	 * meminfo, numa-vmstat, numa-meminfo, numa-numastat, interrupts,
	 * softirqs, slabinfo. */
	ROWSELECT_COUNTER,
	/* Another monitor's: time, perf-profile, perf-sched, perf-c2c,
	 * sched_debug, latency_stats, lock_stat, turbostat, cpuidle. */
	ROWSELECT_MONITOR
};

/* Fills *out with the defaults given above.  `out` must not be NULL. */
void rowselect_defaults(struct rowselect_options *out);

/*
 * The kind of metric `name` (not NULL) by its text before the first '.':
 * ROWSELECT_COUNTER or ROWSELECT_MONITOR for the prefixes listed above
 * (exact match), ROWSELECT_BENCHMARK otherwise, also for a name without a
 * '.'.
 */
enum rowselect_kind rowselect_kind_of(const char *name);

/*
 * Whether series `s` passes the robot's rules under `opts` (NULL for the
 * defaults).  False for a NULL series or name, an empty side, or a value
 * that is not finite.
 */
bool rowselect_robot_rule(const struct rowselect_series *s,
			  const struct rowselect_options *opts);

/*
 * Selects the rows of `series[0, count)` (names distinct) into
 * out[0, count), one per series in the same order: computes each row's
 * robot rule and per-row test, adjusts the p-values of the tested rows
 * with Benjamini-Hochberg, and marks a row shown when it passes both
 * (robot && q_value <= opts->fdr).  The series named `kpi` (or none, when
 * `kpi` is NULL) is shown whenever it has a run on each side.  A series
 * with a side too short for the test, or a value that is not finite, is
 * not tested and, unless it is the KPI, not shown.  `opts` NULL means the
 * defaults.
 *
 * Returns 0; -EINVAL when out or series is NULL with count > 0, a series
 * has a NULL name, or a side is NULL with a count above 0, or an option
 * is out of range (fdr outside (0, 1], a ratio below 1, min_runs 0);
 * -ENOMEM.  On error `out` is unspecified.
 */
int rowselect_select(struct rowselect_row *out,
		     const struct rowselect_series *series, size_t count,
		     const char *kpi, const struct rowselect_options *opts);

#endif
