#include "recheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static bool is(const char *verdict, const char *name)
{
	return verdict != NULL && strcmp(verdict, name) == 0;
}

enum recheck_verdict recheck_decide(const char *culprit_column,
				    const char *head_column)
{
	if (!is(culprit_column, "regression"))
		return RECHECK_INCONCLUSIVE;
	if (is(head_column, "regression"))
		return RECHECK_STILL;
	if (is(head_column, "no-change") || is(head_column, "improvement"))
		return RECHECK_FIXED;
	return RECHECK_INCONCLUSIVE;
}

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

int recheck_measure(struct recheck_numbers *out, const double *parent,
		    size_t parent_count, const double *culprit,
		    size_t culprit_count, const double *head,
		    size_t head_count, bool higher_is_better)
{
	double *p = NULL, *c = NULL, *h = NULL, parent_mean;
	struct stats_test worse, better;
	int error = -1;

	if (parent_count < 2 || culprit_count < 2 || head_count < 2 ||
	    !all_finite(parent, parent_count) ||
	    !all_finite(culprit, culprit_count) ||
	    !all_finite(head, head_count))
		return -1;
	p = oriented(parent, parent_count, higher_is_better);
	c = oriented(culprit, culprit_count, higher_is_better);
	h = oriented(head, head_count, higher_is_better);
	if (p == NULL || c == NULL || h == NULL)
		goto out;
	/* H1: parent - head > 0, the head worse; head - culprit > 0, the
	 * head better than the culprit. */
	if (stats_welch_t_one_sided(&worse, h, head_count, p, parent_count,
				    0.0) != 0 ||
	    stats_welch_t_one_sided(&better, c, culprit_count, h, head_count,
				    0.0) != 0)
		goto out;
	parent_mean = stats_mean(parent, parent_count);
	out->p_worse = worse.p_value;
	out->p_better_than_culprit = better.p_value;
	out->change_pct =
	    parent_mean != 0
		? 100.0 * (stats_mean(head, head_count) - parent_mean) /
		      fabs(parent_mean)
		: 0.0;
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
