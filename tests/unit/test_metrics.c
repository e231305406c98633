#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static struct metrics *parse(const char *text, const char *prefix)
{
	struct metrics *m = NULL;

	assert_int_equal(metrics_parse(&m, text, strlen(text), prefix), 0);
	assert_non_null(m);
	return m;
}

static void assert_entry(const struct metrics *m, size_t i, const char *name,
			 double value)
{
	assert_true(i < m->count);
	assert_string_equal(m->entries[i].name, name);
	assert_true(m->entries[i].value == value);
}

/* The value that line "x: <text>" gives, or NAN when it is no metric. */
static double value_of(const char *text)
{
	struct metrics *m;
	char line[128];
	double value;

	snprintf(line, sizeof(line), "x: %s\n", text);
	m = parse(line, NULL);
	assert_true(m->count <= 1);
	value = m->count ? m->entries[0].value : NAN;
	metrics_free(m);
	return value;
}

static void test_metrics__robot_style_names(void **state)
{
	struct metrics *m;

	(void)state;
	m = parse("aim9.udp_test.ops_per_sec: 294621\n"
		  "perf-stat.i.cpi: 1.58\n"
		  "perf-profile.calltrace.cycles-pp.__errno_location@plt: "
		  "0.12\n"
		  "foo%: 3.1\n"
		  "perf-profile.self.cycles-pp.std::vector<int>::at: 0.5\n"
		  "a:b: 7\n",
		  NULL);
	assert_int_equal(m->count, 6);
	assert_entry(m, 0, "aim9.udp_test.ops_per_sec", 294621);
	assert_entry(m, 1, "perf-stat.i.cpi", 1.58);
	assert_entry(m, 2,
		     "perf-profile.calltrace.cycles-pp.__errno_location@plt",
		     0.12);
	assert_entry(m, 3, "foo%", 3.1);
	assert_entry(m, 4, "perf-profile.self.cycles-pp.std::vector<int>::at",
		     0.5);
	assert_entry(m, 5, "a:b", 7);
	assert_ptr_equal(metrics_find(m, "perf-stat.i.cpi"), &m->entries[1]);
	assert_null(metrics_find(m, "perf-stat.i"));
	metrics_free(m);
}

static void test_metrics__ignores_other_lines(void **state)
{
	struct metrics *m;

	(void)state;
	m = parse("running synthetic benchmark\n"
		  "time: 12 s\n"
		  "\n"
		  "  indented: 3\n"
		  "\tindented: 3\n"
		  "no separator 4\n"
		  "a b: 5\n"
		  ": 6\n"
		  "nospace:7\n"
		  "empty:\n"
		  "blank: \t \n"
		  "two: values: 8\n"
		  "caf\xc3\xa9: 9\n"
		  "bell\a: 10\n"
		  "kept: 11\n"
		  "Done.\n",
		  NULL);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "kept", 11);
	metrics_free(m);
}

static void test_metrics__rejects_invalid_numbers(void **state)
{
	static const char *const invalid[] = {
		"nan", "NaN", "-nan", "inf", "-inf", "Infinity", "0x10",
		"0x1p3", "0X1P-2", "1e999", "-1e999", "1,5", "1.2.3", "--1",
		"+-1", "1e", "1e+", "e5", ".", "+", "-", ".e1", "12abc",
		"1 2", "3 %", "12 s", "1_000", "\xef\xbc\x91", "1\r2", "1f",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(invalid) / sizeof(*invalid); i++) {
		if (!isnan(value_of(invalid[i])))
			fail_msg("\"%s\" was taken as a number", invalid[i]);
	}
}

static void test_metrics__accepts_decimal_forms(void **state)
{
	(void)state;
	assert_true(value_of("42") == 42);
	assert_true(value_of("007") == 7);
	assert_true(value_of("+4") == 4);
	assert_true(value_of(".5") == 0.5);
	assert_true(value_of("5.") == 5);
	assert_true(value_of("1e3") == 1000);
	assert_true(value_of("1E+3") == 1000);
	assert_true(value_of("2.5e-3") == 2.5e-3);
	assert_true(value_of("6.02214076e23") == 6.02214076e23);
	assert_true(value_of("1.7976931348623157e308") ==
		    1.7976931348623157e308);
	assert_true(value_of("1e-400") == 0);
	assert_true(value_of("  \t 3.25 \t ") == 3.25);
	assert_true(value_of("0.1") == 0.1);
}

static void test_metrics__negative_values(void **state)
{
	(void)state;
	assert_true(value_of("-1") == -1);
	assert_true(value_of("-0.25") == -0.25);
	assert_true(value_of("-2.5E-3") == -2.5e-3);
	assert_true(value_of("-0") == 0);
	assert_true(signbit(value_of("-0")));
}

static void test_metrics__crlf_line_ends(void **state)
{
	struct metrics *m;

	(void)state;
	m = parse("a: 1\r\nnoise\r\nb: 2.5 \r\nc: 3\r", NULL);
	assert_int_equal(m->count, 3);
	assert_entry(m, 0, "a", 1);
	assert_entry(m, 1, "b", 2.5);
	assert_entry(m, 2, "c", 3);
	metrics_free(m);

	/* A lone CR does not end a line. */
	m = parse("a: 1\rb: 2\n", NULL);
	assert_int_equal(m->count, 0);
	metrics_free(m);
}

static void test_metrics__repeated_name_last_value_wins(void **state)
{
	struct metrics *m;

	(void)state;
	m = parse("a: 1\nb: 2\na: 3\nc: 4\na: 5\nb: nan\n", NULL);
	assert_int_equal(m->count, 3);
	assert_entry(m, 0, "a", 5);
	assert_entry(m, 1, "b", 2);
	assert_entry(m, 2, "c", 4);
	metrics_free(m);
}

static void test_metrics__prefix(void **state)
{
	char name[METRICS_NAME_MAX + 1], text[2 * METRICS_NAME_MAX + 32];
	struct metrics *m = NULL;

	(void)state;
	m = parse("nr_free_pages: 12\nnoise\npgfault: 3e2\n", "vmstat.");
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, "vmstat.nr_free_pages", 12);
	assert_entry(m, 1, "vmstat.pgfault", 300);
	metrics_free(m);

	m = parse("a: 1\n", "");
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "a", 1);
	metrics_free(m);

	assert_int_equal(metrics_parse(&m, "a: 1\n", 5, "vm stat."), -EINVAL);
	assert_null(m);

	/* The prefixed name must fit METRICS_NAME_MAX. */
	memset(name, 'n', METRICS_NAME_MAX - 3);
	name[METRICS_NAME_MAX - 3] = '\0';
	snprintf(text, sizeof(text), "%s: 1\n%s0: 2\n", name, name);
	m = parse(text, "vm.");
	assert_int_equal(m->count, 1);
	assert_int_equal(strlen(m->entries[0].name), METRICS_NAME_MAX);
	assert_true(m->entries[0].value == 1);
	metrics_free(m);
}

static void test_metrics__name_length_limit(void **state)
{
	char name[METRICS_NAME_MAX + 2], text[2 * METRICS_NAME_MAX + 32];
	struct metrics *m;

	(void)state;
	memset(name, 'a', METRICS_NAME_MAX);
	name[METRICS_NAME_MAX] = '\0';
	snprintf(text, sizeof(text), "%s: 1\n%sb: 2\n", name, name);
	m = parse(text, NULL);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, name, 1);
	metrics_free(m);
}

static void test_metrics__empty_input(void **state)
{
	struct metrics *m = NULL;

	(void)state;
	assert_int_equal(metrics_parse(&m, NULL, 0, NULL), 0);
	assert_non_null(m);
	assert_int_equal(m->count, 0);
	assert_null(metrics_find(m, "a"));
	metrics_free(m);

	m = parse("", NULL);
	assert_int_equal(m->count, 0);
	metrics_free(m);

	m = parse("\n\r\n\n", "p.");
	assert_int_equal(m->count, 0);
	metrics_free(m);
}

static void test_metrics__reads_only_len_bytes(void **state)
{
	static const char text[] = "a: 1\nb: 2\0c: 3\nd: 4\ne: 55";
	struct metrics *m = NULL;

	(void)state;
	/* The length ends the text; an embedded NUL spoils its line. */
	assert_int_equal(metrics_parse(&m, text, sizeof(text) - 2, NULL), 0);
	assert_int_equal(m->count, 3);
	assert_entry(m, 0, "a", 1);
	assert_entry(m, 1, "d", 4);
	assert_entry(m, 2, "e", 5);
	metrics_free(m);

	assert_int_equal(metrics_parse(&m, text, 4, NULL), 0);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "a", 1);
	metrics_free(m);
}

static void test_metrics__large_input(void **state)
{
	enum { names = 12000 };
	size_t size = 1 << 20, len = 0;
	struct metrics *m;
	char *text;
	int n;

	(void)state;
	text = malloc(size);
	assert_non_null(text);
	/* 12000 distinct names, then the same names again, then noise. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < names; i++) {
			n = snprintf(text + len, size - len,
				     "bench.metric_%05d.ops: %d.5\n", i,
				     round * 100000 + i);
			assert_true(n > 0 && (size_t)n < size - len);
			len += n;
		}
	}
	while (size - len > 40) {
		n = snprintf(text + len, size - len,
			     "iteration %zu done in 12 ms\n", len);
		len += n;
	}
	assert_true(len > 1000000);

	m = NULL;
	assert_int_equal(metrics_parse(&m, text, len, NULL), 0);
	assert_int_equal(m->count, names);
	assert_entry(m, 0, "bench.metric_00000.ops", 100000.5);
	assert_entry(m, 5432, "bench.metric_05432.ops", 105432.5);
	assert_entry(m, names - 1, "bench.metric_11999.ops", 111999.5);
	assert_ptr_equal(metrics_find(m, "bench.metric_07777.ops"),
			 &m->entries[7777]);
	metrics_free(m);
	free(text);
}

static void test_metrics__decimal_point_ignores_locale(void **state)
{
	static const char *const comma_locales[] = {
		"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
		"nl_NL.UTF-8", "ru_RU.UTF-8",
	};
	locale_t comma = (locale_t)0, before;
	struct metrics *m;

	(void)state;
	for (size_t i = 0; i < sizeof(comma_locales) / sizeof(char *); i++) {
		comma = newlocale(LC_NUMERIC_MASK, comma_locales[i],
				  (locale_t)0);
		if (comma != (locale_t)0)
			break;
	}
	if (comma == (locale_t)0) {
		print_message("no locale with a decimal comma is installed\n");
		skip();
	}
	/* As if the program had called setlocale(); strtod() now stops. */
	before = uselocale(comma);
	assert_true(strtod("1.5", NULL) == 1);
	m = parse("a: 1.5\nb: 2,5\nc: -3.25e1\n", NULL);
	uselocale(before);
	freelocale(comma);
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, "a", 1.5);
	assert_entry(m, 1, "c", -32.5);
	metrics_free(m);
}

static void test_metrics__add_find_free(void **state)
{
	struct metrics *m = NULL;

	(void)state;
	assert_int_equal(metrics_new(&m), 0);
	assert_int_equal(m->count, 0);
	assert_int_equal(metrics_add(m, "time.elapsed_time", 12.5), 0);
	assert_int_equal(metrics_add(m, "kpi", 1), 0);
	assert_int_equal(metrics_add(m, "time.elapsed_time", 13), 0);
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, "time.elapsed_time", 13);
	assert_entry(m, 1, "kpi", 1);

	assert_int_equal(metrics_add(m, "has space", 1), -EINVAL);
	assert_int_equal(metrics_add(m, "", 1), -EINVAL);
	assert_int_equal(metrics_add(m, NULL, 1), -EINVAL);
	assert_int_equal(metrics_add(m, "kpi", NAN), -EINVAL);
	assert_int_equal(metrics_add(m, "kpi", INFINITY), -EINVAL);
	assert_int_equal(metrics_add(NULL, "kpi", 1), -EINVAL);
	assert_int_equal(m->count, 2);
	assert_entry(m, 1, "kpi", 1);

	for (int i = 0; i < 100; i++) {
		char name[32];

		snprintf(name, sizeof(name), "m%d", i);
		assert_int_equal(metrics_add(m, name, i), 0);
	}
	assert_int_equal(m->count, 102);
	assert_entry(m, 101, "m99", 99);
	assert_ptr_equal(metrics_find(m, "m50"), &m->entries[52]);
	assert_null(metrics_find(m, "m100"));
	assert_null(metrics_find(m, NULL));
	assert_null(metrics_find(NULL, "kpi"));
	metrics_free(m);
	metrics_free(NULL);
}

static void test_metrics__name_valid(void **state)
{
	char name[METRICS_NAME_MAX + 2];

	(void)state;
	assert_true(metrics_name_valid("perf-stat.i.cpi"));
	assert_true(metrics_name_valid("foo%"));
	assert_true(metrics_name_valid("!~"));
	assert_false(metrics_name_valid(NULL));
	assert_false(metrics_name_valid(""));
	assert_false(metrics_name_valid("a b"));
	assert_false(metrics_name_valid("a\tb"));
	assert_false(metrics_name_valid("caf\xc3\xa9"));
	assert_false(metrics_name_valid("a\x7f"));
	memset(name, 'x', METRICS_NAME_MAX);
	name[METRICS_NAME_MAX] = '\0';
	assert_true(metrics_name_valid(name));
	name[METRICS_NAME_MAX] = 'x';
	name[METRICS_NAME_MAX + 1] = '\0';
	assert_false(metrics_name_valid(name));
}

static void test_metrics__invalid_arguments(void **state)
{
	struct metrics *m = (struct metrics *)1;

	(void)state;
	assert_int_equal(metrics_parse(NULL, "a: 1\n", 5, NULL), -EINVAL);
	assert_int_equal(metrics_parse(&m, NULL, 1, NULL), -EINVAL);
	assert_null(m);
	assert_int_equal(metrics_new(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics__robot_style_names),
		cmocka_unit_test(test_metrics__ignores_other_lines),
		cmocka_unit_test(test_metrics__rejects_invalid_numbers),
		cmocka_unit_test(test_metrics__accepts_decimal_forms),
		cmocka_unit_test(test_metrics__negative_values),
		cmocka_unit_test(test_metrics__crlf_line_ends),
		cmocka_unit_test(test_metrics__repeated_name_last_value_wins),
		cmocka_unit_test(test_metrics__prefix),
		cmocka_unit_test(test_metrics__name_length_limit),
		cmocka_unit_test(test_metrics__empty_input),
		cmocka_unit_test(test_metrics__reads_only_len_bytes),
		cmocka_unit_test(test_metrics__large_input),
		cmocka_unit_test(test_metrics__decimal_point_ignores_locale),
		cmocka_unit_test(test_metrics__add_find_free),
		cmocka_unit_test(test_metrics__name_valid),
		cmocka_unit_test(test_metrics__invalid_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
