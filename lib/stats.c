/*
 * stats: descriptive statistics, Welch, Mann-Whitney, Wilcoxon's
 * signed-rank test, Kolmogorov-Smirnov, TOST, bootstrap and
 * Benjamini-Hochberg.  The contracts are in stats.h.
 *
 * The p-value code follows SciPy 1.10 step by step (the same algorithms,
 * branch points and degenerate cases), so that a decision taken here can
 * be reproduced with SciPy.  Nothing here touches GSL's global error
 * handler: inputs are validated so that no GSL routine is called outside
 * its domain.
 */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* SciPy's ks_2samp switches from exact to asymptotic above this size. */
#define KS_MAX_EXACT_N 10000
/* SciPy's mannwhitneyu uses the exact null distribution up to this size. */
#define MWU_MAX_EXACT_N 8
/* SciPy's wilcoxon (method='auto') is exact up to this many differences. */
#define WILCOXON_MAX_EXACT_N 50

/* ----------------------------------------------------------------------
 * Sums and descriptive statistics
 */

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

static int sample_ok(const double *x, size_t n, size_t min_n)
{
	return x != NULL && n >= min_n && all_finite(x, n);
}

/* Neumaier's compensated summation. */
struct ksum {
	double sum;
	double comp;
};

static void ksum_add(struct ksum *k, double v)
{
	double t = k->sum + v;

	if (fabs(k->sum) >= fabs(v))
		k->comp += (k->sum - t) + v;
	else
		k->comp += (v - t) + k->sum;
	k->sum = t;
}

/* Compensated sum of x[i] - shift. */
static double sum_shifted(const double *x, size_t n, double shift)
{
	struct ksum k = {0.0, 0.0};

	for (size_t i = 0; i < n; i++)
		ksum_add(&k, x[i] - shift);
	return k.sum + k.comp;
}

/* Mean of a valid, non-empty sample; exact for identical values. */
static double mean_of(const double *x, size_t n)
{
	double sum;
	size_t i;

	for (i = 1; i < n && x[i] == x[0]; i++)
		;
	if (i == n)
		return x[0];
	sum = sum_shifted(x, n, 0.0);
	if (!isfinite(sum))
		return x[0] + sum_shifted(x, n, x[0]) / (double)n;
	return sum / (double)n;
}

/*
 * Sum of squared deviations from the mean, with the two-pass correction
 * term of Chan, Golub and LeVeque; exactly 0 for identical values.
 */
static double squared_deviations(const double *x, size_t n, double mean)
{
	struct ksum sq = {0.0, 0.0}, dev = {0.0, 0.0};
	double total, shift;

	for (size_t i = 0; i < n; i++) {
		double d = x[i] - mean;

		ksum_add(&sq, d * d);
		ksum_add(&dev, d);
	}
	total = sq.sum + sq.comp;
	shift = dev.sum + dev.comp;
	total -= shift * shift / (double)n;
	return total > 0.0 ? total : 0.0;
}

static double variance_of(const double *x, size_t n)
{
	return squared_deviations(x, n, mean_of(x, n)) / (double)(n - 1);
}

double stats_mean(const double *x, size_t n)
{
	if (!sample_ok(x, n, 1))
		return NAN;
	return mean_of(x, n);
}

double stats_variance(const double *x, size_t n)
{
	if (!sample_ok(x, n, 2))
		return NAN;
	return variance_of(x, n);
}

double stats_sd(const double *x, size_t n)
{
	if (!sample_ok(x, n, 2))
		return NAN;
	return sqrt(variance_of(x, n));
}

double stats_pop_sd(const double *x, size_t n)
{
	if (!sample_ok(x, n, 1))
		return NAN;
	return sqrt(squared_deviations(x, n, mean_of(x, n)) / (double)n);
}

/* A sorted copy of x, or NULL if it cannot be allocated. */
static double *sorted_copy(const double *x, size_t n)
{
	double *copy = malloc(n * sizeof(*copy));

	if (copy == NULL)
		return NULL;
	memcpy(copy, x, n * sizeof(*copy));
	gsl_sort(copy, 1, n);
	return copy;
}

double stats_median(const double *x, size_t n)
{
	double *sorted, median;

	if (!sample_ok(x, n, 1))
		return NAN;
	if ((sorted = sorted_copy(x, n)) == NULL)
		return NAN;
	median = gsl_stats_median_from_sorted_data(sorted, 1, n);
	free(sorted);
	return median;
}

double stats_mad(const double *x, size_t n)
{
	double *work, median;

	if (!sample_ok(x, n, 1))
		return NAN;
	if ((work = sorted_copy(x, n)) == NULL)
		return NAN;
	median = gsl_stats_median_from_sorted_data(work, 1, n);
	for (size_t i = 0; i < n; i++)
		work[i] = fabs(work[i] - median);
	gsl_sort(work, 1, n);
	median = gsl_stats_median_from_sorted_data(work, 1, n);
	free(work);
	return median;
}

double stats_trimmed_mean(const double *x, size_t n, double proportion)
{
	double *sorted, mean;
	size_t cut;

	if (!sample_ok(x, n, 1) || !(proportion >= 0.0 && proportion <= 0.5))
		return NAN;
	/* int(proportion * n) in SciPy: truncation of the double product */
	cut = (size_t)(proportion * (double)n);
	if (2 * cut >= n)
		return NAN;
	if ((sorted = sorted_copy(x, n)) == NULL)
		return NAN;
	mean = mean_of(sorted + cut, n - 2 * cut);
	free(sorted);
	return mean;
}

/* ----------------------------------------------------------------------
 * Welch t tests
 */

/* Upper tail of Student's t, total for infinite t. */
static double t_sf(double t, double df)
{
	if (isinf(t))
		return t > 0 ? 0.0 : 1.0;
	return gsl_cdf_tdist_Q(t, df);
}

struct welch {
	double diff; /* mean(first) - mean(second) */
	double se;   /* sqrt(v1 / n1 + v2 / n2), 0 if both variances are 0 */
	double df;   /* Welch-Satterthwaite, 0 if se is 0 */
};

/* diff = mean(x) - mean(y) - shift, se and df for valid samples. */
static void welch_prepare(struct welch *w, const double *x, size_t nx,
			  const double *y, size_t ny, double shift)
{
	double vx = variance_of(x, nx) / (double)nx;
	double vy = variance_of(y, ny) / (double)ny;

	w->diff = mean_of(x, nx) - mean_of(y, ny) - shift;
	w->se = sqrt(vx + vy);
	if (w->se > 0.0)
		w->df =
		    (vx + vy) * (vx + vy) /
		    (vx * vx / (double)(nx - 1) + vy * vy / (double)(ny - 1));
	else
		w->df = 0.0;
}

static void welch_two_sided(struct stats_test *res, const struct welch *w)
{
	if (w->se == 0.0) {
		res->statistic =
		    w->diff == 0.0 ? 0.0 : copysign(INFINITY, w->diff);
		res->p_value = w->diff == 0.0 ? 1.0 : 0.0;
		res->df = 0.0;
		return;
	}
	res->statistic = w->diff / w->se;
	res->p_value = fmin(1.0, 2.0 * t_sf(fabs(res->statistic), w->df));
	res->df = w->df;
}

/* H1: diff > 0 (upper tail). */
static void welch_greater(struct stats_test *res, const struct welch *w)
{
	if (w->se == 0.0) {
		res->statistic =
		    w->diff == 0.0 ? 0.0 : copysign(INFINITY, w->diff);
		res->p_value = w->diff > 0.0 ? 0.0 : 1.0;
		res->df = 0.0;
		return;
	}
	res->statistic = w->diff / w->se;
	res->p_value = t_sf(res->statistic, w->df);
	res->df = w->df;
}

int stats_welch_t(struct stats_test *out, const double *a, size_t na,
		  const double *b, size_t nb)
{
	struct welch w;

	if (out == NULL || !sample_ok(a, na, 2) || !sample_ok(b, nb, 2))
		return STATS_EINVAL;
	welch_prepare(&w, a, na, b, nb, 0.0);
	welch_two_sided(out, &w);
	return 0;
}

int stats_t_known_sd(struct stats_test *out, const double *a, size_t na,
		     const double *b, size_t nb, double sd, double df)
{
	if (out == NULL || !sample_ok(a, na, 1) || !sample_ok(b, nb, 1) ||
	    !(isfinite(sd) && sd > 0) || !(df > 0))
		return STATS_EINVAL;
	out->statistic = (mean_of(a, na) - mean_of(b, nb)) /
			 (sd * sqrt(1.0 / (double)na + 1.0 / (double)nb));
	out->p_value = 2 * gsl_cdf_tdist_Q(fabs(out->statistic), df);
	if (out->p_value > 1.0)
		out->p_value = 1.0;
	out->df = df;
	return 0;
}

int stats_welch_t_one_sided(struct stats_test *out, const double *a, size_t na,
			    const double *b, size_t nb, double shift)
{
	struct welch w;

	if (out == NULL || !sample_ok(a, na, 2) || !sample_ok(b, nb, 2) ||
	    !isfinite(shift))
		return STATS_EINVAL;
	welch_prepare(&w, b, nb, a, na, shift);
	welch_greater(out, &w);
	return 0;
}

int stats_tost(struct stats_test *out, const double *a, size_t na,
	       const double *b, size_t nb, double margin_pct)
{
	struct stats_test lower, upper;
	struct welch w;
	double margin;

	if (out == NULL || !sample_ok(a, na, 2) || !sample_ok(b, nb, 2) ||
	    !isfinite(margin_pct) || margin_pct < 0.0)
		return STATS_EINVAL;
	margin = fabs(mean_of(a, na)) * margin_pct / 100.0;

	/* lower: mean(b) - mean(a) > -margin */
	welch_prepare(&w, b, nb, a, na, -margin);
	welch_greater(&lower, &w);
	/* upper: mean(a) - mean(b) > -margin, reported in b - a terms */
	welch_prepare(&w, a, na, b, nb, -margin);
	welch_greater(&upper, &w);
	upper.statistic = -upper.statistic;

	*out = lower.p_value >= upper.p_value ? lower : upper;
	return 0;
}

/* ----------------------------------------------------------------------
 * Mann-Whitney U
 */

/*
 * P(U <= k) for U of samples of sizes m <= n under H0 without ties.  The
 * counts of U are the coefficients of the Gaussian binomial
 * prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); each factor is applied as a
 * truncated power series and the product is kept normalised by
 * binom(n + i, i) so that nothing overflows.
 */
static int mwu_exact_cdf(double *out, size_t k, size_t m, size_t n)
{
	double *coef, cdf = 0.0;

	coef = calloc(k + 1, sizeof(*coef));
	if (coef == NULL)
		return STATS_ENOMEM;
	coef[0] = 1.0;
	for (size_t i = 1; i <= m; i++) {
		double scale = (double)i / (double)(n + i);

		for (size_t j = k + 1; j-- > n + i;)
			coef[j] -= coef[j - n - i];
		for (size_t j = i; j <= k; j++)
			coef[j] += coef[j - i];
		for (size_t j = 0; j <= k; j++)
			coef[j] *= scale;
	}
	for (size_t j = 0; j <= k; j++)
		cdf += coef[j];
	free(coef);
	*out = cdf;
	return 0;
}

int stats_mann_whitney(struct stats_test *out, const double *a, size_t na,
		       const double *b, size_t nb)
{
	double *pooled = NULL, rank_sum = 0.0, tie_term = 0.0;
	double u1, u, p, n, pair_count;
	size_t *order = NULL, total;
	int ties = 0, error = 0;

	if (out == NULL || !sample_ok(a, na, 1) || !sample_ok(b, nb, 1))
		return STATS_EINVAL;
	total = na + nb;
	pooled = malloc(total * sizeof(*pooled));
	order = malloc(total * sizeof(*order));
	if (pooled == NULL || order == NULL) {
		error = STATS_ENOMEM;
		goto out;
	}
	memcpy(pooled, a, na * sizeof(*pooled));
	memcpy(pooled + na, b, nb * sizeof(*pooled));
	gsl_sort_index(order, pooled, 1, total);

	/* average ranks over runs of equal values; rank sum of a */
	for (size_t i = 0, j; i < total; i = j) {
		double rank, run;

		for (j = i + 1;
		     j < total && pooled[order[j]] == pooled[order[i]]; j++)
			;
		run = (double)(j - i);
		rank = ((double)(i + 1) + (double)j) / 2.0;
		for (size_t r = i; r < j; r++)
			if (order[r] < na)
				rank_sum += rank;
		if (j - i > 1) {
			ties = 1;
			tie_term += run * run * run - run;
		}
	}

	pair_count = (double)na * (double)nb;
	u1 = rank_sum - (double)na * ((double)na + 1.0) / 2.0;
	u = fmax(u1, pair_count - u1);
	if (!ties && (na <= MWU_MAX_EXACT_N || nb <= MWU_MAX_EXACT_N)) {
		size_t k = (size_t)llround(pair_count - u);
		size_t m = na < nb ? na : nb, big = na < nb ? nb : na;

		if ((error = mwu_exact_cdf(&p, k, m, big)) < 0)
			goto out;
		p *= 2.0;
	} else {
		double s;

		n = (double)total;
		s = sqrt(pair_count / 12.0 *
			 ((n + 1.0) - tie_term / (n * (n - 1.0))));
		/* all values equal: z = -0.5 / 0, SciPy's p clips to 1 */
		if (!(s > 0.0))
			p = 1.0;
		else
			p = 2.0 * gsl_cdf_ugaussian_Q(
				      (u - pair_count / 2.0 - 0.5) / s);
	}
	out->statistic = u1;
	out->p_value = fmin(fmax(p, 0.0), 1.0);
	out->df = 0.0;

out:
	free(pooled);
	free(order);
	return error;
}

/* ----------------------------------------------------------------------
 * Wilcoxon signed-rank
 */

/*
 * P(R+ >= r) for n differences without ties or zeros under H0: the counts
 * of every rank sum s are the coefficients of prod_{i=1..n} (1 + q^i),
 * at most 2^50 here, so the doubles hold them exactly.
 */
static int wilcoxon_exact_sf(double *out, size_t r, size_t n)
{
	size_t top = n * (n + 1) / 2;
	double *count, tail = 0.0;

	count = calloc(top + 1, sizeof(*count));
	if (count == NULL)
		return STATS_ENOMEM;
	count[0] = 1.0;
	for (size_t i = 1; i <= n; i++)
		for (size_t s = i * (i + 1) / 2; s >= i; s--)
			count[s] += count[s - i];
	for (size_t s = r; s <= top; s++)
		tail += count[s];
	free(count);
	*out = ldexp(tail, -(int)n);
	return 0;
}

int stats_wilcoxon_greater(struct stats_test *out, const double *d, size_t n)
{
	double *magnitude = NULL, r_plus = 0.0, tie_term = 0.0, p;
	size_t *order = NULL, count = 0;
	int ties = 0, error = 0;

	if (out == NULL || !sample_ok(d, n, 1))
		return STATS_EINVAL;
	magnitude = malloc(n * sizeof(*magnitude));
	order = malloc(n * sizeof(*order));
	if (magnitude == NULL || order == NULL) {
		error = STATS_ENOMEM;
		goto out;
	}
	/* zero_method='wilcox': zeros are dropped before ranking */
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0.0)
			magnitude[count++] = fabs(d[i]);
	if (count == 0) {
		out->statistic = 0.0;
		out->p_value = 1.0;
		out->df = 0.0;
		goto out;
	}
	gsl_sort_index(order, magnitude, 1, count);
	/* average ranks over equal magnitudes, in place of them */
	for (size_t i = 0, j; i < count; i = j) {
		double rank, run;

		for (j = i + 1;
		     j < count && magnitude[order[j]] == magnitude[order[i]];
		     j++)
			;
		run = (double)(j - i);
		rank = ((double)(i + 1) + (double)j) / 2.0;
		/* the sorted order reads no magnitude before i again */
		for (size_t k = i; k < j; k++)
			magnitude[order[k]] = rank;
		if (j - i > 1) {
			ties = 1;
			tie_term += run * run * run - run;
		}
	}
	for (size_t i = 0, k = 0; i < n; i++)
		if (d[i] != 0.0) {
			if (d[i] > 0.0)
				r_plus += magnitude[k];
			k++;
		}
	if (count == n && !ties && n <= WILCOXON_MAX_EXACT_N) {
		if ((error = wilcoxon_exact_sf(&p, (size_t)llround(r_plus),
					       n)) < 0)
			goto out;
	} else {
		double nd = (double)count;
		double mean = nd * (nd + 1.0) / 4.0;
		double se = sqrt(
		    (nd * (nd + 1.0) * (2.0 * nd + 1.0) - tie_term / 2.0) /
		    24.0);

		p = gsl_cdf_ugaussian_Q((r_plus - mean) / se);
	}
	out->statistic = r_plus;
	out->p_value = fmin(fmax(p, 0.0), 1.0);
	out->df = 0.0;
out:
	free(magnitude);
	free(order);
	return error;
}

/* ----------------------------------------------------------------------
 * Kolmogorov distribution, two-sided one-sample: P(D_n >= x).
 * A port of scipy.stats._ksstats (Simard and L'Ecuyer's choice of method).
 */

#define KS_E128 128
static const double ks_ep128 = 0x1p128;
static const double ks_em128 = 0x1p-128;

static double clip01(double p)
{
	return fmin(fmax(p, 0.0), 1.0);
}

/* log(n! / n^n) by Stirling's series, as SciPy. */
static double log_nfact_div_npown(double n)
{
	static const double coef[8] = {
	    -2.955065359477124183e-2,  6.4102564102564102564e-3,
	    -1.9175269175269175269e-3, 8.4175084175084175084e-4,
	    -5.952380952380952381e-4,  7.9365079365079365079e-4,
	    -2.7777777777777777778e-3, 8.3333333333333333333e-2,
	};
	double rn = 1.0 / n, x = rn / n, poly = 0.0;

	for (size_t i = 0; i < 8; i++)
		poly = poly * x + coef[i];
	return log(n) / 2 - n + log(2 * M_PI) / 2 + rn * poly;
}

/*
 * Smirnov's one-sided P(D_n^+ >= x), the Birnbaum-Tingey sum; every term
 * is positive, so it is summed in log space for all n.
 */
static double smirnov_sf(int n, double x)
{
	double p = 0.0, lnfact_n;
	int last;

	if (x <= 0.0)
		return 1.0;
	if (x >= 1.0)
		return 0.0;
	lnfact_n = gsl_sf_lnfact((unsigned int)n);
	last = (int)floor(n * (1.0 - x));
	for (int v = 0; v <= last && v <= n; v++) {
		double evn = x + (double)v / n;
		double omevn = 1.0 - evn;
		double t;

		if (!(omevn > 0.0))
			continue;
		t = lnfact_n - gsl_sf_lnfact((unsigned int)v) -
		    gsl_sf_lnfact((unsigned int)(n - v)) + (v - 1) * log(evn) +
		    (n - v) * log(omevn);
		p += exp(t);
	}
	return clip01(p * x);
}

static void matmul(double *c, const double *a, const double *b, int m)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < m; j++) {
			double s = 0.0;

			for (int l = 0; l < m; l++)
				s += a[i * m + l] * b[l * m + j];
			c[i * m + j] = s;
		}
}

/* Durbin's matrix, Marsaglia-Tsang-Wang: P(D_n <= d). */
static int kolmogn_dmtw(double *out, int n, double d)
{
	double *h, *hpwr, *tmp, *v, *w, nd, frac, fac, tt, p;
	int k, m, nn, expnt = 0, hexpnt = 0;

	if (d >= 1.0) {
		*out = 1.0;
		return 0;
	}
	nd = n * d;
	if (nd <= 0.5) {
		*out = 0.0;
		return 0;
	}
	k = (int)ceil(nd);
	frac = k - nd;
	m = 2 * k - 1;

	h = calloc((size_t)(3 * m * m + 2 * m), sizeof(*h));
	if (h == NULL)
		return STATS_ENOMEM;
	hpwr = h + m * m;
	tmp = hpwr + m * m;
	v = tmp + m * m;
	w = v + m;

	fac = 1.0;
	for (int j = 1; j <= m; j++) {
		w[j - 1] = fac;
		fac /= j;
		v[j - 1] = (1.0 - pow(frac, j)) * fac;
	}
	tt = pow(fmax(2 * frac - 1.0, 0.0), m) - 2 * pow(frac, m);
	v[m - 1] = (1.0 + tt) * fac;

	for (int i = 1; i < m; i++)
		for (int r = i - 1; r < m; r++)
			h[r * m + i] = w[r - (i - 1)];
	for (int r = 0; r < m; r++)
		h[r * m] = v[r];
	for (int c = 0; c < m; c++)
		h[(m - 1) * m + c] = v[m - 1 - c];

	for (int i = 0; i < m; i++)
		hpwr[i * m + i] = 1.0;
	for (nn = n; nn > 0; nn /= 2) {
		if (nn % 2) {
			matmul(tmp, hpwr, h, m);
			memcpy(hpwr, tmp, (size_t)(m * m) * sizeof(*tmp));
			expnt += hexpnt;
		}
		matmul(tmp, h, h, m);
		memcpy(h, tmp, (size_t)(m * m) * sizeof(*tmp));
		hexpnt *= 2;
		if (fabs(h[(k - 1) * m + (k - 1)]) > ks_ep128) {
			for (int i = 0; i < m * m; i++)
				h[i] /= ks_ep128;
			hexpnt += KS_E128;
		}
	}

	p = hpwr[(k - 1) * m + (k - 1)];
	for (int i = 1; i <= n; i++) {
		p = i * p / n;
		if (fabs(p) < ks_em128) {
			p *= ks_ep128;
			expnt -= KS_E128;
		}
	}
	if (expnt != 0)
		p = ldexp(p, expnt);
	*out = clip01(p);

	free(h);
	return 0;
}

static void pomeranz_j1j2(int *j1_out, int *j2_out, int i, int n, int ll,
			  int ceilf, int roundf)
{
	int j1, j2;

	if (i == 0) {
		j1 = -ll - ceilf - 1;
		j2 = ll + ceilf - 1;
	} else {
		int half = (i + 1) / 2;

		if ((i + 1) % 2 == 0) {
			if (half == n + 1) {
				j1 = n - ll - ceilf - 1;
				j2 = n + ll + ceilf - 1;
			} else {
				j1 = half - 1 - ll - roundf - 1;
				j2 = half + ll - 1 + ceilf - 1;
			}
		} else {
			j1 = half - 1 - ll - 1;
			j2 = half + ll + roundf - 1;
		}
	}
	*j1_out = j1 + 2 > 0 ? j1 + 2 : 0;
	*j2_out = j2 < n ? j2 : n;
}

/* Pomeranz's recursion: P(D_n <= x). */
static int kolmogn_pomeranz(double *out, int n, double x)
{
	double t = n * x, f, g, g_n, two_g_n, one_m2g_n, ans, vmax;
	double *buf, *gpow, *twogpow, *onem2gpow, *v0, *v1, *swap;
	int ll, ceilf, roundf, npwrs, v0s = 0, v1s = 0, j1, j2, expnt = 0;

	ll = (int)floor(t);
	f = t - ll;
	g = fmin(f, 1.0 - f);
	ceilf = f > 0 ? 1 : 0;
	roundf = f > 0.5 ? 1 : 0;
	npwrs = 2 * (ll + 1);

	buf = calloc((size_t)(5 * npwrs), sizeof(*buf));
	if (buf == NULL)
		return STATS_ENOMEM;
	gpow = buf;
	twogpow = gpow + npwrs;
	onem2gpow = twogpow + npwrs;
	v0 = onem2gpow + npwrs;
	v1 = v0 + npwrs;

	gpow[0] = twogpow[0] = onem2gpow[0] = 1.0;
	g_n = g / n;
	two_g_n = 2 * g / n;
	one_m2g_n = (1 - 2 * g) / n;
	for (int m = 1; m < npwrs; m++) {
		gpow[m] = gpow[m - 1] * g_n / m;
		twogpow[m] = twogpow[m - 1] * two_g_n / m;
		onem2gpow[m] = onem2gpow[m - 1] * one_m2g_n / m;
	}

	v1[0] = 1.0;
	pomeranz_j1j2(&j1, &j2, 0, n, ll, ceilf, roundf);
	for (int i = 1; i < 2 * n + 2; i++) {
		const double *pwrs;
		int k1 = j1, ln2, tmp_s;

		swap = v0;
		v0 = v1;
		v1 = swap;
		tmp_s = v0s;
		v0s = v1s;
		v1s = tmp_s;
		memset(v1, 0, (size_t)npwrs * sizeof(*v1));
		pomeranz_j1j2(&j1, &j2, i, n, ll, ceilf, roundf);
		if (i == 1 || i == 2 * n + 1)
			pwrs = gpow;
		else
			pwrs = i % 2 ? twogpow : onem2gpow;
		ln2 = j2 - k1 + 1;
		if (ln2 <= 0)
			continue;
		/* v1[0..] = (v0[k1 - v0s ..] * pwrs)[j1 - k1 .. j2 - k1] */
		for (int c = j1 - k1; c <= j2 - k1; c++) {
			double s = 0.0;

			for (int l = 0; l <= c && l < ln2; l++) {
				int src = k1 - v0s + l;

				if (c - l < ln2 && c - l < npwrs && src >= 0 &&
				    src < npwrs)
					s += v0[src] * pwrs[c - l];
			}
			v1[c - (j1 - k1)] = s;
		}
		vmax = 0.0;
		for (int c = 0; c < npwrs; c++)
			vmax = fmax(vmax, v1[c]);
		if (vmax > 0 && vmax < ks_em128) {
			for (int c = 0; c < npwrs; c++)
				v1[c] *= ks_ep128;
			expnt -= KS_E128;
		}
		v1s = v0s + j1 - k1;
	}

	ans = n - v1s >= 0 && n - v1s < npwrs ? v1[n - v1s] : 0.0;
	for (int m = 1; m <= n; m++) {
		if (fabs(ans) > ks_ep128) {
			ans *= ks_em128;
			expnt += KS_E128;
		}
		ans *= m;
	}
	if (expnt != 0)
		ans = ldexp(ans, expnt);
	*out = clip01(ans);
	free(buf);
	return 0;
}

/* Pelz-Good approximation of P(D_n <= x). */
static double kolmogn_pelz_good(int n, double x)
{
	const double pi2 = M_PI * M_PI, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
	const double sqrt2pi = sqrt(2 * M_PI);
	double z, z2, z3, z4, z6, qlog, q, k0to3[4] = {0, 0, 0, 0};
	double k1a, k1b, k2a, k2b, k2c, k3a, k3b, k3c, k3d;
	double k2extra = 0.0, k3extra = 0.0, sqrt3z, sum;
	int maxk;

	if (x <= 0.0)
		return 0.0;
	if (x >= 1.0)
		return 1.0;
	z = sqrt((double)n) * x;
	z2 = z * z;
	z3 = z2 * z;
	z4 = z2 * z2;
	z6 = z4 * z2;
	qlog = -pi2 / 8 / z2;
	if (qlog < -708)
		return 0.0;
	q = exp(qlog);

	k1a = -z2;
	k1b = pi2 / 4;
	k2a = 6 * z6 + 2 * z4;
	k2b = (2 * z4 - 5 * z2) * pi2 / 4;
	k2c = pi4 * (1 - 2 * z2) / 16;
	k3d = pi6 * (5 - 30 * z2) / 64;
	k3c = pi4 * (-60 * z2 + 212 * z4) / 16;
	k3b = pi2 * (135 * z4 - 96 * z6) / 4;
	k3a = -30 * z6 - 90 * z4 * z4;

	maxk = (int)ceil(16 * z / M_PI);
	for (int k = maxk; k > 0; k--) {
		double m = 2 * k - 1, m2 = m * m, m4 = m2 * m2, m6 = m4 * m2;
		double qpower = pow(q, 8 * k);

		k0to3[0] = k0to3[0] * qpower + 1.0;
		k0to3[1] = k0to3[1] * qpower + (k1a + k1b * m2);
		k0to3[2] = k0to3[2] * qpower + (k2a + k2b * m2 + k2c * m4);
		k0to3[3] =
		    k0to3[3] * qpower + (k3a + k3b * m2 + k3c * m4 + k3d * m6);
	}
	for (int i = 0; i < 4; i++)
		k0to3[i] *= q * sqrt2pi;
	k0to3[0] /= z;
	k0to3[1] /= 6 * z4;
	k0to3[2] /= 72 * z6 * z;
	k0to3[3] /= 6480 * z6 * z4;

	q = exp(-pi2 / 2 / z2);
	sqrt3z = sqrt(3.0) * z;
	for (int k = maxk; k > 0; k--) {
		double k2 = (double)k * k, kpi = M_PI * k;
		double qp = pow(q, k2);

		k2extra += k2 * qp;
		k3extra += (sqrt3z + kpi) * (sqrt3z - kpi) * k2 * qp;
	}
	k0to3[2] += k2extra * pi2 * sqrt2pi / (-36 * z3);
	k0to3[3] += k3extra * pi2 * sqrt2pi / (216 * z6);

	sum = 0.0;
	for (int i = 0; i < 4; i++)
		sum += k0to3[i] / pow((double)n, i / 2.0);
	return sum;
}

/* kstwo.sf(x, n) of SciPy: P(D_n >= x) for the two-sided statistic. */
static int kolmogn_sf(double *out, int n, double x)
{
	double t, nxx, cdf;
	int error;

	if (x >= 1.0) {
		*out = 0.0;
		return 0;
	}
	if (x <= 0.0) {
		*out = 1.0;
		return 0;
	}
	t = n * x;
	if (t <= 1.0) { /* Ruben-Gambino */
		double prob = 1.0;

		if (t <= 0.5) {
			*out = 1.0;
			return 0;
		}
		if (n <= 140)
			for (int i = 1; i <= n; i++)
				prob *= i * (1.0 / n) * (2 * t - 1);
		else
			prob =
			    exp(log_nfact_div_npown(n) + n * log(2 * t - 1));
		*out = clip01(1.0 - prob);
		return 0;
	}
	if (t >= n - 1) { /* Ruben-Gambino */
		*out = clip01(2 * pow(1.0 - x, n));
		return 0;
	}
	if (x >= 0.5) {
		*out = clip01(2 * smirnov_sf(n, x));
		return 0;
	}
	nxx = t * x;
	if (n <= 140) {
		if (nxx <= 0.754693) {
			if ((error = kolmogn_dmtw(&cdf, n, x)) < 0)
				return error;
			*out = clip01(1.0 - cdf);
			return 0;
		}
		if (nxx <= 4) {
			if ((error = kolmogn_pomeranz(&cdf, n, x)) < 0)
				return error;
			*out = clip01(1.0 - cdf);
			return 0;
		}
		*out = clip01(2 * smirnov_sf(n, x));
		return 0;
	}
	if (nxx >= 370.0) {
		*out = 0.0;
		return 0;
	}
	if (nxx >= 2.2) {
		*out = clip01(2 * smirnov_sf(n, x));
		return 0;
	}
	if (n <= 100000 && n * pow(x, 1.5) <= 1.4) {
		if ((error = kolmogn_dmtw(&cdf, n, x)) < 0)
			return error;
	} else {
		cdf = clip01(kolmogn_pelz_good(n, x));
	}
	*out = clip01(1.0 - cdf);
	return 0;
}

/* ----------------------------------------------------------------------
 * Two-sample Kolmogorov-Smirnov, exact lattice path probabilities
 */

/* P(D_{n,n} >= h / n), Horner-like evaluation of the reflection sum. */
static double ks_prob_outside_square(int64_t n, int64_t h)
{
	double p = 0.0;

	for (int64_t k = n / h; k >= 0; k--) {
		double p1 = 1.0;

		for (int64_t j = 0; j < h; j++)
			p1 = (double)(n - k * h - j) * p1 /
			     (double)(n + k * h + j + 1);
		p = p1 * (1.0 - p);
	}
	return 2 * p;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return -floor_div(-a, b);
}

/*
 * Proportion of lattice paths from (0,0) to (m,n) that leave the band
 * |x/m - y/n| < h / lcm(m,n): Hodges' inside method in Viehmann's form,
 * which computes 1 - p directly (SciPy's _compute_outer_prob_inside_method).
 */
static int ks_outer_prob_inside(double *out, int64_t m, int64_t n, int64_t g,
				int64_t h)
{
	double *col, val;
	int64_t mg, ng, minj, maxj, curlen, lastminj, lastlen;

	if (m < n) {
		int64_t t = m;

		m = n;
		n = t;
	}
	mg = m / g;
	ng = n / g;

	/* the window never exceeds n + 1 entries; ones beyond it */
	col = malloc((size_t)(n + 2) * sizeof(*col));
	if (col == NULL)
		return STATS_ENOMEM;
	for (int64_t j = 0; j < n + 2; j++)
		col[j] = 1.0;

	minj = 0;
	maxj = ceil_div(h, mg);
	if (maxj > n + 1)
		maxj = n + 1;
	curlen = maxj - minj;
	for (int64_t j = minj; j < maxj; j++)
		col[j] = 0.0;

	for (int64_t i = 1; i <= m; i++) {
		lastminj = minj;
		lastlen = curlen;
		minj = floor_div(ng * i - h, mg) + 1;
		if (minj < 0)
			minj = 0;
		if (minj > n)
			minj = n;
		maxj = ceil_div(ng * i + h, mg);
		if (maxj > n + 1)
			maxj = n + 1;
		if (maxj <= minj) {
			*out = 1.0;
			goto done;
		}
		val = minj == 0 ? 0.0 : 1.0;
		for (int64_t jj = 0; jj < maxj - minj; jj++) {
			int64_t j = jj + minj;

			val = (col[jj + minj - lastminj] * (double)i +
			       val * (double)j) /
			      (double)(i + j);
			col[jj] = val;
		}
		curlen = maxj - minj;
		for (int64_t j = curlen;
		     j < curlen + (lastlen - curlen) && j < n + 2; j++)
			col[j] = 1.0;
	}
	*out = col[maxj - minj - 1];
done:
	free(col);
	return 0;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b != 0) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int stats_ks_2samp(struct stats_test *out, const double *a, size_t na,
		   const double *b, size_t nb)
{
	double *sa = NULL, *sb = NULL, maxs = 0.0, mins = 0.0, d, p = NAN;
	size_t i = 0, j = 0;
	int error = 0, exact;

	if (out == NULL || !sample_ok(a, na, 1) || !sample_ok(b, nb, 1))
		return STATS_EINVAL;
	if ((sa = sorted_copy(a, na)) == NULL ||
	    (sb = sorted_copy(b, nb)) == NULL) {
		error = STATS_ENOMEM;
		goto out;
	}

	/* ECDF difference at every pooled value, as SciPy's searchsorted */
	while (i < na || j < nb) {
		double v, diff;

		if (j >= nb || (i < na && sa[i] <= sb[j]))
			v = sa[i];
		else
			v = sb[j];
		while (i < na && sa[i] <= v)
			i++;
		while (j < nb && sb[j] <= v)
			j++;
		diff = (double)i / (double)na - (double)j / (double)nb;
		maxs = fmax(maxs, diff);
		mins = fmin(mins, diff);
	}
	mins = clip01(-mins);
	d = mins > maxs ? mins : maxs;

	exact = na <= KS_MAX_EXACT_N && nb <= KS_MAX_EXACT_N;
	if (exact) {
		int64_t n1 = (int64_t)na, n2 = (int64_t)nb;
		int64_t g = gcd64(n1, n2), lcm = (n1 / g) * n2;
		int64_t h = (int64_t)nearbyint(d * (double)lcm);

		d = (double)h / (double)lcm;
		if (h == 0)
			p = 1.0;
		else if (n1 == n2)
			p = ks_prob_outside_square(n1, h);
		else if ((error = ks_outer_prob_inside(&p, n1, n2, g, h)) < 0)
			goto out;
		/* SciPy falls back to the asymptotic form outside [0, 1] */
		exact = p >= 0.0 && p <= 1.0;
	}
	if (!exact) {
		double big = (double)(na > nb ? na : nb);
		double small = (double)(na > nb ? nb : na);
		double en = big * small / (big + small);

		if ((error = kolmogn_sf(&p, (int)nearbyint(en), d)) < 0)
			goto out;
	}
	out->statistic = d;
	out->p_value = clip01(p);
	out->df = 0.0;

out:
	free(sa);
	free(sb);
	return error;
}

/* ----------------------------------------------------------------------
 * Bootstrap
 */

int stats_bootstrap_pct_ci(double *lo_out, double *hi_out, const double *a,
			   size_t na, const double *b, size_t nb, double level,
			   size_t resamples, unsigned long seed)
{
	const unsigned long max_draw = 0xffffffffUL;
	gsl_rng rng = {gsl_rng_mt19937, NULL};
	double *changes = NULL;
	int error = 0;

	if (lo_out == NULL || hi_out == NULL || !sample_ok(a, na, 2) ||
	    !sample_ok(b, nb, 2) || na > max_draw || nb > max_draw ||
	    !(level > 0.0 && level < 1.0) || resamples < 2 ||
	    mean_of(a, na) == 0.0)
		return STATS_EINVAL;

	/*
	 * The generator is built by hand rather than with gsl_rng_alloc(),
	 * whose allocation failure would go to GSL's global error handler
	 * (abort by default) instead of coming back as STATS_ENOMEM.
	 */
	rng.state = malloc(rng.type->size);
	changes = malloc(resamples * sizeof(*changes));
	if (rng.state == NULL || changes == NULL) {
		error = STATS_ENOMEM;
		goto out;
	}
	gsl_rng_set(&rng, seed);

	for (size_t r = 0; r < resamples; r++) {
		double sum_a = 0.0, sum_b = 0.0, mean_a, mean_b;

		for (size_t i = 0; i < na; i++)
			sum_a += a[gsl_rng_uniform_int(&rng, na)];
		for (size_t i = 0; i < nb; i++)
			sum_b += b[gsl_rng_uniform_int(&rng, nb)];
		mean_a = sum_a / (double)na;
		mean_b = sum_b / (double)nb;
		changes[r] = 100.0 * (mean_b - mean_a) / mean_a;
		if (!isfinite(changes[r])) {
			error = STATS_EINVAL;
			goto out;
		}
	}
	gsl_sort(changes, 1, resamples);
	*lo_out = gsl_stats_quantile_from_sorted_data(changes, 1, resamples,
						      (1.0 - level) / 2.0);
	*hi_out = gsl_stats_quantile_from_sorted_data(changes, 1, resamples,
						      (1.0 + level) / 2.0);

out:
	free(changes);
	free(rng.state);
	return error;
}

/* ----------------------------------------------------------------------
 * Benjamini-Hochberg
 */

int stats_benjamini_hochberg(double *q_out, const double *p, size_t n)
{
	size_t *order = NULL;
	double *adjusted = NULL;
	int error = 0;

	if (n == 0)
		return 0;
	if (q_out == NULL || p == NULL)
		return STATS_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(p[i] >= 0.0 && p[i] <= 1.0))
			return STATS_EINVAL;

	order = malloc(n * sizeof(*order));
	adjusted = malloc(n * sizeof(*adjusted));
	if (order == NULL || adjusted == NULL) {
		error = STATS_ENOMEM;
		goto out;
	}
	gsl_sort_index(order, p, 1, n);
	for (size_t i = 0; i < n; i++)
		adjusted[i] = p[order[i]] * ((double)n / (double)(i + 1));
	for (size_t i = n - 1; i-- > 0;)
		adjusted[i] = fmin(adjusted[i], adjusted[i + 1]);
	/* p is fully read: q_out may alias it */
	for (size_t i = 0; i < n; i++)
		q_out[order[i]] = clip01(adjusted[i]);

out:
	free(order);
	free(adjusted);
	return error;
}
