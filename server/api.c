/* The people's REST API v1: tokens, repositories, testcases and jobs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commitlog.h"
#include "db.h"
#include "gitrepo.h"
#include "log.h"
#include "mirror.h"
#include "report.h"
#include "scheduler.h"
#include "server.h"

void api_healthz(struct http_response *res, struct http_request *req)
{
	(void)req;
	http_json(res, 200, json_pack("{s:s}", "status", "ok"));
}

static bool valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64)
		return false;
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return false;
	}
	return s[0] != '.' && s[0] != '-';
}

/* Printable text without control characters (newlines only if allowed). */
static bool valid_text(const char *s, size_t max_len, bool newlines)
{
	size_t n = strlen(s), i;

	if (n > max_len)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0x7f || (c < 0x20 && c != '\t' &&
				  !(newlines && (c == '\n' || c == '\r'))))
			return false;
	}
	return true;
}

/*
 * Field readers: each answers 400 in `res` and returns false when the
 * field is missing (if required) or of the wrong type.
 */
static bool get_string(struct http_response *res, json_t *body,
		       const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		if (required)
			http_error(res, 400, "missing_field",
				   "field '%s' is required", key);
		return !required;
	}
	if (!json_is_string(v)) {
		http_error(res, 400, "invalid_field",
			   "field '%s' must be a string", key);
		return false;
	}
	*out = json_string_value(v);
	if (strlen(*out) != json_string_length(v)) {
		http_error(res, 400, "invalid_field",
			   "field '%s' contains a NUL character", key);
		return false;
	}
	return true;
}

static bool get_int(struct http_response *res, json_t *body, const char *key,
		    long long min, long long max, long long *out)
{
	json_t *v = json_object_get(body, key);

	if (v == NULL || json_is_null(v))
		return true; /* keeps the default in *out */
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		http_error(res, 400, "invalid_field",
			   "field '%s' must be an integer from %lld to %lld",
			   key, min, max);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

static json_t *repo_json(const PGresult *r, int row)
{
	return json_pack(
	    "{s:I,s:s,s:s,s:o}", "id", (json_int_t)db_int(r, row, 0), "name",
	    db_text(r, row, 1), "url", db_text(r, row, 2), "web_url",
	    db_text(r, row, 3) != NULL ? json_string(db_text(r, row, 3))
				       : json_null());
}

void api_repos_create(struct http_response *res, struct http_request *req)
{
	const char *name, *url, *web_url, *params[3], *state;
	json_t *body = http_json_body(res, req);
	git_repository *repo = NULL;
	struct mirrorlock *held;
	char *err = NULL;
	char path[4096];
	PGresult *r;

	if (body == NULL)
		return;
	if (!get_string(res, body, "name", true, &name) ||
	    !get_string(res, body, "url", true, &url) ||
	    !get_string(res, body, "web_url", false, &web_url))
		goto out;
	if (!valid_name(name)) {
		http_error(res, 400, "invalid_field",
			   "'name' must be 1 to 64 of A-Z a-z 0-9 . _ -");
		goto out;
	}
	if (url[0] == '\0' || url[0] == '-' || !valid_text(url, 1024, false)) {
		http_error(res, 400, "invalid_field",
			   "'url' must be a git URL or path");
		goto out;
	}
	if (web_url != NULL && (!valid_text(web_url, 1024, false) ||
				strstr(web_url, "{sha}") == NULL)) {
		http_error(
		    res, 400, "invalid_field",
		    "'web_url' must be a link template containing {sha}");
		goto out;
	}
	/* Refuse duplicates before fetching anything. */
	params[0] = name;
	r = db_exec(db_conn(), "SELECT 1 FROM repos WHERE name = $1", 1,
		    params);
	if (r == NULL) {
		http_db_failed(res);
		goto out;
	}
	if (PQntuples(r) > 0) {
		PQclear(r);
		http_error(res, 409, "exists", "repository '%s' exists", name);
		goto out;
	}
	PQclear(r);
	mirror_path(path, sizeof(path), name);
	held = mirror_lock(name);
	if (gitrepo_mirror(&repo, path, url, &err) < 0) {
		mirror_unlock(held);
		http_error(res, 422, "unreachable_repo",
			   "cannot mirror '%s': %s", url, err);
		goto out;
	}
	git_repository_free(repo);
	mirror_unlock(held);
	params[1] = url;
	params[2] = web_url;
	r = db_exec_state(db_conn(),
			  "INSERT INTO repos (name, url, web_url)"
			  " VALUES ($1, $2, $3)"
			  " RETURNING id, name, url, web_url",
			  3, params, &state);
	if (r == NULL) {
		if (state != NULL && strcmp(state, "23505") == 0)
			http_error(res, 409, "exists",
				   "repository '%s' exists", name);
		else
			http_db_failed(res);
		goto out;
	}
	http_json(res, 201, repo_json(r, 0));
	PQclear(r);
out:
	free(err);
	json_decref(body);
}

static bool valid_metric_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 255)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return false;
	}
	return true;
}

/* params: an object of short string or number values. */
static bool valid_params(struct http_response *res, json_t *params)
{
	const char *key;
	json_t *value;

	if (params == NULL)
		return true;
	if (!json_is_object(params)) {
		http_error(res, 400, "invalid_field",
			   "'params' must be an object");
		return false;
	}
	json_object_foreach(params, key, value)
	{
		if (!valid_metric_name(key) || strchr(key, '/') != NULL ||
		    !(json_is_string(value) || json_is_number(value)) ||
		    (json_is_string(value) &&
		     (!valid_text(json_string_value(value), 256, false) ||
		      strchr(json_string_value(value), '/') != NULL))) {
			http_error(res, 400, "invalid_field",
				   "'params' entry '%s' must be a string or "
				   "number without '/' or control characters",
				   key);
			return false;
		}
	}
	return true;
}

static bool valid_monitors(struct http_response *res, json_t *monitors)
{
	static const char *const known[] = {"vmstat", "proc-vmstat",
					    "perf-stat", "time"};
	size_t i, k;
	json_t *m;

	if (monitors == NULL)
		return true;
	if (!json_is_array(monitors))
		goto bad;
	json_array_foreach(monitors, i, m)
	{
		if (!json_is_string(m))
			goto bad;
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
			if (strcmp(json_string_value(m), known[k]) == 0)
				break;
		}
		if (k == sizeof(known) / sizeof(known[0]))
			goto bad;
	}
	return true;
bad:
	http_error(res, 400, "invalid_field",
		   "'monitors' must be a list of: vmstat, proc-vmstat, "
		   "perf-stat, time");
	return false;
}

static json_t *testcase_json(const PGresult *r, int row)
{
	json_error_t e;

	return json_pack(
	    "{s:I,s:s,s:s,s:s,s:s,s:b,s:f,s:I,s:I,s:I,s:o,s:o,s:o,s:b}", "id",
	    (json_int_t)db_int(r, row, 0), "name", db_text(r, row, 1), "build",
	    db_text(r, row, 2), "run", db_text(r, row, 3), "kpi",
	    db_text(r, row, 4), "higher_is_better", db_bool(r, row, 5),
	    "min_change_pct", db_double(r, row, 6), "runs_min",
	    (json_int_t)db_int(r, row, 7), "runs_max",
	    (json_int_t)db_int(r, row, 8), "timeout_s",
	    (json_int_t)db_int(r, row, 9), "params",
	    json_loads(db_text(r, row, 10), 0, &e), "monitors",
	    json_loads(db_text(r, row, 11), 0, &e), "notify",
	    json_loads(db_text(r, row, 12), 0, &e), "notify_author",
	    db_bool(r, row, 13));
}

/* notify, when given: a list of at most 50 plain addresses (an embedded
 * NUL, which a C string would stop at, counts as not plain). */
static bool valid_notify_list(struct http_response *res, json_t *notify)
{
	size_t i;
	json_t *v;

	if (notify == NULL || json_is_null(notify))
		return true;
	if (!json_is_array(notify) || json_array_size(notify) > 50) {
		http_error(res, 400, "invalid_field",
			   "'notify' must be a list of at most 50 addresses");
		return false;
	}
	json_array_foreach(notify, i, v)
	{
		if (!json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    !report_address_is_valid(json_string_value(v))) {
			http_error(res, 400, "invalid_email",
				   "'notify' entry %zu is not a plain email "
				   "address (local@domain)",
				   i);
			return false;
		}
	}
	return true;
}

/* notify: as valid_notify_list; notify_author: a boolean. */
static bool valid_notify(struct http_response *res, json_t *notify,
			 json_t *notify_author)
{
	if (notify_author != NULL && !json_is_null(notify_author) &&
	    !json_is_boolean(notify_author)) {
		http_error(res, 400, "invalid_field",
			   "'notify_author' must be true or false");
		return false;
	}
	return valid_notify_list(res, notify);
}

void api_testcases_create(struct http_response *res, struct http_request *req)
{
	const char *name, *build, *run, *kpi, *state, *params[13];
	long long runs_min = 5, runs_max = 50, timeout_s = 600;
	char min_text[32], rmin[24], rmax[24], tmo[24];
	char *params_text = NULL, *monitors_text = NULL, *notify_text = NULL;
	json_t *body = http_json_body(res, req);
	json_t *hib, *mcp, *p, *m, *notify, *notify_author;
	double min_change = 1.0;
	PGresult *r;

	if (body == NULL)
		return;
	if (!get_string(res, body, "name", true, &name) ||
	    !get_string(res, body, "build", true, &build) ||
	    !get_string(res, body, "run", true, &run) ||
	    !get_string(res, body, "kpi", true, &kpi) ||
	    !get_int(res, body, "runs_min", 2, 1000, &runs_min) ||
	    !get_int(res, body, "runs_max", 2, 10000, &runs_max) ||
	    !get_int(res, body, "timeout_s", 1, 7 * 86400, &timeout_s))
		goto out;
	if (!valid_name(name)) {
		http_error(res, 400, "invalid_field",
			   "'name' must be 1 to 64 of A-Z a-z 0-9 . _ -");
		goto out;
	}
	if (!valid_text(build, 8192, true) || !valid_text(run, 8192, true) ||
	    run[0] == '\0') {
		http_error(res, 400, "invalid_field",
			   "'build' and 'run' must be shell commands ('run' "
			   "not empty)");
		goto out;
	}
	if (!valid_metric_name(kpi)) {
		http_error(res, 400, "invalid_field",
			   "'kpi' must be a metric name without spaces");
		goto out;
	}
	hib = json_object_get(body, "higher_is_better");
	if (!json_is_boolean(hib)) {
		http_error(res, 400, "invalid_field",
			   "field 'higher_is_better' is required and must be "
			   "true or false");
		goto out;
	}
	mcp = json_object_get(body, "min_change_pct");
	if (mcp != NULL && !json_is_null(mcp)) {
		if (!json_is_number(mcp) || !(json_number_value(mcp) > 0) ||
		    json_number_value(mcp) > 1000) {
			http_error(res, 400, "invalid_field",
				   "'min_change_pct' must be a number in "
				   "(0, 1000]");
			goto out;
		}
		min_change = json_number_value(mcp);
	}
	if (runs_max < runs_min) {
		http_error(res, 400, "invalid_field",
			   "'runs_max' must not be below 'runs_min'");
		goto out;
	}
	p = json_object_get(body, "params");
	m = json_object_get(body, "monitors");
	notify = json_object_get(body, "notify");
	notify_author = json_object_get(body, "notify_author");
	if (!valid_params(res, p) || !valid_monitors(res, m) ||
	    !valid_notify(res, notify, notify_author))
		goto out;
	params_text = p != NULL ? json_dumps(p, JSON_COMPACT) : strdup("{}");
	monitors_text = m != NULL ? json_dumps(m, JSON_COMPACT) : strdup("[]");
	notify_text = notify != NULL && !json_is_null(notify)
			  ? json_dumps(notify, JSON_COMPACT)
			  : strdup("[]");
	if (params_text == NULL || monitors_text == NULL ||
	    notify_text == NULL) {
		http_error(res, 500, "internal", "out of memory");
		goto out;
	}
	snprintf(min_text, sizeof(min_text), "%.17g", min_change);
	snprintf(rmin, sizeof(rmin), "%lld", runs_min);
	snprintf(rmax, sizeof(rmax), "%lld", runs_max);
	snprintf(tmo, sizeof(tmo), "%lld", timeout_s);
	params[0] = name;
	params[1] = build;
	params[2] = run;
	params[3] = kpi;
	params[4] = json_is_true(hib) ? "true" : "false";
	params[5] = min_text;
	params[6] = rmin;
	params[7] = rmax;
	params[8] = tmo;
	params[9] = params_text;
	params[10] = monitors_text;
	params[11] = notify_text;
	params[12] = json_is_true(notify_author) ? "true" : "false";
	r = db_exec_state(
	    db_conn(),
	    "INSERT INTO testcases (name, build, run, kpi,"
	    " higher_is_better, min_change_pct, runs_min,"
	    " runs_max, timeout_s, params, monitors, notify,"
	    " notify_author)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
	    " $11, $12, $13) RETURNING id, name, build, run, kpi,"
	    " higher_is_better, min_change_pct, runs_min,"
	    " runs_max, timeout_s, params, monitors, notify,"
	    " notify_author",
	    13, params, &state);
	if (r == NULL) {
		if (state != NULL && strcmp(state, "23505") == 0)
			http_error(res, 409, "exists", "testcase '%s' exists",
				   name);
		else
			http_db_failed(res);
		goto out;
	}
	http_json(res, 201, testcase_json(r, 0));
	PQclear(r);
out:
	free(params_text);
	free(monitors_text);
	free(notify_text);
	json_decref(body);
}
