/*
 * stats: the statistics statbisect decides with.
 *
 * Pure functions on GSL: data in, numbers out.  No I/O, no global state;
 * every function is safe to call from several threads at once.  Where a
 * function mirrors a SciPy routine (SciPy 1.10 semantics) its contract
 * names it, and the result agrees with it to rounding unless a deviation
 * is stated.
 *
 * Error discipline: the int functions return 0 on success and a negative
 * STATS_E* code on failure, and then leave every output untouched.  The
 * double-valued descriptive functions return NaN for invalid input.
 * "Invalid sample" below always means: the pointer is NULL, the sample is
 * smaller than the stated minimum, or a value is NaN or infinite.
 */
#ifndef STATBISECT_STATS_H
#define STATBISECT_STATS_H

#include <stddef.h>

/* Invalid argument: NULL, too few values, non-finite value, bad level. */
#define STATS_EINVAL (-1)
/* A working buffer could not be allocated. */
#define STATS_ENOMEM (-2)

struct stats_test {
	/* t, U (of the first sample), D, ... */
	double statistic;
	/* two-sided unless the function says otherwise */
	double p_value;
	/* degrees of freedom where meaningful, else 0 */
	double df;
};

/*
 * Arithmetic mean of x[0..n-1], summed with compensation.  A sample of
 * identical values returns that value exactly.  NaN if x is NULL, n is 0
 * or a value is not finite.
 */
double stats_mean(const double *x, size_t n);

/*
 * Sample variance (divisor n - 1), numpy.var(x, ddof=1).  Exactly 0 for
 * identical values.  NaN if x is NULL, n < 2 or a value is not finite.
 */
double stats_variance(const double *x, size_t n);

/* Sample standard deviation, sqrt(stats_variance()); same NaN rules. */
double stats_sd(const double *x, size_t n);

/*
 * Population standard deviation (divisor n), numpy.std(x).  NaN if x is
 * NULL, n is 0 or a value is not finite.
 */
double stats_pop_sd(const double *x, size_t n);

/*
 * Median, numpy.median(x): the mean of the two middle values for even n.
 * x is not modified (a sorted copy is made).  NaN if x is NULL, n is 0,
 * a value is not finite or the copy cannot be allocated.
 */
double stats_median(const double *x, size_t n);

/*
 * Unscaled median absolute deviation, median(|x - median(x)|), which is
 * scipy.stats.median_abs_deviation(x) with its default scale=1.0.  x is
 * not modified.  NaN under the same conditions as stats_median().
 */
double stats_mad(const double *x, size_t n);

/*
 * scipy.stats.trim_mean(x, proportion): cut k = (size_t)(proportion * n)
 * values from each end of the sorted sample and average the rest.  x is
 * not modified.  NaN if x is NULL, n is 0, a value is not finite,
 * proportion is NaN or outside [0, 0.5], or nothing is left after
 * trimming (SciPy returns NaN there too, e.g. n = 2 and 0.5).
 */
double stats_trimmed_mean(const double *x, size_t n, double proportion);

/*
 * Welch's unequal-variance t test, scipy.stats.ttest_ind(a, b,
 * equal_var=False): statistic = (mean(a) - mean(b)) / se, df the
 * Welch-Satterthwaite degrees of freedom, two-sided p_value.
 *
 * When both samples have zero variance the test is degenerate: equal means
 * give statistic 0 and p_value 1 (SciPy gives NaN), different means give
 * statistic +-inf and p_value 0 (as SciPy); df is 0 in both cases.
 *
 * Returns STATS_EINVAL for an invalid a or b (minimum 2 values each) or a
 * NULL out.
 */
int stats_welch_t(struct stats_test *out, const double *a, size_t na,
		  const double *b, size_t nb);

/*
 * Two-sample t-test of mean(a) - mean(b) when the noise's standard
 * deviation `sd` is known from elsewhere, estimated with `df` degrees of
 * freedom (a pooled estimate over many samples, as in an analysis of
 * variance): statistic = (mean(a) - mean(b)) / (sd * sqrt(1/na + 1/nb)),
 * p_value = 2 * scipy.stats.t.sf(|statistic|, df), df = df.
 *
 * Returns STATS_EINVAL for an empty or non-finite a or b, sd not positive
 * and finite, df not positive, or a NULL out.
 */
int stats_t_known_sd(struct stats_test *out, const double *a, size_t na,
		     const double *b, size_t nb, double sd, double df);

/*
 * One-sided Welch test of H1: mean(b) - mean(a) > shift, i.e.
 * scipy.stats.ttest_ind(b - shift, a, equal_var=False,
 * alternative='greater').  statistic = (mean(b) - mean(a) - shift) / se,
 * p_value is the one-sided (upper-tail) p-value, df as stats_welch_t().
 *
 * Both variances zero: a difference above shift gives +inf and p 0, below
 * gives -inf and p 1, exactly equal gives 0 and p 1 (no evidence for H1);
 * df is 0.
 *
 * Returns STATS_EINVAL for an invalid a or b (minimum 2 values each), a
 * non-finite shift or a NULL out.
 */
int stats_welch_t_one_sided(struct stats_test *out, const double *a, size_t na,
			    const double *b, size_t nb, double shift);

/*
 * Mann-Whitney U test, scipy.stats.mannwhitneyu(a, b,
 * alternative='two-sided', method='auto') of SciPy 1.10.  statistic is U
 * of a (average ranks for ties), df is 0.
 *
 * The p-value is exact (distribution of U under H0) when the pooled sample
 * has no ties and min(na, nb) <= 8; otherwise it is the normal
 * approximation with tie correction and continuity correction.  When every
 * value is the same the p-value is 1.  The exact case costs
 * O(min(na, nb) * na * nb) time and O(na * nb) memory.
 *
 * Returns STATS_EINVAL for an invalid a or b (minimum 1 value each) or a
 * NULL out, STATS_ENOMEM if a working buffer cannot be allocated.
 */
int stats_mann_whitney(struct stats_test *out, const double *a, size_t na,
		       const double *b, size_t nb);

/*
 * Wilcoxon's signed-rank test of H1: the differences d[0..n-1] (paired
 * runs, one minus the other) lean above 0, scipy.stats.wilcoxon(d,
 * alternative='greater') with its defaults zero_method='wilcox',
 * correction=False, method='auto' (SciPy 1.10).  Zeros are dropped; the
 * rest are ranked by |d| (average ranks for ties) and statistic is R+,
 * the sum of the positive differences' ranks; p_value is one-sided (the
 * probability of an R+ this large or larger); df is 0.
 *
 * Exact (the null distribution of R+) for n <= 50 with no zero and no
 * tie; otherwise the normal approximation, mean m (m + 1) / 4 over the m
 * nonzero differences, variance m (m + 1) (2m + 1) / 24 less the tie
 * correction sum (t^3 - t) / 48, no continuity correction.  Deviations:
 * ties without zeros in n <= 50 take the normal approximation, which is
 * SciPy's method='approx' (SciPy 1.10 keeps the exact distribution there
 * and truncates a half-integer R+); every difference 0 gives statistic 0
 * and p_value 1 (SciPy raises).  Cost: O(n^3) time, O(n^2) memory in
 * the exact case.
 *
 * The two-sided p-value is twice the smaller of this on d and on -d
 * (capped at 1), as SciPy's.
 *
 * Returns STATS_EINVAL for an invalid d (minimum 1 value) or a NULL out,
 * STATS_ENOMEM if a working buffer cannot be allocated.
 */
int stats_wilcoxon_greater(struct stats_test *out, const double *d, size_t n);

/*
 * Two-sample Kolmogorov-Smirnov test, scipy.stats.ks_2samp(a, b) with
 * method='auto' and the two-sided alternative (SciPy 1.10).  statistic is
 * D = max |F_a - F_b|, df is 0.
 *
 * When max(na, nb) <= 10000 the p-value is exact (Hodges/Viehmann lattice
 * path counts, as SciPy); otherwise, or if the exact computation falls
 * outside [0, 1], it is SciPy's asymptotic kstwo.sf(D, round(na * nb /
 * (na + nb))) (Simard and L'Ecuyer).  Deviation: the one-sided Smirnov
 * tail used there is summed exactly for every n, where SciPy switches to
 * an approximation above n = 1000000.
 *
 * Returns STATS_EINVAL for an invalid a or b (minimum 1 value each) or a
 * NULL out, STATS_ENOMEM if a working buffer cannot be allocated.
 */
int stats_ks_2samp(struct stats_test *out, const double *a, size_t na,
		   const double *b, size_t nb);

/*
 * Two one-sided Welch tests (TOST) for equivalence of mean(b) and mean(a)
 * within +-margin, margin = margin_pct / 100 * |mean(a)|:
 *   lower: H1 mean(b) - mean(a) > -margin,
 *   upper: H1 mean(b) - mean(a) < +margin.
 * p_value is the larger of the two one-sided p-values, so a small p_value
 * means "equivalent".  statistic is the t of that binding test, written as
 * (mean(b) - mean(a) -+ margin) / se; df is the Welch df.
 *
 * Returns STATS_EINVAL for an invalid a or b (minimum 2 values each), a
 * negative or non-finite margin_pct or a NULL out.
 */
int stats_tost(struct stats_test *out, const double *a, size_t na,
	       const double *b, size_t nb, double margin_pct);

/*
 * Percentile bootstrap confidence interval, at confidence level (e.g.
 * 0.95), of the percent change 100 * (mean(b) - mean(a)) / mean(a).
 *
 * Each of the resamples draws na indices into a, then nb indices into b,
 * uniformly with replacement from one gsl_rng_mt19937 seeded with seed, so
 * the result depends only on the data, level, resamples and seed.  The
 * bounds are the (1 - level) / 2 and (1 + level) / 2 quantiles of the
 * resampled changes, linearly interpolated as numpy.percentile does.
 *
 * Returns STATS_EINVAL for an invalid a or b (minimum 2 values each, at
 * most 2^32 - 1), NULL outputs, level not inside (0, 1), resamples < 2,
 * mean(a) == 0 or a resample of a whose mean is 0; STATS_ENOMEM if the
 * generator or the resample buffer cannot be allocated.
 */
int stats_bootstrap_pct_ci(double *lo_out, double *hi_out, const double *a,
			   size_t na, const double *b, size_t nb, double level,
			   size_t resamples, unsigned long seed);

/*
 * Benjamini-Hochberg adjusted p-values (q-values), the algorithm of
 * scipy.stats.false_discovery_control(p, method='bh') (SciPy 1.11):
 * q_(i) = min_{j >= i} p_(j) * n / j over the sorted p, clipped to [0, 1]
 * and returned in the order of p.  q_out must hold n values and may be p
 * itself.  n == 0 is a no-op.
 *
 * Returns STATS_EINVAL if p or q_out is NULL (n > 0) or a p is NaN or
 * outside [0, 1]; STATS_ENOMEM if a working buffer cannot be allocated.
 */
int stats_benjamini_hochberg(double *q_out, const double *p, size_t n);

#endif /* STATBISECT_STATS_H */
