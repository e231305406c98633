#include "bisect.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#include "stats.h"

/* Equivalence (TOST) is accepted at this level: a real change at least as
 * large as min_change_pct is called "no change" at most this often. */
#define BISECT_ALPHA_EQUIVALENCE 0.05

enum comparison { CMP_UNKNOWN, CMP_DIFFERENT, CMP_SAME };

void bisect_options_init(struct bisect_options *opts, bool higher_is_better)
{
	memset(opts, 0, sizeof(*opts));
	opts->runs_min = 5;
	opts->runs_max = 30;
	opts->min_change_pct = 1.0;
	opts->alpha = 0.01;
	opts->higher_is_better = higher_is_better;
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
	static const char *const names[] = {"untested", "good", "bad",
					    "undecided", "skipped"};

	return (size_t)cls < sizeof(names) / sizeof(names[0]) ? names[cls]
							       : "untested";
}

/*
 * Change from `from` to `to` in percent of the older mean; when that mean is
 * 0 (an error count, say) in percent of the newer one, so a change from 0 is
 * +-100% rather than nothing.
 */
static double pct_change(const struct bisect_commit *from,
			 const struct bisect_commit *to)
{
	double a = stats_mean(from->values, from->value_count);
	double b = stats_mean(to->values, to->value_count);
	double base = a != 0.0 ? fabs(a) : fabs(b);

	return base == 0.0 ? 0.0 : 100.0 * (b - a) / base;
}

/* Three-way comparison of two commits' runs. */
static enum comparison compare(const struct bisect_commit *a,
			       const struct bisect_commit *b,
			       const struct bisect_options *opts,
			       double *p_out)
{
	struct stats_test welch, tost;
	double pct = pct_change(a, b);

	*p_out = 1.0;
	if (stats_welch_t(&welch, a->values, a->value_count, b->values,
			  b->value_count) < 0)
		return CMP_UNKNOWN;
	*p_out = welch.p_value;
	if (welch.p_value < opts->alpha && fabs(pct) >= opts->min_change_pct)
		return CMP_DIFFERENT;
	if (pct == 0.0 &&
	    stats_variance(a->values, a->value_count) == 0.0 &&
	    stats_variance(b->values, b->value_count) == 0.0)
		return CMP_SAME; /* the same constant on both sides */
	/* The equivalence margin is a percentage of the larger mean, so a
	 * mean of 0 on one side still leaves a margin. */
	if (fabs(stats_mean(a->values, a->value_count)) <
	    fabs(stats_mean(b->values, b->value_count))) {
		const struct bisect_commit *swap = a;

		a = b;
		b = swap;
	}
	if (stats_tost(&tost, a->values, a->value_count, b->values,
		       b->value_count, opts->min_change_pct) == 0 &&
	    tost.p_value < BISECT_ALPHA_EQUIVALENCE)
		return CMP_SAME;
	return CMP_UNKNOWN;
}

/*
 * Is `mid` on the good or the bad side of the halfway point between the
 * endpoints' means?  A Welch-style t test of mean(mid) against that point,
 * whose own uncertainty (from both endpoints) enters the standard error and
 * the Welch-Satterthwaite degrees of freedom; one-sided each way.
 * BISECT_UNDECIDED while neither side is significant at alpha.
 */
static enum bisect_class classify(const struct bisect_commit *good,
				  const struct bisect_commit *bad,
				  const struct bisect_commit *mid,
				  const struct bisect_options *opts)
{
	double mg = stats_mean(good->values, good->value_count);
	double mb = stats_mean(bad->values, bad->value_count);
	double mm = stats_mean(mid->values, mid->value_count);
	double ng = (double)good->value_count, nb = (double)bad->value_count;
	double nm = (double)mid->value_count;
	double vg = stats_variance(good->values, good->value_count) / (4 * ng);
	double vb = stats_variance(bad->values, bad->value_count) / (4 * nb);
	double vm = stats_variance(mid->values, mid->value_count) / nm;
	double se2 = vg + vb + vm, df, t;
	/* Distance from the halfway point, positive towards bad. */
	double d = (mm - (mg + mb) / 2) * (mb > mg ? 1 : -1);

	if (!(se2 > 0))
		return d > 0 ? BISECT_BAD_LIKE
			     : d < 0 ? BISECT_GOOD_LIKE : BISECT_UNDECIDED;
	df = se2 * se2 /
	     (vg * vg / (ng - 1) + vb * vb / (nb - 1) + vm * vm / (nm - 1));
	t = d / sqrt(se2);
	if (gsl_cdf_tdist_Q(t, df) < opts->alpha)
		return BISECT_BAD_LIKE;
	if (gsl_cdf_tdist_P(t, df) < opts->alpha)
		return BISECT_GOOD_LIKE;
	return BISECT_UNDECIDED;
}

/* At runs_max the evidence stays weak: take the nearer endpoint. */
static enum bisect_class nearest(const struct bisect_commit *good,
				 const struct bisect_commit *bad,
				 const struct bisect_commit *mid)
{
	double m = stats_mean(mid->values, mid->value_count);
	double g = stats_mean(good->values, good->value_count);
	double b = stats_mean(bad->values, bad->value_count);

	return fabs(m - b) < fabs(m - g) ? BISECT_BAD_LIKE : BISECT_GOOD_LIKE;
}

/* The buildable commit in (lo, hi) nearest to the middle, or hi if none. */
static size_t pick_midpoint(const struct bisect_commit *commits, size_t lo,
			    size_t hi)
{
	size_t middle = lo + (hi - lo) / 2;
	size_t step;

	for (step = 0; step < hi - lo; step++) {
		if (middle + step < hi && !commits[middle + step].build_failed)
			return middle + step;
		if (middle >= step && middle - step > lo &&
		    !commits[middle - step].build_failed)
			return middle - step;
	}
	return hi;
}

static void request(struct bisect_result *out, size_t commit, size_t runs)
{
	if (runs == 0 || out->request_count == BISECT_MAX_REQUESTS)
		return;
	out->requests[out->request_count].commit = commit;
	out->requests[out->request_count].runs = runs;
	out->request_count++;
}

/* Runs to add to a commit whose evidence is still weak. */
static size_t more_runs(const struct bisect_commit *c,
			const struct bisect_options *opts)
{
	size_t want = c->value_count + opts->runs_min;

	if (want > opts->runs_max)
		want = opts->runs_max;
	return want > c->value_count ? want - c->value_count : 0;
}

static void finish_inconclusive(struct bisect_result *out, const char *reason)
{
	out->verdict = BISECT_INCONCLUSIVE;
	out->reason = reason;
	out->request_count = 0;
}

int bisect_step(struct bisect_result *out, enum bisect_class *classes,
		const struct bisect_commit *commits, size_t count,
		const struct bisect_options *opts)
{
	const struct bisect_commit *good, *bad;
	enum comparison endpoints;
	size_t lo, hi, i;
	double p;

	if (count < 2 || opts->runs_min < 2 || opts->runs_max < opts->runs_min ||
	    !(opts->alpha > 0 && opts->alpha < 1) ||
	    !(opts->min_change_pct > 0))
		return -1;
	memset(out, 0, sizeof(*out));
	out->hi = count - 1;
	out->p_value = 1.0;
	if (classes != NULL) {
		for (i = 0; i < count; i++)
			classes[i] = commits[i].build_failed ? BISECT_SKIPPED
							     : BISECT_UNTESTED;
	}
	good = &commits[0];
	bad = &commits[count - 1];
	if (good->build_failed || bad->build_failed) {
		finish_inconclusive(out, good->build_failed
						 ? "the good commit does not build"
						 : "the bad commit does not build");
		return 0;
	}

	/* The endpoints first, interleaved by the caller in request order. */
	if (good->value_count < opts->runs_min ||
	    bad->value_count < opts->runs_min) {
		if (good->value_count < opts->runs_min)
			request(out, 0, opts->runs_min - good->value_count);
		if (bad->value_count < opts->runs_min)
			request(out, count - 1,
				opts->runs_min - bad->value_count);
		return 0;
	}
	endpoints = compare(good, bad, opts, &p);
	out->p_value = p;
	out->change_pct = pct_change(good, bad);
	if (endpoints == CMP_SAME) {
		out->verdict = BISECT_NO_CHANGE;
		return 0;
	}
	if (endpoints == CMP_UNKNOWN) {
		if (good->value_count >= opts->runs_max &&
		    bad->value_count >= opts->runs_max) {
			finish_inconclusive(
				out, "the endpoints differ too little for the "
				     "noise, even at runs_max");
			return 0;
		}
		request(out, 0, more_runs(good, opts));
		request(out, count - 1, more_runs(bad, opts));
		return 0;
	}
	if (classes != NULL) {
		classes[0] = BISECT_GOOD_LIKE;
		classes[count - 1] = BISECT_BAD_LIKE;
	}

	/* Binary search for the first bad-like commit in (lo, hi]. */
	lo = 0;
	hi = count - 1;
	while (hi - lo > 1) {
		size_t mid = pick_midpoint(commits, lo, hi);
		const struct bisect_commit *c = &commits[mid];
		enum bisect_class cls;

		if (mid == hi) {
			out->culprit_ambiguous = true;
			break;
		}
		if (c->value_count < opts->runs_min) {
			out->lo = lo;
			out->hi = hi;
			request(out, mid, opts->runs_min - c->value_count);
			return 0;
		}
		cls = classify(good, bad, c, opts);
		if (cls == BISECT_UNDECIDED) {
			if (c->value_count < opts->runs_max) {
				if (classes != NULL)
					classes[mid] = BISECT_UNDECIDED;
				out->lo = lo;
				out->hi = hi;
				request(out, mid, more_runs(c, opts));
				return 0;
			}
			cls = nearest(good, bad, c);
		}
		if (classes != NULL)
			classes[mid] = cls;
		if (cls == BISECT_BAD_LIKE)
			hi = mid;
		else
			lo = mid;
	}

	out->lo = lo;
	out->hi = hi;
	out->culprit = hi;
	out->parent = lo;
	out->change_pct = pct_change(&commits[lo], &commits[hi]);
	compare(&commits[lo], &commits[hi], opts, &out->p_value);
	/* The direction comes from the endpoints, the best-measured pair. */
	p = pct_change(good, bad);
	if (opts->higher_is_better ? p < 0 : p > 0)
		out->verdict = BISECT_REGRESSION;
	else
		out->verdict = BISECT_IMPROVEMENT;
	return 0;
}
