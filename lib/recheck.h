/*
 * Re-checking a regression on a newer head (issue 13): runs of the
 * culprit's parent, the culprit and a newer head of the branch, made
 * interleaved on one machine, decide whether the regression is still
 * there, was fixed, or cannot be told yet.  Pure: the server's compare
 * job supplies the runs and keeps the answer on the regression's job.
 */
#ifndef STATBISECT_RECHECK_H
#define STATBISECT_RECHECK_H

#include <stdbool.h>
#include <stddef.h>

enum recheck_verdict {
	RECHECK_STILL,	      /* the head is worse than the parent */
	RECHECK_FIXED,	      /* the head is back at the parent's level */
	RECHECK_INCONCLUSIVE, /* neither could be shown */
};

struct recheck_result {
	enum recheck_verdict verdict;
	/* The head's change against the parent, percent of the parent's
	 * mean, signed as the values (negative: lower). */
	double change_pct;
	/* One-sided Welch p-values (stats_welch_t_one_sided): the head worse
	 * than the parent; the head better than the culprit; the head
	 * within min_change_pct of the parent or better. */
	double p_worse, p_better_than_culprit, p_level;
};

/*
 * Judges the head from `parent`, `culprit` and `head` (at least 2 runs
 * each), where `higher_is_better` tells which way is worse and
 * `min_change_pct` is the smallest change that counts (the testcase's).
 * Still a regression: the head is worse than the parent at level `alpha`
 * and by at least min_change_pct.  Fixed: the head is better than the
 * culprit at `alpha` and not worse than the parent by min_change_pct
 * (that too shown at `alpha`).  Inconclusive otherwise.  Returns 0, or
 * -1 for fewer than 2 runs on a side, a non-finite value, or alpha or
 * min_change_pct out of (0, 1) and [0, 100).
 */
int recheck_judge(struct recheck_result *out, const double *parent,
		  size_t parent_count, const double *culprit,
		  size_t culprit_count, const double *head, size_t head_count,
		  bool higher_is_better, double min_change_pct, double alpha);

/* "still regression", "fixed" or "inconclusive". */
const char *recheck_verdict_name(enum recheck_verdict verdict);

#endif
