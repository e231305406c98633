/*
 * The `pinpoint` strategy: Chromium's Pinpoint bisection as its Go
 * version (skia-buildbot pinpoint/go) runs it, on the simulator's DAG.
 *
 *  - Both endpoints get 10 runs; every comparison of two commits A (older)
 *    and B takes p = min(Mann-Whitney U, Kolmogorov-Smirnov) (two-sided,
 *    lib/stats.h) and says DIFFERENT when p <= 0.01 (the low threshold of
 *    the Python version; the Go version uses 0.05), SAME when p is above
 *    the high threshold, UNKNOWN in between.  Before testing, a mean
 *    difference below a tenth of the expected magnitude, or one in the
 *    improvement direction, is SAME.
 *  - The high threshold depends on the expected magnitude in IQRs of the
 *    pooled runs of A and B, and on the average sample size.  Pinpoint's
 *    table is the 99th percentile of the running two-sided U-test p-value
 *    (normal approximation with continuity correction, as the SciPy the
 *    table was made with) between two normal samples that many IQRs
 *    apart, over a million simulated pairs, for magnitudes 0.3..4.0 IQR
 *    in steps of 0.1 and sample sizes up to a maximum per magnitude.
 *    This simulator regenerates the table by that method (20,000 pairs
 *    per magnitude, a fixed seed, sample sizes up to 160) when a row is
 *    first needed; `statbisect-sim --pinpoint-table` prints it.
 *  - UNKNOWN gives both commits more runs on the ladder 10, 20, 40, 80,
 *    160 (a commit behind the other is first brought level); UNKNOWN at
 *    160 runs is taken as SAME.  DIFFERENT tests the best split between
 *    them (with as many runs as A has) and compares both halves, so every
 *    change point is searched; two adjacent commits that differ name the
 *    newer one.
 *  - The expected magnitude is the true change (effect * sd) as the alert
 *    that launched the job would report it; with no change it is the
 *    smallest change that matters (min_change_pct).
 *  - Runs of two commits compared are made alternately (A B A B).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim.h"
#include "stats.h"

#define LOW_THRESHOLD 0.01
#define SMALL_DIFFERENCE 0.1
#define MAGNITUDE_FIRST 3 /* tenths of an IQR */
#define MAGNITUDES 38	  /* 0.3 .. 4.0 */
#define TABLE_PAIRS 20000
#define TABLE_SEED 20180101UL
#define SAMPLE_MAX 160
#define STEPS_MAX 100000

/* Normal quantiles 0.75 - 0.25: one IQR in standard deviations. */
#define SD_PER_IQR 1.3489795003921634

static const size_t ladder[] = {10, 20, 40, 80, 160};

enum verdict { SAME, DIFFERENT, UNKNOWN };

/* The lazily made rows of the high-threshold table. */
static double *table_rows[MAGNITUDES];
static size_t table_lengths[MAGNITUDES];

/* The largest sample size of each magnitude's row, as Pinpoint's
 * generator has them; capped at the ladder's top. */
static size_t row_length(size_t row)
{
	static const size_t lengths[] = {
	    360, 240, 120, 90, 70, 50, 40, 35, 25, 25, 20, 20, 15, 15, 15, 15,
	};
	size_t n =
	    row < sizeof(lengths) / sizeof(lengths[0]) ? lengths[row] : 10;

	return n < SAMPLE_MAX ? n : SAMPLE_MAX;
}

static int compare_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/* The two-sided U-test p-value of equal samples of n with U = u, by the
 * normal approximation with continuity correction. */
static double u_test_p(double u, size_t n)
{
	double nn = (double)n * (double)n, mean = nn / 2;
	double sd = sqrt(nn * (2.0 * (double)n + 1) / 12);
	double big = u > nn - u ? u : nn - u;

	return erfc(fabs((big - 0.5 - mean) / sd) / M_SQRT2);
}

static int table_make_row(size_t row)
{
	size_t length = row_length(row), pair, n, i;
	double distance = (double)(MAGNITUDE_FIRST + row) / 10 * SD_PER_IQR;
	float *p = malloc(length * TABLE_PAIRS * sizeof(float));
	double *a = malloc(length * sizeof(double));
	double *b = malloc(length * sizeof(double));
	double *out = malloc(length * sizeof(double));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int error = -2;

	if (p == NULL || a == NULL || b == NULL || out == NULL || rng == NULL)
		goto out;
	gsl_rng_set(rng, TABLE_SEED + row);
	for (pair = 0; pair < TABLE_PAIRS; pair++) {
		double u = 0; /* pairs with a_i > b_j */

		for (n = 0; n < length; n++) {
			a[n] = gsl_ran_gaussian(rng, 1.0);
			b[n] = distance + gsl_ran_gaussian(rng, 1.0);
			for (i = 0; i < n; i++)
				u += (a[n] > b[i]) + (a[i] > b[n]);
			u += a[n] > b[n];
			p[n * TABLE_PAIRS + pair] = (float)u_test_p(u, n + 1);
		}
	}
	for (n = 0; n < length; n++) {
		float *col = p + n * TABLE_PAIRS;
		double at = 0.99 * (TABLE_PAIRS - 1), v;
		size_t k = (size_t)at;

		qsort(col, TABLE_PAIRS, sizeof(float), compare_float);
		v = col[k] + (at - (double)k) * (col[k + 1] - col[k]);
		/* Pinpoint rounds its thresholds up to four decimals. */
		out[n] = v >= 1 ? 1 : ceil(v * 10000) / 10000;
	}
	table_rows[row] = out;
	table_lengths[row] = length;
	out = NULL;
	error = 0;
out:
	free(p);
	free(a);
	free(b);
	free(out);
	gsl_rng_free(rng);
	return error;
}

/* Pinpoint's HighThresholdPerformance(magnitude, sample_size). */
static double high_threshold(double magnitude, size_t sample_size)
{
	double tenths = magnitude * 10;
	size_t row, col;

	if (!(tenths < (double)(MAGNITUDE_FIRST + MAGNITUDES)))
		row = MAGNITUDES - 1; /* also NaN and inf (a zero IQR) */
	else if (tenths < MAGNITUDE_FIRST)
		row = 0;
	else
		row = (size_t)tenths - MAGNITUDE_FIRST;
	if (table_rows[row] == NULL && table_make_row(row) < 0) {
		fputs("statbisect-sim: out of memory\n", stderr);
		exit(1);
	}
	col = sample_size < table_lengths[row] ? sample_size
					       : table_lengths[row];
	return table_rows[row][col > 0 ? col - 1 : 0];
}

void sim_pinpoint_cleanup(void)
{
	size_t r;

	for (r = 0; r < MAGNITUDES; r++) {
		free(table_rows[r]);
		table_rows[r] = NULL;
	}
}

int sim_pinpoint_print_table(FILE *out)
{
	size_t r, n;

	for (r = 0; r < MAGNITUDES; r++) {
		if (table_rows[r] == NULL && table_make_row(r) < 0)
			return -2;
		fprintf(out, "# %.1f IQR\n",
			(double)(MAGNITUDE_FIRST + r) / 10);
		for (n = 0; n < table_lengths[r]; n++)
			fprintf(out, "%.4f%s", table_rows[r][n],
				n % 10 == 9 || n + 1 == table_lengths[r]
				    ? "\n"
				    : " ");
	}
	return 0;
}

static double mean_of(const struct sim_series *s)
{
	return stats_mean(s->values, s->count);
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The IQR of the pooled runs as Pinpoint takes it: sorted values at
 * len * 3 / 4 and len / 4. */
static double pooled_iqr(const struct sim_series *a,
			 const struct sim_series *b)
{
	size_t n = a->count + b->count;
	double *all = malloc(n * sizeof(double)), iqr;

	if (all == NULL) {
		fputs("statbisect-sim: out of memory\n", stderr);
		exit(1);
	}
	memcpy(all, a->values, a->count * sizeof(double));
	memcpy(all + a->count, b->values, b->count * sizeof(double));
	qsort(all, n, sizeof(double), compare_double);
	iqr = all[n * 3 / 4] - all[n / 4];
	free(all);
	return iqr;
}

static enum verdict pinpoint_compare(const struct sim_series *a,
				     const struct sim_series *b,
				     double magnitude, bool higher_is_better)
{
	struct stats_test mw, ks;
	double diff = mean_of(b) - mean_of(a), iqr, normalized, p;

	if (fabs(diff) < SMALL_DIFFERENCE * magnitude)
		return SAME;
	iqr = pooled_iqr(a, b);
	normalized = iqr > 0 ? magnitude / iqr : INFINITY;
	if (higher_is_better ? diff > 0 : diff < 0)
		return SAME; /* an improvement is not what is bisected */
	if (stats_mann_whitney(&mw, a->values, a->count, b->values, b->count) <
		0 ||
	    stats_ks_2samp(&ks, a->values, a->count, b->values, b->count) <
		0) {
		fputs("statbisect-sim: statistics failed\n", stderr);
		exit(1);
	}
	p = mw.p_value < ks.p_value ? mw.p_value : ks.p_value;
	if (p <= LOW_THRESHOLD)
		return DIFFERENT;
	if (p <= high_threshold(normalized, (a->count + b->count) / 2))
		return UNKNOWN;
	return SAME;
}

/* Pinpoint's nextRunSize(). */
static size_t next_run_size(size_t ra, size_t rb)
{
	size_t i;

	if (ra != rb)
		return ra > rb ? ra : rb;
	for (i = 0; i < sizeof(ladder) / sizeof(ladder[0]); i++)
		if (ladder[i] > ra)
			return ladder[i];
	return SAMPLE_MAX;
}

/* Brings both commits to `target` runs, alternately. */
static void run_pair(struct sim_trial *trial, size_t a, size_t b,
		     size_t target)
{
	while (trial->search[a].count < target ||
	       trial->search[b].count < target) {
		if (trial->search[a].count < target)
			sim_run(trial, a, false);
		if (trial->search[b].count < target)
			sim_run(trial, b, false);
	}
}

int sim_pinpoint(struct sim_outcome *out, struct sim_trial *trial)
{
	const struct sim_config *cfg = trial->config;
	const struct dag *dag = &trial->dag;
	struct sim_segments stack = {.words = dag->words};
	uint64_t *cand = calloc(dag->words, sizeof(uint64_t));
	size_t *scratch = malloc(dag->count * sizeof(size_t));
	size_t bad = dag->count - 1, steps, ambiguous;
	double magnitude = cfg->effect > 0
			       ? cfg->effect * SIM_SD
			       : cfg->min_change_pct / 100 * SIM_BASE_LEVEL;
	int error = -2;

	out->verdict = SIM_NO_CHANGE;
	if (cand == NULL || scratch == NULL ||
	    sim_segments_push(&stack, dag, dag_ancestors_of(dag, 0), SIZE_MAX,
			      0, bad) < 0)
		goto out;
	run_pair(trial, 0, bad, ladder[0]);
	for (steps = 0; stack.count > 0 && steps < STEPS_MAX; steps++) {
		struct sim_segment seg = stack.items[--stack.count];
		struct sim_series *ref = &trial->search[seg.ref];
		struct sim_series *high = &trial->search[seg.high];
		size_t total, mid;

		error = 0;
		switch (pinpoint_compare(ref, high, magnitude,
					 cfg->higher_is_better)) {
		case UNKNOWN:
			if (ref->count >= SAMPLE_MAX)
				break; /* taken as the same */
			run_pair(trial, seg.ref, seg.high,
				 next_run_size(ref->count, high->count));
			stack.items[stack.count++] = seg; /* compare again */
			continue;
		case DIFFERENT:
			total =
			    dag_candidates(cand, dag, seg.high, seg.excluded);
			if (total <= 1 || !dag_best_split(&mid, dag, cand,
							  total, seg.high)) {
				ambiguous =
				    total > 1
					? dag_set_members(scratch, dag, cand)
					: 0;
				out->verdict = SIM_CHANGE;
				error = sim_outcome_add(out, seg.high, scratch,
							ambiguous);
				break;
			}
			while (trial->search[mid].count <
			       next_run_size(ref->count, 0))
				sim_run(trial, mid, false);
			error = sim_segments_push(&stack, dag, seg.excluded,
						  SIZE_MAX, seg.ref, mid);
			if (error == 0)
				error = sim_segments_push(&stack, dag,
							  seg.excluded, mid,
							  mid, seg.high);
			break;
		case SAME:
			break;
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
