#include "bisect.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_dag.h"
#include "estimate.h"
#include "stats.h"

/* Equivalence (TOST) is accepted at this level: a real change as large as
 * min_change_pct is called "no change" at most this often. */
#define ALPHA_EQUIVALENCE 0.05
/* A confirmation passes when fresh runs show the change at this level. */
#define ALPHA_CONFIRM 0.05
/* A confirmation's last round is tested at about this z (alpha 0.005, one
 * sided), and its runs are sized for this power (0.9). */
#define Z_CONFIRM_LAST 2.576
#define Z_CONFIRM_POWER 1.282
/* A follow-up looks for a second change with fresh runs when the runs
 * so far hint at one at this level. */
#define ALPHA_SCREEN 0.05
/* A part of the range is searched for another change only when its two
 * ends differ at this level: a search there names a culprit, and the
 * culprit's confirmation may reuse the very runs that opened the part. */
#define ALPHA_PART 0.001
/* The endpoint runs grow by this factor from one look to the next. */
#define LOOK_GROWTH 1.5
/* On the endpoints, Mann-Whitney must agree with a Welch's t that decides
 * at this level. */
#define ALPHA_RANK_AGREE 0.01
/* Standardised runs are clipped this far beyond a level (in sds), so that
 * one outlier cannot decide a classification. */
#define CLIP_BEYOND 2.5
/* How far (in standard errors) a commit's location may sit from the level
 * it is classified to, and must sit from both to be "neither". */
#define Z_CONSISTENT 2.5
/* The clipped runs' own spread replaces the noise's sd when it is larger
 * at this level (a chi-squared test). */
#define ALPHA_SPREAD 0.01
/* Two runs of one round of an interleaved plan (at most
 * BISECT_MAX_REQUESTS commits, A B C D A B C D) are at most this far
 * apart in the order runs are made: runs further apart are no pair. */
#define PAIR_GAP_MAX BISECT_MAX_REQUESTS
/* The differences of paired runs spread wider than the noise allows at
 * this level (a chi-squared test): a mode switch fell inside some pair,
 * and Wilcoxon's signed-rank test decides instead of the t-test. */
#define ALPHA_PAIR_SPREAD 0.01
#define Z_NEITHER 3.5
/* A run whose distance from its commit's median exceeds this many robust
 * sds is far: no noise the engine knows as noise puts runs there in
 * numbers (the simulator's outliers, 5% of runs 5 sds out, put about 0.2%
 * of them past it), a second mode of the machine does (a slow mode 50%
 * slower is 50 sds out when the noise is 1% of the level).  At least
 * TWO_MODE_FAR_MIN of them, and at least TWO_MODE_SHARE of the runs, say
 * the machine has two modes: a tested commit is then run interleaved with
 * both levels.  (3 and 2% let one outliers trial in 300 in, early, when
 * it had few runs.) */
#define TWO_MODE_FAR 10.0
#define TWO_MODE_FAR_MIN 4
#define TWO_MODE_SHARE 0.05
/* Two runs are neighbours in the run order when at most this far apart
 * (a run that gave no KPI may sit between them). */
#define NEIGHBOUR_GAP 2
#define MAX_SEGMENTS (2 * BISECT_MAX_CULPRITS)
/* A level is estimated from its newest commits, at most this many. */
#define LEVEL_RECENT 4
/* The pooled noise estimate replaces a test's own when it has at least
 * this many degrees of freedom. */
#define POOLED_DOF_MIN 20

void bisect_options_init(struct bisect_options *opts, bool higher_is_better)
{
	memset(opts, 0, sizeof(*opts));
	opts->runs_min = 5;
	opts->runs_max = 30;
	opts->step_runs_min = 3;
	opts->confirm_runs = 4;
	opts->confirm_max = 16;
	opts->min_change_pct = 1.0;
	opts->alpha = 0.005;
	opts->step_alpha = 0.01;
	opts->higher_is_better = higher_is_better;
	opts->confirm = true;
	opts->probes = 31;
}

const char *bisect_verdict_name(enum bisect_verdict verdict)
{
	switch (verdict) {
	case BISECT_REGRESSION:
		return "regression";
	case BISECT_IMPROVEMENT:
		return "improvement";
	case BISECT_NO_CHANGE:
		return "no-change";
	case BISECT_INCONCLUSIVE:
		return "inconclusive";
	case BISECT_PENDING:
		break;
	}
	return NULL;
}

const char *bisect_class_name(enum bisect_class cls)
{
	static const char *const names[] = {"untested",	 "good",    "bad",
					    "undecided", "skipped", "neither"};

	return (size_t)cls < sizeof(names) / sizeof(names[0]) ? names[cls]
							      : "untested";
}

/* A growable list of commit indices. */
struct idlist {
	size_t *v;
	size_t n, cap;
};

static int idlist_push(struct idlist *l, size_t x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		size_t *grown = realloc(l->v, cap * sizeof(*grown));

		if (grown == NULL)
			return -2;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return 0;
}

static int idlist_copy(struct idlist *out, const struct idlist *from)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < from->n; i++) {
		if (idlist_push(out, from->v[i]) < 0)
			return -2;
	}
	return 0;
}

/* A part of the range known to hold a change: its candidates, the newest
 * commit at the high level (every candidate is an ancestor of it), and the
 * commits measured at each of its two levels. */
struct segment {
	struct bisect_set cand;
	size_t bad;
	struct idlist low, high;
	double error; /* summed error bounds of the decisions so far */
	bool split;   /* made by splitting at a commit like neither level */
};

static void segment_clear(struct segment *s)
{
	bisect_set_clear(&s->cand);
	free(s->low.v);
	free(s->high.v);
	memset(s, 0, sizeof(*s));
}

static double square(double x);

/* A run at its place in the run order. */
struct placed_run {
	size_t commit; /* SIZE_MAX: no run with a KPI there */
	double value;
	bool search;
};

/* One level: the runs of its commits pooled. */
struct level {
	double mean; /* 10% trimmed mean, robust to outliers */
	size_t n;
	/* Where the runs came from, for a location on another scale
	 * (level_clipped): commits->v[first..]. */
	const struct idlist *commits;
	size_t first;
};

struct engine {
	const struct bisect_commit *commits;
	size_t count;
	const struct bisect_options *opts;
	struct bisect_result *out;
	enum bisect_class *classes;
	double *scratch; /* room for every run, search and fresh, once */
	size_t scratch_len;
	struct bisect_set tmp;
	/* Noise: residuals of every decided commit around its own median,
	 * pooled; sigma is their winsorised standard deviation. */
	struct idlist noise_commits;
	struct bisect_set in_noise; /* the same, as a set */
	double sigma;
	size_t sigma_dof;      /* its degrees of freedom */
	struct bisect_set all; /* every candidate */
	size_t parts_pushed;   /* follow-up parts opened in this call */
	size_t *chain;	       /* room for every commit: follow_up's chains */
	size_t chain_n;
	/* Paired fresh runs of two commits (pairs_of) and their
	 * differences: room for the most fresh runs of a commit. */
	double *pair_a, *pair_b, *pair_d;
	/* Per culprit (same index as out->culprits): fresh runs were made
	 * to confirm it and did not. */
	bool refuted[BISECT_MAX_CULPRITS];
	/* Every run by its place in the run order (run_at[q], q in
	 * 1..run_last), NULL when that order is not known for every run;
	 * and whether the runs show a second mode (two_mode, steps then
	 * run in triplets), with the noise of one run as paired runs show
	 * it (sigma_paired). */
	struct placed_run *run_at;
	size_t run_last;
	bool two_mode;
	double sigma_paired;
	/* The endpoints' change as their pairs show it (the median of a bad
	 * run minus the good run before it), NAN with fewer than ten. */
	double change_paired;
	/* A tested commit's triplets (triplets_of): its run minus the
	 * low level's neighbour run (trip_u) and minus the high level's
	 * (trip_w); room for the most search runs of a commit. */
	double *trip_u, *trip_w, *trip_tmp;
};

static double values_mean(const double *x, size_t n)
{
	return n > 0 ? stats_mean(x, n) : 0.0;
}

static int level_of(struct level *out, struct engine *e,
		    const struct idlist *commits)
{
	size_t i, k, n = 0;
	/* The most recently classified commits only: they were measured
	 * close in time to the commit under test, so a machine that drifts
	 * slowly shifts both alike. */
	size_t first =
	    commits->n > LEVEL_RECENT ? commits->n - LEVEL_RECENT : 0;

	for (i = first; i < commits->n; i++) {
		const struct bisect_commit *c = &e->commits[commits->v[i]];

		for (k = 0; k < c->value_count; k++)
			e->scratch[n++] = c->values[k];
	}
	/* A level known only from fresh runs (a culprit's parent that the
	 * search never tested, on a DAG) is taken from those. */
	for (i = first; n == 0 && i < commits->n; i++) {
		const struct bisect_commit *c = &e->commits[commits->v[i]];

		for (k = 0; k < c->confirm_count; k++)
			e->scratch[n++] = c->confirm_values[k];
	}
	out->n = n;
	out->mean = n >= 10 ? stats_trimmed_mean(e->scratch, n, 0.1)
			    : values_mean(e->scratch, n);
	out->commits = commits;
	out->first = first;
	return n > 0 ? 0 : -1;
}

/* A run standardised around `half` in units of `sigma`, clipped to
 * [-clip, clip]: the scale on which a commit is classified. */
static double clipped_z(double x, double half, double sigma, double clip)
{
	double z = (x - half) / sigma;

	return z > clip ? clip : z < -clip ? -clip : z;
}

/* The runs of a level's commits: its search runs, or its fresh runs when
 * it has no search runs at all (as level_of takes them). */
static size_t level_runs(const struct engine *e, const struct level *l,
			 size_t i, const double **values)
{
	const struct bisect_commit *c = &e->commits[l->commits->v[i]];

	if (l->n > 0 && c->value_count > 0) {
		*values = c->values;
		return c->value_count;
	}
	*values = c->confirm_values;
	return c->confirm_count;
}

/*
 * A level's location on the classification's scale: the mean of its runs'
 * clipped_z, and the sum of squared deviations of each commit's clipped
 * runs around that commit's own mean, with the degrees of freedom it has.
 * A commit under test and the levels it is compared with are then measured
 * with one estimator: when the noise puts a share of the runs far off
 * (a machine with a slow mode), the clipped runs pull the commit and both
 * levels alike, and the spread of the clipped runs, not the noise's sd,
 * says how sure a location is.
 */
static void level_clipped(const struct engine *e, const struct level *l,
			  double half, double clip, double *mean, double *ss,
			  size_t *dof)
{
	size_t i, k, n = 0;
	double sum = 0;

	*ss = 0;
	*dof = 0;
	for (i = l->first; i < l->commits->n; i++) {
		const double *v;
		size_t count = level_runs(e, l, i, &v);
		double clipped_sum = 0, clipped_mean;

		for (k = 0; k < count; k++)
			clipped_sum += clipped_z(v[k], half, e->sigma, clip);
		if (count == 0)
			continue;
		clipped_mean = clipped_sum / (double)count;
		for (k = 0; k < count; k++)
			*ss += square(clipped_z(v[k], half, e->sigma, clip) -
				      clipped_mean);
		*dof += count - 1;
		sum += clipped_sum;
		n += count;
	}
	*mean = n > 0 ? sum / (double)n : 0.0;
}

/* Adds a decided commit to the noise estimate, once: a commit decided in
 * two parts of the range must not count twice (nor overflow the scratch
 * sized for every run once). */
static int noise_add(struct engine *e, size_t commit)
{
	if (bisect_set_has(&e->in_noise, commit))
		return 0;
	bisect_set_add(&e->in_noise, commit);
	return idlist_push(&e->noise_commits, commit);
}

/*
 * The noise's standard deviation from the pooled residuals of the commits
 * in e->noise_commits: each run minus its commit's median, winsorised at
 * three robust standard deviations (MAD-based) so that outliers do not
 * inflate it, then the usual estimate with one degree of freedom lost per
 * commit.
 */
static void estimate_sigma(struct engine *e)
{
	size_t i, k, n = 0, dof_lost = 0;
	double median_deviation, robust, sum = 0;

	for (i = 0; i < e->noise_commits.n; i++) {
		const struct bisect_commit *c =
		    &e->commits[e->noise_commits.v[i]];
		double median;

		if (c->value_count < 2)
			continue;
		median = stats_median(c->values, c->value_count);
		for (k = 0; k < c->value_count; k++)
			e->scratch[n++] = c->values[k] - median;
		dof_lost++;
	}
	e->sigma = 0;
	e->sigma_dof = 0;
	if (n <= dof_lost)
		return;
	e->sigma_dof = n - dof_lost;
	median_deviation = stats_mad(e->scratch, n);
	robust = 1.4826 * median_deviation;
	for (i = 0; i < n; i++) {
		double r = e->scratch[i];

		if (robust > 0) {
			if (r > 3 * robust)
				r = 3 * robust;
			else if (r < -3 * robust)
				r = -3 * robust;
		}
		sum += r * r;
	}
	e->sigma = sqrt(sum / (double)(n - dof_lost));
}

static double square(double x)
{
	return x * x;
}

static double pct_change_of(double from, double to)
{
	double base = from != 0.0 ? fabs(from) : fabs(to);

	return base == 0.0 ? 0.0 : 100.0 * (to - from) / base;
}

static void request(struct engine *e, size_t commit, size_t runs,
		    enum bisect_purpose purpose)
{
	struct bisect_result *out = e->out;

	if (runs == 0 || out->request_count == BISECT_MAX_REQUESTS)
		return;
	out->requests[out->request_count].commit = commit;
	out->requests[out->request_count].runs = runs;
	out->requests[out->request_count].purpose = purpose;
	out->request_count++;
}

static void set_class(struct engine *e, size_t i, enum bisect_class cls)
{
	if (e->classes != NULL)
		e->classes[i] = cls;
}

/* ---- endpoints ---------------------------------------------------- */

enum comparison { CMP_UNKNOWN, CMP_DIFFERENT, CMP_SAME };

/* The run counts at which the endpoints are tested: runs_min, then growing
 * by LOOK_GROWTH (at least 2 more), capped at runs_max. */
static size_t next_look(const struct bisect_options *o, size_t have)
{
	size_t look = o->runs_min;

	while (look <= have && look < o->runs_max) {
		size_t grown = (size_t)ceil((double)look * LOOK_GROWTH);

		look = grown > look + 2 ? grown : look + 2;
		if (look > o->runs_max)
			look = o->runs_max;
	}
	return look;
}

static size_t look_count(const struct bisect_options *o)
{
	size_t looks = 1, have = o->runs_min;

	while (have < o->runs_max) {
		have = next_look(o, have);
		looks++;
	}
	return looks;
}

/*
 * Good vs bad: different when either of two tests rejects at alpha / 2 /
 * looks (two tests, and repeated looks, must not add up to more false
 * alarms than alpha), and the change is not provably smaller than
 * min_change_pct; same when two one-sided tests put it within
 * min_change_pct.  The two tests:
 *  - Welch's t, with Mann-Whitney's U agreeing at ALPHA_RANK_AGREE, so
 *    that a few outliers cannot make a difference.  It decides a clear
 *    change on five runs a side, where U cannot go below 0.008.
 *  - Mann-Whitney's U, with Welch's t moving the same way.  On a machine
 *    that runs a share of the runs in a much slower mode, the slow runs
 *    swamp the variance of the means (Welch's p stays near 0.01 where
 *    the ranks give 1e-12, issue 10), while the ranks compare fast runs
 *    with fast and slow with slow.  With no change both samples have one
 *    distribution, and U's error bound holds whatever its shape.  A change
 *    the ranks see that moves the means the other way has no one
 *    direction, and stays unknown.
 */
static enum comparison compare_endpoints(struct engine *e, double *p_out)
{
	const struct bisect_options *o = e->opts;
	const struct bisect_commit *a = &e->commits[0];
	const struct bisect_commit *b = &e->commits[e->count - 1];
	double alpha = o->alpha / 2 / (double)look_count(o);
	struct stats_test welch, mwu, tost, below;
	double mean_a = stats_mean(a->values, a->value_count);
	double mean_b = stats_mean(b->values, b->value_count);
	double base = mean_a != 0.0 ? fabs(mean_a) : fabs(mean_b);
	double margin = base * o->min_change_pct / 100.0;
	double u_mid = (double)a->value_count * (double)b->value_count / 2;
	const struct bisect_commit *big = a, *small = b;
	bool by_means, by_ranks;

	*p_out = 1.0;
	if (stats_welch_t(&welch, a->values, a->value_count, b->values,
			  b->value_count) < 0 ||
	    stats_mann_whitney(&mwu, a->values, a->value_count, b->values,
			       b->value_count) < 0)
		return CMP_UNKNOWN;
	by_means = welch.p_value < alpha && mwu.p_value < ALPHA_RANK_AGREE;
	by_ranks = mwu.p_value < alpha &&
		   (mwu.statistic - u_mid) * welch.statistic > 0;
	*p_out = welch.p_value > mwu.p_value ? welch.p_value : mwu.p_value;
	if (by_ranks && !by_means)
		*p_out = mwu.p_value;
	if (by_means || by_ranks) {
		/* Not significantly below the margin: |mean_b - mean_a| <
		 * margin is rejected only if the one-sided test says so. */
		int rc =
		    mean_b > mean_a
			? stats_welch_t_one_sided(&below, b->values,
						  b->value_count, a->values,
						  a->value_count, -margin)
			: stats_welch_t_one_sided(&below, a->values,
						  a->value_count, b->values,
						  b->value_count, -margin);

		if (fabs(mean_b - mean_a) >= margin ||
		    !(rc == 0 && below.p_value < ALPHA_EQUIVALENCE))
			return CMP_DIFFERENT;
		return CMP_SAME;
	}
	if (mean_a == mean_b &&
	    stats_variance(a->values, a->value_count) == 0 &&
	    stats_variance(b->values, b->value_count) == 0)
		return CMP_SAME;
	if (fabs(mean_b) > fabs(mean_a)) {
		big = b;
		small = a;
	}
	if (stats_tost(&tost, big->values, big->value_count, small->values,
		       small->value_count, o->min_change_pct) == 0 &&
	    tost.p_value < ALPHA_EQUIVALENCE)
		return CMP_SAME;
	return CMP_UNKNOWN;
}

/* ---- classification ----------------------------------------------- */

enum decision { DECIDE_NONE, DECIDE_LOW, DECIDE_HIGH, DECIDE_NEITHER };

/*
 * The variance of clipped runs (in units of the noise's sd squared) to
 * classify with: 1 as the noise's sd says, unless the levels' clipped
 * runs (sum of squares `ss` on `dof` degrees of freedom) show clearly
 * more, as a second mode or a long tail does; then theirs.  Taking theirs
 * whenever it is known would spend runs on its sampling noise where the
 * noise's sd, known from every decided commit, is as good.
 */
static double clipped_variance(double ss, size_t dof)
{
	double pooled;

	if (dof < POOLED_DOF_MIN || !(ss > 0))
		return 1.0;
	pooled = ss / (double)dof;
	if (pooled * (double)dof >
	    gsl_cdf_chisq_Qinv(ALPHA_SPREAD, (double)dof))
		return pooled;
	return 1.0;
}

/*
 * Replays the sequential test of one commit over its runs in order and
 * returns the first decision reached (DECIDE_NONE if none yet).  *llr_out
 * receives the log-likelihood ratio at that point (positive: high).
 *
 * A commit that also has confirmation runs (it was named a culprit, or is
 * a culprit's parent) is judged on all its runs at once instead: when fresh
 * runs contradict the decision the search made, the decision changes and
 * the search goes on from there, so a wrong step is undone by the
 * confirmation that exposed it.
 */
static enum decision classify(struct engine *e, const struct level *low,
			      const struct level *high,
			      const struct bisect_commit *c, double *llr_out)
{
	const struct bisect_options *o = e->opts;
	double sigma = e->sigma, delta = high->mean - low->mean;
	double half = (low->mean + high->mean) / 2, d, clip, llr, zsum = 0;
	double low_z, high_z, ss, ss_high, var_z;
	size_t dof, dof_high;
	double threshold = log((1 - o->step_alpha) / o->step_alpha);
	size_t total = c->value_count + c->confirm_count, j;
	bool whole = c->confirm_count > 0;

	*llr_out = 0;
	if (!(sigma > 0)) {
		/* No noise at all: the runs equal one level or not. */
		double m = values_mean(c->values, c->value_count);

		if (c->value_count == 0)
			return DECIDE_NONE;
		/* Exact: as sure as a likelihood ratio of e^50. */
		*llr_out = m == low->mean ? -50.0 : 50.0;
		if (m == low->mean)
			return DECIDE_LOW;
		if (m == high->mean)
			return DECIDE_HIGH;
		return DECIDE_NEITHER;
	}
	d = delta / sigma;
	clip = fabs(d) / 2 + CLIP_BEYOND;
	level_clipped(e, low, half, clip, &low_z, &ss, &dof);
	level_clipped(e, high, half, clip, &high_z, &ss_high, &dof_high);
	ss += ss_high;
	dof += dof_high;
	var_z = clipped_variance(ss, dof);
	for (j = 0; j < total; j++) {
		double x = j < c->value_count
			       ? c->values[j]
			       : c->confirm_values[j - c->value_count];
		double loc, se_low, se_high;
		size_t n = j + 1;

		zsum += clipped_z(x, half, sigma, clip);
		if (n < o->step_runs_min || (whole && n < total))
			continue;
		loc = zsum / (double)n;
		se_low =
		    sqrt(var_z * (1.0 / (double)n + 1.0 / (double)low->n));
		se_high =
		    sqrt(var_z * (1.0 / (double)n + 1.0 / (double)high->n));
		/* The likelihood ratio of the commit's location under each
		 * level, the levels' own uncertainty included: with levels
		 * known exactly this is d * (sum of z), and an estimate from
		 * few runs cannot decide more than it knows. */
		llr = (square(loc - low_z) / square(se_low) -
		       square(loc - high_z) / square(se_high)) /
			  2 +
		      log(se_low / se_high);
		*llr_out = llr;
		if (llr >= threshold &&
		    fabs(loc - high_z) <= Z_CONSISTENT * se_high)
			return DECIDE_HIGH;
		if (llr <= -threshold &&
		    fabs(loc - low_z) <= Z_CONSISTENT * se_low)
			return DECIDE_LOW;
		if (fabs(loc - low_z) > Z_NEITHER * se_low &&
		    fabs(loc - high_z) > Z_NEITHER * se_high)
			return DECIDE_NEITHER;
	}
	return DECIDE_NONE;
}

/*
 * The level of a segment known from fewer runs: *commit is its newest
 * commit (the nearest in time to the commit under test), which gets the
 * runs when the level needs more.  False when that commit has runs_max.
 */
static bool weak_level(struct engine *e, const struct segment *s,
		       const struct level *low, const struct level *high,
		       size_t *commit, size_t *n)
{
	const struct idlist *side = low->n <= high->n ? &s->low : &s->high;

	*commit = side->v[side->n - 1];
	*n = low->n <= high->n ? low->n : high->n;
	return e->commits[*commit].value_count < e->opts->runs_max;
}

/*
 * The classification cannot be surer than the levels it compares with: a
 * commit at one level sits, however many runs it gets, within the other
 * level's standard error of it, which caps the likelihood ratio at about
 * (delta / se)^2 / 2.  When that cap is below twice the threshold, the
 * weaker level gets more runs before any commit is classified against it.
 * Returns true after asking for runs.
 */
static bool firm_up_level(struct engine *e, const struct segment *s,
			  const struct level *low, const struct level *high)
{
	const struct bisect_options *o = e->opts;
	double threshold = log((1 - o->step_alpha) / o->step_alpha);
	double delta = high->mean - low->mean, need;
	size_t commit, n, have, runs;

	if (!(e->sigma > 0) || delta == 0 ||
	    !weak_level(e, s, low, high, &commit, &n))
		return false;
	need = 4 * threshold * square(e->sigma / delta);
	if ((double)n >= need)
		return false;
	have = e->commits[commit].value_count;
	runs = (size_t)ceil(need) - n;
	if (have + runs > o->runs_max)
		runs = o->runs_max - have;
	request(e, commit, runs, BISECT_SEARCH);
	return true;
}

/* Runs to add to a commit under test: about half of what the evidence
 * still missing would take on average, at least one. */
static size_t more_step_runs(struct engine *e, const struct level *low,
			     const struct level *high, double llr, size_t have)
{
	double threshold =
	    log((1 - e->opts->step_alpha) / e->opts->step_alpha);
	double d = e->sigma > 0 ? (high->mean - low->mean) / e->sigma : 1;
	double per_run = d * d / 2, want;
	size_t runs;

	if (have < e->opts->step_runs_min)
		return e->opts->step_runs_min - have;
	want = (threshold - fabs(llr)) / (per_run > 0.05 ? per_run : 0.05);
	runs = want > 2 ? (size_t)(want / 2) : 1;
	if (runs > 8)
		runs = 8;
	if (have + runs > e->opts->runs_max)
		runs = e->opts->runs_max - have;
	return runs;
}

/* ---- steps in triplets: a machine with two modes ------------------- */

/* The run next to place q in the run order, before it (`after` false) or
 * after it, at most NEIGHBOUR_GAP away; NULL when there is none. */
static const struct placed_run *neighbour(const struct engine *e, size_t q,
					  bool after)
{
	size_t g;

	for (g = 1; g <= NEIGHBOUR_GAP; g++) {
		size_t at = after ? q + g : q - g;

		if (after ? at > e->run_last : q <= g)
			return NULL;
		if (e->run_at[at].commit != SIZE_MAX)
			return &e->run_at[at];
	}
	return NULL;
}

static bool idlist_has(const struct idlist *l, size_t x)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->v[i] == x)
			return true;
	}
	return false;
}

/*
 * The triplets of commit `c` in segment `s`: each search run of `c` made
 * next to a search run of a commit at the segment's low level and one at
 * its high level (neighbours in the run order, either order).  Triplet i
 * is e->trip_u[i] (the run minus the low run) and e->trip_w[i] (minus the
 * high run), in run order; returns how many.  In a part that is not a
 * split (its levels are the endpoints' two), a run next to one level
 * only counts too, the other level taken e->change_paired away.
 */
static size_t triplets_of(struct engine *e, const struct segment *s,
			  const struct bisect_commit *c)
{
	size_t k, n = 0;
	bool one_side = !s->split && isfinite(e->change_paired);

	for (k = 0; k < c->value_count; k++) {
		const struct placed_run *side[2];
		double u = NAN, w = NAN;
		size_t j;

		side[0] = neighbour(e, c->seq[k], false);
		side[1] = neighbour(e, c->seq[k], true);
		for (j = 0; j < 2; j++) {
			if (side[j] == NULL || !side[j]->search)
				continue;
			if (isnan(u) && idlist_has(&s->low, side[j]->commit))
				u = c->values[k] - side[j]->value;
			else if (isnan(w) &&
				 idlist_has(&s->high, side[j]->commit))
				w = c->values[k] - side[j]->value;
		}
		if (isnan(u) && isnan(w))
			continue;
		if (isnan(u) || isnan(w)) {
			if (!one_side)
				continue;
			if (isnan(u))
				u = w + e->change_paired;
			else
				w = u - e->change_paired;
		}
		e->trip_u[n] = u;
		e->trip_w[n] = w;
		n++;
	}
	return n;
}

/* The median of f(u[i], w[i]) over the first n triplets: u - w when
 * `difference`, else (u + w) / 2. */
static double triplet_median(struct engine *e, size_t n, bool difference)
{
	size_t i;

	for (i = 0; i < n; i++)
		e->trip_tmp[i] = difference
				     ? e->trip_u[i] - e->trip_w[i]
				     : (e->trip_u[i] + e->trip_w[i]) / 2;
	return stats_median(e->trip_tmp, n);
}

/*
 * classify() for a machine with two modes: on the commit's triplets
 * (triplets_of), replayed in run order from step_runs_min on, the first
 * decision reached.  Within a triplet the three runs share the machine's
 * mode, so x = run - (low + high) / 2 sits near -D / 2 when the commit is
 * at the low level and near +D / 2 at the high one, D = high - low, the
 * change in that mode, which the triplets measure too (u - w).  Medians
 * over the triplets, so that the few triplets a mode switch falls into
 * cannot decide (a median's variance taken as pi/2 times the mean's);
 * the noise is e->sigma_paired.  The log-likelihood ratio is D x / var(x);
 * a decision also needs the run to sit at its level (the median of
 * run - level run within Z_CONSISTENT standard errors), and "neither"
 * that it sits Z_NEITHER standard errors beyond both levels, on one side.
 * *n_out receives the number of triplets.
 */
static enum decision classify_paired(struct engine *e, const struct segment *s,
				     const struct level *low,
				     const struct level *high,
				     const struct bisect_commit *c,
				     double *llr_out, size_t *n_out)
{
	const struct bisect_options *o = e->opts;
	double threshold = log((1 - o->step_alpha) / o->step_alpha);
	double direction = high->mean >= low->mean ? 1.0 : -1.0;
	double sigma = e->sigma_paired;
	size_t n = triplets_of(e, s, c), m;

	/* The levels' means hold slow runs, as many as their commits
	 * happened to catch: the endpoints' pairs give the direction of a
	 * part between them. */
	if (!s->split && isfinite(e->change_paired) && e->change_paired != 0)
		direction = e->change_paired < 0 ? -1.0 : 1.0;

	*llr_out = 0;
	*n_out = n;
	if (!(sigma > 0))
		return DECIDE_NONE;
	for (m = o->step_runs_min; m <= n; m++) {
		double x = triplet_median(e, m, false);
		double d = triplet_median(e, m, true);
		double u = stats_median(e->trip_u, m);
		double w = stats_median(e->trip_w, m);
		double change = direction * d > 0 ? d : 0;
		double var_x = M_PI / 2 * 1.5 * square(sigma) / (double)m;
		double se = sqrt(M_PI / 2 * 2 * square(sigma) / (double)m);
		double llr = change * x / var_x;

		*llr_out = llr;
		if (llr >= threshold && fabs(w) <= Z_CONSISTENT * se)
			return DECIDE_HIGH;
		if (llr <= -threshold && fabs(u) <= Z_CONSISTENT * se)
			return DECIDE_LOW;
		if (fabs(u) > Z_NEITHER * se && fabs(w) > Z_NEITHER * se &&
		    (u > 0) == (w > 0))
			return DECIDE_NEITHER;
	}
	return DECIDE_NONE;
}

/* The newest commit of a level with room for more search runs, and that
 * room; 0 when none has. */
static size_t level_room(const struct engine *e, const struct idlist *side,
			 size_t *commit)
{
	size_t i;

	for (i = side->n; i-- > 0;) {
		size_t have = e->commits[side->v[i]].value_count;

		if (have < e->opts->runs_max) {
			*commit = side->v[i];
			return e->opts->runs_max - have;
		}
	}
	return 0;
}

/*
 * A step on a machine with two modes: classify_paired, and while it does
 * not decide, runs of the commit interleaved with runs of the newest
 * commit of each level with room (low, commit, high, low, commit, high,
 * ...), so that each of its runs is made between a run of each level.
 * Returns 1 with *dec decided, 0 after asking for runs, -1 when a level
 * or the commit has no room left for a triplet (the step then goes on as
 * on any machine, on the commit's own runs).
 */
static int step_paired(struct engine *e, const struct segment *s,
		       const struct level *low, const struct level *high,
		       size_t mid, enum decision *dec, double *llr)
{
	const struct bisect_options *o = e->opts;
	const struct bisect_commit *c = &e->commits[mid];
	double threshold = log((1 - o->step_alpha) / o->step_alpha);
	double sigma = e->sigma_paired, per;
	size_t n, runs, room_low, room_high, low_ref = 0, high_ref = 0;

	*dec = classify_paired(e, s, low, high, c, llr, &n);
	if (*dec != DECIDE_NONE)
		return 1;
	if (n < o->step_runs_min) {
		runs = o->step_runs_min - n;
	} else {
		/* About half of what the evidence still missing takes on
		 * average: a triplet adds D^2 / (2 var(x)) to the ratio. */
		double change = !s->split && isfinite(e->change_paired)
				    ? e->change_paired
				    : high->mean - low->mean;

		per = sigma > 0 ? square(change) /
				      (2 * M_PI / 2 * 1.5 * square(sigma))
				: 1;
		per = (threshold - fabs(*llr)) / (per > 0.05 ? per : 0.05);
		runs = per > 2 ? (size_t)(per / 2) : 1;
		if (runs > 8)
			runs = 8;
	}
	room_low = level_room(e, &s->low, &low_ref);
	room_high = level_room(e, &s->high, &high_ref);
	if (c->value_count + runs > o->runs_max)
		runs = c->value_count < o->runs_max
			   ? o->runs_max - c->value_count
			   : 0;
	/* A level with no room left (an endpoint that took runs_max to
	 * show the change): next to the other level only, where a run
	 * next to one level counts (triplets_of). */
	if (s->split || !isfinite(e->change_paired)) {
		if (room_low == 0 || room_high == 0)
			room_low = room_high = 0;
	} else if (room_low == 0) {
		room_low = room_high;
	} else if (room_high == 0) {
		room_high = room_low;
	}
	if (runs > room_low)
		runs = room_low;
	if (runs > room_high)
		runs = room_high;
	if (runs == 0)
		return -1;
	set_class(e, mid, BISECT_UNDECIDED);
	e->out->interleave = true;
	if (level_room(e, &s->low, &low_ref) > 0)
		request(e, low_ref, runs, BISECT_SEARCH);
	request(e, mid, runs, BISECT_SEARCH);
	if (level_room(e, &s->high, &high_ref) > 0)
		request(e, high_ref, runs, BISECT_SEARCH);
	return 0;
}

/* Whether `seq` gives each of `n` runs a place, each after the one
 * before. */
static bool seq_known(const size_t *seq, size_t n)
{
	size_t k;

	if (n > 0 && seq == NULL)
		return false;
	for (k = 0; k < n; k++) {
		if (seq[k] == 0 || (k > 0 && seq[k] <= seq[k - 1]))
			return false;
	}
	return true;
}

/*
 * e->run_at: every run, search and fresh, by its place in the run order,
 * when every run of every commit has one, no two share one and the places
 * are not spread absurdly wide; else it stays NULL and steps are never
 * run in triplets.  Returns 0, or -2 when out of memory.
 */
static int place_runs(struct engine *e, size_t total_runs)
{
	size_t i, k, last = 0;

	for (i = 0; i < e->count; i++) {
		const struct bisect_commit *c = &e->commits[i];

		if (!seq_known(c->seq, c->value_count) ||
		    !seq_known(c->confirm_seq, c->confirm_count))
			return 0;
		if (c->value_count > 0 && c->seq[c->value_count - 1] > last)
			last = c->seq[c->value_count - 1];
		if (c->confirm_count > 0 &&
		    c->confirm_seq[c->confirm_count - 1] > last)
			last = c->confirm_seq[c->confirm_count - 1];
	}
	if (last > 4 * total_runs + 1024)
		return 0;
	e->run_at = malloc((last + 1) * sizeof(*e->run_at));
	if (e->run_at == NULL)
		return -2;
	for (k = 0; k <= last; k++)
		e->run_at[k].commit = SIZE_MAX;
	for (i = 0; i < e->count; i++) {
		const struct bisect_commit *c = &e->commits[i];

		for (k = 0; k < c->value_count + c->confirm_count; k++) {
			bool search = k < c->value_count;
			size_t f = k - c->value_count;
			struct placed_run *r =
			    &e->run_at[search ? c->seq[k] : c->confirm_seq[f]];

			if (r->commit != SIZE_MAX) {
				/* two runs in one place */
				free(e->run_at);
				e->run_at = NULL;
				return 0;
			}
			r->commit = i;
			r->value =
			    search ? c->values[k] : c->confirm_values[f];
			r->search = search;
		}
	}
	e->run_last = last;
	return 0;
}

/*
 * Do the search runs show a second mode?  Each run's distance from its
 * commit's median (commits with step_runs_min runs or more) against the
 * robust sd of all those distances (MAD-based): TWO_MODE_FAR_MIN runs,
 * and TWO_MODE_SHARE of them, beyond TWO_MODE_FAR of it.  Sets
 * e->two_mode (only when the run order is known) and e->sigma_paired, the
 * noise of one run as the differences of the endpoints' interleaved runs
 * show it (a good run and the bad run after it), which a slow stretch
 * shifts alike; the pooled noise when there are fewer than ten.
 */
static void detect_two_mode(struct engine *e)
{
	const struct bisect_commit *good = &e->commits[0];
	size_t i, k, n = 0, far = 0;
	double robust;

	e->two_mode = false;
	e->sigma_paired = e->sigma;
	e->change_paired = NAN;
	if (e->run_at == NULL)
		return;
	for (i = 0; i < e->count; i++) {
		const struct bisect_commit *c = &e->commits[i];
		double median;

		if (c->value_count < e->opts->step_runs_min)
			continue;
		median = stats_median(c->values, c->value_count);
		for (k = 0; k < c->value_count; k++)
			e->scratch[n++] = c->values[k] - median;
	}
	if (n == 0)
		return;
	robust = 1.4826 * stats_mad(e->scratch, n);
	if (!(robust > 0))
		return;
	for (k = 0; k < n; k++)
		far += fabs(e->scratch[k]) > TWO_MODE_FAR * robust;
	e->two_mode = far >= TWO_MODE_FAR_MIN &&
		      (double)far >= TWO_MODE_SHARE * (double)n;
	for (n = 0, k = 0; k < good->value_count; k++) {
		const struct placed_run *b = neighbour(e, good->seq[k], 1);

		if (b != NULL && b->search && b->commit == e->count - 1)
			e->scratch[n++] = b->value - good->values[k];
	}
	if (n >= 10) {
		double s = 1.4826 * stats_mad(e->scratch, n) / M_SQRT2;

		e->change_paired = stats_median(e->scratch, n);
		if (s > 0 && (s < e->sigma || !(e->sigma > 0)))
			e->sigma_paired = s;
	}
}

/* ---- confirmation and culprits ------------------------------------ */

/*
 * Two-sided test of mean(a) - mean(b), as Welch's (statistic of a - b),
 * but with the noise's sd pooled from every commit the search decided
 * (dozens of degrees of freedom) instead of the two samples' own: a t-test
 * with pooled variance, as in an analysis of variance.  A handful of runs
 * a side then shows a clear change, where Welch's test on them would have
 * a few degrees of freedom.  Welch's test while the pool is small.
 */
static int pooled_t(struct engine *e, struct stats_test *t, const double *a,
		    size_t na, const double *b, size_t nb)
{
	if (!(e->sigma > 0) || e->sigma_dof < POOLED_DOF_MIN)
		return stats_welch_t(t, a, na, b, nb);
	return stats_t_known_sd(t, a, na, b, nb, e->sigma,
				(double)e->sigma_dof);
}

/* Whether every fresh run of `c` has its place in the run order, each
 * after the one before. */
static bool order_known(const struct bisect_commit *c)
{
	size_t k;

	if (c->confirm_count > 0 && c->confirm_seq == NULL)
		return false;
	for (k = 0; k < c->confirm_count; k++) {
		if (c->confirm_seq[k] == 0 ||
		    (k > 0 && c->confirm_seq[k] <= c->confirm_seq[k - 1]))
			return false;
	}
	return true;
}

/*
 * The fresh runs of `a` and `b` in pairs, oldest first: a run of one and
 * the next run of the other when no run of either came between them and
 * they are at most PAIR_GAP_MAX apart; each run is in one pair at most.
 * Pair i is e->pair_a[i] (of a), e->pair_b[i] (of b); *n is how many.
 * Runs of one side made long before the other's pair with none.  -1 when
 * the order of the runs is not known (the caller compares every run).
 */
static int pairs_of(struct engine *e, const struct bisect_commit *a,
		    const struct bisect_commit *b, size_t *n)
{
	const size_t *sa = a->confirm_seq, *sb = b->confirm_seq;
	size_t i = 0, j = 0;

	*n = 0;
	if (!order_known(a) || !order_known(b))
		return -1;
	while (i < a->confirm_count && j < b->confirm_count) {
		bool a_first = sa[i] < sb[j];
		size_t gap = a_first ? sb[j] - sa[i] : sa[i] - sb[j];
		bool next =
		    a_first ? i + 1 == a->confirm_count || sa[i + 1] > sb[j]
			    : j + 1 == b->confirm_count || sb[j + 1] > sa[i];

		if (sa[i] == sb[j])
			return -1; /* two runs in one place */
		if (next && gap <= PAIR_GAP_MAX) {
			e->pair_a[*n] = a->confirm_values[i++];
			e->pair_b[*n] = b->confirm_values[j++];
			(*n)++;
		} else if (a_first) {
			i++;
		} else {
			j++;
		}
	}
	return 0;
}

/*
 * Did the paired runs of e->pair_a move away from e->pair_b in
 * `direction` (`two_sided`: in either)?  Their `n` differences are tested
 * with the pooled t-test, as pooled_t; but when the differences spread
 * wider than the noise allows (their variance against the 2 sigma^2 of a
 * difference of two runs, a chi-squared test at ALPHA_PAIR_SPREAD), the
 * machine changed speed inside some pair, and Wilcoxon's signed-rank test
 * decides, which the size of that pair's difference cannot sway.
 * t->p_value is one-sided unless `two_sided`.
 */
static int paired_test(struct engine *e, struct stats_test *t, size_t n,
		       double direction, bool two_sided)
{
	double *d = e->pair_d, chi2, p_up;
	size_t k;

	for (k = 0; k < n; k++)
		d[k] = direction * (e->pair_a[k] - e->pair_b[k]);
	if (n >= 2 && e->sigma > 0 && e->sigma_dof >= POOLED_DOF_MIN) {
		chi2 = (double)(n - 1) * stats_variance(d, n) /
		       (2 * square(e->sigma));
		if (gsl_cdf_chisq_Q(chi2, (double)(n - 1)) <
		    ALPHA_PAIR_SPREAD) {
			if (stats_wilcoxon_greater(t, d, n) < 0)
				return -1;
			if (!two_sided)
				return 0;
			p_up = t->p_value;
			for (k = 0; k < n; k++)
				d[k] = -d[k];
			if (stats_wilcoxon_greater(t, d, n) < 0)
				return -1;
			t->p_value = 2 * fmin(p_up, t->p_value);
			if (t->p_value > 1)
				t->p_value = 1;
			return 0;
		}
	}
	if (pooled_t(e, t, e->pair_a, n, e->pair_b, n) < 0)
		return -1;
	if (!two_sided)
		t->p_value = t->statistic * direction > 0 ? t->p_value / 2
							  : 1 - t->p_value / 2;
	return 0;
}

/* One-sided: did `c` move away from `p` in `direction`, on fresh runs?
 * In pairs when their order is known (none yet: p 1), else every run. */
static int confirm_test(struct engine *e, struct stats_test *t,
			const struct bisect_commit *p,
			const struct bisect_commit *c, double direction)
{
	size_t n;

	if (pairs_of(e, c, p, &n) == 0) {
		if (n == 0) {
			t->statistic = 0;
			t->p_value = 1.0;
			t->df = 0;
			return 0;
		}
		return paired_test(e, t, n, direction, false);
	}
	if (pooled_t(e, t, c->confirm_values, c->confirm_count,
		     p->confirm_values, p->confirm_count) < 0)
		return -1;
	t->p_value =
	    t->statistic * direction > 0 ? t->p_value / 2 : 1 - t->p_value / 2;
	return 0;
}

/*
 * The most fresh runs a side one confirmation takes: enough to see the
 * change the search found (`delta`, between the part's two levels) at the
 * last round's level with power 0.9, at least four rounds of confirm_runs
 * (a clear change needs one) and at most confirm_max.
 */
static size_t confirm_limit(const struct engine *e, double delta)
{
	const struct bisect_options *o = e->opts;
	size_t least = 4 * o->confirm_runs;
	double need;

	if (least > o->confirm_max)
		least = o->confirm_max;
	if (!(e->sigma > 0) || delta == 0)
		return least;
	need =
	    2 * square((Z_CONFIRM_LAST + Z_CONFIRM_POWER) * e->sigma / delta);
	if (need <= (double)least)
		return least;
	return need >= (double)o->confirm_max ? o->confirm_max
					      : (size_t)ceil(need);
}

/*
 * A confirmation's rounds: confirm_runs fresh runs a side, then twice as
 * many in all after each round, up to `limit`.  For `have` runs a side,
 * *round is the number of rounds done (1 at the first look), *rounds how
 * many there are, *next the runs a side after the next round.  The alpha
 * of a look spends ALPHA_CONFIRM over the rounds, so that looking after
 * each adds no false confirmations: half on the first round, which
 * settles a clear change, the rest evenly over the others.
 */
static double confirm_round(const struct bisect_options *o, size_t limit,
			    size_t have, size_t *next)
{
	size_t target = o->confirm_runs, round = 0, rounds = 0;

	*next = limit;
	for (;;) {
		rounds++;
		if (target <= have)
			round = rounds;
		else if (*next == limit)
			*next = target;
		if (target >= limit)
			break;
		target = 2 * target < limit ? 2 * target : limit;
	}
	if (rounds <= 1)
		return ALPHA_CONFIRM;
	return round <= 1 ? ALPHA_CONFIRM / 2
			  : ALPHA_CONFIRM / (2.0 * (double)(rounds - 1));
}

/*
 * Checks culprit `c` against reference `p` on fresh interleaved runs, for
 * a change of `delta` found by the search.  Returns 1 when decided
 * (confirmed or not, filled into *cul), 0 after asking for more runs.
 * When the runs' order is known the runs are compared in pairs, and both
 * sides get as many new runs, interleaved (a side's runs left over from
 * another comparison pair with none); a culprit already holding
 * confirm_max fresh runs beyond the limit is decided on what it has.
 */
static int confirm(struct engine *e, struct bisect_culprit *cul,
		   double direction, double delta)
{
	const struct bisect_options *o = e->opts;
	const struct bisect_commit *p = &e->commits[cul->parent];
	const struct bisect_commit *c = &e->commits[cul->commit];
	struct stats_test t;
	size_t have = p->confirm_count < c->confirm_count ? p->confirm_count
							  : c->confirm_count;
	size_t limit, target, pairs, k;
	bool paired = pairs_of(e, c, p, &pairs) == 0, stuck;
	double alpha;
	int rc;

	if (paired)
		have = pairs;
	/* Sized for the change the search found; when the fresh runs show
	 * less of it, in its direction, for theirs (at least half the
	 * search's: a search stopped by a lucky look overstates a change,
	 * and a confirmation sized by that lacks the power to decide). */
	if (have >= o->confirm_runs) {
		double fresh =
		    direction *
		    (values_mean(c->confirm_values, c->confirm_count) -
		     values_mean(p->confirm_values, p->confirm_count));

		if (paired) {
			for (fresh = 0, k = 0; k < pairs; k++)
				fresh += e->pair_a[k] - e->pair_b[k];
			fresh *= direction / (double)pairs;
		}
		if (fresh > 0 && fresh < delta)
			delta = fresh > delta / 2 ? fresh : delta / 2;
	}
	limit = confirm_limit(e, delta);
	stuck = paired && c->confirm_count >= limit + o->confirm_max;
	if (have < o->confirm_runs && !stuck) {
		target = o->confirm_runs;
	} else {
		alpha = confirm_round(o, limit, have, &target);
		rc = confirm_test(e, &t, p, c, direction);
		if (rc == 0 && t.p_value < alpha) {
			cul->confirmed = true;
			cul->p_value = t.p_value;
		} else if (have < limit && !stuck) {
			goto ask;
		} else {
			cul->confirmed = false;
			cul->p_value = rc == 0 ? t.p_value : 1.0;
			e->refuted[e->out->culprit_count] = true;
		}
		return 1;
	}
ask:
	e->out->interleave = true;
	if (paired) {
		request(e, cul->parent, target - have, BISECT_CONFIRM);
		request(e, cul->commit, target - have, BISECT_CONFIRM);
		return 0;
	}
	request(e, cul->parent,
		target > p->confirm_count ? target - p->confirm_count : 0,
		BISECT_CONFIRM);
	request(e, cul->commit,
		target > c->confirm_count ? target - c->confirm_count : 0,
		BISECT_CONFIRM);
	return 0;
}

/* The change of a culprit over every run of it and its parent. */
static void culprit_estimate(struct engine *e, struct bisect_culprit *cul)
{
	struct estimate_change est;

	if (estimate_commits(&est, &e->commits[cul->parent],
			     &e->commits[cul->commit]) < 0)
		return;
	cul->change_pct = est.change_pct;
	cul->change_ci95_lo = est.ci95_lo;
	cul->change_ci95_hi = est.ci95_hi;
}

/* Calibration of a culprit's confidence (culprit_confidence): the search's
 * summed error bounds count twice, and the fresh runs' log likelihood ratio
 * half.  Both bounds and ratio assume normal noise; with heavy tails
 * (lognormal, outliers, drift in the simulator) the search errs more often
 * than its bounds say and a few fresh runs look more decisive than they
 * are, and these two factors bring every confidence bin's hit rate within
 * two points of its confidence or above it (docs/BISECTION.md). */
#define CONFIDENCE_ERROR_SCALE 2.0
#define CONFIDENCE_LR_WEIGHT 0.5

/*
 * The probability that `cul` is a culprit: that its parent and it sit at
 * the two levels the search found, `delta` apart in `direction`, rather
 * than at one level.  The search's decisions give the prior: `error`, the
 * sum of their error bounds exp(-|llr|), is about the chance that one of
 * them went wrong (exp(-error), about the product of the chances that
 * each went right, is taken as the prior probability, so it never drops
 * to 0 however many steps there were).  The fresh confirmation runs, which
 * the search never saw, multiply the odds by their likelihood ratio: the
 * difference of their medians, normal with the pooled noise, around delta
 * if the commit is the culprit, around 0 if not.  docs/BISECTION.md shows
 * in the simulator how well it is calibrated.
 */
static double culprit_confidence(struct engine *e,
				 const struct bisect_culprit *cul,
				 const struct segment *s, double direction,
				 double delta)
{
	const struct bisect_commit *p = &e->commits[cul->parent];
	const struct bisect_commit *c = &e->commits[cul->commit];
	double err = s->error > 1e-12 ? s->error : 1e-12;
	double log_odds;

	err *= CONFIDENCE_ERROR_SCALE;
	/* A part opened by a split or a follow-up may hold no change at all
	 * (its opening test is not among the error bounds): its culprit is
	 * a priori no likelier than not. */
	if (s->split && err < M_LN2)
		err = M_LN2;
	/* log of the prior odds exp(-err) / (1 - exp(-err)) */
	log_odds = -err - log(-expm1(-err));

	if (e->opts->confirm && p->confirm_count > 0 && c->confirm_count > 0 &&
	    delta > 0 && e->sigma > 0) {
		/* Medians, so that one outlier among a few fresh runs
		 * cannot fake a change; their variance is taken as pi/2
		 * times the mean's (its large-sample value, above the
		 * small-sample one: the odds lean low, never high).  The
		 * median of the pairs' differences when the runs pair. */
		double d = direction *
			   (stats_median(c->confirm_values, c->confirm_count) -
			    stats_median(p->confirm_values, p->confirm_count));
		double se2 = M_PI / 2 * square(e->sigma) *
			     (1.0 / (double)c->confirm_count +
			      1.0 / (double)p->confirm_count);
		size_t pairs, k;

		if (pairs_of(e, c, p, &pairs) == 0) {
			for (k = 0; k < pairs; k++)
				e->pair_d[k] = e->pair_a[k] - e->pair_b[k];
			d = pairs > 0
				? direction * stats_median(e->pair_d, pairs)
				: 0.0;
			se2 = M_PI / 2 * square(e->sigma) * 2.0 /
			      (double)(pairs > 0 ? pairs : 1);
		}
		if (isfinite(d))
			log_odds += CONFIDENCE_LR_WEIGHT *
				    (d * delta - delta * delta / 2) / se2;
	}
	if (log_odds > 700)
		return 1.0;
	return 1.0 / (1.0 + exp(-log_odds));
}

/* Records the culprit that ends segment `s` and confirms it.  Returns 1
 * when done with it, 0 when runs were requested, -2 out of memory. */
static int finish_segment(struct engine *e, struct segment *s)
{
	struct bisect_result *out = e->out;
	struct bisect_culprit *cul;
	struct level low, high;
	size_t lo, hi, i, left = bisect_set_count(&s->cand);
	double delta = 0, direction = 1.0;

	if (out->culprit_count == BISECT_MAX_CULPRITS)
		return 1;
	cul = &out->culprits[out->culprit_count];
	memset(cul, 0, sizeof(*cul));
	cul->commit = s->bad;
	cul->ambiguous_first = out->ambiguous_used;
	if (left > 1) {
		/* Only failed builds are left: any of them, or `bad`, may be
		 * the culprit; compare `bad` with the newest low commit. */
		cul->parent = s->low.v[s->low.n - 1];
		bisect_set_bounds(&s->cand, &lo, &hi);
		for (i = lo; i <= hi; i++) {
			if (bisect_set_has(&s->cand, i) &&
			    out->ambiguous_used < BISECT_MAX_AMBIGUOUS)
				out->ambiguous[out->ambiguous_used++] = i;
		}
	} else {
		const struct bisect_commit *c = &e->commits[s->bad];

		cul->parent = c->parent_count > 0 ? c->parents[0] : 0;
		if (out->ambiguous_used < BISECT_MAX_AMBIGUOUS)
			out->ambiguous[out->ambiguous_used++] = s->bad;
	}
	cul->ambiguous_count = out->ambiguous_used - cul->ambiguous_first;
	/* The change the search found sizes the confirmation; the change
	 * reported is the one estimate over every run of parent and culprit
	 * (the levels' only when the parent has no run, on a DAG). */
	cul->change_ci95_lo = cul->change_ci95_hi = NAN;
	if (level_of(&low, e, &s->low) == 0 &&
	    level_of(&high, e, &s->high) == 0) {
		cul->change_pct = pct_change_of(low.mean, high.mean);
		delta = fabs(high.mean - low.mean);
		/* The culprit's own change: from its part's older level to
		 * its newer one, whatever the endpoints did. */
		direction = high.mean < low.mean ? -1.0 : 1.0;
	}
	/* On a machine with two modes the levels' means hold slow runs, as
	 * many as their commits happened to catch: the endpoints' pairs
	 * give the change of a part between them. */
	if (e->two_mode && !s->split && isfinite(e->change_paired) &&
	    e->change_paired != 0) {
		delta = fabs(e->change_paired);
		direction = e->change_paired < 0 ? -1.0 : 1.0;
	}
	cul->p_value = 1.0;
	if (e->opts->confirm && !e->commits[cul->parent].build_failed &&
	    cul->parent != cul->commit) {
		if (!confirm(e, cul, direction, delta)) {
			culprit_estimate(e, cul);
			out->culprit_count++; /* shown while confirming */
			return 0;
		}
	}
	culprit_estimate(e, cul);
	cul->confidence = culprit_confidence(e, cul, s, direction, delta);
	/* Its direction is its own change's, never the endpoints': the
	 * one its confirmation showed, else the sign of its estimate. */
	cul->regression =
	    (cul->confirmed || cul->change_pct == 0
		 ? direction < 0
		 : cul->change_pct < 0) == e->opts->higher_is_better;
	out->culprit_count++;
	return 1;
}

/* ---- search --------------------------------------------------------- */

static int segment_new(struct segment *s, size_t count)
{
	memset(s, 0, sizeof(*s));
	return bisect_set_init(&s->cand, count);
}

/* cand := cand minus the ancestors of v (v low-like). */
static void drop_ancestors(struct engine *e, struct segment *s, size_t v)
{
	size_t w;

	bisect_dag_ancestors(&e->tmp, e->commits, &s->cand, v);
	for (w = 0; w < s->cand.nwords; w++)
		s->cand.words[w] &= ~e->tmp.words[w];
}

/* cand := ancestors of v inside cand (v high-like). */
static void keep_ancestors(struct engine *e, struct segment *s, size_t v)
{
	bisect_dag_ancestors(&e->tmp, e->commits, &s->cand, v);
	memcpy(s->cand.words, e->tmp.words, s->cand.nwords * sizeof(uint64_t));
}

/* opts->prefer_measured: the member of the segment with search runs (not
 * its bad end, not a failed build) whose ancestors inside it are nearest
 * half of its `left` candidates; *found false when there is none. */
static void measured_split(size_t *out, bool *found, struct engine *e,
			   const struct segment *s, size_t left)
{
	size_t v, best = SIZE_MAX;

	*found = false;
	for (v = 0; v < e->count; v++) {
		const struct bisect_commit *c = &e->commits[v];
		size_t below, off;

		if (v == s->bad || c->value_count == 0 || c->build_failed ||
		    !bisect_set_has(&s->cand, v))
			continue;
		bisect_dag_ancestors(&e->tmp, e->commits, &s->cand, v);
		below = bisect_set_count(&e->tmp);
		off = 2 * below > left ? 2 * below - left : left - 2 * below;
		if (off < best) {
			best = off;
			*out = v;
			*found = true;
		}
	}
}

static size_t log2_ceil(size_t n)
{
	size_t steps = 0;

	while (((size_t)1 << steps) < n)
		steps++;
	return steps;
}

/*
 * A part made by a split must show a change between its two ends before it
 * is searched: the pooled runs of its two levels differ significantly (at
 * ALPHA_PART) and by at least half of min_change_pct.  Returns 1 when they
 * do, 0 after asking for more runs of the end with fewer runs, -1 when they
 * do not (also when that end has runs_max runs already).
 */
static int split_holds_change(struct engine *e, struct segment *s,
			      const struct level *low,
			      const struct level *high)
{
	size_t end, k, have;
	struct stats_test t;
	double *a = e->scratch, *b;
	size_t na = 0, nb = 0, i;

	if (fabs(pct_change_of(low->mean, high->mean)) <
	    e->opts->min_change_pct / 2)
		return -1;
	for (i = 0; i < s->low.n; i++) {
		const struct bisect_commit *c = &e->commits[s->low.v[i]];

		for (k = 0; k < c->value_count; k++)
			a[na++] = c->values[k];
	}
	b = a + na;
	for (i = 0; i < s->high.n; i++) {
		const struct bisect_commit *c = &e->commits[s->high.v[i]];

		for (k = 0; k < c->value_count; k++)
			b[nb++] = c->values[k];
	}
	if (stats_welch_t(&t, a, na, b, nb) == 0 && t.p_value < ALPHA_PART)
		return 1;
	/* Firm up the end measured least: the commit at the third level. */
	end = na <= nb ? s->low.v[s->low.n - 1] : s->high.v[0];
	have = e->commits[end].value_count;
	if (have >= e->opts->runs_max)
		return -1;
	k = have < e->opts->runs_min ? e->opts->runs_min - have : 2;
	if (have + k > e->opts->runs_max)
		k = e->opts->runs_max - have;
	request(e, end, k, BISECT_SEARCH);
	return 0;
}

enum screen { SCREEN_NONE, SCREEN_MAYBE, SCREEN_CHANGE };

/* Search runs a commit may get from chain_change's hints, at most. */
#define SCREEN_RUNS_MAX(o)                                                    \
	(3 * (o)->runs_min < (o)->runs_max ? 3 * (o)->runs_min : (o)->runs_max)

/* Every run of one commit, search and confirmation, into `out`. */
static size_t all_runs(const struct bisect_commit *c, double *out)
{
	if (c->value_count > 0)
		memcpy(out, c->values, c->value_count * sizeof(double));
	if (c->confirm_count > 0)
		memcpy(out + c->value_count, c->confirm_values,
		       c->confirm_count * sizeof(double));
	return c->value_count + c->confirm_count;
}

/*
 * A chain of commits, oldest first, each an ancestor of the next, that the
 * search put at one level.  Is there a change inside it after all?  Every
 * split into an older and a newer group is tried, and the one whose pooled
 * runs (search and fresh) differ most is taken: *older and *newer are the
 * commits on either side of it.  SCREEN_CHANGE when that difference is
 * significant at ALPHA_SCREEN after a Bonferroni correction over the
 * splits, and at least half of min_change_pct; SCREEN_MAYBE when it is
 * nearly so and *weaker, the commit next to the split on the side with
 * fewer runs, can get more.  Pooling the runs of several commits sees a
 * change that a test of the two ends alone, on a few runs each, misses.
 */
static enum screen chain_change(struct engine *e, const size_t *chain,
				size_t n, size_t *older, size_t *newer,
				size_t *weaker)
{
	double *runs = e->scratch, best_p = 1.0, corrected;
	size_t k, i, total = 0, split = 0;

	/* Every run of the chain, oldest commit first: a split is then a
	 * place in this array.  (A chain holds a commit once, so its runs
	 * fit the scratch, sized for every run once.) */
	for (i = 0; i < n; i++) {
		const struct bisect_commit *c = &e->commits[chain[i]];

		if (total + c->value_count + c->confirm_count > e->scratch_len)
			return SCREEN_NONE;
		total += all_runs(c, runs + total);
	}
	for (k = 0; k + 1 < n; k++) {
		const struct bisect_commit *c = &e->commits[chain[k]];
		size_t rest;
		struct stats_test t;

		split += c->value_count + c->confirm_count;
		rest = total - split;
		if (split == 0 || rest == 0 ||
		    fabs(pct_change_of(stats_mean(runs, split),
				       stats_mean(runs + split, rest))) <
			e->opts->min_change_pct / 2)
			continue;
		/* The pooled noise even from few commits: each group is
		 * several commits' runs, whose own spread would count the
		 * change between them as noise. */
		if (!(e->sigma > 0))
			t.p_value = 0; /* no noise: any difference is real */
		else if (stats_t_known_sd(&t, runs, split, runs + split, rest,
					  e->sigma, (double)e->sigma_dof) < 0)
			continue;
		if (t.p_value < best_p) {
			best_p = t.p_value;
			*older = chain[k];
			*newer = chain[k + 1];
			*weaker = split <= rest ? chain[k] : chain[k + 1];
		}
	}
	corrected = best_p * (double)(n > 1 ? n - 1 : 1);
	if (corrected < ALPHA_SCREEN)
		return SCREEN_CHANGE;
	/* A hint, not yet a finding: the side of the split measured least
	 * gets more runs (a few, and only so many), and the chain is
	 * looked at again. */
	if (corrected < 2 * ALPHA_SCREEN &&
	    e->commits[*weaker].value_count < SCREEN_RUNS_MAX(e->opts))
		return SCREEN_MAYBE;
	return SCREEN_NONE;
}

/*
 * Do commits a and b, which chain_change picked, run at different levels,
 * on fresh runs of the two made together (interleaved, so that a machine
 * drifting between the two measurements cannot fake a difference)?  1: yes
 * (at ALPHA_PART and at least half of min_change_pct apart), -1: no, 0: not
 * sure yet.  "No" takes p >= 0.3 on a first round of fresh runs, p >= 0.05
 * on more.
 */
static int fresh_differ(struct engine *e, size_t a, size_t b)
{
	const struct bisect_commit *ca = &e->commits[a], *cb = &e->commits[b];
	const struct bisect_options *o = e->opts;
	struct stats_test t;
	size_t have = ca->confirm_count < cb->confirm_count
			  ? ca->confirm_count
			  : cb->confirm_count;

	/* In pairs when the runs' order is known, as a confirmation. */
	if (pairs_of(e, ca, cb, &have) == 0) {
		if (have < o->confirm_runs)
			return 0;
		if (fabs(pct_change_of(stats_mean(e->pair_a, have),
				       stats_mean(e->pair_b, have))) <
			o->min_change_pct / 2 ||
		    paired_test(e, &t, have, 1.0, true) < 0)
			return -1;
		if (t.p_value < ALPHA_PART)
			return 1;
		return t.p_value >= (have < 2 * o->confirm_runs ? 0.3 : 0.05)
			   ? -1
			   : 0;
	}
	if (have < o->confirm_runs)
		return 0;
	if (fabs(pct_change_of(
		stats_mean(ca->confirm_values, ca->confirm_count),
		stats_mean(cb->confirm_values, cb->confirm_count))) <
		o->min_change_pct / 2 ||
	    pooled_t(e, &t, ca->confirm_values, ca->confirm_count,
		     cb->confirm_values, cb->confirm_count) < 0)
		return -1;
	if (t.p_value < ALPHA_PART)
		return 1;
	return t.p_value >= (have < 2 * o->confirm_runs ? 0.3 : 0.05) ? -1 : 0;
}

/*
 * When fresh_differ is not sure: fresh runs of both, interleaved, as a
 * confirmation is made.  A follow-up takes at most four rounds of
 * confirm_runs (or confirm_max) a side: until the less measured of the
 * two has twice that, and while neither has more than confirm_max beyond
 * it (a culprit or its parent may hold up to confirm_max from its own
 * confirmation).  False when confirmation is off or a bound is reached.
 */
static bool firm_up(struct engine *e, size_t a, size_t b)
{
	const struct bisect_options *o = e->opts;
	const struct bisect_commit *ca = &e->commits[a], *cb = &e->commits[b];
	size_t least = 4 * o->confirm_runs < o->confirm_max
			   ? 4 * o->confirm_runs
			   : o->confirm_max;
	size_t fewer = ca->confirm_count < cb->confirm_count
			   ? ca->confirm_count
			   : cb->confirm_count;

	if (!o->confirm || fewer + o->confirm_runs > 2 * least ||
	    ca->confirm_count + o->confirm_runs > o->confirm_max + least ||
	    cb->confirm_count + o->confirm_runs > o->confirm_max + least)
		return false;
	e->out->interleave = true;
	request(e, a, o->confirm_runs, BISECT_CONFIRM);
	request(e, b, o->confirm_runs, BISECT_CONFIRM);
	return true;
}

/* A new part of the range: the ancestors of `high_end` that are not
 * ancestors of `low_end`, between those two reference commits. */
static int push_part(struct engine *e, struct segment *stack, size_t *depth,
		     size_t low_end, size_t high_end, double error)
{
	struct segment *part = &stack[*depth];
	size_t i, w;

	if (segment_new(part, e->count) < 0 ||
	    idlist_push(&part->low, low_end) < 0 ||
	    idlist_push(&part->high, high_end) < 0)
		return -2;
	for (i = 0; i < e->count; i++)
		bisect_set_add(&part->cand, i);
	keep_ancestors(e, part, high_end);
	bisect_dag_ancestors(&e->tmp, e->commits, &part->cand, low_end);
	for (w = 0; w < part->cand.nwords; w++)
		part->cand.words[w] &= ~e->tmp.words[w];
	part->bad = high_end;
	part->error = error;
	part->split = true;
	(*depth)++;
	e->parts_pushed++;
	return 0;
}

static int index_order(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Is `a` an ancestor of `b` (or b itself)? */
static bool is_ancestor(struct engine *e, size_t a, size_t b)
{
	if (a > b)
		return false;
	bisect_dag_ancestors(&e->tmp, e->commits, &e->all, b);
	return bisect_set_has(&e->tmp, a);
}

/*
 * The chains chain_change looks at, into e->chain, oldest first.  Above
 * the culprit: the part's high commits, which form one line of history
 * (each was chosen among the ancestors of the one before), the culprit
 * the oldest.  Below: the part's low commits that are ancestors of the
 * culprit's parent, in index order, then the parent.  On a DAG those need
 * not be one line of history; follow_up checks the pair it is given.
 * False when the chain has fewer than two commits.
 */
static bool high_chain(struct engine *e, const struct segment *s)
{
	size_t i;

	e->chain_n = 0;
	for (i = s->high.n; i-- > 0;)
		e->chain[e->chain_n++] = s->high.v[i];
	return e->chain_n >= 2;
}

static bool low_chain(struct engine *e, const struct segment *s, size_t parent)
{
	size_t i;

	bisect_dag_ancestors(&e->tmp, e->commits, &e->all, parent);
	e->chain_n = 0;
	for (i = 0; i < s->low.n; i++) {
		size_t v = s->low.v[i];

		if (v != parent && bisect_set_has(&e->tmp, v))
			e->chain[e->chain_n++] = v;
	}
	qsort(e->chain, e->chain_n, sizeof(e->chain[0]), index_order);
	e->chain[e->chain_n++] = parent;
	return e->chain_n >= 2;
}

/*
 * After the part on top of the stack named its culprit: when the culprit's
 * parent does not run at the part's low level, or the culprit not at its
 * high level (judged on all their runs, the fresh ones included), there is
 * another change between them and the part's ends, and that stretch is
 * searched too.  This finds a second change that the bisection stepped
 * over without meeting a commit at the third level.  Pops the finished
 * part and returns 0; returns 1 after asking for runs (not sure yet), -2
 * when out of memory.
 */
static int follow_up(struct engine *e, struct segment *stack, size_t *depth)
{
	struct segment *s = &stack[*depth - 1];
	const struct bisect_culprit *cul =
	    &e->out->culprits[e->out->culprit_count - 1];
	size_t parent = cul->parent;
	size_t ua = 0, ub = 0, uw = 0, la = 0, lb = 0, lw = 0;
	enum screen up = SCREEN_NONE, down = SCREEN_NONE;
	double error = s->error;
	int upper = -1, lower = -1;

	/* A bounded number of parts, so the follow-ups end. */
	if (e->parts_pushed >= 2 * BISECT_MAX_CULPRITS ||
	    e->out->culprit_count >= BISECT_MAX_CULPRITS) {
		segment_clear(s);
		(*depth)--;
		return 0;
	}
	/* Above: the culprit and the commits found at the high level,
	 * oldest first.  Below: those found at the low level, and the
	 * culprit's parent. */
	if (high_chain(e, s))
		up = chain_change(e, e->chain, e->chain_n, &ua, &ub, &uw);
	if (up == SCREEN_CHANGE)
		upper = fresh_differ(e, ua, ub);
	if (cul->ambiguous_count <= 1 && !e->commits[parent].build_failed &&
	    low_chain(e, s, parent)) {
		down = chain_change(e, e->chain, e->chain_n, &la, &lb, &lw);
		if (down != SCREEN_NONE && !is_ancestor(e, la, lb))
			down = SCREEN_NONE;
	}
	if (down == SCREEN_CHANGE)
		lower = fresh_differ(e, la, lb);
	if ((upper == 0 && firm_up(e, ua, ub)) ||
	    (lower == 0 && firm_up(e, la, lb)))
		return 1; /* runs asked for */
	if (up == SCREEN_MAYBE || down == SCREEN_MAYBE) {
		size_t w = up == SCREEN_MAYBE ? uw : lw;
		size_t have = e->commits[w].value_count;
		size_t cap = SCREEN_RUNS_MAX(e->opts);

		request(e, w,
			have + e->opts->runs_min <= cap ? e->opts->runs_min
							: cap - have,
			BISECT_SEARCH);
		return 1;
	}
	segment_clear(s);
	(*depth)--;
	if (upper == 1 && *depth < MAX_SEGMENTS &&
	    push_part(e, stack, depth, ua, ub, error) < 0)
		return -2;
	if (lower == 1 && *depth < MAX_SEGMENTS &&
	    push_part(e, stack, depth, la, lb, error) < 0)
		return -2;
	return 0;
}

/*
 * Bisects the segments (a stack; the lowest on top) until every one has a
 * confirmed culprit or runs are needed.  Returns 1 when all are done, 0
 * when runs were requested, -2 when out of memory.
 */
static int search(struct engine *e, struct segment *stack, size_t *depth)
{
	struct bisect_result *out = e->out;
	int rc;

	while (*depth > 0) {
		struct segment *s = &stack[*depth - 1];
		struct level low, high;
		size_t left = bisect_set_count(&s->cand), mid;
		const struct bisect_commit *c;
		enum decision dec;
		bool found;
		double llr;

		out->hi = s->bad;
		out->lo = s->low.v[s->low.n - 1];
		out->candidates_left = left;
		out->steps_left = log2_ceil(left) + 2 * (*depth - 1);
		if (level_of(&low, e, &s->low) < 0 ||
		    level_of(&high, e, &s->high) < 0)
			return -1;
		if (s->split) {
			rc = split_holds_change(e, s, &low, &high);
			if (rc == 0)
				return 0; /* runs requested */
			if (rc < 0) {
				/* No change worth a culprit between the two
				 * ends of this part. */
				segment_clear(s);
				(*depth)--;
				continue;
			}
		}
		/* One candidate left, or only failed builds: the segment
		 * has its culprit. */
		found = false;
		if (left > 1 && e->opts->prefer_measured)
			measured_split(&mid, &found, e, s, left);
		if (left > 1 && !found &&
		    bisect_dag_best_split(&mid, e->commits, &s->cand, s->bad,
					  &found) < 0)
			return -2;
		if (!found) {
			rc = finish_segment(e, s);
			if (rc <= 0)
				return rc;
			rc = follow_up(e, stack, depth);
			if (rc < 0)
				return rc;
			if (rc == 1)
				return 0;
			continue;
		}
		c = &e->commits[mid];
		if (e->two_mode) {
			rc = step_paired(e, s, &low, &high, mid, &dec, &llr);
			if (rc == 0)
				return 0; /* runs requested */
			if (rc == 1)
				goto decided;
		}
		if (firm_up_level(e, s, &low, &high))
			return 0; /* runs requested */
		dec = classify(e, &low, &high, c, &llr);
		if (dec == DECIDE_NONE &&
		    c->value_count >= e->opts->runs_max) {
			/* The evidence stays weak: the nearer level. */
			double m = values_mean(c->values, c->value_count);

			double toward;

			dec = fabs(m - high.mean) < fabs(m - low.mean)
				  ? DECIDE_HIGH
				  : DECIDE_LOW;
			/* Its error (for the confidence) is the chance of
			 * the other level, 1 / (1 + exp(llr towards this
			 * one)), not a bound of 1 whatever the runs say. */
			toward = dec == DECIDE_HIGH ? llr : -llr;
			llr = toward > 30 ? toward : log1p(exp(toward));
		}
		if (dec == DECIDE_NONE) {
			size_t level_commit, level_n;

			set_class(e, mid, BISECT_UNDECIDED);
			/* A commit measured better than a level it is
			 * compared with gains nothing from more runs of its
			 * own: the level needs them (it may hold a commit
			 * classified wrongly, which more runs expose). */
			if (c->value_count >= 2 * e->opts->step_runs_min &&
			    weak_level(e, s, &low, &high, &level_commit,
				       &level_n) &&
			    c->value_count >= level_n) {
				size_t room =
				    e->opts->runs_max -
				    e->commits[level_commit].value_count;
				size_t runs = level_n > 4 ? level_n / 2 : 2;

				request(e, level_commit,
					runs < room ? runs : room,
					BISECT_SEARCH);
				return 0;
			}
			request(e, mid,
				more_step_runs(e, &low, &high, llr,
					       c->value_count),
				BISECT_SEARCH);
			return 0;
		}
	decided:
		out->steps_done++;
		s->error += exp(-fabs(llr));
		if (noise_add(e, mid) < 0)
			return -2;
		estimate_sigma(e);
		if (dec == DECIDE_LOW) {
			set_class(e, mid, BISECT_GOOD_LIKE);
			if (idlist_push(&s->low, mid) < 0)
				return -2;
			drop_ancestors(e, s, mid);
		} else if (dec == DECIDE_HIGH) {
			set_class(e, mid, BISECT_BAD_LIKE);
			if (idlist_push(&s->high, mid) < 0)
				return -2;
			keep_ancestors(e, s, mid);
			s->bad = mid;
		} else {
			/* A third level: a change below and one above. */
			struct segment *lower;

			set_class(e, mid, BISECT_NEITHER);
			if (*depth == MAX_SEGMENTS) {
				/* Too many change points to follow: take
				 * the nearer level and go on. */
				double m =
				    values_mean(c->values, c->value_count);

				if (fabs(m - high.mean) < fabs(m - low.mean)) {
					if (idlist_push(&s->high, mid) < 0)
						return -2;
					keep_ancestors(e, s, mid);
					s->bad = mid;
				} else {
					if (idlist_push(&s->low, mid) < 0)
						return -2;
					drop_ancestors(e, s, mid);
				}
				continue;
			}
			lower = &stack[*depth];
			if (segment_new(lower, e->count) < 0 ||
			    idlist_copy(&lower->low, &s->low) < 0 ||
			    idlist_push(&lower->high, mid) < 0)
				return -2;
			memcpy(lower->cand.words, s->cand.words,
			       s->cand.nwords * sizeof(uint64_t));
			keep_ancestors(e, lower, mid);
			lower->bad = mid;
			lower->error = s->error;
			lower->split = true;
			s->split = true;
			/* The upper part: what is left above mid. */
			drop_ancestors(e, s, mid);
			free(s->low.v);
			memset(&s->low, 0, sizeof(s->low));
			if (idlist_push(&s->low, mid) < 0)
				return -2;
			(*depth)++;
		}
	}
	return 1;
}

/* ---- probes: endpoints the same ------------------------------------ */

/*
 * The place of probe j (1-based) of `probes` in the probing order: the
 * middle first, then the quarters, then the eighths, ..., so that a
 * stretch at another level is met early when it is long.
 */
static int probe_order(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t tx = 0, ty = 0;

	while (!((x >> tx) & 1))
		tx++;
	while (!((y >> ty) & 1))
		ty++;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The buildable commit nearest to `at` inside the range, or 0. */
static size_t probe_commit(const struct engine *e, size_t at)
{
	size_t d;

	for (d = 0; d < e->count; d++) {
		if (at + d < e->count - 1 && !e->commits[at + d].build_failed)
			return at + d;
		if (at > d && at - d > 0 && !e->commits[at - d].build_failed)
			return at - d;
	}
	return 0;
}

enum probe_state { PROBE_MORE, PROBE_FLAT, PROBE_OUTSIDE };

/*
 * Replays the looks at probe `c` (after step_runs_min, twice and four
 * times as many runs, at most runs_max): outside when its location (the
 * mean of its runs winsorised CLIP_BEYOND sds around their median, so
 * one outlier cannot decide) is Z_NEITHER standard errors (its tail as
 * a t quantile with the noise's degrees of freedom) beyond both
 * endpoint levels on the same side, and at least half of min_change_pct
 * from the nearer; flat when it is within Z_PROBE_FLAT of one level,
 * between them, or at the last look; else more runs.
 */
#define Z_PROBE_FLAT 1.5
static enum probe_state probe_look(struct engine *e, const struct level *lg,
				   const struct level *lb,
				   const struct bisect_commit *c, size_t *want)
{
	const struct bisect_options *o = e->opts;
	double base = lg->mean != 0.0 ? fabs(lg->mean) : fabs(lb->mean);
	double margin = base * o->min_change_pct / 100.0 / 2;
	size_t look = o->step_runs_min, last = 4 * o->step_runs_min, n;
	/* Z_NEITHER's tail, for a noise known from the endpoints' few
	 * runs: a t quantile, so a short range's probes are not split on
	 * an sd that came out low. */
	double outside =
	    e->sigma_dof > 0
		? gsl_cdf_tdist_Qinv(gsl_cdf_ugaussian_Q(Z_NEITHER),
				     (double)e->sigma_dof)
		: Z_NEITHER;

	if (last > o->runs_max)
		last = o->runs_max;
	for (;;) {
		double *x = e->scratch, median, lim, loc = 0, zg, zb, se, near;
		size_t k;

		n = look < last ? look : last;
		if (c->value_count < n) {
			*want = n - c->value_count;
			return PROBE_MORE;
		}
		memcpy(x, c->values, n * sizeof(*x));
		median = stats_median(x, n);
		lim = CLIP_BEYOND * e->sigma;
		for (k = 0; k < n; k++) {
			double v = c->values[k];

			loc += v > median + lim	  ? median + lim
			       : v < median - lim ? median - lim
						  : v;
		}
		loc /= (double)n;
		near = fabs(loc - lg->mean) < fabs(loc - lb->mean)
			   ? fabs(loc - lg->mean)
			   : fabs(loc - lb->mean);
		if (!(e->sigma > 0)) {
			return loc != lg->mean && loc != lb->mean &&
				       near >= margin
				   ? PROBE_OUTSIDE
				   : PROBE_FLAT;
		}
		se = e->sigma * sqrt(1.0 / (double)n + 1.0 / (double)lg->n);
		zg = (loc - lg->mean) / se;
		se = e->sigma * sqrt(1.0 / (double)n + 1.0 / (double)lb->n);
		zb = (loc - lb->mean) / se;
		if (((zg > outside && zb > outside) ||
		     (zg < -outside && zb < -outside)) &&
		    near >= margin)
			return PROBE_OUTSIDE;
		if ((zg > 0) != (zb > 0) || fabs(zg) < Z_PROBE_FLAT ||
		    fabs(zb) < Z_PROBE_FLAT || n >= last)
			return PROBE_FLAT;
		look = 2 * look;
	}
}

/*
 * The endpoints are the same: are the commits between them too?  Up to
 * `probes` buildable commits spread evenly over the range (by index,
 * which is topological) are measured, middle first, a few at a time.
 * Returns 1 with *split_at the first probe (in probing order, every
 * earlier one flat) that is outside both endpoint levels, or 0 when
 * every probe is flat; 0 after asking for runs; -2 out of memory.
 * (Its return is then 1 as well: *split_at 0 means no split.)
 */
static int probe_interior(struct engine *e, size_t *split_at)
{
	size_t count = e->count, probes = e->opts->probes, j, asked = 0;
	size_t *order;
	struct idlist gl = {0}, bl = {0};
	struct level lg, lb;
	int rc = -2;

	*split_at = 0;
	if (probes > count - 2)
		probes = count - 2;
	if (probes == 0)
		return 1;
	order = malloc(probes * sizeof(*order));
	if (order == NULL || idlist_push(&gl, 0) < 0 ||
	    idlist_push(&bl, count - 1) < 0)
		goto out;
	for (j = 0; j < probes; j++)
		order[j] = j + 1;
	qsort(order, probes, sizeof(*order), probe_order);
	if (level_of(&lg, e, &gl) < 0 || level_of(&lb, e, &bl) < 0) {
		rc = 1;
		goto out;
	}
	for (j = 0; j < probes && asked < BISECT_MAX_REQUESTS; j++) {
		size_t at =
		    (size_t)floor((double)order[j] * (double)(count - 1) /
				      (double)(probes + 1) +
				  0.5);
		size_t v = probe_commit(e, at), want = 0;
		enum probe_state st;

		if (v == 0)
			continue;
		st = probe_look(e, &lg, &lb, &e->commits[v], &want);
		if (st == PROBE_MORE) {
			set_class(e, v, BISECT_UNDECIDED);
			request(e, v, want, BISECT_SEARCH);
			asked++;
		} else if (st == PROBE_FLAT) {
			set_class(e, v, BISECT_GOOD_LIKE);
		} else {
			set_class(e, v, BISECT_NEITHER);
			if (asked == 0)
				*split_at = v;
			break;
		}
	}
	rc = asked > 0 ? 0 : 1;
out:
	free(order);
	free(gl.v);
	free(bl.v);
	return rc;
}

/* ---- the step ------------------------------------------------------ */

/*
 * A culprit that fresh runs failed to confirm is a step that went wrong
 * somewhere, not a finding: when another culprit was confirmed, it alone
 * is named.  (A sole unconfirmed culprit is still reported, marked so and
 * with its confidence halved: the endpoints did differ.)
 */
static void drop_refuted(struct engine *e)
{
	struct bisect_result *out = e->out;
	size_t i, kept = 0;
	bool any_confirmed = false;

	for (i = 0; i < out->culprit_count; i++)
		any_confirmed |= out->culprits[i].confirmed;
	if (!any_confirmed)
		return;
	for (i = 0; i < out->culprit_count; i++) {
		if (!e->refuted[i])
			out->culprits[kept++] = out->culprits[i];
	}
	out->culprit_count = kept;
}

static int culprit_order(const void *a, const void *b)
{
	const struct bisect_culprit *x = a, *y = b;

	return x->commit < y->commit ? -1 : x->commit > y->commit;
}

static void finish(struct engine *e, enum bisect_verdict verdict,
		   const char *reason);

/*
 * The verdict once every part is done.  A verdict names a confirmed
 * culprit (any culprit when confirmation is off), or it is inconclusive:
 * regression when one of them worsens the KPI (so CI fails on a
 * regression however a later improvement hides it at the endpoints),
 * improvement when all of them improve it.  Suspects that their own
 * confirmation refuted stay listed, unconfirmed.  `endpoints_same`: the
 * endpoints did not differ and a probe split the range; when no culprit
 * is left there, nothing changed after all.
 */
static void conclude(struct engine *e, bool endpoints_same)
{
	struct bisect_result *out = e->out;
	double confidence = 1.0;
	size_t i, backed = 0;
	bool worse = false;

	drop_refuted(e);
	/* Parts found by follow-ups finish after the part that led to
	 * them: report the culprits oldest first. */
	qsort(out->culprits, out->culprit_count, sizeof(out->culprits[0]),
	      culprit_order);
	for (i = 0; i < out->culprit_count; i++) {
		const struct bisect_culprit *c = &out->culprits[i];

		confidence *= c->confidence;
		if (c->confirmed || !e->opts->confirm) {
			backed++;
			worse |= c->regression;
		}
	}
	if (backed > 0) {
		out->confidence = confidence;
		finish(e, worse ? BISECT_REGRESSION : BISECT_IMPROVEMENT,
		       NULL);
		return;
	}
	out->confidence = 0;
	if (out->culprit_count == 0 && endpoints_same) {
		out->confidence = 1.0 - ALPHA_EQUIVALENCE;
		finish(e, BISECT_NO_CHANGE, NULL);
	} else if (out->culprit_count == 0) {
		finish(e, BISECT_INCONCLUSIVE,
		       "the endpoints differ, but no commit between them "
		       "could be shown to change the KPI; more runs per "
		       "commit (a higher runs_max) or a quieter machine may "
		       "decide it");
	} else {
		finish(e, BISECT_INCONCLUSIVE,
		       "fresh runs of the commit the search found and its "
		       "parent did not confirm its change; more runs per "
		       "commit (a higher runs_max, which sizes the "
		       "confirmation) or a quieter machine would decide it");
	}
}

static bool options_valid(const struct bisect_options *o)
{
	return o->runs_min >= 2 && o->runs_max >= o->runs_min &&
	       o->step_runs_min >= 2 && o->step_runs_min <= o->runs_max &&
	       (!o->confirm ||
		(o->confirm_runs >= 2 && o->confirm_max >= o->confirm_runs)) &&
	       o->alpha > 0 && o->alpha < 1 && o->step_alpha > 0 &&
	       o->step_alpha < 0.5 && o->min_change_pct > 0;
}

static bool dag_valid(const struct bisect_commit *commits, size_t count)
{
	size_t i, k;

	if (commits[0].parent_count != 0)
		return false;
	for (i = 1; i < count; i++) {
		for (k = 0; k < commits[i].parent_count; k++) {
			if (commits[i].parents[k] >= i)
				return false;
		}
	}
	return true;
}

static void finish(struct engine *e, enum bisect_verdict verdict,
		   const char *reason)
{
	e->out->verdict = verdict;
	e->out->reason = reason;
	e->out->request_count = 0;
	e->out->interleave = false;
}

int bisect_step(struct bisect_result *out, enum bisect_class *classes,
		const struct bisect_commit *commits, size_t count,
		const struct bisect_options *opts)
{
	struct segment stack[MAX_SEGMENTS];
	struct engine e;
	size_t depth = 0, i, total_runs = 0, need, fresh_most = 0;
	size_t search_most = 0;
	const struct bisect_commit *good, *bad;
	enum comparison endpoints;
	size_t split_at = 0;
	double p;
	int rc, error = -2;

	if (count < 2 || !options_valid(opts) || !dag_valid(commits, count))
		return -1;
	memset(out, 0, sizeof(*out));
	memset(&e, 0, sizeof(e));
	memset(stack, 0, sizeof(stack));
	e.commits = commits;
	e.count = count;
	e.opts = opts;
	e.out = out;
	e.classes = classes;
	out->hi = count - 1;
	out->p_value = 1.0;
	/* Not measured until both endpoints are (an endpoint that does not
	 * build or run leaves it so). */
	out->change_pct = NAN;
	out->change_ci95_lo = out->change_ci95_hi = NAN;
	out->candidates_left = count - 1;
	out->steps_left = log2_ceil(count - 1);
	for (i = 0; i < count; i++) {
		/* A commit with runs that the search does not classify again
		 * (tested in a part that turned out to hold no change, say)
		 * is undecided, not untested. */
		set_class(&e, i,
			  commits[i].build_failed      ? BISECT_SKIPPED
			  : commits[i].value_count > 0 ? BISECT_UNDECIDED
						       : BISECT_UNTESTED);
		total_runs +=
		    commits[i].value_count + commits[i].confirm_count;
		if (commits[i].confirm_count > fresh_most)
			fresh_most = commits[i].confirm_count;
		if (commits[i].value_count > search_most)
			search_most = commits[i].value_count;
	}
	good = &commits[0];
	bad = &commits[count - 1];
	if (good->build_failed || bad->build_failed) {
		finish(&e, BISECT_INCONCLUSIVE,
		       good->build_failed ? "the good commit does not build"
					  : "the bad commit does not build");
		return 0;
	}
	e.scratch_len = total_runs + 1;
	e.scratch = malloc(e.scratch_len * sizeof(*e.scratch));
	e.chain = malloc(count * sizeof(*e.chain));
	e.pair_a = malloc(3 * (fresh_most + 1) * sizeof(*e.pair_a));
	e.pair_b = e.pair_a != NULL ? e.pair_a + fresh_most + 1 : NULL;
	e.pair_d = e.pair_a != NULL ? e.pair_b + fresh_most + 1 : NULL;
	e.trip_u = malloc(3 * (search_most + 1) * sizeof(*e.trip_u));
	e.trip_w = e.trip_u != NULL ? e.trip_u + search_most + 1 : NULL;
	e.trip_tmp = e.trip_u != NULL ? e.trip_w + search_most + 1 : NULL;
	if (e.scratch == NULL || e.chain == NULL || e.pair_a == NULL ||
	    e.trip_u == NULL || bisect_set_init(&e.tmp, count) < 0 ||
	    bisect_set_init(&e.all, count) < 0)
		goto out;
	for (i = 0; i < count; i++)
		bisect_set_add(&e.all, i);

	/* 1. The endpoints, interleaved. */
	if (good->value_count < opts->runs_min ||
	    bad->value_count < opts->runs_min) {
		out->interleave = true;
		request(&e, 0,
			opts->runs_min > good->value_count
			    ? opts->runs_min - good->value_count
			    : 0,
			BISECT_SEARCH);
		request(&e, count - 1,
			opts->runs_min > bad->value_count
			    ? opts->runs_min - bad->value_count
			    : 0,
			BISECT_SEARCH);
		error = 0;
		goto out;
	}
	endpoints = compare_endpoints(&e, &p);
	out->p_value = p;
	{
		/* The endpoints' change: the one estimate, every run. */
		struct estimate_change est;

		if (estimate_commits(&est, good, bad) == 0) {
			out->change_pct = est.change_pct;
			out->change_ci95_lo = est.ci95_lo;
			out->change_ci95_hi = est.ci95_hi;
		}
	}
	if (endpoints == CMP_SAME) {
		set_class(&e, 0, BISECT_GOOD_LIKE);
		set_class(&e, count - 1, BISECT_GOOD_LIKE);
		if (bisect_set_init(&e.in_noise, count) < 0 ||
		    noise_add(&e, 0) < 0 || noise_add(&e, count - 1) < 0)
			goto out;
		estimate_sigma(&e);
		/* Opposite changes may cancel at the endpoints: a commit
		 * inside the range clearly outside both levels splits it. */
		rc = probe_interior(&e, &split_at);
		if (rc <= 0) {
			error = rc;
			goto out; /* error, or runs asked for */
		}
		if (split_at == 0) {
			out->confidence = 1.0 - ALPHA_EQUIVALENCE;
			finish(&e, BISECT_NO_CHANGE, NULL);
			error = 0;
			goto out;
		}
		/* The older part on top of the stack: searched first. */
		if (push_part(&e, stack, &depth, split_at, count - 1, 0) < 0 ||
		    push_part(&e, stack, &depth, 0, split_at, 0) < 0)
			goto out;
		goto search;
	}
	if (endpoints == CMP_UNKNOWN) {
		size_t have = good->value_count < bad->value_count
				  ? good->value_count
				  : bad->value_count;

		set_class(&e, 0, BISECT_UNDECIDED);
		set_class(&e, count - 1, BISECT_UNDECIDED);
		if (have >= opts->runs_max) {
			finish(
			    &e, BISECT_INCONCLUSIVE,
			    "the endpoints differ too little for the noise, "
			    "even at runs_max");
		} else {
			need = next_look(opts, have);
			out->interleave = true;
			request(&e, 0,
				need > good->value_count
				    ? need - good->value_count
				    : 0,
				BISECT_SEARCH);
			request(&e, count - 1,
				need > bad->value_count
				    ? need - bad->value_count
				    : 0,
				BISECT_SEARCH);
		}
		error = 0;
		goto out;
	}
	set_class(&e, 0, BISECT_GOOD_LIKE);
	set_class(&e, count - 1, BISECT_BAD_LIKE);

	/* 2. Bisection, 3. confirmation. */
	if (bisect_set_init(&e.in_noise, count) < 0 || noise_add(&e, 0) < 0 ||
	    noise_add(&e, count - 1) < 0)
		goto out;
	estimate_sigma(&e);
	if (segment_new(&stack[0], count) < 0 ||
	    idlist_push(&stack[0].low, 0) < 0 ||
	    idlist_push(&stack[0].high, count - 1) < 0)
		goto out;
	for (i = 1; i < count; i++)
		bisect_set_add(&stack[0].cand, i);
	stack[0].bad = count - 1;
	depth = 1;
search:
	/* A machine with two modes: steps in triplets. */
	if (place_runs(&e, total_runs) < 0)
		goto out;
	detect_two_mode(&e);
	rc = search(&e, stack, &depth);
	if (rc < 0) {
		error = rc;
		goto out;
	}
	if (rc == 1)
		conclude(&e, endpoints == CMP_SAME);
	error = 0;
out:
	for (i = 0; i < MAX_SEGMENTS; i++)
		segment_clear(&stack[i]);
	free(e.noise_commits.v);
	bisect_set_clear(&e.in_noise);
	free(e.scratch);
	free(e.chain);
	free(e.pair_a);
	free(e.trip_u);
	free(e.run_at);
	bisect_set_clear(&e.tmp);
	bisect_set_clear(&e.all);
	if (error < 0)
		memset(out, 0, sizeof(*out));
	return error;
}
