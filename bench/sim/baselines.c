/*
 * The baseline strategies, as published, on the simulator's DAG with git
 * bisect's best split (dag.h):
 *
 *  git-bisect  `git bisect run` with a script that runs the benchmark once
 *              and compares with a threshold halfway between one run of
 *              each endpoint.  Failed builds are skipped as `git bisect
 *              skip` does; when only skipped commits are left the "first
 *              bad commit could be any of" them (an ambiguous culprit).
 *              It always names a commit.
 *  lkp         the kernel test robot: `lkp_runs` (default 5) runs per
 *              commit, endpoints included.  A commit differs from `good`
 *              when the robot's rules pass (REPORT_FORMAT.md): the new
 *              minimum above the base median and the new median above
 *              the base maximum, or the mirror image, and the medians'
 *              ratio beyond 1.01.  No change when the endpoints do not
 *              differ; else a commit is bad-like when it differs from
 *              `good` in the endpoints' direction, good-like otherwise.
 *  oracle      is told the true level of every candidate level and the
 *              noise's true sd, makes no endpoint runs, and classifies
 *              each tested commit with a sequential probability ratio
 *              test between the levels its segment can have (two with one
 *              change), per-step error 0.001, in runs of one commit in a
 *              row.  It searches every segment whose ends differ, so it
 *              finds every change: a lower bound no real tool reaches.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "stats.h"

#define LKP_RATIO 1.01
#define ORACLE_ERROR 0.001

/* Names `high` as the culprit, with the candidates left as its
 * ambiguous set when there are several (only failed builds besides). */
static int name_culprit(struct sim_outcome *out, const struct dag *dag,
			size_t high, const uint64_t *cand, size_t total,
			size_t *scratch)
{
	size_t n = 0;

	if (total > 1)
		n = dag_set_members(scratch, dag, cand);
	return sim_outcome_add(out, high, scratch, n);
}

/*
 * The classic one-culprit bisection: `is_bad(ctx, mid)` decides each
 * tested commit.  Names one culprit.
 */
static int bisect_one(struct sim_outcome *out, struct sim_trial *trial,
		      bool (*is_bad)(struct sim_trial *, size_t, void *),
		      void *ctx)
{
	const struct dag *dag = &trial->dag;
	uint64_t *excluded = calloc(dag->words, sizeof(uint64_t));
	uint64_t *cand = calloc(dag->words, sizeof(uint64_t));
	size_t *scratch = malloc(dag->count * sizeof(size_t));
	size_t high = dag->count - 1, total, mid, w;
	int error = -2;

	if (excluded == NULL || cand == NULL || scratch == NULL)
		goto out;
	memcpy(excluded, dag_ancestors_of(dag, 0),
	       dag->words * sizeof(uint64_t));
	for (;;) {
		total = dag_candidates(cand, dag, high, excluded);
		if (total <= 1 ||
		    !dag_best_split(&mid, dag, cand, total, high))
			break;
		if (is_bad(trial, mid, ctx)) {
			high = mid;
		} else {
			const uint64_t *anc = dag_ancestors_of(dag, mid);

			for (w = 0; w < dag->words; w++)
				excluded[w] |= anc[w];
		}
	}
	out->verdict = SIM_CHANGE;
	error = name_culprit(out, dag, high, cand, total, scratch);
out:
	free(excluded);
	free(cand);
	free(scratch);
	return error;
}

struct git_threshold {
	double threshold;
	bool bad_is_low;
};

static bool git_is_bad(struct sim_trial *trial, size_t mid, void *ctx)
{
	const struct git_threshold *g = ctx;
	double v = sim_run(trial, mid, false);

	return (v < g->threshold) == g->bad_is_low;
}

int sim_git_bisect(struct sim_outcome *out, struct sim_trial *trial)
{
	double good = sim_run(trial, 0, false);
	double bad = sim_run(trial, trial->dag.count - 1, false);
	struct git_threshold g = {(good + bad) / 2, bad < good};

	return bisect_one(out, trial, git_is_bad, &g);
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	double min, median, max;
};

static int summarise(struct summary *out, const double *x, size_t n)
{
	double *s = malloc(n * sizeof(double));

	if (s == NULL)
		return -2;
	memcpy(s, x, n * sizeof(double));
	qsort(s, n, sizeof(double), compare_double);
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return 0;
}

/* The robot's rule: +1 or -1 when `cur` differs from `base` upwards or
 * downwards, 0 when it does not. */
static int lkp_direction(const struct sim_series *base,
			 const struct sim_series *cur)
{
	struct summary b, c;
	double ratio;

	if ((base->count < 3 && cur->count < 3) || base->count == 0 ||
	    cur->count == 0)
		return 0;
	if (summarise(&b, base->values, base->count) < 0 ||
	    summarise(&c, cur->values, cur->count) < 0) {
		fputs("statbisect-sim: out of memory\n", stderr);
		exit(1);
	}
	ratio = c.median / b.median;
	if (ratio < LKP_RATIO && ratio > 1 / LKP_RATIO)
		return 0;
	if (c.min > b.median && c.median > b.max)
		return 1;
	if (c.max < b.median && c.median < b.min)
		return -1;
	return 0;
}

static void run_times(struct sim_trial *trial, size_t commit, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		sim_run(trial, commit, false);
}

static bool lkp_is_bad(struct sim_trial *trial, size_t mid, void *ctx)
{
	int direction = *(const int *)ctx;

	run_times(trial, mid, trial->config->lkp_runs);
	return lkp_direction(&trial->search[0], &trial->search[mid]) ==
	       direction;
}

int sim_lkp(struct sim_outcome *out, struct sim_trial *trial)
{
	size_t bad = trial->dag.count - 1;
	int direction;

	run_times(trial, 0, trial->config->lkp_runs);
	run_times(trial, bad, trial->config->lkp_runs);
	direction = lkp_direction(&trial->search[0], &trial->search[bad]);
	if (direction == 0) {
		out->verdict = SIM_NO_CHANGE;
		return 0;
	}
	return bisect_one(out, trial, lkp_is_bad, &direction);
}

/* The level of a commit `depth` changes deep. */
static double oracle_level(const struct sim_trial *trial, size_t depth)
{
	const struct sim_config *cfg = trial->config;
	double step = cfg->effect * SIM_SD;

	return SIM_BASE_LEVEL +
	       (cfg->higher_is_better ? -step : step) * (double)depth;
}

/*
 * Runs `commit` until a sequential probability ratio test picks one of
 * the depths lo..hi: depth i wins when its log-likelihood ratio against
 * every other is at least log((1 - e) / e).  At runs_max the likeliest
 * depth is taken.
 */
static size_t oracle_classify(struct sim_trial *trial, size_t commit,
			      size_t lo, size_t hi)
{
	double sd = noise_total_sd(trial->config->noise, SIM_SD);
	double bound = log((1 - ORACLE_ERROR) / ORACLE_ERROR), sum = 0;
	size_t n, i, j;

	for (n = 1;; n++) {
		size_t likeliest = lo;

		sum += sim_run(trial, commit, false);
		for (i = lo; i <= hi; i++) {
			double mi = oracle_level(trial, i), least = INFINITY;

			for (j = lo; j <= hi; j++) {
				double mj = oracle_level(trial, j), llr;

				if (j == i)
					continue;
				llr = (mi - mj) *
				      (sum - (double)n * (mi + mj) / 2) /
				      (sd * sd);
				if (llr < least)
					least = llr;
			}
			if (least >= bound)
				return i;
			if (fabs(sum / (double)n - mi) <
			    fabs(sum / (double)n -
				 oracle_level(trial, likeliest)))
				likeliest = i;
		}
		if (n >= trial->config->runs_max)
			return likeliest;
	}
}

int sim_oracle(struct sim_outcome *out, struct sim_trial *trial)
{
	const struct dag *dag = &trial->dag;
	struct sim_segments stack = {.words = dag->words};
	uint64_t *cand = calloc(dag->words, sizeof(uint64_t));
	size_t *scratch = malloc(dag->count * sizeof(size_t));
	size_t bad = dag->count - 1;
	int error = -2;

	out->verdict = SIM_NO_CHANGE;
	if (cand == NULL || scratch == NULL)
		goto out;
	error = 0;
	if (trial->config->effect == 0)
		goto out; /* told: both ends are at one level */
	if ((error = sim_segments_push(&stack, dag, dag_ancestors_of(dag, 0),
				       SIZE_MAX, 0, bad)) < 0)
		goto out;
	stack.items[0].ref_depth = trial->depth[0];
	stack.items[0].high_depth = trial->depth[bad];
	while (stack.count > 0) {
		struct sim_segment seg = stack.items[--stack.count];
		size_t total, mid, depth, lo, hi;

		error = 0;
		if (seg.ref_depth != seg.high_depth) {
			total =
			    dag_candidates(cand, dag, seg.high, seg.excluded);
			if (total <= 1 || !dag_best_split(&mid, dag, cand,
							  total, seg.high)) {
				out->verdict = SIM_CHANGE;
				error = name_culprit(out, dag, seg.high, cand,
						     total, scratch);
			} else {
				lo = seg.ref_depth < seg.high_depth
					 ? seg.ref_depth
					 : seg.high_depth;
				hi = seg.ref_depth + seg.high_depth - lo;
				depth = oracle_classify(trial, mid, lo, hi);
				error = sim_segments_push(
				    &stack, dag, seg.excluded, SIZE_MAX,
				    seg.ref, mid);
				if (error == 0) {
					stack.items[stack.count - 1]
					    .ref_depth = seg.ref_depth;
					stack.items[stack.count - 1]
					    .high_depth = depth;
					error = sim_segments_push(
					    &stack, dag, seg.excluded, mid,
					    mid, seg.high);
				}
				if (error == 0) {
					stack.items[stack.count - 1]
					    .ref_depth = depth;
					stack.items[stack.count - 1]
					    .high_depth = seg.high_depth;
				}
			}
		}
		free(seg.excluded);
		if (error < 0)
			goto out;
	}
	error = 0;
out:
	sim_segments_free(&stack);
	free(cand);
	free(scratch);
	return error;
}
