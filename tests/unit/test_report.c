/*
 * Tests of lib/report.c.  The golden data in tests/unit/data/ are copies of
 * the three seed reports of ../shared/seeds/; in report-mainline-udp.txt the
 * table's "?" (a mis-decoded "±") is written back as UTF-8 "±", nothing
 * else differs.
 */
/* cmocka.h needs these first; its own block keeps clang-format from
 * sorting it above them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define PM "\xc2\xb1"

/* ---- golden data ------------------------------------------------------ */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	text = malloc((size_t)size + 1);
	if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
		free(text);
		text = NULL;
	}
	if (text)
		text[size] = '\0';
	fclose(f);
	return text;
}

/* tests/unit/data/<name>, found from $STATBISECT_TEST_DATA, the checkout's
 * top directory, or beside this source file. */
static char *read_data(const char *name)
{
	const char *env = getenv("STATBISECT_TEST_DATA");
	const char *slash = strrchr(__FILE__, '/');
	char path[4096];
	char *text = NULL;

	if (env) {
		snprintf(path, sizeof(path), "%s/%s", env, name);
		text = read_file(path);
	}
	if (!text) {
		snprintf(path, sizeof(path), "tests/unit/data/%s", name);
		text = read_file(path);
	}
	if (!text && slash) {
		snprintf(path, sizeof(path), "%.*s/data/%s",
			 (int)(slash - __FILE__), __FILE__, name);
		text = read_file(path);
	}
	if (!text)
		print_error("golden data %s not found\n", name);
	assert_non_null(text);
	return text;
}

struct seed_row {
	const char *line; /* without its newline */
	char metric[256];
	struct report_side base, culprit;
	double change;
	bool relative;
	/* as printed, for the rounding check */
	char base_text[32], culprit_text[32], change_text[32];
};

struct seed {
	char *text;
	char **lines;
	size_t line_count;
	size_t rule;	  /* index of the "=====" line */
	size_t first_row; /* index of the first table row */
	size_t row_count;
	struct seed_row *rows;
};

static const char *skip_blanks(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* Copy the next blank-delimited token of *p into buf. */
static void take_token(const char **p, char *buf, size_t size)
{
	const char *s = skip_blanks(*p), *e = s;

	while (*e && *e != ' ')
		e++;
	assert_true((size_t)(e - s) < size && e > s);
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = '\0';
	*p = e;
}

/* An optional " ±NN%": the stddev shown, fed back as NN + 0.5 so that the
 * renderer's truncation gives NN again (the robot shows a stddev when it is
 * above 2, truncated: "±  2%" is a stddev between 2 and 3). */
static void take_stddev(const char **p, struct report_side *side)
{
	const char *s = skip_blanks(*p);
	char *end;
	long shown;

	side->runs = 3;
	side->stddev_pct = 0;
	if (strncmp(s, PM, 2) != 0) {
		/* not shown: six blanks */
		assert_true(strncmp(*p, "      ", 6) == 0);
		*p += 6;
		return;
	}
	s = skip_blanks(s + 2);
	shown = strtol(s, &end, 10);
	assert_true(end > s && *end == '%');
	side->stddev_pct = (double)shown + 0.5;
	*p = end + 1;
}

/* "  <base> [±NN%] <change>[%] <culprit> [±NN%]  <metric>" */
static void parse_seed_row(const char *line, struct seed_row *r)
{
	const char *p = line;
	char *end;
	size_t n;

	memset(r, 0, sizeof(*r));
	r->line = line;
	take_token(&p, r->base_text, sizeof(r->base_text));
	r->base.mean = strtod(r->base_text, &end);
	assert_true(*end == '\0');
	take_stddev(&p, &r->base);
	take_token(&p, r->change_text, sizeof(r->change_text));
	r->change = strtod(r->change_text, &end);
	r->relative = *end == '%';
	assert_true(*end == '\0' || (*end == '%' && end[1] == '\0'));
	take_token(&p, r->culprit_text, sizeof(r->culprit_text));
	r->culprit.mean = strtod(r->culprit_text, &end);
	assert_true(*end == '\0');
	take_stddev(&p, &r->culprit);
	assert_true(p[0] == ' ' && p[1] == ' ' && p[2] != ' ');
	n = strlen(p + 2);
	assert_true(n > 0 && n < sizeof(r->metric));
	memcpy(r->metric, p + 2, n + 1);
}

static void load_seed(struct seed *s, const char *name)
{
	static const char header[] =
	    "             \\          |                \\  ";
	size_t i, cap = 0;
	char *p;

	memset(s, 0, sizeof(*s));
	s->text = read_data(name);
	for (p = s->text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		cap++;
	s->lines = calloc(cap, sizeof(*s->lines));
	assert_non_null(s->lines);
	for (p = s->text; p;) {
		char *nl = strchr(p, '\n');

		s->lines[s->line_count++] = p;
		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : NULL;
	}
	s->rule = s->first_row = SIZE_MAX;
	for (i = 0; i < s->line_count; i++) {
		if (s->rule == SIZE_MAX &&
		    strncmp(s->lines[i], "=====", 5) == 0)
			s->rule = i;
		if (strcmp(s->lines[i], header) == 0) {
			s->first_row = i + 1;
			break;
		}
	}
	assert_true(s->rule != SIZE_MAX && s->first_row != SIZE_MAX);
	while (s->first_row + s->row_count < s->line_count &&
	       s->lines[s->first_row + s->row_count][0] != '\0')
		s->row_count++;
	assert_true(s->row_count > 0);
	s->rows = calloc(s->row_count, sizeof(*s->rows));
	assert_non_null(s->rows);
	for (i = 0; i < s->row_count; i++)
		parse_seed_row(s->lines[s->first_row + i], &s->rows[i]);
}

static void free_seed(struct seed *s)
{
	free(s->rows);
	free(s->lines);
	free(s->text);
}

/* The line of the seed that starts with `prefix`. */
static const char *seed_line(const struct seed *s, const char *prefix)
{
	size_t i;

	for (i = 0; i < s->line_count; i++)
		if (strncmp(s->lines[i], prefix, strlen(prefix)) == 0)
			return s->lines[i];
	fail_msg("no line starting with \"%s\"", prefix);
	return NULL;
}

static const char *const seed_names[] = {
    "report-mainline-sockfd.txt",
    "report-mainline-udp.txt",
    "report-patch-sockmany.txt",
};

#define SEED_COUNT (sizeof(seed_names) / sizeof(seed_names[0]))

/* ---- the rows of the seeds, byte for byte ------------------------------ */

/* Half a unit of the last digit printed in `text` (a value or a change),
 * and whether the printed value is a truncated integer. */
static double half_unit(const char *text, bool *truncated)
{
	const char *e = strchr(text, 'e'), *dot = strchr(text, '.');
	const char *p;
	int digits = 0;

	*truncated = false;
	if (e) {
		/* %.4g or %.2g: count the mantissa's digits */
		for (p = text; p < e; p++)
			if (*p >= '0' && *p <= '9')
				digits++;
		return 0.5 * pow(10, atoi(e + 1) - (digits - 1));
	}
	if (dot) {
		for (p = dot + 1; *p >= '0' && *p <= '9'; p++)
			digits++;
		return 0.5 * pow(10, -digits);
	}
	*truncated = true;
	return 1;
}

/* The interval of values that print as `text`. */
static void value_interval(const char *text, double *lo, double *hi)
{
	bool truncated;
	double v = strtod(text, NULL), h = half_unit(text, &truncated);

	if (truncated) {
		*lo = v >= 0 ? v : v - 1;
		*hi = v >= 0 ? v + 1 : v;
	} else {
		*lo = v - h;
		*hi = v + h;
	}
}

/*
 * Could the robot's printed change come from means that print as the
 * seed's?  The change is monotonic in each mean, so the corners of the two
 * intervals bound it.  Rows whose base interval reaches 0 prove nothing.
 */
static bool change_is_consistent(const struct seed_row *r)
{
	double blo, bhi, clo, chi, lo, hi, c[4], h;
	bool truncated;
	size_t i;

	value_interval(r->base_text, &blo, &bhi);
	value_interval(r->culprit_text, &clo, &chi);
	if (r->relative && blo <= 0)
		return true;
	if (r->relative) {
		c[0] = 100 * (clo - blo) / blo;
		c[1] = 100 * (clo - bhi) / bhi;
		c[2] = 100 * (chi - blo) / blo;
		c[3] = 100 * (chi - bhi) / bhi;
	} else {
		c[0] = clo - blo;
		c[1] = clo - bhi;
		c[2] = chi - blo;
		c[3] = chi - bhi;
	}
	lo = hi = c[0];
	for (i = 1; i < 4; i++) {
		lo = c[i] < lo ? c[i] : lo;
		hi = c[i] > hi ? c[i] : hi;
	}
	/* a little slack for the binary representation of the bounds */
	h = half_unit(r->change_text, &truncated) * (1 + 1e-9);
	return r->change + h >= lo && r->change - h <= hi;
}

static void test_report__seed_rows_byte_for_byte(void **state)
{
	size_t total = 0, computed_equal = 0, i, k;
	char expected[1024];
	char *row;

	(void)state;
	for (k = 0; k < SEED_COUNT; k++) {
		struct seed s;

		load_seed(&s, seed_names[k]);
		for (i = 0; i < s.row_count; i++) {
			const struct seed_row *r = &s.rows[i];

			snprintf(expected, sizeof(expected), "%s\n", r->line);
			/* the layout, fed with the seed's own change */
			assert_int_equal(report_format_row_with_change(
					     &row, r->metric, &r->base,
					     &r->culprit, r->change),
					 0);
			assert_string_equal(row, expected);
			free(row);
			/* relative or absolute as the seed shows it */
			assert_true(report_metric_is_absolute(r->metric) ==
				    !r->relative);

			/* the change computed from the rounded means: equal
			 * to the seed, or off only by the means' rounding */
			assert_int_equal(report_format_row(&row, r->metric,
							   &r->base,
							   &r->culprit),
					 0);
			if (strcmp(row, expected) == 0)
				computed_equal++;
			else if (!change_is_consistent(r))
				fail_msg("change of %s not explained by "
					 "rounding: %s",
					 r->metric, row);
			free(row);
			total++;
		}
		free_seed(&s);
	}
	print_message("seed rows reproduced byte for byte: %zu of %zu; "
		      "from the rounded means alone: %zu\n",
		      total, total, computed_equal);
	assert_int_equal(total, 31 + 86 + 73);
	/* The count of rows whose change survives the rounding of the means
	 * to the printed digits; pinned so a change of formula shows. */
	assert_int_equal(computed_equal, 162);
}

/* FNV-1a, to scramble the rows in a fixed way. */
static uint64_t hash_text(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

struct shuffled {
	uint64_t key;
	size_t index;
};

static int compare_shuffled(const void *pa, const void *pb)
{
	const struct shuffled *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/*
 * Feed a seed's rows in a scrambled order and check that the comparison
 * block comes out as in the seed, from the "=====" rule to the last row.
 * Rows the robot could only order by their unrounded change (perf-profile
 * rows of one kind with the same printed change) keep their seed order
 * among themselves: the renderer keeps the input order on ties.
 */
static void check_seed_table(const char *name, const char *tree,
			     const char *branch)
{
	struct report_param params[32];
	char keys[1024], values[1024], sha_line[128];
	char parent_sha[41], culprit_sha[41];
	char parent_subject[512], culprit_subject[512];
	struct report_metric_row *rows;
	struct shuffled *order;
	struct report_input in;
	size_t i, param_count = 0, moved = 0, expected_len = 0;
	char *key, *value, *key_save, *value_save, *table, *expected;
	const char *p, *testcase = NULL;
	struct seed s;

	load_seed(&s, name);

	/* the parameter header: names line and values line */
	snprintf(keys, sizeof(keys), "%s", s.lines[s.rule + 1]);
	snprintf(values, sizeof(values), "%s", s.lines[s.rule + 2] + 2);
	assert_true(keys[strlen(keys) - 1] == ':');
	keys[strlen(keys) - 1] = '\0';
	key = strtok_r(keys, "/", &key_save);
	value = strtok_r(values, "/", &value_save);
	while (key && value) {
		params[param_count].key = key;
		params[param_count].value = value;
		if (strcmp(key, "testcase") == 0)
			testcase = value;
		param_count++;
		key = strtok_r(NULL, "/", &key_save);
		value = strtok_r(NULL, "/", &value_save);
	}
	assert_null(key);
	assert_null(value);
	assert_non_null(testcase);

	/* the commits: full culprit sha from the body, parent's first 16
	 * digits from the column header (the rest is never printed) */
	p = seed_line(&s, "commit: ") + strlen("commit: ");
	assert_true(strlen(p) > 40);
	memcpy(culprit_sha, p, 40);
	culprit_sha[40] = '\0';
	snprintf(sha_line, sizeof(sha_line), "%s", s.lines[s.first_row - 4]);
	snprintf(parent_sha, sizeof(parent_sha), "%.16s%s", sha_line,
		 "000000000000000000000000");
	assert_true(strncmp(sha_line + 17, culprit_sha, 27) == 0);
	for (i = 0; i < 2; i++) {
		const char *line = s.lines[s.rule + 5 + i];
		char *subject = i ? culprit_subject : parent_subject;
		size_t n = strlen(line);

		/* "  <sha10> (\"<subject>\")" */
		assert_true(n > 17 && line[13] == '(' && line[14] == '"' &&
			    line[n - 2] == '"' && line[n - 1] == ')');
		snprintf(subject, 512, "%.*s", (int)(n - 17), line + 15);
	}

	/* the rows, scrambled */
	rows = calloc(s.row_count, sizeof(*rows));
	order = calloc(s.row_count, sizeof(*order));
	assert_non_null(rows);
	assert_non_null(order);
	for (i = 0; i < s.row_count; i++) {
		const struct seed_row *r = &s.rows[i];
		char tie[512];

		if (strncmp(r->metric, "perf-profile.", 13) == 0)
			snprintf(
			    tie, sizeof(tie), "%.*s|%.17g",
			    (int)(strchr(r->metric + 13, '.') - r->metric),
			    r->metric, r->change == 0 ? 0.0 : r->change);
		else
			snprintf(tie, sizeof(tie), "%s", r->metric);
		order[i].key = hash_text(tie);
		order[i].index = i;
	}
	qsort(order, s.row_count, sizeof(*order), compare_shuffled);
	for (i = 0; i < s.row_count; i++) {
		const struct seed_row *r = &s.rows[order[i].index];

		moved += order[i].index != i;
		rows[i].metric = r->metric;
		rows[i].base = r->base;
		rows[i].culprit = r->culprit;
		rows[i].change_given = true;
		rows[i].change = r->change;
	}
	assert_true(moved > s.row_count / 2);

	memset(&in, 0, sizeof(in));
	in.robot_name = "statbisect robot";
	in.service_name = "statbisect";
	in.tree = tree;
	in.branch = branch;
	in.kind = REPORT_IMPROVEMENT;
	in.kpi = "unused";
	in.culprit_sha = culprit_sha;
	in.culprit_subject = culprit_subject;
	in.parent_sha = parent_sha;
	in.parent_subject = parent_subject;
	in.testcase = testcase;
	in.params = params;
	in.param_count = param_count;
	in.rows = rows;
	in.row_count = s.row_count;
	in.confidence = -1;
	assert_int_equal(report_render_table(&table, &in), 0);

	for (i = s.rule; i < s.first_row + s.row_count; i++)
		expected_len += strlen(s.lines[i]) + 1;
	expected = malloc(expected_len + 1);
	assert_non_null(expected);
	expected[0] = '\0';
	for (i = s.rule; i < s.first_row + s.row_count; i++) {
		strcat(expected, s.lines[i]);
		strcat(expected, "\n");
	}
	assert_string_equal(table, expected);

	free(expected);
	free(table);
	free(order);
	free(rows);
	free_seed(&s);
}

static void test_report__seed_tables_byte_for_byte(void **state)
{
	(void)state;
	check_seed_table("report-mainline-sockfd.txt", "linus", "master");
	check_seed_table("report-mainline-udp.txt", "linus", "master");
	check_seed_table("report-patch-sockmany.txt", "net-next", "main");
}

/* ---- values, changes, stddevs ----------------------------------------- */

static void assert_value(double v, const char *expected)
{
	char buf[32];

	assert_int_equal(report_format_value(buf, sizeof(buf), v), 0);
	assert_string_equal(buf, expected);
}

static void test_report__value_boundaries(void **state)
{
	char small[4];

	(void)state;
	assert_value(0, "0.00");
	assert_value(1.58, "1.58");
	assert_value(0.004, "0.00");
	assert_value(999.99, "999.99");
	assert_value(999.994, "999.99");
	assert_value(1000, "1000");
	assert_value(1000.99, "1000");
	assert_value(294621.9, "294621");
	assert_value(99999999.99, "99999999");
	assert_value(100000000, "100000000");
	assert_value(100000001, "1e+08");
	assert_value(544400000, "5.444e+08");
	assert_value(101700000, "1.017e+08");
	assert_value(8.552e11, "8.552e+11");
	assert_value(-0.65, "-0.65");
	assert_value(-999.99, "-999.99");
	assert_value(-1000, "-1000");
	assert_value(-1234.9, "-1234");
	assert_value(-100000000, "-100000000");
	assert_value(-100000001, "-1e+08");
	assert_value(-5.444e8, "-5.444e+08");
	assert_int_equal(report_format_value(small, sizeof(small), 1.58),
			 -ERANGE);
	assert_int_equal(report_format_value(NULL, 8, 1), -EINVAL);
	assert_int_equal(report_format_value(small, sizeof(small), NAN),
			 -EINVAL);
	assert_int_equal(report_format_value(small, sizeof(small), INFINITY),
			 -EINVAL);
}

static void assert_row(const char *metric, double base, double base_dev,
		       double now, double now_dev, const char *expected)
{
	struct report_side b = {base, base_dev, 5}, c = {now, now_dev, 5};
	char *row = NULL;

	assert_int_equal(report_format_row(&row, metric, &b, &c), 0);
	assert_string_equal(row, expected);
	free(row);
}

static void assert_row_change(const char *metric, double change,
			      const char *expected)
{
	struct report_side b = {1, 0, 1}, c = {2, 0, 1};
	char *row = NULL;

	assert_int_equal(
	    report_format_row_with_change(&row, metric, &b, &c, change), 0);
	assert_string_equal(row, expected);
	free(row);
}

static void test_report__change_formatting(void **state)
{
	(void)state;
	/* relative, one decimal, signed */
	assert_row("a.b", 294621, 0, 302449, 0,
		   "    294621            +2.7%     302449        a.b\n");
	assert_row("a.b", 1.58, 0, 1.54, 0,
		   "      1.58            -2.5%       1.54        a.b\n");
	assert_row("a.b", 100, 0, 100, 0,
		   "    100.00            +0.0%     100.00        a.b\n");
	assert_row("a.b", 100, 0, 0, 0,
		   "    100.00          -100.0%       0.00        a.b\n");
	/* from a magnitude of 100,000% on, two significant digits */
	assert_row_change(
	    "a.b", 99999.9,
	    "      1.00        +99999.9%       2.00        a.b\n");
	assert_row_change(
	    "a.b", 99999.96,
	    "      1.00       +100000.0%       2.00        a.b\n");
	assert_row_change(
	    "a.b", 100000,
	    "      1.00          +1e+05%       2.00        a.b\n");
	assert_row_change(
	    "a.b", 393200,
	    "      1.00        +3.9e+05%       2.00        a.b\n");
	assert_row_change(
	    "a.b", 397000,
	    "      1.00          +4e+05%       2.00        a.b\n");
	assert_row_change(
	    "a.b", -150000,
	    "      1.00        -1.5e+05%       2.00        a.b\n");
	assert_row("a.b", 0.07, 0, 275.31, 0,
		   "      0.07        +3.9e+05%     275.31        a.b\n");
	/* a base of 0 is 1e-100, as in lkp-tests */
	assert_row("a.b", 0, 0, 0.98, 0,
		   "      0.00       +9.8e+101%       0.98        a.b\n");
	assert_row("a.b", 0, 0, 0, 0,
		   "      0.00            +0.0%       0.00        a.b\n");
}

static void test_report__absolute_change_metrics(void **state)
{
	(void)state;
	assert_true(report_metric_is_absolute("perf-profile.self.x"));
	assert_true(report_metric_is_absolute("perf-profile"));
	assert_true(report_metric_is_absolute("mpstat.cpu.all.irq%"));
	assert_true(report_metric_is_absolute("perf-stat.i.cache-miss-rate%"));
	assert_false(report_metric_is_absolute("perf-stat.i.cpi"));
	assert_false(report_metric_is_absolute("x.perf-profile"));
	assert_false(report_metric_is_absolute("a%.b"));
	assert_row("perf-profile.calltrace.cycles-pp.write", 26.87, 0, 26.38,
		   0,
		   "     26.87            -0.5       26.38        "
		   "perf-profile.calltrace.cycles-pp.write\n");
	assert_row("mpstat.cpu.all.irq%", 0.61, 3.5, 0.71, 3.5,
		   "      0.61 " PM "  3%      +0.1        0.71 " PM
		   "  3%  mpstat.cpu.all.irq%\n");
	assert_row("perf-profile.self.x", 0.33, 0, 0.30, 0,
		   "      0.33            -0.0        0.30        "
		   "perf-profile.self.x\n");
	assert_row_change("perf-profile.x", 150000,
			  "      1.00        +1.5e+05        2.00        "
			  "perf-profile.x\n");
}

static void test_report__stddev_boundaries(void **state)
{
	struct report_side b = {100, 2.0, 5}, c = {100, 2.0001, 5};
	char *row;

	(void)state;
	assert_int_equal(report_format_row(&row, "a.b", &b, &c), 0);
	assert_string_equal(row, "    100.00            +0.0%     100.00 " PM
				 "  2%  a.b\n");
	free(row);
	b.stddev_pct = 2.999;
	c.stddev_pct = 3.0;
	assert_int_equal(report_format_row(&row, "a.b", &b, &c), 0);
	assert_string_equal(row,
			    "    100.00 " PM "  2%      +0.0%     100.00 " PM
			    "  3%  a.b\n");
	free(row);
	/* never for a single run; three digits; beyond */
	b.runs = 1;
	b.stddev_pct = 50;
	c.stddev_pct = 223.9;
	assert_int_equal(report_format_row(&row, "a.b", &b, &c), 0);
	assert_string_equal(row, "    100.00            +0.0%     100.00 " PM
				 "223%  a.b\n");
	free(row);
	b.runs = 2;
	b.stddev_pct = 1125;
	c.stddev_pct = NAN;
	assert_int_equal(report_format_row(&row, "a.b", &b, &c), 0);
	assert_string_equal(row, "    100.00 " PM "1125%      +0.0%     100.00"
				 "        a.b\n");
	free(row);
}

static void test_report__row_refuses_bad_input(void **state)
{
	struct report_side b = {1, 0, 1}, c = {2, 0, 1}, nan = {NAN, 0, 1};
	char *row = (char *)"sentinel";

	(void)state;
	assert_int_equal(report_format_row(NULL, "a", &b, &c), -EINVAL);
	assert_int_equal(report_format_row(&row, NULL, &b, &c), -EINVAL);
	assert_null(row);
	assert_int_equal(report_format_row(&row, "", &b, &c), -EINVAL);
	assert_int_equal(report_format_row(&row, "a\nb", &b, &c), -EINVAL);
	assert_int_equal(report_format_row(&row, "a", &nan, &c), -EINVAL);
	assert_int_equal(report_format_row(&row, "a", &b, NULL), -EINVAL);
	assert_int_equal(report_format_row_with_change(&row, "a", &b, &c, NAN),
			 -EINVAL);
	assert_null(row);
}

/* ---- subsystem and subject -------------------------------------------- */

static void assert_subsystem(const char *subject, const char *expected)
{
	char *out = (char *)"sentinel";

	assert_int_equal(report_subsystem(&out, subject), 0);
	if (expected) {
		assert_non_null(out);
		assert_string_equal(out, expected);
	} else {
		assert_null(out);
	}
	free(out);
}

static void test_report__subsystem(void **state)
{
	char *out;

	(void)state;
	assert_subsystem("net: udp: add IP/port data", "net");
	assert_subsystem("mm, swap: fix a thing", "mm, swap");
	assert_subsystem("x86/mm/tlb: Update mm_cpumask lazily", "x86/mm/tlb");
	assert_subsystem("sched/eevdf: Reduce", "sched/eevdf");
	assert_subsystem("  net :x", "net");
	assert_subsystem("Merge branch 'x'", NULL);
	assert_subsystem(": nothing before", NULL);
	assert_subsystem("   : blanks before", NULL);
	assert_subsystem("", NULL);
	assert_int_equal(report_subsystem(&out, NULL), -EINVAL);
	assert_int_equal(report_subsystem(NULL, "a: b"), -EINVAL);
}

static const struct report_param fixture_params[] = {
    {"nr_threads", "100%"},
    {"testtime", "60s"},
    {"test", "sockfd"},
    {"cpufreq_governor", "performance"},
};

static const struct report_metric_row fixture_rows[] = {
    {"vmstat.system.cs", {64663, 2.5, 10}, {66953, 0, 10}, false, 0},
    {"perf-stat.i.cpi", {1.58, 0, 10}, {1.62, 0, 10}, false, 0},
    {"bench.score", {1000, 0.5, 10}, {873, 3.4, 10}, false, 0},
    {"perf-profile.self.cycles-pp.foo",
     {10.25, 5.2, 10},
     {12.55, 1, 10},
     false,
     0},
};

static struct report_input fixture(enum report_kind kind)
{
	struct report_input in;

	memset(&in, 0, sizeof(in));
	in.robot_name = "statbisect robot";
	in.robot_email = "robot@statbisect.example";
	in.service_name = "statbisect performance bisection";
	in.service_url = "https://statbisect.example/";
	in.tree = "linus";
	in.branch = "master";
	in.kind = kind;
	in.kpi = "bench.score";
	in.change_pct = -12.7;
	in.culprit_sha = "e9669a00bba79442dd4862c57761333d6a020c24";
	in.culprit_subject = "net: udp: add IP/port data to the tracepoint";
	in.parent_sha = "a0ad11fc2632903e1c3d6f0e5b2a4c8d9e7f6a5b";
	in.parent_subject = "net: port TP_STORE_ADDR_PORTS_SKB macro";
	in.commit_url = "https://git.example.org/linux/commit/"
			"e9669a00bba79442dd4862c57761333d6a020c24";
	in.testcase = "stress-ng";
	in.machine = "48 threads 2 sockets Intel(R) Xeon(R) CPU E5-2697 v2 "
		     "@ 2.70GHz (Ivy Bridge-EP) with 64G memory";
	in.params = fixture_params;
	in.param_count = 4;
	in.rows = fixture_rows;
	in.row_count = 4;
	in.job_url = "https://statbisect.example/jobs/42";
	in.report_url = "https://statbisect.example/jobs/42/report";
	in.checkout_cmd = "git clone https://git.example.org/linux.git\n"
			  "git -C linux checkout "
			  "e9669a00bba79442dd4862c57761333d6a020c24";
	in.build_cmd = "make -C linux -j48";
	in.run_cmd = "sh bench.sh --runs 10";
	in.base_runs = 10;
	in.culprit_runs = 12;
	in.confidence = 0.999;
	in.good_sha = "1111111111222222222233333333334444444444";
	in.bad_sha = "5555555555666666666677777777778888888888";
	in.good_subject = "Linux 6.9";
	in.bad_subject = "Merge tag 'net-6.10'";
	return in;
}

static void assert_subject(const struct report_input *in, const char *expected)
{
	char *subject = NULL;

	assert_int_equal(report_render_subject(&subject, in), 0);
	assert_string_equal(subject, expected);
	free(subject);
}

/* Undo an archive's folding: drop each line end before a blank. */
static void unfold(char *s)
{
	char *r = s, *w = s;

	for (; *r; r++) {
		if ((*r == '\n' || *r == '\r') &&
		    (r[1] == ' ' || r[1] == '\t' || r[1] == '\n'))
			continue;
		*w++ = *r;
	}
	*w = '\0';
}

static void collapse_blanks(char *s)
{
	char *r = s, *w = s;

	for (; *r; r++)
		if (!(*r == ' ' && r[1] == ' '))
			*w++ = *r;
	*w = '\0';
}

/* The subject of a mainline seed, from its data: the culprit and the KPI
 * row of its table. */
static char *seed_subject(const struct seed *s, const char *kpi)
{
	struct report_input in = fixture(REPORT_IMPROVEMENT);
	char sha[41], subject[512];
	const char *p = seed_line(s, "commit: ") + strlen("commit: ");
	char *out = NULL;
	size_t i;

	memcpy(sha, p, 40);
	sha[40] = '\0';
	/* "<sha40> (\"<subject>\")" */
	assert_true(strlen(p) > 45 && strncmp(p + 40, " (\"", 3) == 0);
	snprintf(subject, sizeof(subject), "%.*s", (int)(strlen(p) - 45),
		 p + 43);
	in.culprit_sha = sha;
	in.culprit_subject = subject;
	in.kpi = kpi;
	in.change_pct = NAN;
	for (i = 0; i < s->row_count; i++)
		if (strcmp(s->rows[i].metric, kpi) == 0)
			in.change_pct =
			    100 *
			    (s->rows[i].culprit.mean - s->rows[i].base.mean) /
			    s->rows[i].base.mean;
	assert_int_equal(report_render_subject(&out, &in), 0);
	return out;
}

static void test_report__seed_subjects(void **state)
{
	char header[512], *subject;
	const char *p;
	struct seed s;
	size_t i;

	(void)state;
	/* udp: the Subject header, folded by the archive, unfolded */
	load_seed(&s, "report-mainline-udp.txt");
	subject = seed_subject(&s, "aim9.udp_test.ops_per_sec");
	assert_string_equal(subject,
			    "[linus:master] [net]  e9669a00bb:  "
			    "aim9.udp_test.ops_per_sec 2.7% improvement");
	p = seed_line(&s, "Subject: ");
	for (i = 0; s.lines[i] != p; i++)
		;
	snprintf(header, sizeof(header), "%s\n%s", s.lines[i] + 9,
		 s.lines[i + 1]);
	assert_true(s.lines[i + 1][0] == ' ');
	unfold(header);
	assert_string_equal(subject, header);
	free(subject);
	free_seed(&s);

	/* sockfd: the archive also collapsed the double blanks */
	load_seed(&s, "report-mainline-sockfd.txt");
	subject = seed_subject(&s, "stress-ng.sockfd.ops_per_sec");
	assert_string_equal(subject,
			    "[linus:master] [net]  2b0cfa6e49:  "
			    "stress-ng.sockfd.ops_per_sec 6.9% improvement");
	snprintf(header, sizeof(header), "%s", subject);
	collapse_blanks(header);
	assert_string_equal(header, s.lines[0]);
	free(subject);
	free_seed(&s);
}

static void test_report__subject_kinds(void **state)
{
	struct report_input in = fixture(REPORT_REGRESSION);
	char *subject = (char *)"sentinel";

	(void)state;
	assert_subject(&in, "[linus:master] [net]  e9669a00bb:  "
			    "bench.score -12.7% regression");
	in.change_pct = 8.84;
	assert_subject(&in, "[linus:master] [net]  e9669a00bb:  "
			    "bench.score +8.8% regression");
	in.kind = REPORT_IMPROVEMENT;
	assert_subject(&in, "[linus:master] [net]  e9669a00bb:  "
			    "bench.score 8.8% improvement");
	in.change_pct = -5.04;
	assert_subject(&in, "[linus:master] [net]  e9669a00bb:  "
			    "bench.score 5.0% improvement");
	in.culprit_subject = "Revert a thing";
	assert_subject(&in, "[linus:master]  e9669a00bb:  "
			    "bench.score 5.0% improvement");
	in.culprit_subject = "";
	assert_subject(&in, "[linus:master]  e9669a00bb:  "
			    "bench.score 5.0% improvement");
	in.culprit_subject = "mm, swap: x";
	in.tree = "tip";
	in.branch = "x86/mm";
	assert_subject(&in, "[tip:x86/mm] [mm, swap]  e9669a00bb:  "
			    "bench.score 5.0% improvement");
	in = fixture(REPORT_NO_CHANGE);
	assert_subject(&in, "[linus:master] no change of bench.score in "
			    "1111111111..5555555555");
	in.kind = REPORT_INCONCLUSIVE;
	assert_subject(&in, "[linus:master] inconclusive result for "
			    "bench.score in 1111111111..5555555555");

	in = fixture(REPORT_REGRESSION);
	in.culprit_sha = "e9669a00bb";
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	assert_null(subject);
	in = fixture(REPORT_REGRESSION);
	in.culprit_sha = "E9669A00BBA79442DD4862C57761333D6A020C24";
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.change_pct = NAN;
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.kpi = "bench.score\r\nBcc: x@example.org";
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.tree = NULL;
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	in = fixture(REPORT_NO_CHANGE);
	in.good_sha = NULL;
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.kind = (enum report_kind)42;
	assert_int_equal(report_render_subject(&subject, &in), -EINVAL);
	assert_int_equal(report_render_subject(&subject, NULL), -EINVAL);
	assert_int_equal(report_render_subject(NULL, &in), -EINVAL);
}

/* ---- bodies ----------------------------------------------------------- */

static const char regression_body[] =
    "\n"
    "Hello,\n"
    "\n"
    "statbisect robot noticed a -12.7% regression of bench.score on:\n"
    "\n"
    "\n"
    "commit: e9669a00bba79442dd4862c57761333d6a020c24 (\"net: udp: add "
    "IP/port data to the tracepoint\")\n"
    "https://git.example.org/linux/commit/"
    "e9669a00bba79442dd4862c57761333d6a020c24 master\n"
    "\n"
    "testcase: stress-ng\n"
    "test machine: 48 threads 2 sockets Intel(R) Xeon(R) CPU E5-2697 v2 "
    "@ 2.70GHz (Ivy Bridge-EP) with 64G memory\n"
    "runs: 10 (parent) / 12 (culprit), confidence: 99.9%\n"
    "parameters:\n"
    "\n"
    "\tnr_threads: 100%\n"
    "\ttesttime: 60s\n"
    "\ttest: sockfd\n"
    "\tcpufreq_governor: performance\n"
    "\n"
    "\n"
    "If you fix the issue in a separate patch/commit (i.e. not just a new "
    "version of\n"
    "the same patch/commit), kindly add following tags\n"
    "| Reported-by: statbisect robot <robot@statbisect.example>\n"
    "| Closes: https://statbisect.example/jobs/42/report\n"
    "\n"
    "\n"
    "Details are as below:\n"
    "------------------------------------------------------------------"
    "-------------------------------->\n"
    "\n"
    "\n"
    "The job page and the raw runs are available at:\n"
    "https://statbisect.example/jobs/42\n"
    "https://statbisect.example/jobs/42/runs.csv\n"
    "https://statbisect.example/jobs/42/runs.json\n"
    "\n"
    "To reproduce:\n"
    "\n"
    "\tgit clone https://git.example.org/linux.git\n"
    "\tgit -C linux checkout e9669a00bba79442dd4862c57761333d6a020c24\n"
    "\tmake -C linux -j48\n"
    "\tsh bench.sh --runs 10\n"
    "\n"
    "=================================================================="
    "=======================\n"
    "cpufreq_governor/nr_threads/test/testcase/testtime:\n"
    "  performance/100%/sockfd/stress-ng/60s\n"
    "\n"
    "commit: \n"
    "  a0ad11fc26 (\"net: port TP_STORE_ADDR_PORTS_SKB macro\")\n"
    "  e9669a00bb (\"net: udp: add IP/port data to the tracepoint\")\n"
    "\n"
    "a0ad11fc2632903e e9669a00bba79442dd4862c5776 \n"
    "---------------- --------------------------- \n"
    "         %stddev     %change         %stddev\n"
    "             \\          |                \\  \n"
    "      1000           -12.7%     873.00 " PM "  3%  bench.score\n"
    "     10.25 " PM "  5%      +2.3       12.55        "
    "perf-profile.self.cycles-pp.foo\n"
    "      1.58            +2.5%       1.62        perf-stat.i.cpi\n"
    "     64663 " PM "  2%      +3.5%      66953        "
    "vmstat.system.cs\n"
    "\n"
    "\n"
    "Disclaimer:\n"
    "Results were measured on the test machine named above and are "
    "provided for\n"
    "informational purposes only. Benchmark results are noisy: the table "
    "gives the\n"
    "mean of each side and its standard deviation.  Any difference in "
    "hardware,\n"
    "software, configuration or load may change the results.\n"
    "\n"
    "\n"
    "-- \n"
    "statbisect performance bisection\n"
    "https://statbisect.example/\n";

static void test_report__regression_body(void **state)
{
	struct report_input in = fixture(REPORT_REGRESSION);
	char *body = NULL, *line, *save;
	bool in_table = false;

	(void)state;
	assert_int_equal(report_render_body(&body, &in), 0);
	assert_string_equal(body, regression_body);

	/* prose stays within 79 columns (rows, rules, links excepted) */
	for (line = strtok_r(body, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "=====", 5) == 0)
			in_table = true;
		if (strncmp(line, "Disclaimer:", 11) == 0)
			in_table = false;
		if (in_table || strncmp(line, "https://", 8) == 0 ||
		    strncmp(line, "-----", 5) == 0 ||
		    strncmp(line, "commit: ", 8) == 0 ||
		    strncmp(line, "test machine: ", 14) == 0)
			continue;
		if (strlen(line) > 79)
			fail_msg("line over 79 columns: %s", line);
	}
	free(body);
}

/* Each needle occurs in `text`, in this order. */
static void assert_in_order(const char *text, const char *const *needles,
			    size_t count)
{
	const char *at = text, *found;
	size_t i;

	for (i = 0; i < count; i++) {
		found = strstr(at, needles[i]);
		if (!found)
			fail_msg("missing or out of order: \"%s\"",
				 needles[i]);
		at = found + strlen(needles[i]);
	}
}

static void test_report__improvement_body(void **state)
{
	static const char *const sections[] = {
	    "\nHello,\n\n",
	    "statbisect robot noticed a 12.7% improvement of bench.score "
	    "on:\n\n\n",
	    "commit: e9669a00bba79442dd4862c57761333d6a020c24 (",
	    "linux.git master\n\n",
	    "testcase: stress-ng\n",
	    "test machine: 48 threads",
	    "runs: 10 (parent) / 12 (culprit)\n",
	    "parameters:\n\n\tnr_threads: 100%\n",
	    "Details are as below:\n",
	    "jobs/42/runs.json\n",
	    "To reproduce:\n\n\tmake -C linux -j48\n\tsh bench.sh --runs 10\n",
	    "=========================================================="
	    "===============================\n",
	    "commit: \n  a0ad11fc26",
	    "         %stddev     %change         %stddev\n"
	    "             \\          |                \\  \n",
	    "  bench.score\n",
	    "\n\nDisclaimer:\nResults were measured on a statbisect test "
	    "machine",
	    "\n\n\n-- \nstatbisect performance bisection\n",
	};
	struct report_input in = fixture(REPORT_IMPROVEMENT);
	char *body = NULL;
	const char *p;

	(void)state;
	in.change_pct = 12.7;
	in.confidence = -1;
	in.commit_url = "https://git.example.org/linux.git";
	in.checkout_cmd = NULL;
	in.service_url = NULL;
	in.machine = NULL;
	assert_int_equal(report_render_body(&body, &in), 0);
	assert_null(strstr(body, "test machine:"));
	assert_null(strstr(body, "Reported-by"));
	assert_null(strstr(body, "Closes:"));
	assert_null(strstr(body, "confidence"));
	assert_null(strstr(body, "git clone"));
	free(body);
	in.machine = "48 threads";
	assert_int_equal(report_render_body(&body, &in), 0);
	assert_in_order(body, sections,
			sizeof(sections) / sizeof(sections[0]) - 2);
	free(body);
	in.machine = NULL;
	assert_int_equal(report_render_body(&body, &in), 0);
	assert_in_order(body, sections + 14, 3);
	assert_true(body[strlen(body) - 1] == '\n');
	p = "\n-- \nstatbisect performance bisection\n";
	assert_string_equal(body + strlen(body) - strlen(p), p);
	free(body);
}

static void test_report__range_bodies(void **state)
{
	static const char *const no_change[] = {
	    "\nHello,\n\n",
	    "statbisect robot noticed no change of bench.score between:"
	    "\n\n\n",
	    "good: 1111111111222222222233333333334444444444 "
	    "(\"Linux 6.9\")\n",
	    "bad:  5555555555666666666677777777778888888888 "
	    "(\"Merge tag 'net-6.10'\")\n",
	    "linus master\n\n",
	    "no commit was bisected.\n\n",
	    "testcase: stress-ng\n",
	    "runs: 10 (good) / 12 (bad), confidence: 99.9%\n",
	    "Details are as below:\n",
	    "commit: \n  1111111111 (\"Linux 6.9\")\n  5555555555 "
	    "(\"Merge tag 'net-6.10'\")\n\n",
	    "1111111111222222 555555555566666666667777777 \n"
	    "---------------- --------------------------- \n",
	    "      1000           -12.7%     873.00 " PM
	    "  3%  bench.score\n\n\n",
	    "Disclaimer:\n",
	    "-- \n",
	};
	struct report_metric_row kpi_row = fixture_rows[2];
	struct report_input in = fixture(REPORT_NO_CHANGE);
	char *body = NULL;

	(void)state;
	in.rows = &kpi_row;
	in.row_count = 1;
	assert_int_equal(report_render_body(&body, &in), 0);
	assert_in_order(body, no_change,
			sizeof(no_change) / sizeof(no_change[0]));
	assert_null(strstr(body, "Reported-by"));
	assert_null(strstr(body, "commit: e9669a00bb"));
	free(body);

	in.kind = REPORT_INCONCLUSIVE;
	in.good_subject = NULL;
	assert_int_equal(report_render_body(&body, &in), 0);
	assert_non_null(strstr(body, "statbisect robot could not decide "
				     "whether bench.score changed between:"));
	assert_non_null(strstr(body, "good: 1111111111222222222233333333334444"
				     "444444\nbad:  "));
	assert_non_null(strstr(body, "commit: \n  1111111111\n  5555555555 "));
	assert_non_null(strstr(body, "More runs or a quieter machine"));
	assert_null(strstr(body, "Reported-by"));
	free(body);
}

static void test_report__inconclusive_reason_and_build_logs(void **state)
{
	const char *urls[] = {"http://sb.example/api/v1/jobs/7/commits/"
			      "aaaa/log",
			      "http://sb.example/api/v1/jobs/7/commits/"
			      "bbbb/log"};
	struct report_input in = fixture(REPORT_INCONCLUSIVE);
	char *body = NULL;

	(void)state;
	in.reason = "the runs of the endpoints printed no metric "
		    "'bench.scor'; they printed: aux.constant, bench.score "
		    "(did you mean 'bench.score'?)";
	in.build_log_urls = urls;
	in.build_log_url_count = 2;
	assert_int_equal(report_render_body(&body, &in), 0);
	/* Wrapped at spaces to 72 columns, with a final period. */
	assert_non_null(
	    strstr(body, "\nNo commit was bisected: the runs of the endpoints "
			 "printed no metric\n'bench.scor'; they printed: "
			 "aux.constant, bench.score (did you mean\n"
			 "'bench.score'?).\n\n"));
	assert_null(strstr(body, "quieter machine"));
	assert_non_null(
	    strstr(body, "Build logs of the commits that did not build "
			 "(skipped):\nhttp://sb.example/api/v1/jobs/7/commits/"
			 "aaaa/log\nhttp://sb.example/api/v1/jobs/7/commits/"
			 "bbbb/log\n\n"));
	free(body);

	/* A reason or URL of several lines could forge the report. */
	in.reason = "two\nlines";
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	assert_null(body);
	in.reason = NULL;
	urls[1] = "http://x/\r\nBcc: x@example.org";
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	in.build_log_urls = NULL;
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
}

static void test_report__kpi_row_first(void **state)
{
	struct report_input in = fixture(REPORT_REGRESSION);
	char *table = NULL;
	const char *rows;

	(void)state;
	in.kpi = "vmstat.system.cs";
	in.kpi_row_first = true;
	assert_int_equal(report_render_table(&table, &in), 0);
	rows = strstr(table, "\\  \n");
	assert_non_null(rows);
	assert_string_equal(
	    rows + 4,
	    "     64663 " PM "  2%      +3.5%      66953        "
	    "vmstat.system.cs\n"
	    "      1000           -12.7%     873.00 " PM "  3%  bench.score\n"
	    "     10.25 " PM "  5%      +2.3       12.55        "
	    "perf-profile.self.cycles-pp.foo\n"
	    "      1.58            +2.5%       1.62        "
	    "perf-stat.i.cpi\n");
	free(table);
}

static void test_report__body_refuses_bad_input(void **state)
{
	struct report_metric_row bad_row = fixture_rows[0];
	struct report_param bad_param = {"test", "a\nb"};
	struct report_input in;
	char *body = (char *)"sentinel";

	(void)state;
	in = fixture(REPORT_REGRESSION);
	in.parent_subject = "two\nlines";
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	assert_null(body);
	in = fixture(REPORT_REGRESSION);
	in.params = &bad_param;
	in.param_count = 1;
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	bad_row.base.mean = INFINITY;
	in.rows = &bad_row;
	in.row_count = 1;
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.rows = NULL;
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.confidence = 1.5;
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.robot_name = NULL;
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	in = fixture(REPORT_REGRESSION);
	in.run_cmd = "ok\rnot ok";
	assert_int_equal(report_render_body(&body, &in), -EINVAL);
	assert_null(body);
	in = fixture(REPORT_REGRESSION);
	assert_int_equal(report_render_table(&body, NULL), -EINVAL);
	assert_int_equal(report_render_body(NULL, &in), -EINVAL);
}

/* ---- the message ------------------------------------------------------ */

static const char *const one_to[] = {"dev@example.org"};

static struct report_message message(void)
{
	struct report_message m;

	memset(&m, 0, sizeof(m));
	m.from = "statbisect robot <robot@statbisect.example>";
	m.to = one_to;
	m.to_count = 1;
	m.date = "Wed, 29 May 2024 10:35:33 +0800";
	m.message_id = "<202405291024.412dc03e-robot@statbisect.example>";
	m.subject = "[linus:master] [net]  e9669a00bb:  "
		    "aim9.udp_test.ops_per_sec 2.7% improvement";
	m.body = "\nHello,\n\n.a line starting with a dot\nlast";
	return m;
}

static void assert_crlf_only(const char *text)
{
	const char *p;

	for (p = text; *p; p++) {
		if (*p == '\n')
			assert_true(p > text && p[-1] == '\r');
		if (*p == '\r')
			assert_true(p[1] == '\n');
	}
}

static void test_report__message_headers_and_crlf(void **state)
{
	struct report_message m = message();
	char *text = NULL;

	(void)state;
	assert_int_equal(report_message_render(&text, &m), 0);
	assert_crlf_only(text);
	/* folded before "improvement", exactly as the udp seed's archive */
	assert_string_equal(
	    text,
	    "Date: Wed, 29 May 2024 10:35:33 +0800\r\n"
	    "From: statbisect robot <robot@statbisect.example>\r\n"
	    "To: dev@example.org\r\n"
	    "Subject: [linus:master] [net]  e9669a00bb:  "
	    "aim9.udp_test.ops_per_sec 2.7%\r\n"
	    " improvement\r\n"
	    "Message-ID: <202405291024.412dc03e-robot@statbisect.example>\r\n"
	    "MIME-Version: 1.0\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Transfer-Encoding: 8bit\r\n"
	    "\r\n"
	    "\r\n"
	    "Hello,\r\n"
	    "\r\n"
	    ".a line starting with a dot\r\n"
	    "last\r\n");
	free(text);

	m.in_reply_to = "<20250302124237.3913746-5-edumazet@google.com>";
	m.from = "robot@statbisect.example";
	m.body = "a\r\nb\rc\n";
	assert_int_equal(report_message_render(&text, &m), 0);
	assert_crlf_only(text);
	assert_non_null(
	    strstr(text, "\r\nFrom: robot@statbisect.example\r\n"));
	assert_non_null(strstr(
	    text, "\r\nMessage-ID: <202405291024.412dc03e-robot@"
		  "statbisect.example>\r\n"
		  "In-Reply-To: <20250302124237.3913746-5-edumazet@google."
		  "com>\r\n"
		  "References: <20250302124237.3913746-5-edumazet@google."
		  "com>\r\nMIME-Version: 1.0\r\n"));
	assert_non_null(strstr(text, "\r\n\r\na\r\nb\r\nc\r\n"));
	assert_true(strstr(text, "c\r\n")[3] == '\0');
	free(text);

	m.from = "Dr. Robot, statbisect <robot@statbisect.example>";
	assert_int_equal(report_message_render(&text, &m), 0);
	assert_non_null(strstr(text, "\r\nFrom: \"Dr. Robot, statbisect\" "
				     "<robot@statbisect.example>\r\n"));
	free(text);
}

static void test_report__message_folds_long_headers(void **state)
{
	static const char *const to[] = {
	    "first.recipient@example.org", "second.recipient@example.org",
	    "third.recipient@example.org", "fourth.recipient@example.org",
	    "x+tag@sub.example.co.uk",
	};
	static const char *const cc[] = {"oe-lkp@lists.linux.dev",
					 "lkp@intel.com"};
	struct report_message m = message();
	char *text = NULL, *copy, *line, *save;
	char subject[400];
	size_t i;

	(void)state;
	m.to = to;
	m.to_count = 5;
	m.cc = cc;
	m.cc_count = 2;
	for (i = 0; i + 10 < sizeof(subject); i += 10)
		memcpy(subject + i, "word word ", 10);
	subject[i] = '\0';
	m.subject = subject;
	assert_int_equal(report_message_render(&text, &m), 0);
	assert_crlf_only(text);
	assert_non_null(
	    strstr(text, "\r\nTo: first.recipient@example.org, "
			 "second.recipient@example.org,\r\n"
			 " third.recipient@example.org, "
			 "fourth.recipient@example.org,\r\n"
			 " x+tag@sub.example.co.uk\r\n"
			 "Cc: oe-lkp@lists.linux.dev, lkp@intel.com\r\n"));
	copy = strdup(text);
	assert_non_null(copy);
	for (line = strtok_r(copy, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save)) {
		if (strncmp(line, "Message-ID", 10) == 0 ||
		    strncmp(line, ".a line", 7) == 0)
			continue;
		assert_true(strlen(line) <= 78);
	}
	free(copy);
	/* unfolding gives the subject back */
	copy = strdup(strstr(text, "Subject: ") + 9);
	assert_non_null(copy);
	*strstr(copy, "\r\nMessage-ID") = '\0';
	unfold(copy);
	assert_string_equal(copy, subject);
	free(copy);
	free(text);

	/* no blank to fold at: long is fine, beyond 998 is not */
	{
		char id[1200];

		memset(id, 'x', sizeof(id));
		id[0] = '<';
		memcpy(id + 500, "@example.org>", 14);
		m = message();
		m.message_id = id;
		assert_int_equal(report_message_render(&text, &m), 0);
		assert_non_null(strstr(text, id));
		free(text);
		memcpy(id + 500, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		       39);
		memcpy(id + 1100, "@example.org>", 14);
		assert_int_equal(report_message_render(&text, &m), -E2BIG);
		assert_null(text);
	}
}

static int base64_value(char c)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = strchr(digits, c);

	return c && p ? (int)(p - digits) : -1;
}

/* Decode the Subject's RFC 2047 words (B, UTF-8) into `out`. */
static void decode_subject(const char *text, char *out, size_t size)
{
	const char *p = strstr(text, "\r\nSubject: ") + 11;
	size_t n = 0;

	for (;;) {
		const char *end;
		unsigned int acc = 0, bits = 0;

		assert_true(strncmp(p, "=?UTF-8?B?", 10) == 0);
		p += 10;
		end = strstr(p, "?=");
		assert_non_null(end);
		assert_true(end - p + 12 <= 75);
		for (; p < end && *p != '='; p++) {
			int v = base64_value(*p);

			assert_true(v >= 0);
			acc = (acc << 6) | (unsigned int)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				assert_true(n + 1 < size);
				out[n++] = (char)((acc >> bits) & 0xff);
			}
		}
		p = end + 2;
		assert_true(strncmp(p, "\r\n", 2) == 0);
		p += 2;
		if (*p != ' ')
			break;
		p++;
	}
	out[n] = '\0';
	assert_true(strncmp(p, "Message-ID: ", 12) == 0);
}

static void test_report__message_encodes_utf8_subject(void **state)
{
	struct report_message m = message();
	char *text = NULL, decoded[1024], subject[512], *line, *save, *copy;
	size_t i;

	(void)state;
	m.subject =
	    "[linus:master] [net]  e9669a00bb:  bench " PM "3% improvement";
	assert_int_equal(report_message_render(&text, &m), 0);
	assert_crlf_only(text);
	assert_non_null(strstr(text, "\r\nSubject: =?UTF-8?B?"));
	decode_subject(text, decoded, sizeof(decoded));
	assert_string_equal(decoded, m.subject);
	free(text);

	/* long: several words, none splitting a character */
	subject[0] = '\0';
	for (i = 0; i < 30; i++)
		strcat(subject, "caf\xc3\xa9 \xe2\x82\xac ");
	m.subject = subject;
	assert_int_equal(report_message_render(&text, &m), 0);
	decode_subject(text, decoded, sizeof(decoded));
	assert_string_equal(decoded, subject);
	copy = strdup(text);
	assert_non_null(copy);
	for (line = strtok_r(copy, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save))
		assert_true(strlen(line) <= 78);
	free(copy);
	free(text);

	/* ASCII that looks like an encoded word is encoded too */
	m.subject = "=?UTF-8?B?QQ==?= is not an A";
	assert_int_equal(report_message_render(&text, &m), 0);
	decode_subject(text, decoded, sizeof(decoded));
	assert_string_equal(decoded, m.subject);
	free(text);

	/* not UTF-8 */
	m.subject = "caf\xe9";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.subject = "\xc0\xaf overlong";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.subject = "\xed\xa0\x80 surrogate";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.subject = "cut \xe2\x82";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	assert_null(text);
}

static void test_report__message_refuses_injection(void **state)
{
	static const char *const injected_to[] = {
	    "x@example.org\r\nBcc: evil@example.org"};
	static const char *const injected_lf[] = {
	    "x@example.org\nBcc: evil@example.org"};
	struct report_message m;
	char *text = (char *)"sentinel";

	(void)state;
	m = message();
	m.subject = "fine\r\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	assert_null(text);
	m.subject = "fine\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.subject = "caf\xc3\xa9\r\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.to = injected_to;
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.to = injected_lf;
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.cc = injected_to;
	m.cc_count = 1;
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.from = "robot <robot@statbisect.example>\r\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.from = "robot\n <robot@statbisect.example>";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.date = "Wed, 29 May 2024\r\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.message_id = "<a@b>\r\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.in_reply_to = "<a@b>\nBcc: evil@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	assert_null(text);
}

static void test_report__message_refuses_bad_addresses(void **state)
{
	static const char *const bad[] = {
	    "",
	    "dev",
	    "dev@",
	    "@example.org",
	    "Dev <dev@example.org>",
	    "<dev@example.org>",
	    "dev@example.org, evil@example.org",
	    "dev@@example.org",
	    "d ev@example.org",
	    ".dev@example.org",
	    "dev.@example.org",
	    "de..v@example.org",
	    "dev@-example.org",
	    "dev@example-.org",
	    "dev@example..org",
	    "dev@example.org.",
	    "dev@exa_mple.org",
	    "\"dev\"@example.org",
	    "dev@[127.0.0.1]",
	    "d\xc3\xa9v@example.org",
	};
	static const char *const good[] = {
	    "dev@example.org",
	    "first.last+tag@sub.example.co.uk",
	    "o'brien@example.org",
	    "root@localhost",
	};
	struct report_message m = message();
	char *text = NULL;
	size_t i;

	(void)state;
	assert_false(report_address_is_valid(NULL));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(report_address_is_valid(bad[i]));
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(report_address_is_valid(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m.to = &bad[i];
		if (report_message_render(&text, &m) != -EINVAL)
			fail_msg("recipient accepted: \"%s\"", bad[i]);
		assert_null(text);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		m.to = &good[i];
		assert_int_equal(report_message_render(&text, &m), 0);
		free(text);
	}
	m = message();
	m.to_count = 0;
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.from = "robot <not an address>";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.from = "robot <robot@statbisect.example> trailing";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.from = "r\xc3\xb6"
		 "bot <robot@statbisect.example>";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.message_id = "no-angle-brackets@example.org";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.message_id = "<no-at-sign>";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m.message_id = "<a b@example.org>";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.subject = "";
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	m = message();
	m.date = NULL;
	assert_int_equal(report_message_render(&text, &m), -EINVAL);
	assert_int_equal(report_message_render(&text, NULL), -EINVAL);
	assert_int_equal(report_message_render(NULL, &m), -EINVAL);
}

static void test_report__message_body_line_limit(void **state)
{
	struct report_message m = message();
	char body[1100], *text = NULL;

	(void)state;
	memset(body, 'x', 998);
	strcpy(body + 998, "\nok\n");
	m.body = body;
	assert_int_equal(report_message_render(&text, &m), 0);
	free(text);
	memset(body, 'x', 999);
	strcpy(body + 999, "\nok\n");
	assert_int_equal(report_message_render(&text, &m), -E2BIG);
	assert_null(text);
}

/* A whole report, rendered and wrapped: the body survives unchanged. */
static void test_report__message_of_a_report(void **state)
{
	struct report_input in = fixture(REPORT_REGRESSION);
	struct report_message m = message();
	char *subject = NULL, *body = NULL, *text = NULL, *p, *w;

	(void)state;
	assert_int_equal(report_render_subject(&subject, &in), 0);
	assert_int_equal(report_render_body(&body, &in), 0);
	m.subject = subject;
	m.body = body;
	assert_int_equal(report_message_render(&text, &m), 0);
	assert_crlf_only(text);
	p = strstr(text, "\r\n\r\n") + 4;
	for (w = p; *p; p++)
		if (*p != '\r')
			*w++ = *p;
	*w = '\0';
	assert_string_equal(strstr(text, "\r\n\r\n") + 4, body);
	free(text);
	free(body);
	free(subject);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report__seed_rows_byte_for_byte),
	    cmocka_unit_test(test_report__seed_tables_byte_for_byte),
	    cmocka_unit_test(test_report__seed_subjects),
	    cmocka_unit_test(test_report__value_boundaries),
	    cmocka_unit_test(test_report__change_formatting),
	    cmocka_unit_test(test_report__absolute_change_metrics),
	    cmocka_unit_test(test_report__stddev_boundaries),
	    cmocka_unit_test(test_report__row_refuses_bad_input),
	    cmocka_unit_test(test_report__subsystem),
	    cmocka_unit_test(test_report__subject_kinds),
	    cmocka_unit_test(test_report__regression_body),
	    cmocka_unit_test(test_report__improvement_body),
	    cmocka_unit_test(test_report__range_bodies),
	    cmocka_unit_test(test_report__inconclusive_reason_and_build_logs),
	    cmocka_unit_test(test_report__kpi_row_first),
	    cmocka_unit_test(test_report__body_refuses_bad_input),
	    cmocka_unit_test(test_report__message_headers_and_crlf),
	    cmocka_unit_test(test_report__message_folds_long_headers),
	    cmocka_unit_test(test_report__message_encodes_utf8_subject),
	    cmocka_unit_test(test_report__message_refuses_injection),
	    cmocka_unit_test(test_report__message_refuses_bad_addresses),
	    cmocka_unit_test(test_report__message_body_line_limit),
	    cmocka_unit_test(test_report__message_of_a_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
