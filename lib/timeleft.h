/*
 * How long a running job has left: the runs it still needs, at the pace
 * its own runs have come in so far.  Pure: no I/O, no clock.
 */
#ifndef STATBISECT_TIMELEFT_H
#define STATBISECT_TIMELEFT_H

#include <stddef.h>

/* What the estimate is made from. */
struct timeleft_input {
	double elapsed_s;    /* since the job's first claim */
	size_t runs_done;    /* runs made so far, failed ones included */
	size_t runs_pending; /* runs the engine asks for now */
	size_t steps_left;   /* search steps after the pending runs */
	size_t commits_tested;
	size_t search_runs;   /* runs of the tested commits, no confirmation */
	size_t step_runs_min; /* the fewest runs a new commit gets */
};

/*
 * The estimated seconds left: the pending runs plus, for each step left,
 * as many runs as a tested commit has needed on average so far (at least
 * step_runs_min), each taking the job's mean time per run so far (builds
 * and waits included).  NaN when there is nothing to measure the pace by
 * (no run yet, or no time elapsed).  Confirmation after the search is not
 * foreseen: it is counted once the engine asks for it.
 */
double timeleft_estimate(const struct timeleft_input *in);

/*
 * `seconds` for people, to the two largest units: "45 s", "4 min 12 s",
 * "2 h 5 min", "3 d 4 h" (rounded down; negative as 0).  "?" for NaN.
 * Returns buf.
 */
char *timeleft_format(char *buf, size_t size, double seconds);

#endif
