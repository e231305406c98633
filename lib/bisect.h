/*
 * lib/: the pure work that the server, the worker, the command line and
 * the simulator share, with no database and no global state
 * (docs/ARCHITECTURE.md).
 *
 * The bisection engine: a pure function from (candidate DAG, runs so far,
 * options) to either the next runs to ask for or the final verdict.  No
 * I/O, clock, database or global state, so the server's scheduler and the
 * simulator (bin/statbisect-sim) run exactly the same code.  The engine
 * keeps no memory between calls: it replays its own earlier decisions from
 * the runs, so calling it again with the same input gives the same answer.
 *
 * Candidates are the commits of the range in topological order: index 0 is
 * `good`, index count-1 is `bad`, every commit is an ancestor of `bad`, and
 * each commit lists its parents inside the range (parents outside the range
 * are ancestors of `good` and taken as good).  A linear range is the chain
 * where commit i has the single parent i-1.
 *
 * How it decides (docs/BISECTION.md has the long form):
 *  1. The endpoints are compared with interleaved runs, three ways:
 *     different (Welch's t and Mann-Whitney U both significant, with alpha
 *     split over the looks, and the change not provably below
 *     min_change_pct), same (two one-sided tests within min_change_pct), or
 *     unknown (more runs, up to runs_max; then inconclusive).
 *  2. The range is bisected as `git bisect` does on a DAG (the commit that
 *     best halves the candidates; commits whose build failed are avoided).
 *     Each tested commit is classified sequentially against the two levels
 *     on either side of its segment, estimated from the commits classified
 *     so far: a likelihood ratio of the commit's (clipped) location under
 *     each level that counts the levels' own uncertainty, so a level known
 *     from few runs gets more runs rather than deciding too much, and a
 *     consistency check; a commit like neither level splits the segment
 *     in two, so every change point is found.  When the search runs show
 *     a second mode far from the first (a machine that runs a share of
 *     its runs much slower) and their order is known (seq), a tested
 *     commit is run interleaved with a commit of each level (low, commit,
 *     high) and classified on the medians of those triplets, which a
 *     slow stretch shifts alike.
 *  3. Each culprit is confirmed against its parent with fresh interleaved
 *     runs before it is reported (a culprit the fresh runs refute is not
 *     named beside a confirmed one).  When the runs' order is known
 *     (confirm_seq) only pairs are compared, a run of the culprit next to
 *     one of its parent, both sides getting as many new runs: their
 *     differences by the pooled t-test, or by Wilcoxon's signed-rank test
 *     when they spread wider than the noise allows (the machine changed
 *     speed inside a pair).  The confidence is the probability
 *     that it is the culprit: the search's error bounds give the prior
 *     odds, the fresh runs' likelihood ratio (a change of the size found
 *     against none) updates them.
 *     Then the commits the search put at each level are checked for a
 *     change it stepped over, and any found is searched too.
 *  4. When the endpoints are the same, up to `probes` interior commits
 *     are measured first; one clearly outside both endpoint levels
 *     splits the range (two opposite changes that cancel).
 *  5. The verdict: regression when a confirmed culprit worsens the KPI,
 *     improvement when every confirmed culprit improves it; each culprit
 *     carries its own direction.  Without a confirmed culprit (none
 *     found, or its own confirmation refuted it) the verdict is
 *     inconclusive, with the reason.
 * Tests on fresh runs use the noise's sd pooled over every decided commit.
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
	BISECT_GOOD_LIKE, /* at the level of the older side of its segment */
	BISECT_BAD_LIKE,  /* at the level of the newer side */
	BISECT_UNDECIDED, /* tested, not (or not yet) decided: under test
			     with weak evidence, or in a part of the range
			     that the search left */
	BISECT_SKIPPED,	  /* build failed (or the benchmark kept failing) */
	BISECT_NEITHER,	  /* at a third level: a change point on each side */
};

/* Why a run was asked for; runs are kept apart by purpose. */
enum bisect_purpose {
	BISECT_SEARCH = 0,  /* endpoints and bisection steps */
	BISECT_CONFIRM = 1, /* fresh runs confirming a culprit */
};

struct bisect_options {
	size_t runs_min;       /* runs of an endpoint before its first test */
	size_t runs_max;       /* most search runs of one commit */
	size_t step_runs_min;  /* runs of a tested commit before its first
				  look (>= 2) */
	size_t confirm_runs;   /* fresh runs per side of a confirmation */
	size_t confirm_max;    /* most confirmation runs per side of one
				  confirmation (a commit a follow-up
				  compares may get as many again) */
	double min_change_pct; /* smallest change of the KPI that matters */
	double alpha;	       /* false-alarm rate of the endpoint test */
	double step_alpha;     /* error bound of one classification */
	bool higher_is_better; /* direction of the KPI */
	bool confirm;	       /* confirm culprits (on by default) */
	size_t probes;	       /* interior commits probed before a range
				  whose endpoints are the same is called
				  no-change (opposite changes may cancel);
				  0: none */
	/* Bisect a segment at a commit that already has search runs,
	 * the one that splits it nearest half, before an unmeasured
	 * one: a job that several machines narrowed (lib/spread.h) goes
	 * on from its settled machine's runs without measuring again
	 * the commits of a search it did not make.  Off by default. */
	bool prefer_measured;
};

struct bisect_commit {
	const double *values; /* KPI of each search run, in run order */
	size_t value_count;
	const double *confirm_values; /* KPI of each confirmation run, in
					 run order */
	size_t confirm_count;
	const size_t *parents; /* indices of parents inside the range */
	size_t parent_count;
	bool build_failed;
	/* Each confirmation run's place in the order the job's runs were
	 * made (1, 2, ...; one count over every commit, increasing within
	 * a commit), or NULL / a 0 entry when that order is unknown.  With
	 * it a confirmation compares its two sides in pairs of runs made
	 * one after the other, which a machine that switches speed between
	 * runs cannot fake; without it, all runs of each side, as before. */
	const size_t *confirm_seq;
	/* Each search run's place in that same order (NULL / a 0 entry:
	 * unknown).  With it, on a machine whose runs show a second mode
	 * far from the first, a tested commit is run interleaved with a
	 * commit of each level it is compared with (low, commit, high) and
	 * classified on those triplets, which a slow stretch shifts alike. */
	const size_t *seq;
};

struct bisect_request {
	size_t commit;		     /* index into the candidates */
	size_t runs;		     /* additional runs wanted */
	enum bisect_purpose purpose; /* which runs they become */
};

/* A culprit: the commit whose runs differ from its parent's. */
struct bisect_culprit {
	size_t commit;
	size_t parent;	   /* its first parent */
	double change_pct; /* KPI mean, culprit vs parent, over every run
			      of both (lib/estimate.h); the levels' when
			      the parent has no run */
	double change_ci95_lo, change_ci95_hi; /* its 95% interval, or NaN */
	double p_value;	   /* of that difference (one-sided Welch) */
	double confidence; /* probability (0..1) that this commit is a
			      culprit, calibrated in the simulator */
	bool confirmed;	   /* fresh interleaved runs agreed */
	bool regression;   /* its own change worsens the KPI (the
			      direction of its own change, never the
			      endpoints') */
	/* Commits whose build failed hide the exact culprit: any of
	 * ambiguous[0..ambiguous_count) (which includes `commit`) may be. */
	size_t ambiguous_first; /* into bisect_result.ambiguous */
	size_t ambiguous_count;
};

#define BISECT_MAX_REQUESTS 4
#define BISECT_MAX_CULPRITS 8
#define BISECT_MAX_AMBIGUOUS 64

struct bisect_result {
	enum bisect_verdict verdict;
	/* While pending: the runs to ask for.  When `interleave` is set they
	 * belong together and should run alternately on one machine (A B A B)
	 * so that drift cancels; otherwise in the order given. */
	struct bisect_request requests[BISECT_MAX_REQUESTS];
	size_t request_count;
	bool interleave;
	/* Culprits found so far (all of them once done), oldest first. */
	struct bisect_culprit culprits[BISECT_MAX_CULPRITS];
	size_t culprit_count;
	size_t ambiguous[BISECT_MAX_AMBIGUOUS];
	size_t ambiguous_used;
	/* Progress: the segment under search, the number of candidates left
	 * in it, and an estimate of the bisection steps still to go. */
	size_t lo, hi;
	size_t candidates_left;
	size_t steps_left;
	size_t steps_done;
	/* Endpoints: change of the KPI mean, good to bad, in percent of the
	 * older mean (NaN until both endpoints are measured), and the
	 * p-value of the endpoint test. */
	double change_pct;
	double change_ci95_lo, change_ci95_hi; /* its 95% interval, or NaN */
	double p_value;
	double confidence;  /* of the verdict, 0..1 */
	const char *reason; /* static text: why inconclusive (and what
			       would decide it), else NULL */
};

/* Fills *opts with the defaults (see bisect.c). */
void bisect_options_init(struct bisect_options *opts, bool higher_is_better);

/*
 * Decides the next step of a bisection over `count` (>= 2) candidates.
 * `classes`, when not NULL, has `count` slots and receives what the engine
 * thinks of each commit.  Returns 0, -1 for invalid input (fewer than two
 * candidates, a parent index not below its child's, options out of range),
 * or -2 when out of memory.
 */
int bisect_step(struct bisect_result *out, enum bisect_class *classes,
		const struct bisect_commit *commits, size_t count,
		const struct bisect_options *opts);

/* "regression", "improvement", "no-change", "inconclusive", or NULL. */
const char *bisect_verdict_name(enum bisect_verdict verdict);

/* "untested", "good", "bad", "undecided", "skipped", "neither". */
const char *bisect_class_name(enum bisect_class cls);

#endif
