/*
 * report - render statbisect's reports in the shape of the Linux kernel test
 * robot's performance reports, and wrap them into RFC 5322 messages.
 *
 * Everything here is pure: data in, text out.  No I/O, no clock, no global
 * state; the caller passes the date and the Message-ID.  The format is the
 * one measured in ../shared/REPORT_FORMAT.md from the robot's seed reports,
 * checked byte for byte against those seeds by tests/unit/test_report.c.
 *
 * Errors: every function returns 0 on success or a negated errno value:
 *   -EINVAL  an argument is missing, malformed, or not finite;
 *   -ENOMEM  an allocation failed;
 *   -ERANGE  a caller-supplied buffer is too small;
 *   -E2BIG   a message line cannot be kept within 998 octets.
 * On error nothing is allocated and `*out`, when there is one, is NULL.
 * Strings returned through `out` are malloc'd; the caller frees them with
 * free().
 */
#ifndef STATBISECT_REPORT_H
#define STATBISECT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * One side (parent or culprit) of a table row.  `stddev_pct` is the
 * population standard deviation as a percent of |mean| (>= 0); it is shown
 * only when `runs` > 1 and `stddev_pct` > 2, truncated to an integer (so the
 * smallest shown is "±  2%").  A NaN or infinite stddev_pct is not shown.
 */
struct report_side {
	double mean;
	double stddev_pct;
	size_t runs;
};

/*
 * Format a mean the way the robot does, without padding: magnitude below
 * 1000 with two decimals ("1.58"), above 100,000,000 with four significant
 * digits ("5.444e+08"), otherwise the integer part, truncated ("294621").
 * Writes a NUL-terminated string into `buf` of `size` bytes (16 always
 * suffices for finite values below 1e100).  Returns -EINVAL for a NULL
 * buffer or a value that is not finite, -ERANGE if `size` is too small.
 */
int report_format_value(char *buf, size_t size, double v);

/*
 * True when the metric's change is shown as the absolute difference of the
 * means rather than a percent: names starting with "perf-profile" or ending
 * in "%".  `metric` must not be NULL.
 */
bool report_metric_is_absolute(const char *metric);

/*
 * Render one table row, with its trailing newline, into a malloc'd string:
 * base mean (10 columns), base stddev (6), change (12), culprit mean (10),
 * culprit stddev (6), two spaces, metric.  The change is
 * 100 * (culprit - base) / |base| with one decimal and "%" (a base of 0 is
 * replaced by 1e-100, as the robot does, except that 0 to 0 is "+0.0%";
 * the robot divides by the signed base), or culprit - base for absolute
 * metrics (see report_metric_is_absolute); from a magnitude of 100,000 on it
 * is printed with two significant digits ("+4e+05%").  "±" is written as
 * UTF-8.  Returns -EINVAL if `metric` is NULL, empty or holds a control
 * character, or a mean is not finite.
 */
int report_format_row(char **out, const char *metric,
		      const struct report_side *base,
		      const struct report_side *culprit);

/*
 * As report_format_row, but prints `change` (a percent, or an absolute
 * difference for absolute metrics) instead of computing it from the means.
 * For callers that hold the change of the unrounded means, and for golden
 * tests fed with rounded means.  `change` must be finite.
 */
int report_format_row_with_change(char **out, const char *metric,
				  const struct report_side *base,
				  const struct report_side *culprit,
				  double change);

/* The most columns (revisions) of one table: a compare job's. */
#define REPORT_COLUMNS_MAX 4

/*
 * A row of `count` columns (1 to REPORT_COLUMNS_MAX), as the robot prints
 * a comparison of several commits: the first column's mean and stddev,
 * then for each further column its change against the first (computed
 * as report_format_row does), its mean and its stddev, then two spaces
 * and the metric.  With two columns it is report_format_row's row byte
 * for byte.  Returns -EINVAL as report_format_row does.
 */
int report_format_row_columns(char **out, const char *metric,
			      const struct report_side *sides, size_t count);

struct strbuf;
/*
 * Appends the table head of `count` columns to `b`: each sha's first 16
 * (the first column) or 27 characters and a space, the dashes likewise,
 * "%stddev" over the first column and "%change %stddev" over each other,
 * and the line of '\' and '|' under them.  For report_compare.c.
 */
void report_put_table_head(struct strbuf *b, const char *const *shas,
			   size_t count);

/* Appends command `cmd`, each of its lines indented by a tab (an empty
 * line stays empty).  For report_compare.c too. */
void report_put_command(struct strbuf *b, const char *cmd);

/* Appends "The job page and the raw runs are available at:" and the links
 * to the page, runs.csv and runs.json of `job_url`, each with
 * `link_query` (NULL: none), and a blank line.  For report_compare.c too. */
void report_put_job_links(struct strbuf *b, const char *job_url,
			  const char *link_query);

/*
 * The subsystem of a commit subject: the text before its first ':', with
 * surrounding blanks removed ("net: udp: x" -> "net", "mm, swap: x" ->
 * "mm, swap", "x86/mm/tlb: x" -> "x86/mm/tlb").  When the subject has no
 * colon, or nothing but blanks before it, sets `*out` to NULL and returns 0.
 * Returns -EINVAL for a NULL subject.
 */
int report_subsystem(char **out, const char *subject);

enum report_kind {
	REPORT_REGRESSION,
	REPORT_IMPROVEMENT,
	REPORT_NO_CHANGE,
	REPORT_INCONCLUSIVE
};

struct report_param {
	const char *key;
	const char *value;
};

/*
 * One table row: parent (base) vs culprit, or good vs bad for the
 * no-change and inconclusive reports.  When `change_given` is true,
 * `change` is printed instead of the change computed from the means (see
 * report_format_row_with_change) and is also the sort key.
 */
struct report_metric_row {
	const char *metric;
	struct report_side base;
	struct report_side culprit;
	bool change_given;
	double change;
};

/*
 * Everything a report says.  Strings are UTF-8 and, except the three
 * commands, non-empty single lines (no CR, LF or other control but TAB);
 * commit subjects and parameter values may be empty.  Fields marked "or
 * NULL" are optional; the others are required for the kinds that use them.
 */
/* One of several changes a job found (regression or improvement). */
struct report_change {
	const char *sha;     /* full hex sha */
	const char *subject; /* one line, or NULL */
	enum report_kind kind;
	double change_pct;
};

struct report_input {
	const char *robot_name;	  /* "statbisect robot" */
	const char *robot_email;  /* for Reported-by, or NULL */
	const char *service_name; /* signature, first line */
	const char *service_url;  /* signature, second line, or NULL */
	const char *tree;	  /* "[tree:branch]" in the subject */
	const char *branch;
	bool branch_watched; /* the robot found it on the branch: the commit
				line says "in branch <branch>" */
	enum report_kind kind;
	const char *kpi;
	double change_pct; /* KPI mean, culprit vs parent, percent */
	/* regression and improvement: full hex shas (40 or 64 digits) */
	const char *culprit_sha, *culprit_subject;
	const char *parent_sha, *parent_subject;
	const char *commit_url; /* web link to the culprit, or NULL */
	const char *testcase;
	const char *machine; /* "48 threads 2 sockets ...", or NULL */
	const struct report_param *params; /* in the order to list them */
	size_t param_count;
	const struct report_metric_row *rows; /* selected by the caller */
	size_t row_count;
	bool kpi_row_first;  /* see report_render_table */
	const char *job_url; /* or NULL; raw runs: +"/runs.csv", ".json" */
	/* appended to the job page and raw-run links ("?key=..."), or NULL */
	const char *link_query;
	const char *report_url; /* Closes: tag of regressions, or NULL */
	const char *checkout_cmd, *build_cmd, *run_cmd; /* each or NULL */
	size_t base_runs, culprit_runs;
	double confidence; /* 0..1, or negative when unknown */
	/* The 95% interval of change_pct, shown after the runs line as
	 * "change: -5.0% (95% CI -6.2% to -3.8%)" when change_ci95_given. */
	bool change_ci95_given;
	double change_ci95_lo, change_ci95_hi;
	/* no-change and inconclusive: the range compared */
	const char *good_sha, *bad_sha;
	const char *good_subject, *bad_subject; /* each or NULL */
	/* inconclusive: why no commit was bisected (one line, no final
	 * period), or NULL for the general sentence about noise */
	const char *reason;
	/* the build logs of commits that did not build, URLs, or NULL */
	const char *const *build_log_urls;
	size_t build_log_url_count;
	/* regression and improvement: every change the job found, oldest
	 * first, listed when there is more than one (each with its own
	 * direction and change); else NULL / 0 */
	const struct report_change *changes;
	size_t change_count;
	/* A report on a patch: the lines shown under the commit line in
	 * place of its link and branch ("url: ...", "base: ...", "patch
	 * link: ...", "patch subject: ..."), each a line; or NULL / 0. */
	const char *const *commit_lines;
	size_t commit_line_count;
};

/*
 * The Subject of a report, without the "Subject: " name, into a malloc'd
 * string.  Regression / improvement:
 *   "[tree:branch] [subsys]  sha10:  kpi PCT% kind"
 * with the "[subsys] " part left out when the culprit subject has no colon.
 * PCT has one decimal; a regression always shows its sign ("-12.7%",
 * "+8.8%" for a lower-is-better KPI), an improvement shows the magnitude
 * without a sign ("2.7%").  No change / inconclusive:
 *   "[tree:branch] no change of kpi in good10..bad10"
 *   "[tree:branch] inconclusive result for kpi in good10..bad10"
 * Returns -EINVAL when a field the kind needs is missing or malformed.
 */
int report_render_subject(char **out, const struct report_input *in);

/*
 * The comparison block (section 8 of REPORT_FORMAT.md) into a malloc'd
 * string: a rule of 89 '=', the parameter names sorted and joined by '/'
 * (a "testcase" parameter is added from in->testcase unless one is given,
 * as in the robot's header) and their values, "commit: " and the two
 * commits, the 16/27-column sha header, the two fixed header lines, then
 * the rows, each ending in a newline.  Rows are ordered as the robot orders
 * them (verified on the seeds): groups (the metric's text before its first
 * '.') with fewer rows first, then by name; perf-profile rows by their
 * first two name components and then by ascending change; remaining ties
 * keep the input order.  With in->kpi_row_first the row named in->kpi is
 * printed first instead.  Base and culprit are parent and culprit, or good
 * and bad for no-change / inconclusive reports.
 */
int report_render_table(char **out, const struct report_input *in);

/*
 * The body of a report into a malloc'd string, lines ending in "\n".
 * Regression / improvement, in order: greeting; "<robot> noticed a PCT%
 * kind of kpi on:"; the culprit commit line and "<commit_url> <branch>"
 * ("<tree> <branch>" without a link); testcase, test machine, the number
 * of runs per side and the confidence, parameters; for regressions the
 * "| Reported-by:" / "| Closes:" tags; "Details are as below:" and its
 * rule; the job page and raw-run URLs and the checkout, build and run
 * commands; the comparison block; the disclaimer; "-- " and the signature.
 * No change / inconclusive: the same voice and layout with the range (good
 * and bad) in place of the culprit, a sentence saying what was found (for
 * an inconclusive one with `reason`: "No commit was bisected: <reason>.",
 * wrapped at 72 columns), and the rows (normally just the KPI, good vs
 * bad) in the same table layout.  With `build_log_urls`, "Details" lists
 * them after the job page, under "Build logs of the commits that did not
 * build (skipped):".
 */
int report_render_body(char **out, const struct report_input *in);

/*
 * An email.  `from` is "addr@host" or "Display Name <addr@host>" (ASCII);
 * each of `to` and `cc` is a plain addr-spec ("local@domain.tld", dot-atom
 * local part, LDH domain labels).  `date` is an RFC 5322 date given by the
 * caller; `message_id` and `in_reply_to` are "<left@right>".
 */
struct report_message {
	const char *from;
	const char *const *to;
	size_t to_count;
	const char *const *cc; /* or NULL */
	size_t cc_count;
	const char *date;
	const char *message_id;
	const char *in_reply_to; /* or NULL; also sent as References */
	const char *subject;	 /* UTF-8 */
	const char *body;	 /* UTF-8, "\n" or "\r\n" line ends */
};

/*
 * True when `address` is a plain addr-spec as report_message_render accepts
 * it for To and Cc: "local@domain", the local part a dot-atom of at most 64
 * octets, the domain LDH labels joined by dots; no display name, no angle
 * brackets, no blanks, no quotes, no controls, ASCII only.  For refusing a
 * notify address when a job is submitted rather than when its report is
 * sent.  NULL is not valid.
 */
bool report_address_is_valid(const char *address);

/*
 * Render `msg` as an RFC 5322 message into a malloc'd string with CRLF
 * line ends throughout.  Headers, in order: Date, From, To, Cc (when
 * given), Subject, Message-ID, In-Reply-To and References (when given),
 * MIME-Version: 1.0, Content-Type: text/plain; charset=utf-8,
 * Content-Transfer-Encoding: 8bit; then a blank line and the body.  A
 * Subject that is not plain ASCII (or holds "=?") is sent as RFC 2047
 * "=?UTF-8?B?...?=" encoded words.  Header lines longer than 78 octets are
 * folded before a blank (the continuation starts with that blank).  Body
 * lines are kept as they are (no dot-stuffing: that is the SMTP layer's);
 * every line end becomes CRLF and the body ends with one.
 *
 * Returns -EINVAL for a missing field, no recipient, a header value holding
 * CR, LF or another control character (header injection), a recipient or
 * sender that is not a plain address, an id not of the form "<a@b>", or a
 * subject that is not valid UTF-8; -E2BIG for a header that cannot be
 * folded within 998 octets or a body line longer than 998 octets.
 */
int report_message_render(char **out, const struct report_message *msg);

#endif
