#include "estimate.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

/* Most halvings of a bracket: far below a double's resolution. */
#define ESTIMATE_BISECTIONS 200
/* Most doublings of the step that looks for the far side of a bound. */
#define ESTIMATE_EXPANSIONS 80

/* One side's runs: up to two arrays read as one sample. */
struct estimate_side {
	size_t n;
	double mean;
	double var; /* sample variance (n - 1), 0 for one value */
};

static int estimate_side_of(struct estimate_side *out, const double *a,
			    size_t na, const double *b, size_t nb)
{
	double sum = 0, ss = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->n = na + nb;
	if (out->n == 0 || (na > 0 && a == NULL) || (nb > 0 && b == NULL))
		return -1;
	for (i = 0; i < na; i++)
		sum += a[i];
	for (i = 0; i < nb; i++)
		sum += b[i];
	if (!isfinite(sum))
		return -1;
	out->mean = sum / (double)out->n;
	for (i = 0; i < na; i++)
		ss += (a[i] - out->mean) * (a[i] - out->mean);
	for (i = 0; i < nb; i++)
		ss += (b[i] - out->mean) * (b[i] - out->mean);
	if (!isfinite(ss))
		return -1;
	out->var = out->n > 1 ? ss / (double)(out->n - 1) : 0;
	return 0;
}

/*
 * |t| of Welch's test of changed against theta times base, minus its
 * two-sided 5% critical value: negative inside the interval, positive
 * outside.
 */
static double estimate_excess(const struct estimate_side *base,
			      const struct estimate_side *changed,
			      double theta)
{
	double vc = changed->var / (double)changed->n;
	double vb = theta * theta * base->var / (double)base->n;
	double diff = changed->mean - theta * base->mean;
	double se2 = vc + vb, df;

	if (se2 <= 0)
		return diff == 0 ? -1.0 : INFINITY;
	df = se2 * se2 /
	     (vc * vc / (double)(changed->n - 1) +
	      vb * vb / (double)(base->n - 1));
	return fabs(diff) / sqrt(se2) - gsl_cdf_tdist_Pinv(0.975, df);
}

/* The bound of the ratio on the side of `sign` (+1 or -1) from `center`,
 * or NaN when there is none. */
static double estimate_bound(const struct estimate_side *base,
			     const struct estimate_side *changed,
			     double center, double sign, double step)
{
	double inside = center, outside = center;
	int i;

	for (i = 0; i < ESTIMATE_EXPANSIONS; i++) {
		outside = center + sign * step;
		if (estimate_excess(base, changed, outside) > 0)
			break;
		inside = outside;
		step *= 2;
	}
	if (i == ESTIMATE_EXPANSIONS)
		return NAN;
	for (i = 0; i < ESTIMATE_BISECTIONS; i++) {
		double mid = inside + (outside - inside) / 2;

		if (mid == inside || mid == outside)
			break;
		if (estimate_excess(base, changed, mid) > 0)
			outside = mid;
		else
			inside = mid;
	}
	return inside + (outside - inside) / 2;
}

static void estimate_fill(struct estimate_change *out,
			  const struct estimate_side *base,
			  const struct estimate_side *changed)
{
	double mb = base->mean, mc = changed->mean;
	double scale = mb != 0 ? fabs(mb) : fabs(mc);
	double theta, step, lo, hi;

	memset(out, 0, sizeof(*out));
	out->base_mean = mb;
	out->changed_mean = mc;
	out->base_runs = base->n;
	out->changed_runs = changed->n;
	out->change_pct = scale == 0 ? 0.0 : 100.0 * (mc - mb) / scale;
	out->ci95_lo = out->ci95_hi = NAN;
	if (mb == 0 || base->n < 2 || changed->n < 2)
		return;
	theta = mc / mb;
	if (base->var == 0 && changed->var == 0) {
		out->ci95_lo = out->ci95_hi = out->change_pct;
		return;
	}
	/* A first step of about one standard error of the ratio. */
	step = sqrt(changed->var / (double)changed->n +
		    theta * theta * base->var / (double)base->n) /
	       fabs(mb);
	if (!(step > 0))
		step = fabs(theta) > 0 ? fabs(theta) * 1e-9 : 1e-9;
	lo = estimate_bound(base, changed, theta, -1.0, step);
	hi = estimate_bound(base, changed, theta, 1.0, step);
	if (isnan(lo) || isnan(hi))
		return;
	/* Percent of |base|: a negative base mean turns the ratio round. */
	if (mb > 0) {
		out->ci95_lo = 100.0 * (lo - 1.0);
		out->ci95_hi = 100.0 * (hi - 1.0);
	} else {
		out->ci95_lo = 100.0 * (1.0 - hi);
		out->ci95_hi = 100.0 * (1.0 - lo);
	}
}

int estimate_change(struct estimate_change *out, const double *base,
		    size_t base_count, const double *changed,
		    size_t changed_count)
{
	struct estimate_side b, c;

	if (out == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	if (estimate_side_of(&b, base, base_count, NULL, 0) < 0 ||
	    estimate_side_of(&c, changed, changed_count, NULL, 0) < 0)
		return -1;
	estimate_fill(out, &b, &c);
	return 0;
}

int estimate_commits(struct estimate_change *out,
		     const struct bisect_commit *base,
		     const struct bisect_commit *changed)
{
	struct estimate_side b, c;

	if (out == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	if (base == NULL || changed == NULL ||
	    estimate_side_of(&b, base->values, base->value_count,
			     base->confirm_values, base->confirm_count) < 0 ||
	    estimate_side_of(&c, changed->values, changed->value_count,
			     changed->confirm_values,
			     changed->confirm_count) < 0)
		return -1;
	estimate_fill(out, &b, &c);
	return 0;
}
