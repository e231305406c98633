#include "webhook.h"

#include <curl/curl.h>
#include <math.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cause.h"
#include "strbuf.h"
#include "utf8.h"

/* A commit's SHA for a URL check: {sha} may stand in a path or query. */
#define WEBHOOK_SHA_SAMPLE "0123456789abcdef0123456789abcdef01234567"

int webhook_format_parse(enum webhook_format *out, const char *name)
{
	if (name != NULL && strcmp(name, "statbisect") == 0)
		*out = WEBHOOK_STATBISECT;
	else if (name != NULL && strcmp(name, "github-status") == 0)
		*out = WEBHOOK_GITHUB_STATUS;
	else
		return -1;
	return 0;
}

const char *webhook_format_name(enum webhook_format format)
{
	return format == WEBHOOK_GITHUB_STATUS ? "github-status"
					       : "statbisect";
}

char *webhook_url_expand(const char *url, const char *sha)
{
	struct strbuf buf = STRBUF_INIT;
	const char *at;
	char *out = NULL;
	size_t len;

	while ((at = strstr(url, WEBHOOK_SHA_PLACEHOLDER)) != NULL) {
		strbuf_appendn(&buf, url, (size_t)(at - url));
		strbuf_append(&buf, sha);
		url = at + strlen(WEBHOOK_SHA_PLACEHOLDER);
	}
	strbuf_append(&buf, url);
	if (strbuf_finish(&out, &len, &buf) < 0)
		return NULL;
	return out;
}

int webhook_url_check(const char *url, char **cause)
{
	const char *p;
	char *expanded = NULL, *host = NULL;
	CURLU *parsed = NULL;
	int rc = -1;

	if (cause != NULL)
		*cause = NULL;
	if (url == NULL || url[0] == '\0') {
		cause_set(cause, "the webhook URL is empty");
		return -1;
	}
	if (strlen(url) > WEBHOOK_URL_MAX) {
		cause_set(cause, "the webhook URL is longer than %d bytes",
			  WEBHOOK_URL_MAX);
		return -1;
	}
	for (p = url; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			cause_set(cause, "the webhook URL holds a space or a "
					 "control character");
			return -1;
		}
	}
	if (strncasecmp(url, "http://", 7) != 0 &&
	    strncasecmp(url, "https://", 8) != 0) {
		cause_set(cause, "the webhook URL must start with http:// or "
				 "https://");
		return -1;
	}
	/* {sha} names a commit in the path or query, never the host. */
	p = strstr(url, "://") + 3;
	if (strcspn(p, "/?#") == 0) {
		cause_set(cause, "the webhook URL is not a URL with a host");
		return -1;
	}
	if (memchr(p, '{', strcspn(p, "/?#")) != NULL) {
		cause_set(cause, "the webhook URL's host cannot hold {sha}");
		return -1;
	}
	expanded = webhook_url_expand(url, WEBHOOK_SHA_SAMPLE);
	parsed = curl_url();
	if (expanded == NULL || parsed == NULL) {
		cause_set(cause, "out of memory");
		goto out;
	}
	if (curl_url_set(parsed, CURLUPART_URL, expanded, 0) != CURLUE_OK ||
	    curl_url_get(parsed, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    host[0] == '\0') {
		cause_set(cause, "the webhook URL is not a URL with a host");
		goto out;
	}
	rc = 0;
out:
	curl_free(host);
	curl_url_cleanup(parsed);
	free(expanded);
	return rc;
}

int webhook_sign(char out[WEBHOOK_SIGNATURE_SIZE], const char *secret,
		 const char *body, size_t len)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	unsigned int i;

	out[0] = '\0';
	if (HMAC(EVP_sha256(), secret, (int)strlen(secret),
		 (const unsigned char *)body, len, mac, &mac_len) == NULL ||
	    mac_len != 32)
		return -1;
	memcpy(out, "sha256=", 7);
	for (i = 0; i < mac_len; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", mac[i]);
	return 0;
}

static const char *text_of(json_t *job, const char *key)
{
	return json_string_value(json_object_get(job, key));
}

/* `text` cut to WEBHOOK_DESCRIPTION_MAX characters into `out`. */
static void cut_chars(char *out, size_t size, const char *text)
{
	size_t len = strlen(text), pos = 0, chars = 0, n;

	while (pos < len && chars < WEBHOOK_DESCRIPTION_MAX) {
		n = utf8_char_len(text + pos, len - pos);
		if (n == 0)
			n = 1;
		if (pos + n >= size)
			break;
		pos += n;
		chars++;
	}
	memcpy(out, text, pos);
	out[pos] = '\0';
}

void webhook_description(char *out, size_t size, json_t *job)
{
	const char *state = text_of(job, "state");
	const char *verdict = text_of(job, "verdict");
	const char *kpi = text_of(job, "kpi");
	const char *culprit = text_of(job, "culprit");
	const char *message = text_of(job, "message");
	json_t *change = json_object_get(job, "change_pct");
	char line[1024];

	if (kpi == NULL)
		kpi = "the KPI";
	if (state != NULL && strcmp(state, "failed") == 0)
		snprintf(line, sizeof(line), "failed: %s",
			 message != NULL ? message : "no verdict");
	else if (verdict != NULL && culprit != NULL && json_is_number(change))
		snprintf(line, sizeof(line), "%s: %s %+.2f%% at %.12s",
			 verdict, kpi, json_number_value(change), culprit);
	else if (verdict != NULL && strcmp(verdict, "no-change") == 0)
		snprintf(line, sizeof(line), "no change in %s", kpi);
	else if (verdict != NULL)
		snprintf(line, sizeof(line), "%s%s%s", verdict,
			 message != NULL ? ": " : "",
			 message != NULL ? message : "");
	else
		snprintf(line, sizeof(line), "%s",
			 state != NULL ? state : "finished");
	cut_chars(out, size, line);
}

/* The members of `job` a statbisect body carries. */
static json_t *job_summary(json_t *job)
{
	static const char *const keys[] = {
	    "id",	   "state",
	    "repo",	   "testcase",
	    "kpi",	   "higher_is_better",
	    "good",	   "bad",
	    "good_rev",	   "bad_rev",
	    "verdict",	   "culprit",
	    "parent",	   "culprits",
	    "change_pct",  "change_ci95",
	    "p_value",	   "confidence",
	    "message",	   "commits_tested",
	    "runs",	   "created_at",
	    "finished_at",
	};
	json_t *out = json_object();
	size_t i;

	for (i = 0; out != NULL && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(job, keys[i]);

		json_object_set(out, keys[i], v != NULL ? v : json_null());
	}
	return out;
}

static const char *github_state(json_t *job)
{
	const char *state = text_of(job, "state");
	const char *verdict = text_of(job, "verdict");

	if (state == NULL || strcmp(state, "done") != 0 || verdict == NULL)
		return "error";
	if (strcmp(verdict, "regression") == 0)
		return "failure";
	if (strcmp(verdict, "no-change") == 0 ||
	    strcmp(verdict, "improvement") == 0)
		return "success";
	return "error";
}

int webhook_body(char **out, enum webhook_format format, json_t *job,
		 const char *base_url)
{
	json_int_t id = json_integer_value(json_object_get(job, "id"));
	char page[4096], api[4096], report[4096];
	char description[4 * WEBHOOK_DESCRIPTION_MAX + 1], context[256];
	const char *testcase = text_of(job, "testcase");
	json_t *body;

	snprintf(page, sizeof(page), "%s/jobs/%lld", base_url, (long long)id);
	snprintf(api, sizeof(api), "%s/api/v1/jobs/%lld", base_url,
		 (long long)id);
	snprintf(report, sizeof(report), "%s/api/v1/jobs/%lld/report",
		 base_url, (long long)id);
	if (format == WEBHOOK_GITHUB_STATUS) {
		webhook_description(description, sizeof(description), job);
		snprintf(context, sizeof(context), "statbisect/%s",
			 testcase != NULL ? testcase : "job");
		body =
		    json_pack("{s:s,s:s,s:s,s:s}", "state", github_state(job),
			      "target_url", page, "description", description,
			      "context", context);
	} else {
		body =
		    json_pack("{s:s,s:o,s:{s:s,s:s,s:s}}", "event",
			      "job.finished", "job", job_summary(job), "links",
			      "page", page, "api", api, "report", report);
	}
	*out = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	return *out != NULL ? 0 : -1;
}
