#include "recheck.h"

#include <math.h>
#include <stdlib.h>

#include "stats.h"

/* `n` values of `x` made "higher is better": negated when lower is. */
static double *oriented(const double *x, size_t n, bool higher_is_better)
{
	double *out = malloc(n * sizeof(*out));
	size_t i;

	for (i = 0; out != NULL && i < n; i++)
		out[i] = higher_is_better ? x[i] : -x[i];
	return out;
}

static bool all_finite(const double *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

int recheck_judge(struct recheck_result *out, const double *parent,
		  size_t parent_count, const double *culprit,
		  size_t culprit_count, const double *head, size_t head_count,
		  bool higher_is_better, double min_change_pct, double alpha)
{
	double *p = NULL, *c = NULL, *h = NULL, parent_mean, threshold;
	struct stats_test worse, better, level;
	int error = -1;

	if (parent_count < 2 || culprit_count < 2 || head_count < 2 ||
	    !all_finite(parent, parent_count) ||
	    !all_finite(culprit, culprit_count) ||
	    !all_finite(head, head_count) || !(alpha > 0 && alpha < 1) ||
	    !(min_change_pct >= 0 && min_change_pct < 100))
		return -1;
	p = oriented(parent, parent_count, higher_is_better);
	c = oriented(culprit, culprit_count, higher_is_better);
	h = oriented(head, head_count, higher_is_better);
	if (p == NULL || c == NULL || h == NULL)
		goto out;
	parent_mean = stats_mean(parent, parent_count);
	threshold = fabs(parent_mean) * min_change_pct / 100.0;
	/* H1: parent - head > 0, the head worse; head - culprit > 0, the
	 * head better than the culprit; head - parent > -threshold, the head
	 * within the smallest change that counts, or better. */
	if (stats_welch_t_one_sided(&worse, h, head_count, p, parent_count,
				    0.0) != 0 ||
	    stats_welch_t_one_sided(&better, c, culprit_count, h, head_count,
				    0.0) != 0 ||
	    stats_welch_t_one_sided(&level, p, parent_count, h, head_count,
				    -threshold) != 0)
		goto out;
	out->p_worse = worse.p_value;
	out->p_better_than_culprit = better.p_value;
	out->p_level = level.p_value;
	out->change_pct =
	    parent_mean != 0
		? 100.0 * (stats_mean(head, head_count) - parent_mean) /
		      fabs(parent_mean)
		: 0.0;
	if (worse.p_value < alpha &&
	    stats_mean(p, parent_count) - stats_mean(h, head_count) >=
		threshold)
		out->verdict = RECHECK_STILL;
	else if (better.p_value < alpha && level.p_value < alpha)
		out->verdict = RECHECK_FIXED;
	else
		out->verdict = RECHECK_INCONCLUSIVE;
	error = 0;
out:
	free(p);
	free(c);
	free(h);
	return error;
}

const char *recheck_verdict_name(enum recheck_verdict verdict)
{
	switch (verdict) {
	case RECHECK_STILL:
		return "still regression";
	case RECHECK_FIXED:
		return "fixed";
	default:
		return "inconclusive";
	}
}
