/* The people's REST API v1: tokens, repositories, testcases and jobs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commitlog.h"
#include "db.h"
#include "gitrepo.h"
#include "log.h"
#include "report.h"
#include "scheduler.h"
#include "secret.h"
#include "server.h"

/* Most candidates one job may hold. */
#define API_RANGE_LIMIT 100000

/* libgit2 objects are per thread, but two fetches into one mirror must not
 * overlap: mirror work is serialised. */
static pthread_mutex_t api_mirror_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* Random bytes in an API token: "sb_" and 48 hex digits. */
#define API_TOKEN_BYTES 24

void api_tokens_create(struct http_response *res, struct http_request *req)
{
	char token[3 + 2 * API_TOKEN_BYTES + 1] = "sb_";
	const char *name, *role, *params[3];
	json_t *body = http_json_body(res, req);
	PGresult *r;

	if (body == NULL)
		return;
	if (!get_string(res, body, "name", true, &name) ||
	    !get_string(res, body, "role", true, &role))
		goto out;
	if (!valid_text(name, 128, false) || name[0] == '\0') {
		http_error(res, 400, "invalid_field",
			   "'name' must be 1 to 128 printable characters");
		goto out;
	}
	if (strcmp(role, "admin") != 0 && strcmp(role, "submit") != 0 &&
	    strcmp(role, "read") != 0 && strcmp(role, "worker") != 0) {
		http_error(
		    res, 400, "invalid_field",
		    "'role' must be one of admin, submit, read, worker");
		goto out;
	}
	if (secret_hex(token + 3, API_TOKEN_BYTES) < 0) {
		http_error(res, 500, "internal", "no randomness for a token");
		goto out;
	}
	params[0] = name;
	params[1] = role;
	params[2] = token;
	r = db_exec(db_conn(),
		    "INSERT INTO tokens (name, role, token_hash) VALUES ($1, "
		    "$2, encode(sha256(convert_to($3, 'UTF8')), 'hex'))"
		    " RETURNING id",
		    3, params);
	if (r == NULL) {
		http_db_failed(res);
		goto out;
	}
	http_json(res, 201,
		  json_pack("{s:I,s:s,s:s,s:s}", "id",
			    (json_int_t)db_int(r, 0, 0), "name", name, "role",
			    role, "token", token));
	PQclear(r);
out:
	json_decref(body);
}

static void mirror_path(char *buf, size_t size, const char *repo_name)
{
	snprintf(buf, size, "%s/repos/%s.git", server_config.data_dir,
		 repo_name);
}

void api_repos_create(struct http_response *res, struct http_request *req)
{
	const char *name, *url, *web_url, *params[3], *state;
	json_t *body = http_json_body(res, req);
	git_repository *repo = NULL;
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
	pthread_mutex_lock(&api_mirror_lock);
	if (gitrepo_mirror(&repo, path, url, &err) < 0) {
		pthread_mutex_unlock(&api_mirror_lock);
		http_error(res, 422, "unreachable_repo",
			   "cannot mirror '%s': %s", url, err);
		goto out;
	}
	git_repository_free(repo);
	pthread_mutex_unlock(&api_mirror_lock);
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

/*
 * Where the job stands.  While it runs: the engine's segment and estimate,
 * and the phase ("endpoints", "bisecting", "confirming", or "follow-up":
 * a culprit is found and the search looks for another change, often in
 * an older part of the range).  Once it has ended nothing is left to do:
 * a done job's range is its culprit's parent through the culprit (the
 * whole range without a culprit) with no candidate left but the culprit's
 * ambiguous set, and every ended job has no step left.
 */
static void api_job_progress(const struct sched_job *job, const char *state,
			     size_t *lo, size_t *hi, size_t *candidates_left,
			     size_t *steps_left, const char **phase)
{
	const struct bisect_result *res = &job->result;
	bool confirming = false;
	size_t i;

	*lo = res->lo;
	*hi = res->hi;
	*candidates_left = res->candidates_left;
	*steps_left = res->steps_left;
	for (i = 0; i < res->request_count; i++)
		confirming |= res->requests[i].purpose == BISECT_CONFIRM;
	if (state != NULL && strcmp(state, "done") == 0) {
		*phase = "done";
		*steps_left = 0;
		*candidates_left = 0;
		if (res->culprit_count > 0 &&
		    (res->verdict == BISECT_REGRESSION ||
		     res->verdict == BISECT_IMPROVEMENT)) {
			*lo = res->culprits[0].parent;
			*hi = res->culprits[0].commit;
			*candidates_left = res->culprits[0].ambiguous_count;
		} else {
			*lo = 0;
			*hi = job->count - 1;
		}
	} else if (state != NULL && (strcmp(state, "failed") == 0 ||
				     strcmp(state, "cancelled") == 0)) {
		/* Where the search stopped, with nothing more to come. */
		*phase = state;
		*steps_left = 0;
	} else if (res->culprit_count > 0 && !confirming) {
		*phase = "follow-up";
	} else if (confirming) {
		*phase = "confirming";
	} else if (res->steps_done == 0) {
		*phase = "endpoints";
	} else {
		*phase = "bisecting";
	}
}

json_t *api_job_json(PGconn *conn, long long job_id, bool *failed)
{
	char id_text[24];
	const char *params[1] = {id_text};
	struct sched_job job;
	json_t *out = NULL, *commits, *culprits;
	size_t i, total_runs = 0, tested = 0;
	size_t range_lo, range_hi, candidates_left, steps_left;
	const char *phase;
	PGresult *r;
	int rc;

	snprintf(id_text, sizeof(id_text), "%lld", job_id);
	r = db_exec(
	    conn,
	    "SELECT j.id, j.state, j.verdict, j.culprit_sha,"
	    " j.parent_sha, j.change_pct, j.p_value, j.good_sha,"
	    " j.bad_sha, j.good_rev, j.bad_rev, rp.name, t.name,"
	    " j.message, to_char(j.created_at, "
	    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	    " to_char(j.finished_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	    " j.notify, t.kpi, t.higher_is_better, j.culprits,"
	    " j.confidence, j.change_ci95_lo, j.change_ci95_hi"
	    " FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
	    " JOIN testcases t ON t.id = j.testcase_id WHERE j.id = $1",
	    1, params);
	*failed = r == NULL;
	if (r == NULL || PQntuples(r) != 1) {
		PQclear(r);
		return NULL;
	}
	rc = sched_load(&job, conn, job_id);
	if (rc != 0) {
		*failed = rc < 0;
		PQclear(r);
		return NULL;
	}
	commits = json_array();
	for (i = 0; i < job.count; i++) {
		const struct bisect_commit *c = &job.input[i];
		json_t *values, *confirm;
		size_t k;

		total_runs += c->value_count + c->confirm_count +
			      job.commits[i].failed_runs;
		if (c->value_count == 0 && c->confirm_count == 0 &&
		    !c->build_failed && job.commits[i].failed_runs == 0)
			continue;
		tested++;
		values = json_array();
		confirm = json_array();
		for (k = 0; k < c->value_count; k++)
			json_array_append_new(values, json_real(c->values[k]));
		for (k = 0; k < c->confirm_count; k++)
			json_array_append_new(confirm,
					      json_real(c->confirm_values[k]));
		json_array_append_new(
		    commits,
		    json_pack("{s:I,s:s,s:s,s:o,s:o,s:I,s:b,s:s}", "index",
			      (json_int_t)i, "commit", job.commits[i].sha,
			      "subject", job.commits[i].subject, "runs",
			      values, "confirm_runs", confirm, "failed_runs",
			      (json_int_t)job.commits[i].failed_runs,
			      "build_failed", c->build_failed,
			      "classification",
			      bisect_class_name(job.classes[i])));
	}
	{
		/* What happened to each tested commit (null: not reported). */
		json_t *outcomes = NULL, *c;
		char key[24];

		if (commitlog_outcomes(&outcomes, conn, job_id) < 0)
			outcomes = NULL;
		json_array_foreach(commits, i, c)
		{
			json_t *o;

			snprintf(key, sizeof(key), "%lld",
				 (long long)json_integer_value(
				     json_object_get(c, "index")));
			o = json_object_get(outcomes, key);
			json_object_set(c, "outcome",
					o != NULL ? o : json_null());
		}
		json_decref(outcomes);
	}
	{
		json_error_t e;

		culprits = json_loads(db_text(r, 0, 19), 0, &e);
		if (!json_is_array(culprits)) {
			json_decref(culprits);
			culprits = json_array();
		}
	}
	api_job_progress(&job, db_text(r, 0, 1), &range_lo, &range_hi,
			 &candidates_left, &steps_left, &phase);
	out = json_pack(
	    "{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:I,s:I,s:I,s:o}", "id",
	    (json_int_t)job_id, "state", db_text(r, 0, 1), "repo",
	    db_text(r, 0, 11), "testcase", db_text(r, 0, 12), "good",
	    db_text(r, 0, 7), "bad", db_text(r, 0, 8), "good_rev",
	    db_text(r, 0, 9), "bad_rev", db_text(r, 0, 10), "kpi",
	    db_text(r, 0, 17), "higher_is_better", db_bool(r, 0, 18),
	    "candidates", (json_int_t)job.count, "runs",
	    (json_int_t)total_runs, "commits_tested", (json_int_t)tested,
	    "commits", commits);
	{
		json_error_t e;
		const char *v = db_text(r, 0, 2);

		json_object_set_new(out, "verdict",
				    v ? json_string(v) : json_null());
		v = db_text(r, 0, 3);
		json_object_set_new(out, "culprit",
				    v ? json_string(v) : json_null());
		v = db_text(r, 0, 4);
		json_object_set_new(out, "parent",
				    v ? json_string(v) : json_null());
		json_object_set_new(out, "culprits", culprits);
		json_object_set_new(out, "change_pct",
				    db_is_null(r, 0, 5)
					? json_null()
					: json_real(db_double(r, 0, 5)));
		json_object_set_new(
		    out, "change_ci95",
		    db_is_null(r, 0, 21) || db_is_null(r, 0, 22)
			? json_null()
			: sched_ci95_json(db_double(r, 0, 21),
					  db_double(r, 0, 22)));
		json_object_set_new(out, "p_value",
				    db_is_null(r, 0, 6)
					? json_null()
					: json_real(db_double(r, 0, 6)));
		v = db_text(r, 0, 13);
		json_object_set_new(out, "message",
				    v ? json_string(v) : json_null());
		json_object_set_new(out, "created_at",
				    json_string(db_text(r, 0, 14)));
		v = db_text(r, 0, 15);
		json_object_set_new(out, "finished_at",
				    v ? json_string(v) : json_null());
		json_object_set_new(out, "notify",
				    json_loads(db_text(r, 0, 16), 0, &e));
		json_object_set_new(
		    out, "range",
		    json_pack("{s:s,s:s}", "after", job.commits[range_lo].sha,
			      "through", job.commits[range_hi].sha));
		json_object_set_new(out, "confidence",
				    db_is_null(r, 0, 20)
					? json_null()
					: json_real(db_double(r, 0, 20)));
		json_object_set_new(
		    out, "runs_min",
		    json_integer((json_int_t)job.opts.runs_min));
		json_object_set_new(
		    out, "runs_max",
		    json_integer((json_int_t)job.opts.runs_max));
		json_object_set_new(
		    out, "progress",
		    json_pack("{s:I,s:I,s:I,s:s}", "candidates_left",
			      (json_int_t)candidates_left, "steps_done",
			      (json_int_t)job.result.steps_done, "steps_left",
			      (json_int_t)steps_left, "phase", phase));
	}
	{
		/* The report's delivery: pending (not tried yet), retrying
		 * (an attempt failed; last_error says why), failed (given
		 * up) or sent; null while the job has no report. */
		json_t *report = json_null();
		json_error_t e;
		PGresult *o =
		    db_exec(conn,
			    "SELECT CASE WHEN sent_at IS NOT NULL THEN 'sent'"
			    " WHEN failed_at IS NOT NULL THEN 'failed'"
			    " WHEN attempts > 0 THEN 'retrying'"
			    " ELSE 'pending' END, attempts, last_error,"
			    " to_char(sent_at AT TIME ZONE 'UTC',"
			    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
			    " to_char(next_attempt_at AT TIME ZONE 'UTC',"
			    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), recipients"
			    " FROM outbox WHERE job_id = $1 ORDER BY id DESC"
			    " LIMIT 1",
			    1, params);

		if (o != NULL && PQntuples(o) == 1) {
			const char *v;

			json_decref(report);
			report = json_pack(
			    "{s:s,s:I,s:o}", "state", db_text(o, 0, 0),
			    "attempts", (json_int_t)db_int(o, 0, 1),
			    "recipients", json_loads(db_text(o, 0, 5), 0, &e));
			if (report == NULL)
				report = json_object();
			v = db_text(o, 0, 2);
			json_object_set_new(report, "last_error",
					    v ? json_string(v) : json_null());
			v = db_text(o, 0, 3);
			json_object_set_new(report, "sent_at",
					    v ? json_string(v) : json_null());
			v = strcmp(db_text(o, 0, 0), "pending") == 0 ||
				    strcmp(db_text(o, 0, 0), "retrying") == 0
				? db_text(o, 0, 4)
				: NULL;
			json_object_set_new(report, "next_attempt_at",
					    v ? json_string(v) : json_null());
		}
		PQclear(o);
		json_object_set_new(out, "report", report);
	}
	{
		/* Builds the workers did for the job; a task uploaded by a
		 * worker that did not say counts none. */
		PGresult *b = db_exec(conn,
				      "SELECT coalesce(sum(builds), 0)"
				      " FROM tasks WHERE job_id = $1",
				      1, params);

		json_object_set_new(
		    out, "builds",
		    json_integer(b != NULL && PQntuples(b) == 1
				     ? (json_int_t)db_int(b, 0, 0)
				     : 0));
		PQclear(b);
	}
	sched_job_clear(&job);
	PQclear(r);
	return out;
}

struct job_request {
	const char *repo, *testcase, *good, *bad;
	json_t *notify;
	long long runs_min, runs_max; /* 0: the testcase's */
	long long repo_id, testcase_id;
	const char *repo_url;
};

static bool job_request_parse(struct http_response *res, json_t *body,
			      struct job_request *jr)
{
	if (!get_string(res, body, "repo", true, &jr->repo) ||
	    !get_string(res, body, "testcase", true, &jr->testcase) ||
	    !get_string(res, body, "good", true, &jr->good) ||
	    !get_string(res, body, "bad", true, &jr->bad) ||
	    !get_int(res, body, "runs_min", 2, 1000, &jr->runs_min) ||
	    !get_int(res, body, "runs_max", 2, 10000, &jr->runs_max))
		return false;
	if (jr->runs_min > 0 && jr->runs_max > 0 &&
	    jr->runs_max < jr->runs_min) {
		http_error(res, 400, "invalid_field",
			   "'runs_max' must not be below 'runs_min'");
		return false;
	}
	jr->notify = json_object_get(body, "notify");
	if (jr->notify != NULL && json_is_null(jr->notify))
		jr->notify = NULL;
	return valid_notify_list(res, jr->notify);
}

/* Looks up the repository and testcase by name: 404 when unknown. */
static bool job_request_lookup(struct http_response *res, PGconn *conn,
			       struct job_request *jr, PGresult **repo_row)
{
	const char *params[1];
	PGresult *r;

	params[0] = jr->repo;
	*repo_row = db_exec(conn, "SELECT id, url FROM repos WHERE name = $1",
			    1, params);
	if (*repo_row == NULL) {
		http_db_failed(res);
		return false;
	}
	if (PQntuples(*repo_row) != 1) {
		http_error(res, 404, "unknown_repo",
			   "repository '%s' is not registered", jr->repo);
		return false;
	}
	jr->repo_id = db_int(*repo_row, 0, 0);
	jr->repo_url = db_text(*repo_row, 0, 1);
	params[0] = jr->testcase;
	r = db_exec(conn, "SELECT id FROM testcases WHERE name = $1", 1,
		    params);
	if (r == NULL) {
		http_db_failed(res);
		return false;
	}
	if (PQntuples(r) != 1) {
		PQclear(r);
		http_error(res, 404, "unknown_testcase",
			   "testcase '%s' is not registered", jr->testcase);
		return false;
	}
	jr->testcase_id = db_int(r, 0, 0);
	PQclear(r);
	return true;
}

/* Fetches the mirror and lists the candidates; 422 for a bad range. */
static bool job_candidates(struct http_response *res,
			   const struct job_request *jr,
			   struct gitrepo_commit **commits, size_t *count)
{
	git_repository *repo = NULL;
	git_oid good, bad;
	char path[4096];
	char *err = NULL;
	bool ok = false;

	mirror_path(path, sizeof(path), jr->repo);
	pthread_mutex_lock(&api_mirror_lock);
	if (gitrepo_mirror(&repo, path, jr->repo_url, &err) < 0) {
		/* A source that is down does not stop jobs on known
		 * commits: carry on with what the mirror has. */
		log_warn("fetch of %s failed, using the mirror as is: %s",
			 jr->repo, err);
		free(err);
		err = NULL;
		if (gitrepo_open(&repo, path, &err) < 0) {
			http_error(res, 503, "mirror_unavailable",
				   "repository '%s' cannot be read: %s",
				   jr->repo, err);
			goto out;
		}
	}
	if (gitrepo_resolve(&good, repo, jr->good, jr->repo, &err) < 0 ||
	    gitrepo_resolve(&bad, repo, jr->bad, jr->repo, &err) < 0) {
		http_error(res, 422, "unknown_revision", "%s", err);
		goto out;
	}
	if (gitrepo_range(commits, count, repo, &good, &bad, API_RANGE_LIMIT,
			  &err) < 0) {
		http_error(res, 422, "invalid_range", "%s", err);
		goto out;
	}
	ok = true;
out:
	git_repository_free(repo);
	pthread_mutex_unlock(&api_mirror_lock);
	free(err);
	return ok;
}

static int insert_job(PGconn *conn, const struct job_request *jr,
		      const struct gitrepo_commit *commits, size_t count,
		      long long token_id, long long *job_id)
{
	char repo_id[24], testcase_id[24], token[24], idx[24], job_text[24];
	char runs_min[24], runs_max[24];
	char *notify = NULL;
	const char *params[10];
	PGresult *r;
	size_t i;
	int error = -1;

	notify = jr->notify != NULL ? json_dumps(jr->notify, JSON_COMPACT)
				    : strdup("[]");
	if (notify == NULL)
		return -1;
	snprintf(repo_id, sizeof(repo_id), "%lld", jr->repo_id);
	snprintf(testcase_id, sizeof(testcase_id), "%lld", jr->testcase_id);
	snprintf(token, sizeof(token), "%lld", token_id);
	params[0] = repo_id;
	params[1] = testcase_id;
	params[2] = jr->good;
	params[3] = jr->bad;
	params[4] = commits[0].sha;
	params[5] = commits[count - 1].sha;
	params[6] = notify;
	params[7] = token_id > 0 ? token : NULL;
	snprintf(runs_min, sizeof(runs_min), "%lld", jr->runs_min);
	snprintf(runs_max, sizeof(runs_max), "%lld", jr->runs_max);
	params[8] = jr->runs_min > 0 ? runs_min : NULL;
	params[9] = jr->runs_max > 0 ? runs_max : NULL;
	r = db_exec(
	    conn,
	    "INSERT INTO jobs (repo_id, testcase_id, good_rev, bad_rev,"
	    " good_sha, bad_sha, notify, created_by, runs_min,"
	    " runs_max) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
	    " $10) RETURNING id",
	    10, params);
	if (r == NULL)
		goto out;
	*job_id = db_int(r, 0, 0);
	PQclear(r);
	snprintf(job_text, sizeof(job_text), "%lld", *job_id);
	for (i = 0; i < count; i++) {
		char parents[256];
		size_t k, used = 0;

		/* Postgres array text: "{3,7}"; merges rarely have more than
		 * a few parents, and an octopus beyond what fits keeps its
		 * first ones. */
		parents[used++] = '{';
		for (k = 0; k < commits[i].parent_count &&
			    used + 24 < sizeof(parents);
		     k++)
			used += (size_t)snprintf(
			    parents + used, sizeof(parents) - used, "%s%zu",
			    k ? "," : "", commits[i].parents[k]);
		parents[used++] = '}';
		parents[used] = '\0';
		snprintf(idx, sizeof(idx), "%zu", i);
		params[0] = job_text;
		params[1] = idx;
		params[2] = commits[i].sha;
		params[3] = commits[i].subject;
		params[4] = commits[i].author_name;
		params[5] = commits[i].author_email;
		params[6] = parents;
		r = db_exec(
		    conn,
		    "INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email, parents)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7)",
		    7, params);
		if (r == NULL)
			goto out;
		PQclear(r);
	}
	error = 0;
out:
	free(notify);
	return error;
}

void api_jobs_create(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req);

	if (body == NULL)
		return;
	api_job_create(res, req, body);
	json_decref(body);
}

void api_job_create(struct http_response *res, struct http_request *req,
		    json_t *body)
{
	struct gitrepo_commit *commits = NULL;
	struct job_request jr = {0};
	json_t *job;
	bool failed;
	PGresult *repo_row = NULL, *r;
	PGconn *conn = db_conn();
	long long job_id = 0;
	char job_text[24];
	const char *params[1] = {job_text};
	size_t count = 0;

	if (conn == NULL) {
		http_db_failed(res);
		goto out;
	}
	if (!job_request_parse(res, body, &jr) ||
	    !job_request_lookup(res, conn, &jr, &repo_row) ||
	    !job_candidates(res, &jr, &commits, &count))
		goto out;
	if (db_begin(conn) < 0) {
		http_db_failed(res);
		goto out;
	}
	if (insert_job(conn, &jr, commits, count, req->token_id, &job_id) <
	    0) {
		db_rollback(conn);
		http_db_failed(res);
		goto out;
	}
	snprintf(job_text, sizeof(job_text), "%lld", job_id);
	r = db_exec(conn, "SELECT id FROM jobs WHERE id = $1 FOR UPDATE", 1,
		    params);
	PQclear(r);
	if (r == NULL ||
	    sched_advance(conn, job_id, server_config.base_url) < 0 ||
	    db_commit(conn) < 0) {
		db_rollback(conn);
		http_db_failed(res);
		goto out;
	}
	log_info("job %lld: %s %s %.12s..%.12s, %zu candidates", job_id,
		 jr.repo, jr.testcase, commits[0].sha, commits[count - 1].sha,
		 count);
	job = api_job_json(conn, job_id, &failed);
	if (job == NULL) {
		http_db_failed(res);
		goto out;
	}
	if (asprintf(&res->location, "/api/v1/jobs/%lld", job_id) < 0)
		res->location = NULL;
	http_json(res, 201, job);
out:
	gitrepo_commits_free(commits, count);
	PQclear(repo_row);
}

void api_jobs_get(struct http_response *res, struct http_request *req)
{
	long long job_id;
	PGconn *conn = db_conn();
	json_t *job;
	bool failed;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	if (conn == NULL) {
		http_db_failed(res);
		return;
	}
	job = api_job_json(conn, job_id, &failed);
	if (job == NULL && failed) {
		http_db_failed(res);
		return;
	}
	if (job == NULL) {
		http_error(res, 404, "not_found", "no job %lld", job_id);
		return;
	}
	http_json(res, 200, job);
}

void api_jobs_report(struct http_response *res, struct http_request *req)
{
	const char *params[1] = {req->params[0]};
	long long job_id;
	PGresult *r;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	r = db_exec(db_conn(),
		    "SELECT j.id, o.message FROM jobs j LEFT JOIN outbox o"
		    " ON o.job_id = j.id WHERE j.id = $1 ORDER BY o.id DESC"
		    " LIMIT 1",
		    1, params);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	if (PQntuples(r) == 0)
		http_error(res, 404, "not_found", "no job %lld", job_id);
	else if (db_is_null(r, 0, 1))
		http_error(res, 409, "not_ready",
			   "job %lld has no report yet: it is still running",
			   job_id);
	else
		http_text(res, 200, "text/plain; charset=utf-8",
			  db_text(r, 0, 1));
	PQclear(r);
}

void api_jobs_cancel(struct http_response *res, struct http_request *req)
{
	const char *params[1] = {req->params[0]};
	PGconn *conn = db_conn();
	long long job_id;
	json_t *job;
	PGresult *r;
	bool failed;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		return;
	}
	r = db_exec(conn, "SELECT state FROM jobs WHERE id = $1 FOR UPDATE", 1,
		    params);
	if (r == NULL)
		goto failed;
	if (PQntuples(r) == 0) {
		PQclear(r);
		db_rollback(conn);
		http_error(res, 404, "not_found", "no job %lld", job_id);
		return;
	}
	if (strcmp(db_text(r, 0, 0), "queued") != 0 &&
	    strcmp(db_text(r, 0, 0), "running") != 0) {
		http_error(res, 409, "finished", "job %lld is already %s",
			   job_id, db_text(r, 0, 0));
		PQclear(r);
		db_rollback(conn);
		return;
	}
	PQclear(r);
	r = db_exec(conn,
		    "UPDATE jobs SET state = 'cancelled', finished_at = now(),"
		    " message = 'cancelled on request' WHERE id = $1",
		    1, params);
	if (r == NULL)
		goto failed;
	PQclear(r);
	r = db_exec(conn,
		    "UPDATE tasks SET state = 'cancelled', finished_at = now()"
		    " WHERE job_id = $1 AND state IN ('queued', 'running')",
		    1, params);
	if (r == NULL)
		goto failed;
	PQclear(r);
	if (db_commit(conn) < 0)
		goto failed;
	log_info("job %lld cancelled", job_id);
	job = api_job_json(conn, job_id, &failed);
	if (job == NULL)
		goto failed;
	http_json(res, 200, job);
	return;
failed:
	db_rollback(conn);
	http_db_failed(res);
}
