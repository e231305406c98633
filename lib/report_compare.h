/*
 * report_compare - the report of a compare job (issue 13): two to four
 * revisions measured interleaved, shown in the kernel robot's table with
 * one column per revision, each column's change against the first (the
 * robot's own layout when it compares several commits: base, culprit,
 * fix).
 *
 * Pure like report.h: data in, text out; errors are negated errno values
 * as there.  The caller cleans text from outside (report_clean_line) and
 * wraps the body into a message with report_message_render.
 */
#ifndef STATBISECT_REPORT_COMPARE_H
#define STATBISECT_REPORT_COMPARE_H

#include <stddef.h>

#include "report.h"
#include "report_build.h"

/* One revision compared: a column of the table. */
struct report_compare_column {
	const char *label;   /* "base", "culprit", "fix", or the revision as
				submitted; one line */
	const char *sha;     /* full hex sha */
	const char *subject; /* one line, or NULL */
	size_t runs;	     /* runs that gave the KPI */
	/* Against the first column (not used for the first): the KPI's
	 * change in percent of the first column's mean, and what it is
	 * (REPORT_REGRESSION, _IMPROVEMENT, _NO_CHANGE, _INCONCLUSIVE).
	 * An inconclusive column without a measurement has a NAN change,
	 * shown as its kind alone. */
	enum report_kind kind;
	double change_pct;
};

/* One metric: its side in each column, in the columns' order. */
struct report_compare_row {
	const char *metric;
	struct report_side sides[REPORT_COLUMNS_MAX];
};

struct report_compare_input {
	const char *robot_name;	  /* "statbisect robot" */
	const char *service_name; /* signature, first line */
	const char *service_url;  /* signature, second line, or NULL */
	const char *tree, *branch;
	const char *kpi;
	const char *testcase;
	const char *machine; /* or NULL */
	const struct report_param *params;
	size_t param_count;
	const struct report_compare_column *columns; /* 2..4 */
	size_t column_count;
	const struct report_compare_row *rows; /* in the order shown */
	size_t row_count;
	const char *job_url;	/* or NULL */
	const char *link_query; /* appended to the job links, or NULL */
	const char *build_cmd, *run_cmd; /* each or NULL */
	/* The benchmark's clone and export (report_bench_command), or NULL */
	const char *bench_cmd;
};

/*
 * The Subject, without "Subject: ", into a malloc'd string:
 *   "[tree:branch] compare of KPI against BASE10: SHA10 PCT% KIND, ..."
 * one "SHA10 PCT% KIND" per column after the first, PCT with its sign
 * and one decimal, KIND "regression", "improvement", "no change" or
 * "inconclusive".  -EINVAL when a field is missing or malformed.
 */
int report_compare_subject(char **out, const struct report_compare_input *in);

/*
 * The body into a malloc'd string, lines ending in "\n": the greeting,
 * "<robot> compared <kpi> on <n> revisions:", one line per revision
 * ("label: sha40 ("subject")"), the tree and branch, one verdict line
 * per column after the first, testcase, machine, runs per column and
 * parameters, "Details are as below:" and its rule, the job page, the
 * reproduce commands, the comparison block (report_put_table_head's head
 * of one column per revision, then the rows as report_format_row_columns
 * prints them), the disclaimer and the signature.
 */
int report_compare_body(char **out, const struct report_compare_input *in);

/*
 * The rows of a compare table: `pairs[k - 1]` (k from 1 to
 * column_count - 1) holds every metric's samples of the first revision
 * (side 0) and of revision k (side 1), as store_reports_samples loads
 * them.  A metric is shown when lib/rowselect.h selects it in any pair
 * (the robot's rules and a per-row test with FDR control across the rows
 * of that pair) and every revision has a run of it; the KPI first (shown
 * whenever every revision has a run of it), then the others by name.
 * Each side is the mean, the population sd in percent of |mean| and the
 * runs.  Names point into `pairs`.  *out is malloc'd (free() it), *count
 * its rows.  Returns 0, -EINVAL (column_count outside 2..4, NULL
 * arguments) or -ENOMEM.
 */
int report_compare_rows(struct report_compare_row **out, size_t *count,
			const struct report_samples *pairs,
			size_t column_count, const char *kpi);

/* "regression", "improvement", "no change" or "inconclusive". */
const char *report_compare_kind_word(enum report_kind kind);

#endif
