#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
	    "nan",   "NaN",   "-nan",	"inf",		"-inf",	  "Infinity",
	    "0x10",  "0x1p3", "0X1P-2", "1e999",	"-1e999", "1,5",
	    "1.2.3", "--1",   "+-1",	"1e",		"1e+",	  "e5",
	    ".",     "+",     "-",	".e1",		"12abc",  "1 2",
	    "3 %",   "12 s",  "1_000",	"\xef\xbc\x91", "1\r2",	  "1f",
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
	    "de_DE.UTF-8", "de_DE.utf8",  "fr_FR.UTF-8",
	    "fr_FR.utf8",  "nl_NL.UTF-8", "ru_RU.UTF-8",
	};
	locale_t comma = (locale_t)0, before;
	struct metrics *m;

	(void)state;
	for (size_t i = 0; i < sizeof(comma_locales) / sizeof(char *); i++) {
		comma =
		    newlocale(LC_NUMERIC_MASK, comma_locales[i], (locale_t)0);
		if (comma != (locale_t)0)
			break;
	}
	if (comma == (locale_t)0)
		fail_msg("no locale with a decimal comma is installed: "
			 "scripts/install-deps generates de_DE.UTF-8");
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

static struct metrics *parse_json(const char *text, const char *prefix,
				  enum metrics_format want)
{
	enum metrics_format format = (enum metrics_format) - 1;
	struct metrics *m = NULL;

	assert_int_equal(
	    metrics_parse_output(&m, text, strlen(text), prefix, &format), 0);
	assert_non_null(m);
	assert_int_equal(format, want);
	return m;
}

static void test_metrics__flat_json(void **state)
{
	struct metrics *m;

	(void)state;
	m = parse_json("{\"a\": 1, \"b.c\": 2.5, \"s\": \"7\", \"t\": true,"
		       " \"n\": null, \"arr\": [1, 2], \"neg\": -3e-2,"
		       " \"nested\": {\"x\": 3, \"y\": {\"z\": 4}, \"e\": {}},"
		       " \"sp ace\\u00e9\": 5, \"\": 6, \"big\":"
		       " 123456789012345678901234567890, \"a\": 8}",
		       NULL, METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 7);
	assert_entry(m, 0, "a", 8); /* the last value wins */
	assert_entry(m, 1, "b.c", 2.5);
	assert_entry(m, 2, "neg", -3e-2);
	assert_entry(m, 3, "nested.x", 3);
	assert_entry(m, 4, "nested.y.z", 4);
	assert_entry(m, 5, "sp_ace__", 5);
	assert_entry(m, 6, "big", 123456789012345678901234567890.0);
	metrics_free(m);

	m = parse_json("{\"a\": 1, \"n\": {\"b\": 2}}", "mon.",
		       METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, "mon.a", 1);
	assert_entry(m, 1, "mon.n.b", 2);
	metrics_free(m);
}

static void test_metrics__json_name_length_limit(void **state)
{
	char text[700], key[300];
	struct metrics *m;

	(void)state;
	memset(key, 'k', sizeof(key));
	key[METRICS_NAME_MAX] = '\0';
	snprintf(text, sizeof(text), "{\"%s\": 1, \"%sk\": 2, \"o\": 3}", key,
		 key);
	m = parse_json(text, NULL, METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, key, 1);
	assert_entry(m, 1, "o", 3);
	metrics_free(m);
	/* with a prefix the 255-byte key no longer fits */
	m = parse_json(text, "p.", METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "p.o", 3);
	metrics_free(m);
}

/* Shaped as benchmark 1.8's --benchmark_format=json prints it. */
static const char gbench_json[] =
    "{\n"
    "  \"context\": {\"date\": \"2024-01-01T00:00:00+00:00\","
    " \"num_cpus\": 8, \"mhz_per_cpu\": 2400, \"library_build_type\":"
    " \"release\"},\n"
    "  \"benchmarks\": [\n"
    "    {\"name\": \"BM_memcpy/8\", \"family_index\": 0,"
    " \"per_family_instance_index\": 0, \"run_name\": \"BM_memcpy/8\","
    " \"run_type\": \"iteration\", \"repetitions\": 1,"
    " \"repetition_index\": 0, \"threads\": 1, \"iterations\": 89600000,"
    " \"real_time\": 7.5, \"cpu_time\": 7.25, \"time_unit\": \"ns\","
    " \"bytes_per_second\": 1.0e9, \"items_per_second\": 1.3e8},\n"
    "    {\"name\": \"BM_sort/1024\", \"run_name\": \"BM_sort/1024\","
    " \"run_type\": \"iteration\", \"iterations\": 1000,"
    " \"real_time\": 10, \"cpu_time\": 9, \"time_unit\": \"us\","
    " \"Swaps\": 512, \"label\": \"quick\"},\n"
    "    {\"name\": \"BM_sort/1024\", \"run_name\": \"BM_sort/1024\","
    " \"run_type\": \"iteration\", \"iterations\": 1000,"
    " \"real_time\": 20, \"cpu_time\": 19, \"time_unit\": \"us\","
    " \"Swaps\": 514},\n"
    "    {\"name\": \"BM_sort/1024\", \"run_name\": \"BM_sort/1024\","
    " \"run_type\": \"iteration\", \"iterations\": 1000,"
    " \"real_time\": 30, \"cpu_time\": 29, \"time_unit\": \"us\","
    " \"Swaps\": 516},\n"
    "    {\"name\": \"BM_sort/1024_mean\", \"run_name\": \"BM_sort/1024\","
    " \"run_type\": \"aggregate\", \"aggregate_name\": \"mean\","
    " \"aggregate_unit\": \"time\", \"iterations\": 3,"
    " \"real_time\": 20, \"cpu_time\": 19, \"time_unit\": \"us\","
    " \"Swaps\": 514},\n"
    "    {\"name\": \"BM_sort/1024_cv\", \"run_name\": \"BM_sort/1024\","
    " \"run_type\": \"aggregate\", \"aggregate_name\": \"cv\","
    " \"aggregate_unit\": \"percentage\", \"iterations\": 3,"
    " \"real_time\": 0.5, \"cpu_time\": 0.25, \"time_unit\": \"us\"},\n"
    "    {\"name\": \"BM_slow\", \"run_type\": \"iteration\","
    " \"real_time\": 1.5, \"cpu_time\": 2, \"time_unit\": \"s\"},\n"
    "    {\"name\": \"BM_ms\", \"real_time\": 3, \"cpu_time\": 4,"
    " \"time_unit\": \"ms\"},\n"
    "    {\"name\": \"BM_odd unit\", \"real_time\": 3, \"cpu_time\": 4,"
    " \"time_unit\": \"fortnight\", \"items_per_second\": 5},\n"
    "    {\"name\": \"BM_failed\", \"error_occurred\": true,"
    " \"error_message\": \"oops\", \"real_time\": 1, \"cpu_time\": 1,"
    " \"time_unit\": \"ns\"},\n"
    "    {\"run_name\": \"nameless\", \"real_time\": 1},\n"
    "    \"not an object\"\n"
    "  ]\n"
    "}\n";

static void test_metrics__google_benchmark_json(void **state)
{
	struct metrics *m;
	size_t i = 0;

	(void)state;
	m = parse_json(gbench_json, NULL, METRICS_FORMAT_GBENCH);
	assert_int_equal(m->count, 17);
	assert_entry(m, i++, "BM_memcpy/8.real_time_ns", 7.5);
	assert_entry(m, i++, "BM_memcpy/8.cpu_time_ns", 7.25);
	assert_entry(m, i++, "BM_memcpy/8.bytes_per_second", 1.0e9);
	assert_entry(m, i++, "BM_memcpy/8.items_per_second", 1.3e8);
	/* three repetitions: their mean */
	assert_entry(m, i++, "BM_sort/1024.real_time_ns", 20000);
	assert_entry(m, i++, "BM_sort/1024.cpu_time_ns", 19000);
	assert_entry(m, i++, "BM_sort/1024.Swaps", 514);
	assert_entry(m, i++, "BM_sort/1024.mean.real_time_ns", 20000);
	assert_entry(m, i++, "BM_sort/1024.mean.cpu_time_ns", 19000);
	assert_entry(m, i++, "BM_sort/1024.mean.Swaps", 514);
	assert_entry(m, i++, "BM_sort/1024.cv.real_time%", 50);
	assert_entry(m, i++, "BM_sort/1024.cv.cpu_time%", 25);
	assert_entry(m, i++, "BM_slow.real_time_ns", 1.5e9);
	assert_entry(m, i++, "BM_slow.cpu_time_ns", 2e9);
	assert_entry(m, i++, "BM_ms.real_time_ns", 3e6);
	assert_entry(m, i++, "BM_ms.cpu_time_ns", 4e6);
	assert_entry(m, i++, "BM_odd_unit.items_per_second", 5);
	assert_null(metrics_find(m, "BM_odd_unit.real_time_ns"));
	assert_null(metrics_find(m, "BM_failed.real_time_ns"));
	/* a row without a name is skipped */
	assert_null(metrics_find(m, "nameless.real_time_ns"));
	metrics_free(m);
}

static void test_metrics__google_benchmark_no_run_name(void **state)
{
	struct metrics *m;

	(void)state;
	/* releases before run_name existed: the aggregate's own name */
	m = parse_json("{\"benchmarks\": [{\"name\": \"BM_a_median\","
		       " \"run_type\": \"aggregate\", \"aggregate_name\":"
		       " \"median\", \"real_time\": 2, \"cpu_time\": 1,"
		       " \"time_unit\": \"ns\"}, {\"name\": \"BM_b\","
		       " \"run_type\": \"aggregate\", \"real_time\": 1}]}",
		       NULL, METRICS_FORMAT_GBENCH);
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, "BM_a_median.median.real_time_ns", 2);
	assert_entry(m, 1, "BM_a_median.median.cpu_time_ns", 1);
	metrics_free(m);
}

static const char hyperfine_json[] =
    "{\n"
    "  \"results\": [\n"
    "    {\n"
    "      \"command\": \"./bench --quick\",\n"
    "      \"mean\": 0.125, \"stddev\": 0.0025, \"median\": 0.124,\n"
    "      \"user\": 0.1, \"system\": 0.02, \"min\": 0.12,"
    " \"max\": 0.131,\n"
    "      \"times\": [0.12, 0.124, 0.131],\n"
    "      \"exit_codes\": [0, 0, 0]\n"
    "    },\n"
    "    {\n"
    "      \"command\": \"sleep 0.5\", \"mean\": 0.5, \"stddev\": null,\n"
    "      \"median\": 0.5, \"user\": 0.001, \"system\": 0.002,"
    " \"min\": 0.5, \"max\": 0.5, \"times\": [0.5],\n"
    "      \"parameters\": {\"t\": \"0.5\"}\n"
    "    }\n"
    "  ]\n"
    "}\n";

static void test_metrics__hyperfine_json(void **state)
{
	struct metrics *m;
	size_t i = 0;

	(void)state;
	m = parse_json(hyperfine_json, NULL, METRICS_FORMAT_HYPERFINE);
	assert_int_equal(m->count, 13);
	assert_entry(m, i++, "./bench_--quick.mean_s", 0.125);
	assert_entry(m, i++, "./bench_--quick.stddev_s", 0.0025);
	assert_entry(m, i++, "./bench_--quick.median_s", 0.124);
	assert_entry(m, i++, "./bench_--quick.min_s", 0.12);
	assert_entry(m, i++, "./bench_--quick.max_s", 0.131);
	assert_entry(m, i++, "./bench_--quick.user_s", 0.1);
	assert_entry(m, i++, "./bench_--quick.system_s", 0.02);
	assert_entry(m, i++, "sleep_0.5.mean_s", 0.5);
	assert_entry(m, i++, "sleep_0.5.median_s", 0.5);
	assert_entry(m, i++, "sleep_0.5.min_s", 0.5);
	assert_entry(m, i++, "sleep_0.5.max_s", 0.5);
	assert_entry(m, i++, "sleep_0.5.user_s", 0.001);
	assert_entry(m, i++, "sleep_0.5.system_s", 0.002);
	assert_null(metrics_find(m, "sleep_0.5.stddev_s"));
	metrics_free(m);

	/* "results" without command and mean is flat JSON */
	m = parse_json("{\"results\": [{\"x\": 1}], \"y\": 2}", NULL,
		       METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "y", 2);
	metrics_free(m);
}

static void test_metrics__output_detects_the_format(void **state)
{
	struct metrics *m;

	(void)state;
	/* blanks before the object; lines after it are added */
	m = parse_json(" \r\n\t{\"a\": 1}\nb: 2\nwarming up\na: 3\n", NULL,
		       METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 2);
	assert_entry(m, 0, "a", 3);
	assert_entry(m, 1, "b", 2);
	metrics_free(m);
	/* not JSON after all: lines */
	m = parse_json("{ warming up\nx: 1\n", NULL, METRICS_FORMAT_LINES);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "x", 1);
	metrics_free(m);
	m = parse_json("x: 1\n{\"a\": 2}\n", NULL, METRICS_FORMAT_LINES);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "x", 1);
	metrics_free(m);
	/* an array, a number overflowing a double, invalid UTF-8 */
	m = parse_json("[{\"a\": 1}]\n", NULL, METRICS_FORMAT_LINES);
	assert_int_equal(m->count, 0);
	metrics_free(m);
	m = parse_json("{\"a\": 1e999}\nb: 1\n", NULL, METRICS_FORMAT_LINES);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "b", 1);
	metrics_free(m);
	m = parse_json("{\"\xff\": 1}\n", NULL, METRICS_FORMAT_LINES);
	assert_int_equal(m->count, 0);
	metrics_free(m);
	m = parse_json("", NULL, METRICS_FORMAT_LINES);
	assert_int_equal(m->count, 0);
	metrics_free(m);
}

static void test_metrics__json_errors(void **state)
{
	enum metrics_format format = METRICS_FORMAT_LINES;
	struct metrics *m = (struct metrics *)1;

	(void)state;
	assert_int_equal(metrics_parse_json(&m, "a: 1", 4, NULL, &format),
			 -EBADMSG);
	assert_null(m);
	assert_int_equal(metrics_parse_json(&m, "{\"a\": ", 6, NULL, NULL),
			 -EBADMSG);
	assert_int_equal(metrics_parse_json(&m, "   ", 3, NULL, NULL),
			 -EBADMSG);
	assert_int_equal(metrics_parse_json(&m, "{}", 2, "bad prefix", NULL),
			 -EINVAL);
	assert_int_equal(metrics_parse_json(NULL, "{}", 2, NULL, NULL),
			 -EINVAL);
	assert_int_equal(metrics_parse_output(&m, NULL, 1, NULL, NULL),
			 -EINVAL);
	/* only `len` bytes are read */
	assert_int_equal(
	    metrics_parse_json(&m, "{\"a\": 1}x", 8, NULL, &format), 0);
	assert_int_equal(format, METRICS_FORMAT_JSON);
	assert_int_equal(m->count, 1);
	assert_entry(m, 0, "a", 1);
	metrics_free(m);
	assert_string_equal(metrics_format_name(METRICS_FORMAT_LINES),
			    "lines");
	assert_string_equal(metrics_format_name(METRICS_FORMAT_JSON), "json");
	assert_string_equal(metrics_format_name(METRICS_FORMAT_GBENCH),
			    "google-benchmark");
	assert_string_equal(metrics_format_name(METRICS_FORMAT_HYPERFINE),
			    "hyperfine");
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
	    cmocka_unit_test(test_metrics__flat_json),
	    cmocka_unit_test(test_metrics__json_name_length_limit),
	    cmocka_unit_test(test_metrics__google_benchmark_json),
	    cmocka_unit_test(test_metrics__google_benchmark_no_run_name),
	    cmocka_unit_test(test_metrics__hyperfine_json),
	    cmocka_unit_test(test_metrics__output_detects_the_format),
	    cmocka_unit_test(test_metrics__json_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
