/*
 * Unit tests of lib/promtext.c and server/metrics.c's metrics_render: the
 * text of GET /metrics is the Prometheus exposition format 0.0.4, label
 * values and help text escaped, every figure where a scraper looks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/metrics.h"
#include "promtext.h"

static char *finish(struct strbuf *buf)
{
	char *text = NULL;
	size_t len;

	assert_int_equal(strbuf_finish(&text, &len, buf), 0);
	return text;
}

static void
test_promtext__label_values_escape_backslash_quote_newline(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	struct promtext_label labels[2] = {{"route", "a\\b\"c\nd"},
					   {"group", "plain {x}"}};
	char *text;

	(void)state;
	promtext_sample(&buf, "m_total", labels, 2, 7);
	text = finish(&buf);
	assert_string_equal(
	    text,
	    "m_total{route=\"a\\\\b\\\"c\\nd\",group=\"plain {x}\"} 7\n");
	free(text);
}

static void
test_promtext__help_escapes_backslash_and_newline_only(void **state)
{
	struct strbuf buf = STRBUF_INIT;
	char *text;

	(void)state;
	promtext_family(&buf, "m", "gauge", "a \"b\" c\\d\ne");
	text = finish(&buf);
	assert_string_equal(text, "# HELP m a \"b\" c\\\\d\\ne\n"
				  "# TYPE m gauge\n");
	free(text);
}

static void test_promtext__numbers(void **state)
{
	const struct {
		double value;
		const char *text;
	} cases[] = {{0, "m 0\n"},
		     {42, "m 42\n"},
		     {-3, "m -3\n"},
		     {0.5, "m 0.5\n"},
		     {1e20, "m 1e+20\n"},
		     {NAN, "m NaN\n"},
		     {INFINITY, "m +Inf\n"},
		     {-INFINITY, "m -Inf\n"},
		     {0.1, "m 0.10000000000000001\n"}};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf buf = STRBUF_INIT;
		char *text;

		promtext_sample(&buf, "m", NULL, 0, cases[i].value);
		text = finish(&buf);
		assert_string_equal(text, cases[i].text);
		if (!isnan(cases[i].value))
			assert_true(strtod(text + 2, NULL) == cases[i].value);
		free(text);
	}
}

/* Whether `line` is "name{l="v",...} value" with a valid metric name,
 * label names, escapes (only \\ \" \n) and a number; *name gets the
 * metric's name. */
static bool sample_line(const char *line, char *name, size_t size)
{
	const char *p = line;
	size_t n = 0;
	char *end;

	if (!isalpha((unsigned char)*p) && *p != '_' && *p != ':')
		return false;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == ':') {
		if (n + 1 < size)
			name[n++] = *p;
		p++;
	}
	name[n] = '\0';
	if (*p == '{') {
		p++;
		while (*p != '}') {
			if (!isalpha((unsigned char)*p) && *p != '_')
				return false;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			if (p[0] != '=' || p[1] != '"')
				return false;
			for (p += 2; *p != '"'; p++) {
				if (*p == '\0' || *p == '\n')
					return false;
				if (*p == '\\' &&
				    strchr("\\\"n", *++p) == NULL)
					return false;
			}
			p++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return false;
		}
		p++;
	}
	if (*p++ != ' ')
		return false;
	if (strcmp(p, "NaN") == 0 || strcmp(p, "+Inf") == 0 ||
	    strcmp(p, "-Inf") == 0)
		return true;
	strtod(p, &end);
	return end != p && *end == '\0';
}

/* Checks every line of `text`: a family's HELP, then its TYPE, then only
 * samples of that family (histograms: _bucket, _sum, _count). */
static void assert_exposition(char *text)
{
	char family[128] = "", name[128];
	char *save = NULL, *line;
	size_t len = strlen(text);

	assert_true(len > 0 && text[len - 1] == '\n');
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			assert_int_equal(sscanf(line + 7, "%127s", family), 1);
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			char type[32];

			assert_int_equal(
			    sscanf(line + 7, "%127s %31s", name, type), 2);
			assert_string_equal(name, family);
			assert_non_null(
			    strstr(" counter gauge histogram ", type));
			continue;
		}
		if (!sample_line(line, name, sizeof(name)))
			fail_msg("not a sample line: '%s'", line);
		if (strncmp(name, family, strlen(family)) != 0)
			fail_msg("sample '%s' outside its family '%s'", line,
				 family);
	}
}

static void test_metrics__render_is_exposition_format(void **state)
{
	struct store_metrics_group groups[2] = {{"lkp-ivb-2ep2", 3, 2},
						{"odd \"group\"\\x", 0, 1}};
	struct store_metrics_state states[2] = {{"done", 4}, {"running", 1}};
	struct store_metrics db = {0};
	struct metrics_process proc = {0};
	struct http_count requests[2] = {{"GET", "/api/v1/jobs/{}", 200, 12},
					 {"other", NULL, 404, 1}};
	char *text = NULL;
	size_t i;

	(void)state;
	proc.cache.hits = 120;
	proc.cache.misses = 7;
	proc.cache.kept = 5;
	proc.claims_woken = 33;
	proc.claims_waiting = 4;
	db.groups = groups;
	db.group_count = 2;
	db.states = states;
	db.state_count = 2;
	db.runs_total = 57;
	db.duration_count = 4;
	db.duration_sum = 95.5;
	for (i = 0; i < metrics_duration_bound_count; i++)
		db.duration_le[i] = i == 0 ? 1 : i == 1 ? 3 : 4;
	db.outbox_pending = 2;
	db.outbox_failed = 1;
	db.outbox_sent = 9;
	proc.requests = requests;
	proc.request_count = 2;
	assert_int_equal(metrics_render(&text, &db, &proc), 0);
	{
		const char *want[] = {
		    "\nstatbisect_tasks_queued{group=\"lkp-ivb-2ep2\"} 3\n",
		    "\nstatbisect_tasks_queued{group=\"odd "
		    "\\\"group\\\"\\\\x\"} 0\n",
		    "\nstatbisect_workers_alive{group=\"lkp-ivb-2ep2\"} 2\n",
		    "\n# TYPE statbisect_runs_total counter\n"
		    "statbisect_runs_total 57\n",
		    "\nstatbisect_jobs{state=\"done\"} 4\n",
		    "\nstatbisect_jobs{state=\"queued\"} 0\n",
		    "\nstatbisect_jobs{state=\"running\"} 1\n",
		    "\n# TYPE statbisect_job_duration_seconds histogram\n"
		    "statbisect_job_duration_seconds_bucket{le=\"10\"} 1\n"
		    "statbisect_job_duration_seconds_bucket{le=\"30\"} 3\n"
		    "statbisect_job_duration_seconds_bucket{le=\"60\"} 4\n",
		    "\nstatbisect_job_duration_seconds_bucket{le=\"+Inf\"} 4\n"
		    "statbisect_job_duration_seconds_sum 95.5\n"
		    "statbisect_job_duration_seconds_count 4\n",
		    "\nstatbisect_mail_outbox{state=\"pending\"} 2\n",
		    "\nstatbisect_mail_outbox{state=\"failed\"} 1\n",
		    "\nstatbisect_mail_outbox{state=\"sent\"} 9\n",
		    "\n# TYPE statbisect_http_requests_total counter\n"
		    "statbisect_http_requests_total{method=\"GET\","
		    "route=\"/api/v1/jobs/{}\",status=\"200\"} 12\n"
		    "statbisect_http_requests_total{method=\"other\","
		    "route=\"unmatched\",status=\"404\"} 1\n",
		    "\n# TYPE statbisect_jobcache_hits_total counter\n"
		    "statbisect_jobcache_hits_total 120\n",
		    "\nstatbisect_jobcache_misses_total 7\n",
		    "\nstatbisect_jobcache_kept_total 5\n",
		    "\n# TYPE statbisect_claims_woken_total counter\n"
		    "statbisect_claims_woken_total 33\n",
		    "\n# TYPE statbisect_claims_waiting gauge\n"
		    "statbisect_claims_waiting 4\n",
		};

		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (strstr(text, want[i]) == NULL)
				fail_msg("no '%s' in:\n%s", want[i], text);
	}
	assert_true(strncmp(text, "# HELP ", 7) == 0);
	assert_exposition(text);
	free(text);
}

/* The checker itself refuses what is not the format. */
static void test_metrics__checker_refuses_bad_lines(void **state)
{
	const char *bad[] = {
	    "m{a=\"x\\q\"} 1", "m{a=\"x} 1", "m 1 2", "m{1a=\"x\"} 1", "9m 1",
	    "m{a=\"x\"}1",     "m abc"};
	char name[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sample_line(bad[i], name, sizeof(name)))
			fail_msg("'%s' taken as a sample", bad[i]);
	assert_true(sample_line("m_total{a=\"\\\\\\\"\\n\",b=\"\"} -1.5e3",
				name, sizeof(name)));
	assert_string_equal(name, "m_total");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_promtext__label_values_escape_backslash_quote_newline),
	    cmocka_unit_test(
		test_promtext__help_escapes_backslash_and_newline_only),
	    cmocka_unit_test(test_promtext__numbers),
	    cmocka_unit_test(test_metrics__render_is_exposition_format),
	    cmocka_unit_test(test_metrics__checker_refuses_bad_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
