/*
 * report - the kernel test robot's report shape, rendered by statbisect.
 * The contracts are in report.h; the layout is REPORT_FORMAT.md's, and the
 * number formats are lkp-tests' (lib/compare.rb, show_perf_change).
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "utf8.h"

#define REPORT_PLUSMINUS "\xc2\xb1"

/* Column widths of a table row, as lkp-tests names them. */
#define REPORT_ABS_WIDTH 10
#define REPORT_REL_WIDTH 10

/* strlen("=?UTF-8?B?") + strlen("?="), spelt out: written as one literal
 * the two would contain a trigraph. */
#define REPORT_ENCODED_WORD_OVERHEAD 12

#define REPORT_LINE_SOFT 78
#define REPORT_LINE_HARD 998

/* Hands the text of `b` to *out: 0, or -ENOMEM when an append failed. */
static int report_finish(struct strbuf *b, char **out)
{
	return strbuf_finish(out, NULL, b) < 0 ? -ENOMEM : 0;
}

/* ---- checks on input text ------------------------------------------- */

/* A non-empty single line: no C0 control but TAB, no DEL. */
static bool report_is_line(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s || !*s)
		return false;
	for (; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return false;
	return true;
}

/* Multi-line text (commands): as a line, but LF is allowed. */
static bool report_is_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s || !*s)
		return false;
	for (; *p; p++)
		if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
			return false;
	return true;
}

static bool report_is_sha(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strspn(s, "0123456789abcdef");
	return s[n] == '\0' && (n == 40 || n == 64);
}

static bool report_is_optional_line(const char *s)
{
	return !s || report_is_line(s);
}

/* A commit subject: a line, possibly empty (git allows empty messages). */
static bool report_is_subject(const char *s)
{
	return s && (!*s || report_is_line(s));
}

/* ---- numbers ---------------------------------------------------------- */

int report_format_value(char *buf, size_t size, double v)
{
	double magnitude = fabs(v);
	int n;

	if (!buf || !isfinite(v))
		return -EINVAL;
	if (magnitude < 1000)
		n = snprintf(buf, size, "%.2f", v);
	else if (magnitude > 100000000)
		n = snprintf(buf, size, "%.4g", v);
	else
		n = snprintf(buf, size, "%.0f", trunc(v));
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ERANGE;
	return 0;
}

bool report_metric_is_absolute(const char *metric)
{
	size_t n = strlen(metric);

	return strncmp(metric, "perf-profile", 12) == 0 ||
	       (n > 0 && metric[n - 1] == '%');
}

static double report_change_of(const char *metric, double base, double now)
{
	if (report_metric_is_absolute(metric))
		return now - base;
	/* lkp-tests divides by 1e-100 for a base of 0, which also turns an
	 * unchanged 0 into -100%; that one is no change. */
	if (base == 0 && now == 0)
		return 0;
	if (base == 0)
		base = 1e-100;
	return 100.0 * (now - base) / fabs(base);
}

/* " ±NNN%" or six blanks. */
static void report_put_stddev(struct strbuf *b, const struct report_side *side)
{
	double pct = side->stddev_pct;

	if (side->runs > 1 && isfinite(pct) && pct > 2)
		strbuf_printf(b, " " REPORT_PLUSMINUS "%3.0f%%", trunc(pct));
	else
		strbuf_append(b, "      ");
}

/* One row of `count` columns: the first column's mean and stddev, then
 * for each further column its change against the first, its mean and
 * its stddev; two spaces and the metric.  Two columns are the robot's
 * row. */
static int report_put_row_columns(struct strbuf *b, const char *metric,
				  const struct report_side *sides,
				  const double *changes, size_t count)
{
	char value[64];
	bool absolute;
	size_t k;
	int error;

	if (!report_is_line(metric) || !sides || count < 1)
		return -EINVAL;
	for (k = 0; k < count; k++)
		if (k > 0 && !isfinite(changes[k]))
			return -EINVAL;
	absolute = report_metric_is_absolute(metric);
	for (k = 0; k < count; k++) {
		if ((error = report_format_value(value, sizeof(value),
						 sides[k].mean)) < 0)
			return error;
		if (k > 0) {
			if (fabs(changes[k]) < 100000)
				strbuf_printf(b, "%+*.1f", REPORT_REL_WIDTH,
					      changes[k]);
			else
				strbuf_printf(b, "%+*.2g", REPORT_REL_WIDTH,
					      changes[k]);
			strbuf_append(b, absolute ? "  " : "% ");
		}
		strbuf_printf(b, "%*s", REPORT_ABS_WIDTH, value);
		report_put_stddev(b, &sides[k]);
	}
	strbuf_printf(b, "  %s\n", metric);
	return 0;
}

static int report_put_row(struct strbuf *b, const char *metric,
			  const struct report_side *base,
			  const struct report_side *culprit, double change)
{
	struct report_side sides[2];
	double changes[2] = {0, change};

	if (!base || !culprit)
		return -EINVAL;
	sides[0] = *base;
	sides[1] = *culprit;
	return report_put_row_columns(b, metric, sides, changes, 2);
}

int report_format_row_columns(char **out, const char *metric,
			      const struct report_side *sides, size_t count)
{
	struct strbuf b = STRBUF_INIT;
	double changes[REPORT_COLUMNS_MAX];
	size_t k;
	int error;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!report_is_line(metric) || !sides || count < 1 ||
	    count > REPORT_COLUMNS_MAX)
		return -EINVAL;
	for (k = 0; k < count; k++) {
		if (!isfinite(sides[k].mean))
			return -EINVAL;
		changes[k] =
		    report_change_of(metric, sides[0].mean, sides[k].mean);
	}
	error = report_put_row_columns(&b, metric, sides, changes, count);
	if (error < 0) {
		strbuf_clear(&b);
		return error;
	}
	return report_finish(&b, out);
}

void report_put_table_head(struct strbuf *b, const char *const *shas,
			   size_t count)
{
	size_t k;

	for (k = 0; k < count; k++)
		strbuf_printf(b, k ? "%27.27s " : "%16.16s ", shas[k]);
	strbuf_append(b, "\n");
	for (k = 0; k < count; k++)
		strbuf_append(b, k ? "--------------------------- "
				   : "---------------- ");
	strbuf_append(b, "\n");
	for (k = 0; k < count; k++)
		strbuf_append(b, k ? "     %change         %stddev"
				   : "         %stddev");
	strbuf_append(b, "\n");
	for (k = 0; k < count; k++)
		strbuf_append(b, k ? "        |                \\  "
				   : "             \\  ");
	strbuf_append(b, "\n");
}

int report_format_row_with_change(char **out, const char *metric,
				  const struct report_side *base,
				  const struct report_side *culprit,
				  double change)
{
	struct strbuf b = STRBUF_INIT;
	int error;

	if (!out)
		return -EINVAL;
	*out = NULL;
	error = report_put_row(&b, metric, base, culprit, change);
	if (error < 0) {
		strbuf_clear(&b);
		return error;
	}
	return report_finish(&b, out);
}

int report_format_row(char **out, const char *metric,
		      const struct report_side *base,
		      const struct report_side *culprit)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!report_is_line(metric) || !base || !culprit ||
	    !isfinite(base->mean) || !isfinite(culprit->mean))
		return -EINVAL;
	return report_format_row_with_change(
	    out, metric, base, culprit,
	    report_change_of(metric, base->mean, culprit->mean));
}

/* ---- subject ---------------------------------------------------------- */

int report_subsystem(char **out, const char *subject)
{
	const char *colon, *start, *end;
	char *copy;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!subject)
		return -EINVAL;
	colon = strchr(subject, ':');
	if (!colon)
		return 0;
	start = subject;
	end = colon;
	while (start < end && (*start == ' ' || *start == '\t'))
		start++;
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (start == end)
		return 0;
	copy = malloc((size_t)(end - start) + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, start, (size_t)(end - start));
	copy[end - start] = '\0';
	*out = copy;
	return 0;
}

static bool report_is_range_kind(enum report_kind kind)
{
	return kind == REPORT_NO_CHANGE || kind == REPORT_INCONCLUSIVE;
}

/* "-12.7" for a regression (always signed), "2.7" for an improvement. */
static void report_kpi_change(char *buf, size_t size,
			      const struct report_input *in)
{
	if (in->kind == REPORT_REGRESSION)
		snprintf(buf, size, "%+.1f", in->change_pct);
	else
		snprintf(buf, size, "%.1f", fabs(in->change_pct));
}

static const char *report_kind_word(enum report_kind kind)
{
	return kind == REPORT_REGRESSION ? "regression" : "improvement";
}

static bool report_is_utf8_line(const char *s);

/* Every change of the job, when it found several: each on its own line
 * with its own direction and change (the others have reports too). */
static void report_put_changes(struct strbuf *b, const struct report_input *in)
{
	size_t i;

	if (in->change_count < 2 || in->changes == NULL)
		return;
	strbuf_printf(b,
		      "The range holds %zu changes of %s, each "
		      "reported on its own:\n\n",
		      in->change_count, in->kpi);
	for (i = 0; i < in->change_count; i++) {
		const struct report_change *c = &in->changes[i];
		struct report_input one = *in;
		char change[32];

		if (c->sha == NULL || (c->kind != REPORT_REGRESSION &&
				       c->kind != REPORT_IMPROVEMENT))
			continue;
		one.kind = c->kind;
		one.change_pct = c->change_pct;
		report_kpi_change(change, sizeof(change), &one);
		strbuf_printf(
		    b, "  %.12s %s%% %s%s%s\n", c->sha, change,
		    report_kind_word(c->kind),
		    c->subject != NULL && report_is_utf8_line(c->subject)
			? ": "
			: "",
		    c->subject != NULL && report_is_utf8_line(c->subject)
			? c->subject
			: "");
	}
	strbuf_append(b, "\n");
}

static int report_check_input(const struct report_input *in)
{
	size_t i;

	if (!in || !report_is_line(in->robot_name) ||
	    !report_is_line(in->service_name) ||
	    !report_is_optional_line(in->service_url) ||
	    !report_is_optional_line(in->robot_email) ||
	    !report_is_line(in->tree) || !report_is_line(in->branch) ||
	    !report_is_line(in->kpi) || !report_is_line(in->testcase) ||
	    !report_is_optional_line(in->machine) ||
	    !report_is_optional_line(in->commit_url) ||
	    !report_is_optional_line(in->job_url) ||
	    !report_is_optional_line(in->report_url) ||
	    !report_is_optional_line(in->link_query) ||
	    (in->checkout_cmd && !report_is_text(in->checkout_cmd)) ||
	    (in->build_cmd && !report_is_text(in->build_cmd)) ||
	    (in->run_cmd && !report_is_text(in->run_cmd)) ||
	    !report_is_optional_line(in->reason) ||
	    (in->build_log_url_count && !in->build_log_urls))
		return -EINVAL;
	for (i = 0; i < in->build_log_url_count; i++)
		if (!report_is_line(in->build_log_urls[i]))
			return -EINVAL;
	if (in->commit_line_count && !in->commit_lines)
		return -EINVAL;
	for (i = 0; i < in->commit_line_count; i++)
		if (!report_is_line(in->commit_lines[i]))
			return -EINVAL;
	if (in->param_count && !in->params)
		return -EINVAL;
	for (i = 0; i < in->param_count; i++)
		if (!report_is_line(in->params[i].key) ||
		    !in->params[i].value ||
		    (*in->params[i].value &&
		     !report_is_line(in->params[i].value)))
			return -EINVAL;
	if (in->row_count && !in->rows)
		return -EINVAL;
	for (i = 0; i < in->row_count; i++) {
		const struct report_metric_row *r = &in->rows[i];

		if (!report_is_line(r->metric) || !isfinite(r->base.mean) ||
		    !isfinite(r->culprit.mean) ||
		    (r->change_given && !isfinite(r->change)))
			return -EINVAL;
	}
	if (isnan(in->confidence) || in->confidence > 1)
		return -EINVAL;
	switch (in->kind) {
	case REPORT_REGRESSION:
	case REPORT_IMPROVEMENT:
		if (!isfinite(in->change_pct) ||
		    !report_is_sha(in->culprit_sha) ||
		    !report_is_sha(in->parent_sha) ||
		    !report_is_subject(in->culprit_subject) ||
		    !report_is_subject(in->parent_subject))
			return -EINVAL;
		break;
	case REPORT_NO_CHANGE:
	case REPORT_INCONCLUSIVE:
		if (!report_is_sha(in->good_sha) ||
		    !report_is_sha(in->bad_sha) ||
		    (in->good_subject &&
		     !report_is_subject(in->good_subject)) ||
		    (in->bad_subject && !report_is_subject(in->bad_subject)))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int report_render_subject(char **out, const struct report_input *in)
{
	struct strbuf b = STRBUF_INIT;
	char *subsystem = NULL;
	char change[64];
	int error;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if ((error = report_check_input(in)) < 0)
		goto out;

	strbuf_printf(&b, "[%s:%s] ", in->tree, in->branch);
	if (report_is_range_kind(in->kind)) {
		strbuf_printf(&b, "%s %s in %.10s..%.10s",
			      in->kind == REPORT_NO_CHANGE
				  ? "no change of"
				  : "inconclusive result for",
			      in->kpi, in->good_sha, in->bad_sha);
	} else {
		if ((error = report_subsystem(&subsystem,
					      in->culprit_subject)) < 0)
			goto out;
		if (subsystem)
			strbuf_printf(&b, "[%s] ", subsystem);
		report_kpi_change(change, sizeof(change), in);
		strbuf_printf(&b, " %.10s:  %s %s%% %s", in->culprit_sha,
			      in->kpi, change, report_kind_word(in->kind));
	}
	error = report_finish(&b, out);
out:
	free(subsystem);
	strbuf_clear(&b);
	return error;
}

/* ---- the comparison block --------------------------------------------- */

struct report_sorted_row {
	const struct report_metric_row *row;
	const char *key; /* sort key and its length */
	size_t key_len;
	size_t group_rows;
	double change;
	size_t index;
};

static size_t report_group_len(const char *metric)
{
	const char *dot = strchr(metric, '.');

	return dot ? (size_t)(dot - metric) : strlen(metric);
}

/* lkp-tests sorts perf-profile rows on their first two components only. */
static size_t report_sort_key_len(const char *metric)
{
	const char *dot;

	if (strncmp(metric, "perf-profile.", 13) != 0)
		return strlen(metric);
	dot = strchr(metric + 13, '.');
	return dot ? (size_t)(dot - metric) : strlen(metric);
}

static int report_compare_rows(const void *pa, const void *pb)
{
	const struct report_sorted_row *a = pa, *b = pb;
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int c;

	if (a->group_rows != b->group_rows)
		return a->group_rows < b->group_rows ? -1 : 1;
	c = memcmp(a->key, b->key, n);
	if (c)
		return c;
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	if (a->change != b->change)
		return a->change < b->change ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

struct report_sorted_param {
	const struct report_param *param;
	size_t index;
};

static int report_compare_params(const void *pa, const void *pb)
{
	const struct report_sorted_param *a = pa, *b = pb;
	int c = strcmp(a->param->key, b->param->key);

	if (c)
		return c;
	return a->index < b->index ? -1 : a->index > b->index;
}

static int report_put_table(struct strbuf *b, const struct report_input *in)
{
	struct report_sorted_param *params = NULL;
	struct report_sorted_row *rows = NULL;
	struct report_param testcase = {"testcase", in->testcase};
	const char *base_sha, *new_sha, *base_subject, *new_subject;
	size_t i, j, kpi_row = SIZE_MAX, count = in->param_count;
	bool have_testcase = false;
	int error = 0;

	for (i = 0; i < in->param_count; i++)
		if (strcmp(in->params[i].key, "testcase") == 0)
			have_testcase = true;
	if (!have_testcase)
		count++;
	params = calloc(count, sizeof(*params));
	rows = calloc(in->row_count ? in->row_count : 1, sizeof(*rows));
	if (!params || !rows) {
		error = -ENOMEM;
		goto out;
	}
	for (i = 0; i < count; i++) {
		params[i].param =
		    i < in->param_count ? &in->params[i] : &testcase;
		params[i].index = i;
	}
	qsort(params, count, sizeof(*params), report_compare_params);

	strbuf_append(b, "==================================================="
			 "======================================\n");
	for (i = 0; i < count; i++)
		strbuf_printf(b, "%s%s", i ? "/" : "", params[i].param->key);
	strbuf_append(b, ":\n  ");
	for (i = 0; i < count; i++)
		strbuf_printf(b, "%s%s", i ? "/" : "", params[i].param->value);
	strbuf_append(b, "\n\n");

	if (report_is_range_kind(in->kind)) {
		base_sha = in->good_sha;
		base_subject = in->good_subject;
		new_sha = in->bad_sha;
		new_subject = in->bad_subject;
	} else {
		base_sha = in->parent_sha;
		base_subject = in->parent_subject;
		new_sha = in->culprit_sha;
		new_subject = in->culprit_subject;
	}
	strbuf_append(b, "commit: \n");
	strbuf_printf(b, "  %.10s", base_sha);
	if (base_subject)
		strbuf_printf(b, " (\"%s\")", base_subject);
	strbuf_printf(b, "\n  %.10s", new_sha);
	if (new_subject)
		strbuf_printf(b, " (\"%s\")", new_subject);
	strbuf_append(b, "\n\n");
	report_put_table_head(b, (const char *const[]){base_sha, new_sha}, 2);

	for (i = 0; i < in->row_count; i++) {
		const struct report_metric_row *r = &in->rows[i];
		size_t group_len = report_group_len(r->metric);

		rows[i].row = r;
		rows[i].key = r->metric;
		rows[i].key_len = report_sort_key_len(r->metric);
		rows[i].index = i;
		rows[i].change =
		    r->change_given ? r->change
				    : report_change_of(r->metric, r->base.mean,
						       r->culprit.mean);
		for (j = 0; j < in->row_count; j++)
			if (report_group_len(in->rows[j].metric) ==
				group_len &&
			    memcmp(in->rows[j].metric, r->metric, group_len) ==
				0)
				rows[i].group_rows++;
	}
	qsort(rows, in->row_count, sizeof(*rows), report_compare_rows);

	for (i = 0; in->kpi_row_first && i < in->row_count; i++) {
		const struct report_metric_row *r = rows[i].row;

		if (strcmp(r->metric, in->kpi) == 0) {
			error = report_put_row(b, r->metric, &r->base,
					       &r->culprit, rows[i].change);
			if (error < 0)
				goto out;
			kpi_row = i;
			break;
		}
	}
	for (i = 0; i < in->row_count; i++) {
		const struct report_metric_row *r = rows[i].row;

		if (i == kpi_row)
			continue;
		error = report_put_row(b, r->metric, &r->base, &r->culprit,
				       rows[i].change);
		if (error < 0)
			goto out;
	}
out:
	free(params);
	free(rows);
	return error;
}

int report_render_table(char **out, const struct report_input *in)
{
	struct strbuf b = STRBUF_INIT;
	int error;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if ((error = report_check_input(in)) < 0)
		return error;
	if ((error = report_put_table(&b, in)) < 0) {
		strbuf_clear(&b);
		return error;
	}
	return report_finish(&b, out);
}

/* ---- the body --------------------------------------------------------- */

void report_put_command(struct strbuf *b, const char *cmd)
{
	const char *line = cmd, *nl;

	while (*line) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		if (nl > line) {
			strbuf_append(b, "\t");
			strbuf_appendn(b, line, (size_t)(nl - line));
		}
		strbuf_append(b, "\n");
		line = *nl ? nl + 1 : nl;
	}
}

static void report_put_testcase(struct strbuf *b,
				const struct report_input *in)
{
	bool range = report_is_range_kind(in->kind);
	size_t i;

	strbuf_printf(b, "testcase: %s\n", in->testcase);
	if (in->machine)
		strbuf_printf(b, "test machine: %s\n", in->machine);
	strbuf_printf(b, "runs: %zu (%s) / %zu (%s)", in->base_runs,
		      range ? "good" : "parent", in->culprit_runs,
		      range ? "bad" : "culprit");
	if (in->confidence >= 0)
		strbuf_printf(b, ", confidence: %.1f%%",
			      floor(in->confidence * 1000 + 1e-6) / 10);
	strbuf_append(b, "\n");
	if (in->change_ci95_given && isfinite(in->change_pct) &&
	    isfinite(in->change_ci95_lo) && isfinite(in->change_ci95_hi))
		strbuf_printf(b,
			      "change: %+.1f%% (95%% CI %+.1f%% to "
			      "%+.1f%%)\n",
			      in->change_pct, in->change_ci95_lo,
			      in->change_ci95_hi);
	if (in->param_count) {
		strbuf_append(b, "parameters:\n\n");
		for (i = 0; i < in->param_count; i++)
			strbuf_printf(b, "\t%s: %s\n", in->params[i].key,
				      in->params[i].value);
	}
}

void report_put_job_links(struct strbuf *b, const char *job_url,
			  const char *link_query)
{
	const char *query = link_query ? link_query : "";

	strbuf_printf(b,
		      "The job page and the raw runs are available at:\n"
		      "%s%s\n%s/runs.csv%s\n%s/runs.json%s\n\n",
		      job_url, query, job_url, query, job_url, query);
}

static void report_put_reproduce(struct strbuf *b,
				 const struct report_input *in)
{
	if (in->job_url)
		report_put_job_links(b, in->job_url, in->link_query);
	if (in->build_log_url_count > 0) {
		size_t i;

		strbuf_append(b, "Build logs of the commits that did not "
				 "build (skipped):\n");
		for (i = 0; i < in->build_log_url_count; i++)
			strbuf_printf(b, "%s\n", in->build_log_urls[i]);
		strbuf_append(b, "\n");
	}
	if (in->checkout_cmd || in->build_cmd || in->run_cmd) {
		strbuf_append(b, "To reproduce:\n\n");
		if (in->checkout_cmd)
			report_put_command(b, in->checkout_cmd);
		if (in->build_cmd)
			report_put_command(b, in->build_cmd);
		if (in->run_cmd)
			report_put_command(b, in->run_cmd);
		strbuf_append(b, "\n");
	}
}

/* `lead`, `text` and a period, wrapped at spaces to lines of at most 72
 * columns (a longer word stays whole), then a blank line. */
static void report_put_wrapped(struct strbuf *b, const char *lead,
			       const char *text)
{
	size_t column = 0, len;
	const char *word;
	char *all = NULL;

	if (asprintf(&all, "%s%s.", lead, text) < 0) {
		b->failed = true;
		return;
	}
	for (word = all; *word != '\0'; word += len) {
		while (*word == ' ')
			word++;
		len = strcspn(word, " ");
		if (len == 0)
			break;
		if (column > 0 && column + 1 + len > 72) {
			strbuf_append(b, "\n");
			column = 0;
		} else if (column > 0) {
			strbuf_append(b, " ");
			column++;
		}
		strbuf_printf(b, "%.*s", (int)len, word);
		column += len;
	}
	strbuf_append(b, "\n\n");
	free(all);
}

/* A patch report's url/base/patch lines, then a blank line. */
static void report_put_lines(struct strbuf *b, const struct report_input *in)
{
	size_t i;

	for (i = 0; i < in->commit_line_count; i++)
		strbuf_printf(b, "%s\n", in->commit_lines[i]);
	strbuf_append(b, "\n");
}

static void report_put_commit_line(struct strbuf *b, const char *label,
				   const char *sha, const char *subject)
{
	strbuf_printf(b, "%s%s", label, sha);
	if (subject)
		strbuf_printf(b, " (\"%s\")", subject);
	strbuf_append(b, "\n");
}

int report_render_body(char **out, const struct report_input *in)
{
	struct strbuf b = STRBUF_INIT;
	bool range;
	char change[64];
	int error;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if ((error = report_check_input(in)) < 0)
		goto out;
	range = report_is_range_kind(in->kind);

	strbuf_append(&b, "\nHello,\n\n");
	if (in->kind == REPORT_NO_CHANGE) {
		strbuf_printf(&b, "%s noticed no change of %s between:\n\n\n",
			      in->robot_name, in->kpi);
	} else if (in->kind == REPORT_INCONCLUSIVE) {
		strbuf_printf(&b,
			      "%s could not decide whether %s changed "
			      "between:\n\n\n",
			      in->robot_name, in->kpi);
	} else {
		report_kpi_change(change, sizeof(change), in);
		strbuf_printf(&b, "%s noticed a %s%% %s of %s on:\n\n\n",
			      in->robot_name, change,
			      report_kind_word(in->kind), in->kpi);
	}

	if (range) {
		report_put_commit_line(&b, "good: ", in->good_sha,
				       in->good_subject);
		report_put_commit_line(&b, "bad:  ", in->bad_sha,
				       in->bad_subject);
		if (in->commit_line_count > 0)
			report_put_lines(&b, in);
		else
			strbuf_printf(&b, "%s %s\n\n", in->tree, in->branch);
		if (in->kind == REPORT_NO_CHANGE)
			strbuf_append(&b,
				      "The two ends of the range perform the "
				      "same within the testcase's margin,\n"
				      "so no commit was bisected.\n\n");
		else if (in->reason)
			report_put_wrapped(
			    &b, "No commit was bisected: ", in->reason);
		else
			strbuf_append(&b,
				      "The runs could neither tell the two "
				      "ends of the range apart nor show\n"
				      "them to be the same within the "
				      "allowed number of runs, so no commit\n"
				      "was bisected.  More runs or a quieter "
				      "machine may decide it.\n\n");
	} else {
		report_put_commit_line(&b, "commit: ", in->culprit_sha,
				       in->culprit_subject);
		if (in->commit_line_count > 0)
			report_put_lines(&b, in);
		else
			strbuf_printf(&b, "%s %s%s\n\n",
				      in->commit_url ? in->commit_url
						     : in->tree,
				      in->branch_watched ? "in branch " : "",
				      in->branch);
		report_put_changes(&b, in);
	}

	report_put_testcase(&b, in);
	strbuf_append(&b, "\n\n");

	if (in->kind == REPORT_REGRESSION) {
		strbuf_append(&b, "If you fix the issue in a separate "
				  "patch/commit (i.e. not just a new version "
				  "of\nthe same patch/commit), kindly add "
				  "following tags\n");
		strbuf_printf(&b, "| Reported-by: %s", in->robot_name);
		if (in->robot_email)
			strbuf_printf(&b, " <%s>", in->robot_email);
		strbuf_append(&b, "\n");
		if (in->report_url)
			strbuf_printf(&b, "| Closes: %s\n", in->report_url);
		strbuf_append(&b, "\n\n");
	}

	strbuf_append(&b, "Details are as below:\n");
	strbuf_append(&b, "-------------------------------------------------"
			  "-------------------------------------------------"
			  ">\n\n\n");
	report_put_reproduce(&b, in);
	if ((error = report_put_table(&b, in)) < 0)
		goto out;

	strbuf_append(&b, "\n\nDisclaimer:\n");
	if (in->machine)
		strbuf_append(&b, "Results were measured on the test "
				  "machine named above and are provided for\n"
				  "informational purposes only.");
	else
		strbuf_append(&b, "Results were measured on a statbisect "
				  "test machine and are provided for\n"
				  "informational purposes only.");
	strbuf_append(&b, " Benchmark results are noisy: the table gives "
			  "the\nmean of each side and its standard "
			  "deviation.  Any difference in hardware,\n"
			  "software, configuration or load may change "
			  "the results.\n\n\n");
	strbuf_printf(&b, "-- \n%s\n", in->service_name);
	if (in->service_url)
		strbuf_printf(&b, "%s\n", in->service_url);
	error = report_finish(&b, out);
out:
	strbuf_clear(&b);
	return error;
}

/* ---- the message ------------------------------------------------------ */

static bool report_is_wsp(char c)
{
	return c == ' ' || c == '\t';
}

/* Printable ASCII and blanks only: no CR, LF or other control. */
static bool report_is_header_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s || !*s)
		return false;
	for (; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p >= 0x7f)
			return false;
	return true;
}

/* Valid UTF-8 without C0 controls (TAB aside) and DEL. */
static bool report_is_utf8_line(const char *s)
{
	size_t n;

	for (; *s != '\0'; s += n) {
		unsigned char c = (unsigned char)*s;

		n = utf8_char_len(s, 4);
		if (n == 0 || (c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

static bool report_is_atext(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-/=?^_`{|}~", c));
}

/* local@domain: dot-atom local part, LDH labels; `n` bytes of `s`. */
static bool report_is_addr_spec(const char *s, size_t n)
{
	const char *at = memchr(s, '@', n);
	size_t local_len, i, label = 0;
	const char *domain;
	size_t domain_len;

	if (!at || n > 254)
		return false;
	local_len = (size_t)(at - s);
	if (local_len == 0 || local_len > 64 || s[0] == '.' ||
	    s[local_len - 1] == '.')
		return false;
	for (i = 0; i < local_len; i++) {
		if (s[i] == '.' && s[i + 1] == '.')
			return false;
		if (s[i] != '.' && !report_is_atext(s[i]))
			return false;
	}
	domain = at + 1;
	domain_len = n - local_len - 1;
	if (domain_len == 0 || domain_len > 253)
		return false;
	for (i = 0; i <= domain_len; i++) {
		char c = i < domain_len ? domain[i] : '.';

		if (c == '.') {
			if (label == 0 || domain[i - 1] == '-' ||
			    domain[i - label] == '-' || label > 63)
				return false;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '-') {
			label++;
		} else {
			return false;
		}
	}
	return true;
}

bool report_address_is_valid(const char *address)
{
	return address && report_is_addr_spec(address, strlen(address));
}

static bool report_is_address(const char *s)
{
	return report_address_is_valid(s);
}

/* "<left@right>" with no blanks, controls or further angle brackets. */
static bool report_is_msg_id(const char *s)
{
	size_t n, i;

	if (!s || !report_is_header_text(s))
		return false;
	n = strlen(s);
	if (n < 5 || s[0] != '<' || s[n - 1] != '>' || !memchr(s, '@', n))
		return false;
	for (i = 1; i + 1 < n; i++)
		if (report_is_wsp(s[i]) || s[i] == '<' || s[i] == '>')
			return false;
	return s[1] != '@' && s[n - 2] != '@';
}

/* "addr" or "Name <addr>", ASCII; the name is quoted when it must be. */
static int report_put_from(struct strbuf *b, const char *from)
{
	const char *lt, *name_start, *name_end, *p;
	bool plain = true;
	size_t addr_len;

	if (!report_is_header_text(from))
		return -EINVAL;
	lt = strrchr(from, '<');
	if (!lt) {
		if (!report_is_address(from))
			return -EINVAL;
		strbuf_append(b, from);
		return 0;
	}
	addr_len = strlen(lt + 1);
	if (addr_len < 2 || lt[addr_len] != '>' ||
	    !report_is_addr_spec(lt + 1, addr_len - 1))
		return -EINVAL;
	name_start = from;
	name_end = lt;
	while (name_end > name_start && report_is_wsp(name_end[-1]))
		name_end--;
	while (name_start < name_end && report_is_wsp(*name_start))
		name_start++;
	for (p = name_start; p < name_end; p++) {
		if (*p == '<' || *p == '>')
			return -EINVAL;
		if (!report_is_atext(*p) && *p != ' ')
			plain = false;
	}
	if (name_end > name_start) {
		if (plain) {
			strbuf_appendn(b, name_start,
				       (size_t)(name_end - name_start));
		} else {
			strbuf_append(b, "\"");
			for (p = name_start; p < name_end; p++) {
				if (*p == '"' || *p == '\\')
					strbuf_append(b, "\\");
				strbuf_appendn(b, p, 1);
			}
			strbuf_append(b, "\"");
		}
		strbuf_append(b, " ");
	}
	strbuf_append(b, lt);
	return 0;
}

/*
 * Append the header line `line` (no CR or LF) folded before blanks so that
 * lines stay within 78 octets where a blank allows it.  A fold never comes
 * before the value's first word or after its last one.
 */
static int report_put_folded(struct strbuf *b, const char *line,
			     size_t value_start)
{
	size_t len = strlen(line), start = 0, last_word = 0, i, fold;
	bool seen_word;

	for (i = value_start; i < len; i++)
		if (!report_is_wsp(line[i]))
			last_word = i;
	while (len - start > REPORT_LINE_SOFT) {
		fold = 0;
		seen_word = false;
		for (i = start ? start : value_start; i < last_word; i++) {
			if (!report_is_wsp(line[i])) {
				seen_word = true;
				continue;
			}
			if (!seen_word)
				continue;
			if (i - start <= REPORT_LINE_SOFT || !fold)
				fold = i;
			if (i - start > REPORT_LINE_SOFT)
				break;
		}
		if (!fold)
			break;
		if (fold - start > REPORT_LINE_HARD)
			return -E2BIG;
		strbuf_appendn(b, line + start, fold - start);
		strbuf_append(b, "\r\n");
		start = fold;
	}
	if (len - start > REPORT_LINE_HARD)
		return -E2BIG;
	strbuf_appendn(b, line + start, len - start);
	strbuf_append(b, "\r\n");
	return 0;
}

static int report_put_header(struct strbuf *b, const char *name,
			     const char *value)
{
	struct strbuf line = STRBUF_INIT;
	int error;

	strbuf_printf(&line, "%s: %s", name, value);
	if ((error = strbuf_failed(&line) ? -ENOMEM : 0) == 0)
		error = report_put_folded(b, line.data, strlen(name) + 2);
	strbuf_clear(&line);
	return error;
}

/*
 * Subject as RFC 2047 "B" encoded words of at most 75 octets, one per
 * line, each line within 78 octets, never splitting a UTF-8 sequence.
 */
static void report_put_encoded_subject(struct strbuf *b, const char *subject)
{
	const unsigned char *s = (const unsigned char *)subject;
	size_t n = strlen(subject), pos = 0, room, take;
	bool first = true;

	while (pos < n) {
		room = first ? REPORT_LINE_SOFT - strlen("Subject: ")
			     : REPORT_LINE_SOFT - 1;
		if (room > 75)
			room = 75;
		take = (room - REPORT_ENCODED_WORD_OVERHEAD) / 4 * 3;
		if (take > n - pos)
			take = n - pos;
		while (pos + take < n && (s[pos + take] & 0xc0) == 0x80)
			take--;
		strbuf_append(b,
			      first ? "Subject: =?UTF-8?B?" : " =?UTF-8?B?");
		strbuf_base64(b, s + pos, take);
		strbuf_append(b, "?=\r\n");
		pos += take;
		first = false;
	}
}

static int report_put_address_list(struct strbuf *b, const char *name,
				   const char *const *list, size_t count)
{
	struct strbuf value = STRBUF_INIT;
	size_t i;
	int error = 0;

	for (i = 0; i < count; i++) {
		if (!report_is_address(list[i])) {
			error = -EINVAL;
			goto out;
		}
		strbuf_printf(&value, "%s%s", i ? ", " : "", list[i]);
	}
	if ((error = strbuf_failed(&value) ? -ENOMEM : 0) == 0)
		error = report_put_header(b, name, value.data);
out:
	strbuf_clear(&value);
	return error;
}

int report_message_render(char **out, const struct report_message *msg)
{
	struct strbuf b = STRBUF_INIT;
	struct strbuf from = STRBUF_INIT;
	int error;

	if (!out)
		return -EINVAL;
	*out = NULL;
	error = -EINVAL;
	if (!msg || !msg->to || msg->to_count == 0 ||
	    (msg->cc_count && !msg->cc) || !msg->subject || !msg->body ||
	    !report_is_header_text(msg->date) ||
	    !report_is_msg_id(msg->message_id) ||
	    (msg->in_reply_to && !report_is_msg_id(msg->in_reply_to)) ||
	    !*msg->subject || !report_is_utf8_line(msg->subject))
		goto out;

	if ((error = report_put_header(&b, "Date", msg->date)) < 0 ||
	    (error = report_put_from(&from, msg->from)) < 0 ||
	    (error = strbuf_failed(&from) ? -ENOMEM : 0) < 0 ||
	    (error = report_put_header(&b, "From", from.data)) < 0 ||
	    (error = report_put_address_list(&b, "To", msg->to,
					     msg->to_count)) < 0)
		goto out;
	if (msg->cc_count && (error = report_put_address_list(
				  &b, "Cc", msg->cc, msg->cc_count)) < 0)
		goto out;

	if (!report_is_header_text(msg->subject) || strstr(msg->subject, "=?"))
		report_put_encoded_subject(&b, msg->subject);
	else if ((error = report_put_header(&b, "Subject", msg->subject)) < 0)
		goto out;

	if ((error = report_put_header(&b, "Message-ID", msg->message_id)) < 0)
		goto out;
	if (msg->in_reply_to &&
	    ((error = report_put_header(&b, "In-Reply-To", msg->in_reply_to)) <
		 0 ||
	     (error = report_put_header(&b, "References", msg->in_reply_to)) <
		 0))
		goto out;
	strbuf_append(&b, "MIME-Version: 1.0\r\n"
			  "Content-Type: text/plain; charset=utf-8\r\n"
			  "Content-Transfer-Encoding: 8bit\r\n"
			  "\r\n");
	if (strbuf_crlf(&b, msg->body, strlen(msg->body), REPORT_LINE_HARD) <
	    0) {
		error = -E2BIG;
		goto out;
	}
	error = report_finish(&b, out);
out:
	strbuf_clear(&from);
	strbuf_clear(&b);
	return error;
}
