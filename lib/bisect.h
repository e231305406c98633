/*
 * The bisection engine: a pure function from (candidate commits, runs so far,
 * options) to either the next runs to ask for or the final verdict.  No I/O,
 * clock, database or global state, so the server's scheduler and the
 * simulator in bench/ run exactly the same code.  Calling it again with the
 * same input gives the same answer; the server calls it after every upload.
 *
 * This version bisects a linear range: the candidates are the first-parent
 * chain from `good` (index 0) to `bad` (index count - 1).
 */
#ifndef STATBISECT_BISECT_H
#define STATBISECT_BISECT_H

#include <stdbool.h>
#include <stddef.h>

enum bisect_verdict {
	BISECT_PENDING = 0, /* more runs are needed */
	BISECT_REGRESSION,
	BISECT_IMPROVEMENT,
	BISECT_NO_CHANGE,
	BISECT_INCONCLUSIVE,
};

/* What the engine concluded about one commit. */
enum bisect_class {
	BISECT_UNTESTED = 0,
	BISECT_GOOD_LIKE,
	BISECT_BAD_LIKE,
	BISECT_UNDECIDED, /* tested, evidence still weak */
	BISECT_SKIPPED,   /* build failed */
};

struct bisect_options {
	size_t runs_min;       /* runs of a commit before its first test */
	size_t runs_max;       /* most runs of one commit */
	double min_change_pct; /* smallest change of the KPI that matters */
	double alpha;          /* false-alarm rate of one decision */
	bool higher_is_better; /* direction of the KPI */
};

struct bisect_commit {
	const double *values; /* the KPI of each run so far */
	size_t value_count;
	bool build_failed;
};

struct bisect_request {
	size_t commit; /* index into the candidates */
	size_t runs;   /* additional runs wanted */
};

#define BISECT_MAX_REQUESTS 2

struct bisect_result {
	enum bisect_verdict verdict;
	/* While pending: the runs to ask for, in the order to run them. */
	struct bisect_request requests[BISECT_MAX_REQUESTS];
	size_t request_count;
	/* The first bad commit lies in (lo, hi]; when done lo is the parent. */
	size_t lo, hi;
	/* Regression or improvement: the culprit and the commit before it.
	 * culprit_ambiguous: commits in (lo, hi) could not be built, so any
	 * of them may be the culprit. */
	size_t culprit, parent;
	bool culprit_ambiguous;
	/* Change of the KPI mean, culprit vs parent (good vs bad when there is
	 * no culprit), in percent of the older mean, and its Welch p-value. */
	double change_pct;
	double p_value;
	const char *reason; /* static text: why inconclusive, else NULL */
};

/* Fills *opts with the defaults: 5 to 30 runs, 1%, alpha 0.01. */
void bisect_options_init(struct bisect_options *opts, bool higher_is_better);

/*
 * Decides the next step of a bisection over `count` (>= 2) candidates.
 * `classes`, when not NULL, has `count` slots and receives what the engine
 * thinks of each commit.  Returns 0, or -1 for invalid input (fewer than two
 * candidates, options out of range).
 */
int bisect_step(struct bisect_result *out, enum bisect_class *classes,
		const struct bisect_commit *commits, size_t count,
		const struct bisect_options *opts);

/* "regression", "improvement", "no-change", "inconclusive", or NULL. */
const char *bisect_verdict_name(enum bisect_verdict verdict);

/* "untested", "good", "bad", "undecided", "skipped". */
const char *bisect_class_name(enum bisect_class cls);

#endif
