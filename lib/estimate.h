/*
 * estimate - the one estimate of a change that every view of a job shows
 * (email subject, report table, API, job page, CLI), with its 95%
 * confidence interval.  docs/BISECTION.md ("The change and its interval")
 * says which runs it uses and why.  Pure functions: no I/O, no state.
 */
#ifndef STATBISECT_ESTIMATE_H
#define STATBISECT_ESTIMATE_H

#include <stddef.h>

#include "bisect.h"

struct estimate_change {
	/* 100 * (mean(changed) - mean(base)) / |mean(base)|; when the base
	 * mean is 0, relative to |mean(changed)| (0 when both are 0). */
	double change_pct;
	/* The 95% confidence interval of change_pct (Fieller's, for the
	 * ratio of the two means with unequal variances): every change whose
	 * Welch test against the runs has a two-sided p-value of at least
	 * 0.05.  Both NaN when it has no finite bounds (fewer than two runs
	 * a side, a base mean of 0, or a base mean too uncertain to bound
	 * the ratio). */
	double ci95_lo, ci95_hi;
	double base_mean, changed_mean;
	size_t base_runs, changed_runs;
};

/*
 * The change from `base` (base_count values) to `changed` (changed_count
 * values), into *out.  Returns 0, or -1 when a side has no value, a value
 * is not finite or an argument is NULL (then *out is zeroed).
 */
int estimate_change(struct estimate_change *out, const double *base,
		    size_t base_count, const double *changed,
		    size_t changed_count);

/*
 * As estimate_change, over every run of each commit: its search runs and
 * its confirmation runs together (the runs the report's table counts).
 */
int estimate_commits(struct estimate_change *out,
		     const struct bisect_commit *base,
		     const struct bisect_commit *changed);

#endif
