#include "outcome.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static const char *const status_names[OUTCOME_STATUS_COUNT] = {
    "built", "build_failed", "crashed", "timed_out", "no_kpi", "ran",
};

const char *outcome_status_name(enum outcome_status status)
{
	if ((unsigned)status >= OUTCOME_STATUS_COUNT)
		return "unknown";
	return status_names[status];
}

int outcome_status_parse(enum outcome_status *out, const char *name)
{
	size_t i;

	if (name == NULL)
		return -1;
	for (i = 0; i < OUTCOME_STATUS_COUNT; i++) {
		if (strcmp(name, status_names[i]) == 0) {
			*out = (enum outcome_status)i;
			return 0;
		}
	}
	return -1;
}

enum outcome_status outcome_of_run(int exit_code, int term_signal,
				   bool timed_out, bool has_kpi)
{
	if (timed_out)
		return OUTCOME_TIMED_OUT;
	if (exit_code != 0 || term_signal != 0)
		return OUTCOME_CRASHED;
	return has_kpi ? OUTCOME_RAN : OUTCOME_NO_KPI;
}

/* Levenshtein distance of `a` and `b`, or SIZE_MAX when out of memory. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, k, *row, result;

	row = malloc((lb + 1) * sizeof(*row));
	if (row == NULL)
		return (size_t)-1;
	for (k = 0; k <= lb; k++)
		row[k] = k;
	for (i = 1; i <= la; i++) {
		size_t diagonal = row[0];

		row[0] = i;
		for (k = 1; k <= lb; k++) {
			size_t above = row[k];
			size_t best = diagonal + (a[i - 1] != b[k - 1]);

			if (above + 1 < best)
				best = above + 1;
			if (row[k - 1] + 1 < best)
				best = row[k - 1] + 1;
			row[k] = best;
			diagonal = above;
		}
	}
	result = row[lb];
	free(row);
	return result;
}

/* The printed name nearest to `kpi`, when near enough to be a typo. */
static const char *nearest_name(const struct outcome *o, const char *kpi)
{
	size_t i, best_distance = strlen(kpi) / 3, distance;
	const char *best = NULL;

	if (best_distance < 1)
		best_distance = 1;
	for (i = 0; i < o->metrics_seen_count; i++) {
		if (o->metrics_seen[i] == NULL)
			continue;
		distance = edit_distance(o->metrics_seen[i], kpi);
		if (distance <= best_distance &&
		    (best == NULL || distance < best_distance)) {
			best = o->metrics_seen[i];
			best_distance = distance;
		}
	}
	return best;
}

static void describe_no_kpi(struct strbuf *b, const char *who,
			    const struct outcome *o, const char *kpi)
{
	size_t i, listed = 0;
	const char *nearest;

	if (o->metrics_seen_count == 0) {
		strbuf_printf(
		    b,
		    "the runs of %s printed no metrics at all (the KPI "
		    "is '%s')",
		    who, kpi);
		return;
	}
	strbuf_printf(
	    b, "the runs of %s printed no metric '%s'; they printed: ", who,
	    kpi);
	for (i = 0; i < o->metrics_seen_count; i++) {
		if (o->metrics_seen[i] == NULL)
			continue;
		if (listed == OUTCOME_NAMES_MAX)
			break;
		strbuf_printf(b, "%s%s", listed > 0 ? ", " : "",
			      o->metrics_seen[i]);
		listed++;
	}
	if (i < o->metrics_seen_count)
		strbuf_printf(b, " and %zu more", o->metrics_seen_count - i);
	nearest = nearest_name(o, kpi);
	if (nearest != NULL)
		strbuf_printf(b, " (did you mean '%s'?)", nearest);
}

int outcome_describe(char **out, const char *who, const struct outcome *o,
		     const char *kpi)
{
	struct strbuf b = STRBUF_INIT;
	const char *abbrev;
	size_t len;

	if (out == NULL || who == NULL || o == NULL || kpi == NULL)
		return -1;
	switch (o->status) {
	case OUTCOME_BUILD_FAILED:
		strbuf_printf(&b, "%s does not build", who);
		break;
	case OUTCOME_CRASHED:
		if (o->term_signal > 0) {
			abbrev = sigabbrev_np(o->term_signal);
			strbuf_printf(
			    &b,
			    "the runs of %s crashed (killed by signal "
			    "%d%s%s)",
			    who, o->term_signal, abbrev != NULL ? ", SIG" : "",
			    abbrev != NULL ? abbrev : "");
		} else {
			strbuf_printf(
			    &b, "the runs of %s crashed (exit status %d)", who,
			    o->exit_code);
		}
		break;
	case OUTCOME_TIMED_OUT:
		strbuf_printf(&b, "the runs of %s timed out", who);
		break;
	case OUTCOME_NO_KPI:
		describe_no_kpi(&b, who, o, kpi);
		break;
	case OUTCOME_BUILT:
	case OUTCOME_RAN:
	default:
		strbuf_printf(&b, "%s was built and measured", who);
		break;
	}
	return strbuf_finish(out, &len, &b);
}
