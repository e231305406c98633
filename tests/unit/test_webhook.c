/*
 * Unit tests of lib/webhook.c: the signature is HMAC-SHA256 as RFC 4231
 * and Python's hmac module make it, webhook URLs are http(s) with a host,
 * and the two bodies say what the job found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "webhook.h"

/* RFC 4231, test case 2: a key shorter than the block. */
static void test_webhook__sign_rfc4231_case2(void **state)
{
	char sig[WEBHOOK_SIGNATURE_SIZE];
	const char *data = "what do ya want for nothing?";

	(void)state;
	assert_int_equal(webhook_sign(sig, "Jefe", data, strlen(data)), 0);
	assert_string_equal(sig, "sha256=5bdcc146bf60754e6a042426089575c7"
				 "5a003f089d2739839dec58b964ec3843");
}

/* The signature of a body as a receiver checks it with Python's hmac. */
static void test_webhook__sign_matches_python_hmac(void **state)
{
	const char *body = "{\"event\":\"job.finished\",\"job\":{\"id\":7,"
			   "\"subject\":\"caf\xc3\xa9 \\\"q\\\"\"}}";
	const char *secret = "s3cr\xc3\xa9t with spaces";
	char sig[WEBHOOK_SIGNATURE_SIZE], want[128] = "", cmd[1024];
	FILE *p;

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import hmac,hashlib,sys;"
		 "print(\"sha256=\"+hmac.new(sys.argv[1].encode(),"
		 "sys.argv[2].encode(),hashlib.sha256).hexdigest())' "
		 "'%s' '%s'",
		 secret, body);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(want, sizeof(want), p));
	assert_int_equal(pclose(p), 0);
	want[strcspn(want, "\n")] = '\0';
	assert_int_equal(webhook_sign(sig, secret, body, strlen(body)), 0);
	assert_string_equal(sig, want);
}

static void test_webhook__url_rules(void **state)
{
	static const char *const good[] = {
	    "http://127.0.0.1:8000/hook",
	    "HTTPS://example.org/",
	    "https://api.github.com/repos/o/r/statuses/{sha}",
	    "https://user:pw@hooks.example.org/x?commit={sha}",
	};
	static const char *const bad[] = {
	    "ftp://example.org/hook",
	    "not a url",
	    "example.org/hook",
	    "http://",
	    "https:///path",
	    "http://{sha}/x",
	    "",
	    "http://example.org/a b",
	    "http://example.org/\x01",
	    "javascript:alert(1)",
	    "file:///etc/passwd",
	};
	char *cause = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(webhook_url_check(good[i], &cause), 0);
		assert_null(cause);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(webhook_url_check(bad[i], &cause), -1);
		assert_non_null(cause);
		free(cause);
		cause = NULL;
	}
}

static void test_webhook__url_expand(void **state)
{
	char *got = webhook_url_expand("https://h/r/{sha}?c={sha}", "abc");

	(void)state;
	assert_string_equal(got, "https://h/r/abc?c=abc");
	free(got);
	got = webhook_url_expand("https://h/x", "abc");
	assert_string_equal(got, "https://h/x");
	free(got);
}

static json_t *regression_job(void)
{
	return json_pack(
	    "{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:[s],s:n,"
	    "s:I}",
	    "id", (json_int_t)7, "state", "done", "repo", "toy", "testcase",
	    "score", "kpi", "bench.score", "verdict", "regression", "culprit",
	    "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d", "bad",
	    "ffffffffffffffffffffffffffffffffffffffff", "change_pct", -12.345,
	    "culprits", "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d", "message",
	    "runs", (json_int_t)40);
}

static void test_webhook__github_status_of_regression(void **state)
{
	json_t *job = regression_job(), *body;
	char *text = NULL;

	(void)state;
	assert_int_equal(webhook_body(&text, WEBHOOK_GITHUB_STATUS, job,
				      "https://sb.example.org"),
			 0);
	body = json_loads(text, 0, NULL);
	assert_non_null(body);
	assert_int_equal(json_object_size(body), 4);
	assert_string_equal(json_string_value(json_object_get(body, "state")),
			    "failure");
	assert_string_equal(
	    json_string_value(json_object_get(body, "target_url")),
	    "https://sb.example.org/jobs/7");
	assert_string_equal(
	    json_string_value(json_object_get(body, "description")),
	    "regression: bench.score -12.35% at 1a2b3c4d5e6f");
	assert_string_equal(
	    json_string_value(json_object_get(body, "context")),
	    "statbisect/score");
	json_decref(body);
	free(text);
	/* No change is a success, a failed job an error. */
	json_object_set_new(job, "verdict", json_string("no-change"));
	json_object_set_new(job, "culprit", json_null());
	assert_int_equal(
	    webhook_body(&text, WEBHOOK_GITHUB_STATUS, job, "http://h"), 0);
	assert_non_null(strstr(text, "\"state\":\"success\""));
	assert_non_null(strstr(text, "no change in bench.score"));
	free(text);
	json_object_set_new(job, "state", json_string("failed"));
	json_object_set_new(job, "verdict", json_null());
	assert_int_equal(
	    webhook_body(&text, WEBHOOK_GITHUB_STATUS, job, "http://h"), 0);
	assert_non_null(strstr(text, "\"state\":\"error\""));
	free(text);
	json_decref(job);
}

/* A long message is cut to 140 characters, never inside one. */
static void test_webhook__description_cut_at_140_characters(void **state)
{
	json_t *job = json_pack("{s:s,s:s}", "state", "failed", "message", "");
	char line[200 * 4], out[4 * WEBHOOK_DESCRIPTION_MAX + 1];
	size_t i, chars = 0, pos = 0;

	(void)state;
	for (i = 0; i < 200; i++)
		memcpy(line + 2 * i, "\xc3\xa9", 2);
	line[400] = '\0';
	json_object_set_new(job, "message", json_string(line));
	webhook_description(out, sizeof(out), job);
	while (out[pos] != '\0') {
		size_t n = utf8_char_len(out + pos, strlen(out + pos));

		assert_true(n > 0);
		pos += n;
		chars++;
	}
	assert_int_equal(chars, WEBHOOK_DESCRIPTION_MAX);
	assert_memory_equal(out, "failed: \xc3\xa9", 10);
	json_decref(job);
}

static void test_webhook__statbisect_body(void **state)
{
	json_t *job = regression_job(), *body, *summary;
	char *text = NULL;

	(void)state;
	json_object_set_new(job, "commits", json_array());
	assert_int_equal(
	    webhook_body(&text, WEBHOOK_STATBISECT, job, "http://h:1"), 0);
	body = json_loads(text, 0, NULL);
	assert_non_null(body);
	assert_string_equal(json_string_value(json_object_get(body, "event")),
			    "job.finished");
	summary = json_object_get(body, "job");
	assert_string_equal(
	    json_string_value(json_object_get(summary, "verdict")),
	    "regression");
	assert_string_equal(
	    json_string_value(json_object_get(summary, "culprit")),
	    "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d");
	assert_true(json_is_null(json_object_get(summary, "p_value")));
	assert_null(json_object_get(summary, "commits"));
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(body, "links"), "report")),
			    "http://h:1/api/v1/jobs/7/report");
	json_decref(body);
	json_decref(job);
	free(text);
}

static void test_webhook__formats(void **state)
{
	enum webhook_format f;

	(void)state;
	assert_int_equal(webhook_format_parse(&f, "github-status"), 0);
	assert_int_equal(f, WEBHOOK_GITHUB_STATUS);
	assert_string_equal(webhook_format_name(f), "github-status");
	assert_int_equal(webhook_format_parse(&f, "statbisect"), 0);
	assert_int_equal(f, WEBHOOK_STATBISECT);
	assert_int_equal(webhook_format_parse(&f, "github"), -1);
	assert_int_equal(webhook_format_parse(&f, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_webhook__sign_rfc4231_case2),
	    cmocka_unit_test(test_webhook__sign_matches_python_hmac),
	    cmocka_unit_test(test_webhook__url_rules),
	    cmocka_unit_test(test_webhook__url_expand),
	    cmocka_unit_test(test_webhook__github_status_of_regression),
	    cmocka_unit_test(test_webhook__description_cut_at_140_characters),
	    cmocka_unit_test(test_webhook__statbisect_body),
	    cmocka_unit_test(test_webhook__formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
