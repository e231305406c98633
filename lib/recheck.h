/*
 * Re-checking a regression on a newer head (issue 13): a compare job
 * measures the culprit's parent, the culprit and a newer head of the
 * branch interleaved on one machine, and the engine's endpoint test
 * decides each of the last two against the parent (server/compare.c).
 * This file turns those two decisions into the re-check's outcome and
 * measures the head's change.  Pure.
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

/*
 * The outcome from the verdicts of the culprit's and the head's columns
 * against the parent, as compare jobs store them ("regression",
 * "improvement", "no-change", "inconclusive"; NULL: none): still a
 * regression when the head's column is a regression; fixed when it is no
 * change or an improvement; inconclusive otherwise, and whenever the
 * culprit's column is no regression (the regression did not show again,
 * so nothing can be said of the head).
 */
enum recheck_verdict recheck_decide(const char *culprit_column,
				    const char *head_column);

/* What the head's runs show, beside the engine's decisions. */
struct recheck_numbers {
	/* The head's change against the parent, percent of the parent's
	 * mean, signed as the values (negative: lower). */
	double change_pct;
	/* One-sided Welch p-values (stats_welch_t_one_sided): the head worse
	 * than the parent, and the head better than the culprit, "worse"
	 * and "better" as `higher_is_better` says. */
	double p_worse, p_better_than_culprit;
};

/*
 * Measures the head from `parent`, `culprit` and `head` (at least 2 runs
 * each).  Returns 0, or -1 for fewer than 2 runs on a side or a
 * non-finite value.
 */
int recheck_measure(struct recheck_numbers *out, const double *parent,
		    size_t parent_count, const double *culprit,
		    size_t culprit_count, const double *head,
		    size_t head_count, bool higher_is_better);

/* "still regression", "fixed" or "inconclusive". */
const char *recheck_verdict_name(enum recheck_verdict verdict);

#endif
