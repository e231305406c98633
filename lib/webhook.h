/*
 * Webhooks (issue 15): what a finished job POSTs to a URL a testcase or a
 * job names.  The URL's rules, the two bodies ("statbisect": the job's
 * summary; "github-status": a body of GitHub's commit status API) and
 * the HMAC-SHA256 signature of a body.  Pure apart from allocation; the
 * HMAC is OpenSSL's libcrypto, which libcurl already brings in.
 */
#ifndef STATBISECT_WEBHOOK_H
#define STATBISECT_WEBHOOK_H

#include <jansson.h>
#include <stddef.h>

/* The longest webhook URL taken. */
#define WEBHOOK_URL_MAX 2048
/* The longest secret taken. */
#define WEBHOOK_SECRET_MAX 512
/* "sha256=" and 64 hex digits, with the NUL. */
#define WEBHOOK_SIGNATURE_SIZE 72
/* GitHub's limit on a commit status's description, in characters. */
#define WEBHOOK_DESCRIPTION_MAX 140
/* What {sha} in a URL is replaced with. */
#define WEBHOOK_SHA_PLACEHOLDER "{sha}"

enum webhook_format {
	WEBHOOK_STATBISECT,
	WEBHOOK_GITHUB_STATUS,
};

/* The format named `name` ("statbisect", "github-status") into *out: 0,
 * or -1 for any other name (NULL included). */
int webhook_format_parse(enum webhook_format *out, const char *name);
const char *webhook_format_name(enum webhook_format format);

/*
 * Whether `url` may be a webhook's: an absolute http:// or https:// URL
 * (any case) with a host, at most WEBHOOK_URL_MAX bytes, without spaces
 * or control characters; "{sha}" may stand anywhere after the host.  A
 * user and password are allowed (for a receiver that asks for them) and
 * are never shown: url_redact masks them.  Returns 0, or -1 with
 * *cause (when `cause` is not NULL) a malloc'd message that does not
 * repeat the URL.
 */
int webhook_url_check(const char *url, char **cause);

/* A malloc'd copy of `url` with every "{sha}" replaced by `sha`; NULL
 * when memory runs out. */
char *webhook_url_expand(const char *url, const char *sha);

/*
 * The signature header's value of the `len` bytes of `body` with
 * `secret`: "sha256=" and the lower-case hex HMAC-SHA256, into `out`.
 * Returns 0, or -1 when the HMAC cannot be made.
 */
int webhook_sign(char out[WEBHOOK_SIGNATURE_SIZE], const char *secret,
		 const char *body, size_t len);

/*
 * The one-line verdict of `job` (a job as GET /api/v1/jobs/{id} shows
 * it) for a commit status: "regression: bench.score -12.30% at
 * 1a2b3c4d5e6f", "no change in bench.score", ... at most
 * WEBHOOK_DESCRIPTION_MAX characters, cut at a character boundary.
 * Into `out` of `size` bytes (at least 4 * WEBHOOK_DESCRIPTION_MAX + 1).
 */
void webhook_description(char *out, size_t size, json_t *job);

/*
 * The body of the POST for `job` (as GET /api/v1/jobs/{id} shows it) in
 * `format`, with links under `base_url`, as malloc'd compact JSON:
 *
 * - statbisect: {"event": "job.finished", "job": {id, state, repo,
 *   testcase, kpi, higher_is_better, good, bad, good_rev, bad_rev,
 *   verdict, culprit, parent, culprits, change_pct, change_ci95,
 *   p_value, confidence, message, commits_tested, runs, created_at,
 *   finished_at}, "links": {"page", "api", "report"}};
 * - github-status: {"state": "failure" for a regression, "success" for
 *   no change or an improvement, "error" for anything else (inconclusive,
 *   a failed job); "target_url": the job's page; "description":
 *   webhook_description; "context": "statbisect/<testcase>"}.
 *
 * Returns 0, or -1 (*out NULL) when memory runs out.
 */
int webhook_body(char **out, enum webhook_format format, json_t *job,
		 const char *base_url);

#endif
