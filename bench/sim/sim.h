/*
 * sim: one simulated bisection (a trial) and the strategies that can run
 * it.  main.c makes the trials and scores them; engine.c drives the
 * production engine (bisect.h); baselines.c and pinpoint.c are the
 * published tools statbisect is measured against.
 *
 * The model (docs/BISECTION.md, "Results", says the same):
 *  - base level 1000, noise sd 10 (1% of the level), noise.h's models;
 *  - `changes` change commits, distinct, drawn uniformly from 1..count-1
 *    (never `good`); each moves the KPI by effect * sd in its worse
 *    direction (down when higher is better), cumulatively;
 *  - the true level of a commit is the base moved by every change commit
 *    that is its ancestor or itself, on the DAG;
 *  - with --skip-rate R every commit but the endpoints fails to build
 *    with probability R: no run of it can be made.
 */
#ifndef STATBISECT_SIM_H
#define STATBISECT_SIM_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dag.h"
#include "noise.h"

#define SIM_BASE_LEVEL 1000.0
#define SIM_SD 10.0
#define SIM_CULPRITS_MAX 64
#define SIM_MACHINES_MAX 8 /* lib/spread.h's SPREAD_MACHINES_MAX */

enum sim_strategy {
	SIM_ENGINE = 0,
	SIM_GIT_BISECT,
	SIM_LKP,
	SIM_PINPOINT,
	SIM_ORACLE,
};

struct sim_config {
	size_t commits; /* after `good`: the range has commits + 1 */
	enum dag_topology topology;
	enum noise_model noise;
	double effect; /* in units of SIM_SD; 0 means no change */
	size_t changes;
	/* --opposite: changes alternate in direction (the oldest worse,
	 * the next better, ...), each later one opposite_ratio times the
	 * size of the one before; 1: two changes cancel at the endpoints.
	 * The engine only: the baselines assume one direction. */
	bool opposite;
	double opposite_ratio;
	double skip_rate;
	size_t trials;
	unsigned long seed;
	enum sim_strategy strategy;
	double min_change_pct;
	size_t runs_max;
	bool higher_is_better;
	size_t lkp_runs; /* runs per commit of the kernel robot */
	bool json;
	bool trace; /* the engine's outcome of each trial, on stderr */
	/* --only-trial: that trial alone, and every commit the engine
	 * tested in the trace */
	bool trace_commits;
	size_t only_trial;
	/* Several machines per job (machines.c): how many, each one's
	 * level offset (machine 0 none, the others uniform in
	 * +-machine_offset_pct percent, per trial), and the wall clock:
	 * a run costs run_seconds, a commit's first run on a machine
	 * build_seconds more.  `clock`: any of these was given, so the
	 * output has the wall-clock fields. */
	size_t machines;
	double machine_offset_pct;
	double run_seconds, build_seconds;
	bool clock;
};

struct sim_series {
	double *values;
	size_t *order; /* each run's place in the trial's run order */
	size_t count, capacity;
};

/* One machine of a job (machines.c).  Machine 0's runs are the trial's
 * own (search, confirm, noise); the others have their own. */
struct sim_machine {
	struct sim_series *search, *confirm; /* per commit */
	struct noise noise;		     /* machines 1.. only */
	double factor;			     /* 1 + its level offset */
	double clock;			     /* seconds busy or waiting */
	bool *built;			     /* per commit */
};

struct sim_trial {
	const struct sim_config *config;
	/* --machines and friends given: machine_count machines, wall
	 * clock kept; else NULL and 0 */
	struct sim_machine *machines;
	size_t machine_count;
	double wall; /* when the verdict was known; 0: the last clock */
	/* Runs of every machine so far: with more than one machine a run's
	 * place in the order (sim_series.order, the engine's seq) counts
	 * them all, as the server numbers a job's runs. */
	size_t job_runs;
	/* More than one machine: when the k-section settled on one, and
	 * job_runs then (the engine alone on it did the rest). */
	double settled_at;
	size_t settled_runs;
	struct dag dag; /* indexed: ancestor sets are there */
	size_t changes[SIM_CULPRITS_MAX]; /* the true culprits, ascending;
					     none when the effect is 0 */
	size_t change_count;
	double *level; /* true level of every commit */
	size_t *depth; /* change commits among its ancestors */
	struct noise noise;
	struct sim_series *search;  /* runs of each commit */
	struct sim_series *confirm; /* the engine's confirmation runs */
	size_t bad_requests;	    /* engine asked to run a failed build */
	bool unbacked;		    /* a change verdict without a confirmed
				       culprit (an engine bug) */
	size_t over_runs_max;	    /* search requests beyond runs_max */
	char detail[160];	    /* what went wrong, when something did */
};

enum sim_verdict {
	SIM_CHANGE = 0, /* culprits named */
	SIM_NO_CHANGE,
	SIM_INCONCLUSIVE,
	SIM_FAILED, /* the engine erred or looped; counted wrong */
};

struct sim_culprit {
	size_t commit;
	size_t ambiguous_first; /* into sim_outcome.ambiguous */
	size_t ambiguous_count; /* 0: exactly `commit` */
	double confidence;	/* the strategy's, or NaN when it gives none */
};

struct sim_outcome {
	enum sim_verdict verdict;
	bool wrong_direction; /* called an improvement */
	/* the engine's verdict was regression or improvement without a
	 * confirmed culprit */
	bool unbacked;
	struct sim_culprit culprits[SIM_CULPRITS_MAX];
	size_t culprit_count;
	size_t *ambiguous;
	size_t ambiguous_used, ambiguous_capacity;
	const char *failure; /* static text when SIM_FAILED */
};

/*
 * One run of `commit` into trial->search (or trial->confirm when
 * `confirm`), with its place in the trial's run order (1, 2, ...);
 * returns its value.  Exits the program when out of memory.
 */
double sim_run(struct sim_trial *trial, size_t commit, bool confirm);

/*
 * One run of `commit` on machine `machine` (0 is sim_run's), which
 * advances that machine's clock by a run, and by a build when it is the
 * commit's first run there.  Returns the value.
 */
double sim_machine_run(struct sim_trial *trial, size_t machine, size_t commit,
		       bool confirm);

/* The runs of `commit` on machine `machine` (0: the trial's own). */
struct sim_series *sim_series_of(struct sim_trial *trial, size_t machine,
				 size_t commit, bool confirm);

/* Names `commit` as a culprit; the ambiguous set, when count > 1, is
 * copied. Returns 0, or -2 when out of memory. */
int sim_outcome_add(struct sim_outcome *out, size_t commit,
		    const size_t *ambiguous, size_t count);

/*
 * A segment of a search for every change point: the candidates are the
 * ancestors of `high` outside `excluded` (the ancestors of commits found
 * on the older side), and `ref` is the older commit the segment's runs
 * are compared with.  Splitting at `mid` gives (excluded, ref, mid) and
 * (excluded + ancestors of mid, mid, high), which partition the
 * candidates.  `ref_depth` and `high_depth` are for the strategy.
 */
struct sim_segment {
	uint64_t *excluded; /* owned */
	size_t ref, high;
	size_t ref_depth, high_depth;
};

struct sim_segments {
	struct sim_segment *items;
	size_t count, capacity;
	size_t words;
};

/* Pushes a segment whose excluded set is `excluded`, plus the ancestors
 * of `also_excluded` unless it is SIZE_MAX. Returns 0 or -2. */
int sim_segments_push(struct sim_segments *stack, const struct dag *dag,
		      const uint64_t *excluded, size_t also_excluded,
		      size_t ref, size_t high);

/* Frees the segments left and their sets. */
void sim_segments_free(struct sim_segments *stack);

/* The strategies: each fills *out (zeroed by the caller) for the trial.
 * Return 0, or a negative error when out of memory. */
int sim_engine(struct sim_outcome *out, struct sim_trial *trial);
int sim_git_bisect(struct sim_outcome *out, struct sim_trial *trial);
int sim_lkp(struct sim_outcome *out, struct sim_trial *trial);
int sim_oracle(struct sim_outcome *out, struct sim_trial *trial);
/* The engine on machine `machine`'s runs alone, on its clock. */
int sim_engine_on(struct sim_outcome *out, struct sim_trial *trial,
		  size_t machine);
/* lib/spread.c's k-section on trial->machine_count machines at once
 * (machines.c), then the engine on the machine it settles on. */
int sim_engine_machines(struct sim_outcome *out, struct sim_trial *trial);
int sim_pinpoint(struct sim_outcome *out, struct sim_trial *trial);

/* Frees the lazily generated Pinpoint threshold table. */
void sim_pinpoint_cleanup(void);

/* Prints Pinpoint's high-threshold table as the simulator generated it. */
int sim_pinpoint_print_table(FILE *out);

#endif
