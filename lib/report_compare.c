/*
 * report_compare - a compare job's report; the contracts are in
 * report_compare.h, the table layout is report.c's.
 */
#include "report_compare.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowselect.h"
#include "stats.h"
#include "strbuf.h"

static bool compare_is_line(const char *s)
{
	const unsigned char *p;

	if (s == NULL || *s == '\0')
		return false;
	for (p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return false;
	return true;
}

static bool compare_is_sha(const char *s)
{
	size_t n;

	if (s == NULL)
		return false;
	n = strspn(s, "0123456789abcdef");
	return s[n] == '\0' && (n == 40 || n == 64);
}

static int compare_check(const struct report_compare_input *in)
{
	size_t i;

	if (in == NULL || !compare_is_line(in->robot_name) ||
	    !compare_is_line(in->service_name) || !compare_is_line(in->tree) ||
	    !compare_is_line(in->branch) || !compare_is_line(in->kpi) ||
	    !compare_is_line(in->testcase) || in->columns == NULL ||
	    in->column_count < 2 || in->column_count > REPORT_COLUMNS_MAX ||
	    (in->row_count > 0 && in->rows == NULL) ||
	    (in->param_count > 0 && in->params == NULL))
		return -EINVAL;
	for (i = 0; i < in->column_count; i++) {
		const struct report_compare_column *c = &in->columns[i];

		if (!compare_is_line(c->label) || !compare_is_sha(c->sha) ||
		    (c->subject != NULL && strpbrk(c->subject, "\r\n")) ||
		    (i > 0 && !isfinite(c->change_pct) &&
		     c->kind != REPORT_INCONCLUSIVE))
			return -EINVAL;
	}
	for (i = 0; i < in->row_count; i++)
		if (!compare_is_line(in->rows[i].metric))
			return -EINVAL;
	for (i = 0; i < in->param_count; i++)
		if (in->params[i].key == NULL || in->params[i].value == NULL)
			return -EINVAL;
	return 0;
}

static int compare_finish(struct strbuf *b, char **out)
{
	return strbuf_finish(out, NULL, b) < 0 ? -ENOMEM : 0;
}

const char *report_compare_kind_word(enum report_kind kind)
{
	switch (kind) {
	case REPORT_REGRESSION:
		return "regression";
	case REPORT_IMPROVEMENT:
		return "improvement";
	case REPORT_NO_CHANGE:
		return "no change";
	case REPORT_INCONCLUSIVE:
		break;
	}
	return "inconclusive";
}

/* " -10.2% regression", or " inconclusive" without a measured change. */
static void compare_put_change(struct strbuf *b,
			       const struct report_compare_column *c)
{
	if (isfinite(c->change_pct))
		strbuf_printf(b, " %+.1f%%", c->change_pct);
	strbuf_printf(b, " %s", report_compare_kind_word(c->kind));
}

int report_compare_subject(char **out, const struct report_compare_input *in)
{
	struct strbuf b = STRBUF_INIT;
	size_t i;
	int error;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if ((error = compare_check(in)) < 0)
		return error;
	strbuf_printf(&b, "[%s:%s] compare of %s against %.10s:", in->tree,
		      in->branch, in->kpi, in->columns[0].sha);
	for (i = 1; i < in->column_count; i++) {
		strbuf_printf(&b, "%s %.10s", i > 1 ? "," : "",
			      in->columns[i].sha);
		compare_put_change(&b, &in->columns[i]);
	}
	return compare_finish(&b, out);
}

struct compare_sorted_param {
	const struct report_param *param;
	size_t index;
};

static int compare_params_order(const void *pa, const void *pb)
{
	const struct compare_sorted_param *a = pa, *b = pb;
	int c = strcmp(a->param->key, b->param->key);

	if (c)
		return c;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The rule, the parameter names and values (a "testcase" one added
 * unless given), as the robot's comparison block starts. */
static int compare_put_params(struct strbuf *b,
			      const struct report_compare_input *in)
{
	struct report_param testcase = {"testcase", in->testcase};
	struct compare_sorted_param *params;
	size_t i, count = in->param_count;
	bool have_testcase = false;

	for (i = 0; i < in->param_count; i++)
		if (strcmp(in->params[i].key, "testcase") == 0)
			have_testcase = true;
	if (!have_testcase)
		count++;
	params = calloc(count, sizeof(*params));
	if (params == NULL)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		params[i].param =
		    i < in->param_count ? &in->params[i] : &testcase;
		params[i].index = i;
	}
	qsort(params, count, sizeof(*params), compare_params_order);
	strbuf_append(b, "==================================================="
			 "======================================\n");
	for (i = 0; i < count; i++)
		strbuf_printf(b, "%s%s", i ? "/" : "", params[i].param->key);
	strbuf_append(b, ":\n  ");
	for (i = 0; i < count; i++)
		strbuf_printf(b, "%s%s", i ? "/" : "", params[i].param->value);
	strbuf_append(b, "\n\n");
	free(params);
	return 0;
}

static int compare_put_table(struct strbuf *b,
			     const struct report_compare_input *in)
{
	const char *shas[REPORT_COLUMNS_MAX];
	size_t i;
	int error;

	if ((error = compare_put_params(b, in)) < 0)
		return error;
	strbuf_append(b, "commit: \n");
	for (i = 0; i < in->column_count; i++) {
		strbuf_printf(b, "  %.10s", in->columns[i].sha);
		if (in->columns[i].subject != NULL)
			strbuf_printf(b, " (\"%s\")", in->columns[i].subject);
		strbuf_append(b, "\n");
		shas[i] = in->columns[i].sha;
	}
	strbuf_append(b, "\n");
	report_put_table_head(b, shas, in->column_count);
	for (i = 0; i < in->row_count; i++) {
		char *row = NULL;

		error = report_format_row_columns(&row, in->rows[i].metric,
						  in->rows[i].sides,
						  in->column_count);
		if (error < 0)
			return error;
		strbuf_append(b, row);
		free(row);
	}
	return 0;
}

/* The widest label, for lining the revisions up. */
static int compare_label_width(const struct report_compare_input *in)
{
	size_t i, width = 0;

	for (i = 0; i < in->column_count; i++)
		if (strlen(in->columns[i].label) > width)
			width = strlen(in->columns[i].label);
	return (int)(width > 40 ? 40 : width) + 1;
}

static void compare_put_revisions(struct strbuf *b,
				  const struct report_compare_input *in)
{
	int width = compare_label_width(in);
	char label[64];
	size_t i;

	for (i = 0; i < in->column_count; i++) {
		const struct report_compare_column *c = &in->columns[i];

		snprintf(label, sizeof(label), "%s:", c->label);
		strbuf_printf(b, "%-*s %s", width, label, c->sha);
		if (c->subject != NULL)
			strbuf_printf(b, " (\"%s\")", c->subject);
		strbuf_append(b, "\n");
	}
	strbuf_printf(b, "%s %s\n\n", in->tree, in->branch);
	for (i = 1; i < in->column_count; i++) {
		const struct report_compare_column *c = &in->columns[i];

		snprintf(label, sizeof(label), "%s:", c->label);
		strbuf_printf(b, "%-*s", width, label);
		compare_put_change(b, c);
		strbuf_printf(b, " of %s against %s\n", in->kpi,
			      in->columns[0].label);
	}
	strbuf_append(b, "\n");
}

static void compare_put_testcase(struct strbuf *b,
				 const struct report_compare_input *in)
{
	size_t i;

	strbuf_printf(b, "testcase: %s\n", in->testcase);
	if (in->machine != NULL)
		strbuf_printf(b, "test machine: %s\n", in->machine);
	strbuf_append(b, "runs:");
	for (i = 0; i < in->column_count; i++)
		strbuf_printf(b, "%s %zu (%s)", i ? " /" : "",
			      in->columns[i].runs, in->columns[i].label);
	strbuf_append(b, "\n");
	if (in->param_count > 0) {
		strbuf_append(b, "parameters:\n\n");
		for (i = 0; i < in->param_count; i++)
			strbuf_printf(b, "\t%s: %s\n", in->params[i].key,
				      in->params[i].value);
	}
	strbuf_append(b, "\n\n");
}

static void compare_put_reproduce(struct strbuf *b,
				  const struct report_compare_input *in)
{
	size_t i;

	if (in->job_url != NULL)
		report_put_job_links(b, in->job_url, in->link_query);
	if (in->bench_cmd != NULL) {
		strbuf_append(b, "The benchmark, beside the tree:\n\n");
		report_put_command(b, in->bench_cmd);
		strbuf_append(b, "\n");
	}
	strbuf_append(b, "To reproduce, for each revision:\n\n");
	for (i = 0; i < in->column_count; i++)
		strbuf_printf(b, "\tgit checkout %s\n", in->columns[i].sha);
	strbuf_append(b, "\nthen:\n\n");
	if (in->build_cmd != NULL)
		report_put_command(b, in->build_cmd);
	if (in->run_cmd != NULL)
		report_put_command(b, in->run_cmd);
	strbuf_append(b, "\n");
}

int report_compare_body(char **out, const struct report_compare_input *in)
{
	struct strbuf b = STRBUF_INIT;
	int error;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if ((error = compare_check(in)) < 0)
		return error;
	strbuf_printf(&b, "\nHello,\n\n%s compared %s on %zu revisions:\n\n\n",
		      in->robot_name, in->kpi, in->column_count);
	compare_put_revisions(&b, in);
	compare_put_testcase(&b, in);
	strbuf_append(&b, "Details are as below:\n");
	strbuf_append(&b, "-------------------------------------------------"
			  "-------------------------------------------------"
			  ">\n\n\n");
	compare_put_reproduce(&b, in);
	if ((error = compare_put_table(&b, in)) < 0) {
		strbuf_clear(&b);
		return error;
	}
	strbuf_append(&b, "\n\nDisclaimer:\n");
	strbuf_append(&b, "Results were measured on a statbisect test machine "
			  "and are provided for\ninformational purposes "
			  "only.  The revisions were run interleaved on one\n"
			  "machine; the table gives the mean of each "
			  "revision and its standard\ndeviation, and each "
			  "change is against the first revision.\n\n\n");
	strbuf_printf(&b, "-- \n%s\n", in->service_name);
	if (in->service_url != NULL)
		strbuf_printf(&b, "%s\n", in->service_url);
	return compare_finish(&b, out);
}

/* The series named `name` of `samples`, or NULL. */
static const struct report_series *
compare_series(const struct report_samples *samples, const char *name)
{
	size_t i;

	for (i = 0; i < samples->count; i++)
		if (strcmp(samples->series[i].name, name) == 0)
			return &samples->series[i];
	return NULL;
}

static void compare_side(struct report_side *out, const double *x, size_t n)
{
	double mean = n > 0 ? stats_mean(x, n) : 0;

	out->mean = mean;
	out->runs = n;
	out->stddev_pct =
	    n > 1 && mean != 0 ? 100.0 * stats_pop_sd(x, n) / fabs(mean) : 0;
}

/* Marks in shown[] the series of pairs[0] that rowselect shows in
 * `pair`. */
static int compare_select(bool *shown, const struct report_samples *first,
			  const struct report_samples *pair, const char *kpi)
{
	struct rowselect_series *series;
	struct rowselect_row *selected;
	size_t i, j;
	int error = -ENOMEM;

	series = calloc(pair->count + 1, sizeof(*series));
	selected = calloc(pair->count + 1, sizeof(*selected));
	if (series == NULL || selected == NULL)
		goto out;
	for (i = 0; i < pair->count; i++) {
		series[i].name = pair->series[i].name;
		series[i].base = pair->series[i].side[0];
		series[i].base_count = pair->series[i].count[0];
		series[i].culprit = pair->series[i].side[1];
		series[i].culprit_count = pair->series[i].count[1];
	}
	error = rowselect_select(selected, series, pair->count, kpi, NULL);
	if (error < 0)
		goto out;
	for (i = 0; i < pair->count; i++)
		for (j = 0; selected[i].shown && j < first->count; j++)
			if (strcmp(first->series[j].name,
				   pair->series[i].name) == 0)
				shown[j] = true;
out:
	free(series);
	free(selected);
	return error;
}

static int compare_row_order(const void *pa, const void *pb)
{
	const struct report_compare_row *a = pa, *b = pb;

	return strcmp(a->metric, b->metric);
}

int report_compare_rows(struct report_compare_row **out, size_t *count,
			const struct report_samples *pairs,
			size_t column_count, const char *kpi)
{
	const struct report_samples *first = pairs;
	struct report_compare_row *rows = NULL;
	bool *shown = NULL;
	size_t i, k, n = 0;
	int error = -ENOMEM;

	if (out == NULL || count == NULL || pairs == NULL || kpi == NULL ||
	    column_count < 2 || column_count > REPORT_COLUMNS_MAX)
		return -EINVAL;
	*out = NULL;
	*count = 0;
	rows = calloc(first->count + 1, sizeof(*rows));
	shown = calloc(first->count + 1, sizeof(*shown));
	if (rows == NULL || shown == NULL)
		goto out;
	for (k = 0; k + 1 < column_count; k++)
		if ((error = compare_select(shown, first, &pairs[k], kpi)) < 0)
			goto out;
	for (i = 0; i < first->count; i++) {
		const struct report_series *base = &first->series[i];
		struct report_compare_row *row = &rows[n];
		bool complete = base->count[0] > 0;

		if (!shown[i])
			continue;
		row->metric = base->name;
		compare_side(&row->sides[0], base->side[0], base->count[0]);
		for (k = 1; complete && k < column_count; k++) {
			const struct report_series *s =
			    compare_series(&pairs[k - 1], base->name);

			complete = s != NULL && s->count[1] > 0;
			if (complete)
				compare_side(&row->sides[k], s->side[1],
					     s->count[1]);
		}
		if (complete)
			n++;
	}
	qsort(rows, n, sizeof(*rows), compare_row_order);
	for (i = 0; i < n; i++)
		if (strcmp(rows[i].metric, kpi) == 0) {
			struct report_compare_row kpi_row = rows[i];

			memmove(&rows[1], &rows[0], i * sizeof(*rows));
			rows[0] = kpi_row;
			break;
		}
	*out = rows;
	*count = n;
	rows = NULL;
	error = 0;
out:
	free(rows);
	free(shown);
	return error;
}
