/*
 * What happened to a tested commit: it was built, its build failed, its
 * run crashed, timed out, printed no KPI, or ran.  The worker classifies
 * each run, the server stores the outcome per job and commit, and a job
 * whose commits gave no measurement names the real cause with
 * outcome_describe().  Pure: no I/O.
 */
#ifndef STATBISECT_OUTCOME_H
#define STATBISECT_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

enum outcome_status {
	OUTCOME_BUILT,	      /* built; no run reported yet */
	OUTCOME_BUILD_FAILED, /* the build command failed or timed out */
	OUTCOME_CRASHED,      /* a run exited non-zero or was killed */
	OUTCOME_TIMED_OUT,    /* a run reached the testcase's timeout */
	OUTCOME_NO_KPI,	      /* a run exited 0 without the KPI */
	OUTCOME_RAN,	      /* every run printed the KPI */
};

#define OUTCOME_STATUS_COUNT 6

/* The name of `status` as the API spells it: "built", "build_failed",
 * "crashed", "timed_out", "no_kpi", "ran"; "unknown" out of range. */
const char *outcome_status_name(enum outcome_status status);

/* Parses a name of outcome_status_name() into *out.  Returns 0, or -1
 * (and leaves *out alone) for any other text or NULL. */
int outcome_status_parse(enum outcome_status *out, const char *name);

/*
 * The outcome of one run from what its process did: timed out wins, then
 * a non-zero exit status or an ending signal (crashed), then whether the
 * KPI was printed (ran / no KPI).
 */
enum outcome_status outcome_of_run(int exit_code, int term_signal,
				   bool timed_out, bool has_kpi);

/* An outcome and its details, as stored for a commit. */
struct outcome {
	enum outcome_status status;
	int exit_code;	 /* crashed: the exit status; -1 when a signal */
	int term_signal; /* crashed: the signal that ended it, or 0 */
	/* no KPI: the metric names the run command printed (borrowed) */
	const char *const *metrics_seen;
	size_t metrics_seen_count;
};

/* The most names outcome_describe() lists; the rest are counted. */
#define OUTCOME_NAMES_MAX 20

/*
 * Why `who` (a noun phrase such as "the good commit") gave no measurement
 * of the KPI `kpi`, as one line without a final period, into a malloc'd
 * *out:
 *   "the good commit does not build"
 *   "the runs of the good commit crashed (exit status 3)"
 *   "the runs of the good commit crashed (killed by signal 11, SIGSEGV)"
 *   "the runs of the good commit timed out"
 *   "the runs of the good commit printed no metric 'x'; they printed: a, b"
 *   "the runs of the good commit printed no metrics at all"
 * Names are listed as given, at most OUTCOME_NAMES_MAX, then "and N more".
 * A name closest to `kpi` by edit distance (at most a third of its length)
 * is suggested: "(did you mean 'a'?)".  For "built" and "ran" the text
 * says the commit was measured.  Returns 0, or -1 when out of memory or
 * an argument is NULL.
 */
int outcome_describe(char **out, const char *who, const struct outcome *o,
		     const char *kpi);

#endif
