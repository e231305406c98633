/* The REST API beyond the core contract: lists, runs, re-run, token
 * revocation, the OpenAPI document. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "server.h"
#include "url.h"

#define API_MORE_LIMIT_DEFAULT 50
#define API_MORE_LIMIT_MAX 200
#define API_MORE_OFFSET_MAX 1000000000LL
#define API_MORE_OPENAPI_MAX (1024 * 1024)

/* Timestamps are answered as ISO 8601 UTC text whatever the session's
 * TimeZone is: to_char(x AT TIME ZONE 'UTC', ...). */

static json_t *real_or_null(const PGresult *r, int row, int col)
{
	return db_is_null(r, row, col) ? json_null()
				       : json_real(db_double(r, row, col));
}

/* The shortest "%g" text that reads back as `v`. */
static void format_double(char *buf, size_t size, double v)
{
	int precision;

	for (precision = 1; precision < 17; precision++) {
		snprintf(buf, size, "%.*g", precision, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, size, "%.17g", v);
}

/*
 * Query-string readers: each answers 400 in `res` and returns false when
 * the argument is present but malformed; an absent argument leaves *out
 * as it was.
 */
static bool query_int(struct http_response *res, struct http_request *req,
		      const char *name, long long min, long long max,
		      long long *out)
{
	const char *text = http_query(req, name);
	size_t n;
	long long v = -1;

	if (text == NULL)
		return true;
	/* Digits only (no sign, space or exponent), short enough not to
	 * overflow. */
	n = strlen(text);
	if (n > 0 && n <= 18 && strspn(text, "0123456789") == n)
		v = strtoll(text, NULL, 10);
	if (v < min || v > max) {
		http_error(res, 400, "invalid_query",
			   "'%s' must be an integer from %lld to %lld", name,
			   min, max);
		return false;
	}
	*out = v;
	return true;
}

/* A repository or testcase name filter: the names POST accepts. */
static bool query_name(struct http_response *res, struct http_request *req,
		       const char *name, const char **out)
{
	const char *text = http_query(req, name);
	size_t i, n;

	*out = NULL;
	if (text == NULL)
		return true;
	n = strlen(text);
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)text[i]) && text[i] != '-' &&
		    text[i] != '_' && text[i] != '.')
			break;
	}
	if (n == 0 || n > 64 || i != n) {
		http_error(res, 400, "invalid_query",
			   "'%s' must be a name of 1 to 64 of A-Z a-z 0-9 . _ "
			   "-",
			   name);
		return false;
	}
	*out = text;
	return true;
}

/* A filter that must be one of `allowed` (NULL-terminated). */
static bool query_choice(struct http_response *res, struct http_request *req,
			 const char *name, const char *const *allowed,
			 const char *allowed_text, const char **out)
{
	const char *text = http_query(req, name);
	size_t i;

	*out = NULL;
	if (text == NULL)
		return true;
	for (i = 0; allowed[i] != NULL; i++) {
		if (strcmp(text, allowed[i]) == 0) {
			*out = allowed[i];
			return true;
		}
	}
	http_error(res, 400, "invalid_query", "'%s' must be one of %s", name,
		   allowed_text);
	return false;
}

/* GET /api/v1/jobs: a page of jobs, newest first, with the total. */
static void api_more_jobs_list(struct http_response *res,
			       struct http_request *req)
{
	static const char *const states[] = {"queued", "running",   "done",
					     "failed", "cancelled", NULL};
	static const char *const verdicts[] = {
	    "regression", "improvement", "no-change", "inconclusive", NULL};
	long long limit = API_MORE_LIMIT_DEFAULT, offset = 0;
	char limit_text[24], offset_text[24];
	const char *params[6];
	json_t *jobs = NULL;
	PGresult *r;
	int row;

	if (!query_name(res, req, "repo", &params[0]) ||
	    !query_name(res, req, "testcase", &params[1]) ||
	    !query_choice(res, req, "state", states,
			  "queued, running, done, failed, cancelled",
			  &params[2]) ||
	    !query_choice(res, req, "verdict", verdicts,
			  "regression, improvement, no-change, inconclusive",
			  &params[3]) ||
	    !query_int(res, req, "limit", 1, API_MORE_LIMIT_MAX, &limit) ||
	    !query_int(res, req, "offset", 0, API_MORE_OFFSET_MAX, &offset))
		return;
	snprintf(limit_text, sizeof(limit_text), "%lld", limit);
	snprintf(offset_text, sizeof(offset_text), "%lld", offset);
	params[4] = limit_text;
	params[5] = offset_text;
	/* One statement, so the total and the page come from one snapshot;
	 * the outer join yields one row (the total) even for an empty
	 * page. */
	r = db_exec(db_conn(),
		    "WITH f AS (SELECT j.id FROM jobs j"
		    " JOIN repos rp ON rp.id = j.repo_id"
		    " JOIN testcases t ON t.id = j.testcase_id"
		    " WHERE ($1::text IS NULL OR rp.name = $1)"
		    " AND ($2::text IS NULL OR t.name = $2)"
		    " AND ($3::text IS NULL OR j.state = $3)"
		    " AND ($4::text IS NULL OR j.verdict = $4)),"
		    " page AS (SELECT id FROM f ORDER BY id DESC"
		    " LIMIT $5 OFFSET $6)"
		    " SELECT (SELECT count(*) FROM f), j.id, j.state,"
		    " j.verdict, rp.name, t.name, j.good_sha, j.bad_sha,"
		    " j.culprit_sha, j.change_pct,"
		    " to_char(j.created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " to_char(j.finished_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM (SELECT 1) one LEFT JOIN (page"
		    " JOIN jobs j ON j.id = page.id"
		    " JOIN repos rp ON rp.id = j.repo_id"
		    " JOIN testcases t ON t.id = j.testcase_id) ON true"
		    " ORDER BY j.id DESC",
		    6, params);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	jobs = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		if (db_is_null(r, row, 1))
			continue;
		json_array_append_new(
		    jobs,
		    json_pack("{s:I,s:s,s:s?,s:s,s:s,s:s,s:s,s:s?,s:o,s:s,"
			      "s:s?}",
			      "id", (json_int_t)db_int(r, row, 1), "state",
			      db_text(r, row, 2), "verdict",
			      db_text(r, row, 3), "repo", db_text(r, row, 4),
			      "testcase", db_text(r, row, 5), "good",
			      db_text(r, row, 6), "bad", db_text(r, row, 7),
			      "culprit", db_text(r, row, 8), "change_pct",
			      real_or_null(r, row, 9), "created_at",
			      db_text(r, row, 10), "finished_at",
			      db_text(r, row, 11)));
	}
	http_json(res, 200,
		  json_pack("{s:o,s:I,s:I,s:I}", "jobs", jobs, "total",
			    (json_int_t)db_int(r, 0, 0), "limit",
			    (json_int_t)limit, "offset", (json_int_t)offset));
	PQclear(r);
}

/*
 * The runs of the job named by the request's path, in run order, or
 * false after answering 404 or 503.  Columns: run id (NULL when the job
 * has no run), commit_idx, sha, worker name, exit_code, wall_s, kpi,
 * metrics, created_at.
 */
static bool runs_load(struct http_response *res, struct http_request *req,
		      long long *job_id, PGresult **out)
{
	const char *params[1] = {req->params[0]};

	*out = NULL;
	if (!http_path_id(res, req->params[0], "not_found", "job", job_id))
		return false;
	*out = db_exec(db_conn(),
		       "SELECT r.id, r.commit_idx, c.sha, w.name, r.exit_code,"
		       " r.wall_s, r.kpi, r.metrics,"
		       " to_char(r.created_at AT TIME ZONE 'UTC',"
		       " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		       " FROM jobs j LEFT JOIN runs r ON r.job_id = j.id"
		       " LEFT JOIN job_commits c"
		       " ON c.job_id = r.job_id AND c.idx = r.commit_idx"
		       " LEFT JOIN workers w ON w.id = r.worker_id"
		       " WHERE j.id = $1 ORDER BY r.id",
		       1, params);
	if (*out == NULL) {
		http_db_failed(res);
		return false;
	}
	if (PQntuples(*out) == 0) {
		PQclear(*out);
		*out = NULL;
		http_error(res, 404, "not_found", "no job %lld", *job_id);
		return false;
	}
	return true;
}

/* The metrics column of a run row, parsed; an empty object if broken. */
static json_t *run_metrics(const PGresult *r, int row)
{
	json_error_t e;
	json_t *m = json_loads(db_text(r, row, 7), 0, &e);

	if (!json_is_object(m)) {
		json_decref(m);
		m = json_object();
	}
	return m;
}

/* GET /api/v1/jobs/{}/runs */
static void api_more_jobs_runs(struct http_response *res,
			       struct http_request *req)
{
	long long job_id;
	json_t *runs;
	PGresult *r;
	int row;

	if (!runs_load(res, req, &job_id, &r))
		return;
	runs = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		if (db_is_null(r, row, 0))
			continue;
		json_array_append_new(
		    runs,
		    json_pack("{s:s,s:I,s:s?,s:I,s:o,s:o,s:o,s:s}", "commit",
			      db_text(r, row, 2), "commit_index",
			      (json_int_t)db_int(r, row, 1), "worker",
			      db_text(r, row, 3), "exit_code",
			      (json_int_t)db_int(r, row, 4), "wall_s",
			      real_or_null(r, row, 5), "kpi",
			      real_or_null(r, row, 6), "metrics",
			      run_metrics(r, row), "created_at",
			      db_text(r, row, 8)));
	}
	http_json(
	    res, 200,
	    json_pack("{s:I,s:o}", "job", (json_int_t)job_id, "runs", runs));
	PQclear(r);
}

/* One RFC 4180 field: quoted when it holds a comma, quote or line end. */
static void csv_field(FILE *f, const char *text)
{
	if (text[strcspn(text, ",\"\r\n")] == '\0') {
		fputs(text, f);
		return;
	}
	fputc('"', f);
	for (; *text != '\0'; text++) {
		if (*text == '"')
			fputc('"', f);
		fputc(*text, f);
	}
	fputc('"', f);
}

static void csv_number(FILE *f, const PGresult *r, int row, int col)
{
	char buf[40];

	if (db_is_null(r, row, col))
		return;
	format_double(buf, sizeof(buf), db_double(r, row, col));
	fputs(buf, f);
}

static void csv_json_number(FILE *f, json_t *value)
{
	char buf[40];

	if (json_is_integer(value)) {
		fprintf(f, "%lld", (long long)json_integer_value(value));
	} else if (json_is_real(value)) {
		format_double(buf, sizeof(buf), json_real_value(value));
		fputs(buf, f);
	}
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Writes the CSV of the runs in `r` for job `job_id` to `f`.  Returns 0 or
 * -1 when out of memory.
 */
static int runs_csv_write(FILE *f, const PGresult *r, long long job_id)
{
	int rows = PQntuples(r), row, error = -1;
	json_t **metrics = calloc((size_t)rows + 1, sizeof(*metrics));
	json_t *all_names = json_object(), *value;
	const char **names = NULL, *name;
	size_t count = 0, i;

	if (metrics == NULL || all_names == NULL)
		goto out;
	for (row = 0; row < rows; row++) {
		if (db_is_null(r, row, 0))
			continue;
		metrics[row] = run_metrics(r, row);
		json_object_foreach(metrics[row], name, value)
		    json_object_set_new(all_names, name, json_true());
	}
	names = calloc(json_object_size(all_names) + 1, sizeof(*names));
	if (names == NULL)
		goto out;
	json_object_foreach(all_names, name, value) names[count++] = name;
	qsort(names, count, sizeof(*names), compare_names);
	fputs("job,commit_index,commit,worker,exit_code,wall_s,kpi", f);
	for (i = 0; i < count; i++) {
		fputc(',', f);
		csv_field(f, names[i]);
	}
	fputs("\r\n", f);
	for (row = 0; row < rows; row++) {
		if (metrics[row] == NULL)
			continue;
		fprintf(f, "%lld,%lld,", job_id, db_int(r, row, 1));
		csv_field(f, db_text(r, row, 2));
		fputc(',', f);
		if (!db_is_null(r, row, 3))
			csv_field(f, db_text(r, row, 3));
		fprintf(f, ",%lld,", db_int(r, row, 4));
		csv_number(f, r, row, 5);
		fputc(',', f);
		csv_number(f, r, row, 6);
		for (i = 0; i < count; i++) {
			fputc(',', f);
			csv_json_number(
			    f, json_object_get(metrics[row], names[i]));
		}
		fputs("\r\n", f);
	}
	error = 0;
out:
	for (row = 0; metrics != NULL && row < rows; row++)
		json_decref(metrics[row]);
	free(metrics);
	free(names);
	json_decref(all_names);
	return error;
}

/* GET /api/v1/jobs/{}/runs.csv */
static void api_more_jobs_runs_csv(struct http_response *res,
				   struct http_request *req)
{
	char *text = NULL, filename[64];
	size_t len = 0;
	long long job_id;
	PGresult *r;
	FILE *f;
	int error;

	if (!runs_load(res, req, &job_id, &r))
		return;
	f = open_memstream(&text, &len);
	if (f == NULL) {
		PQclear(r);
		http_error(res, 500, "internal", "out of memory");
		return;
	}
	error = runs_csv_write(f, r, job_id);
	if (fclose(f) != 0)
		error = -1;
	PQclear(r);
	snprintf(filename, sizeof(filename),
		 "attachment; filename=\"job-%lld-runs.csv\"", job_id);
	if (error < 0 || text == NULL ||
	    http_add_header(res, "Content-Disposition", filename) < 0) {
		http_error(res, 500, "internal", "out of memory");
		free(text);
		return;
	}
	http_text(res, 200, "text/csv; charset=utf-8; header=present", text);
	free(text);
}

/* GET /api/v1/repos */
static void api_more_repos_list(struct http_response *res,
				struct http_request *req)
{
	json_t *repos;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT id, name, url, web_url,"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM repos ORDER BY name",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	repos = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		char *url = NULL;

		if (url_redact(&url, db_text(r, row, 2)) < 0) {
			json_decref(repos);
			PQclear(r);
			http_error(res, 500, "internal", "out of memory");
			return;
		}

		json_array_append_new(
		    repos, json_pack("{s:I,s:s,s:s?,s:s?,s:s}", "id",
				     (json_int_t)db_int(r, row, 0), "name",
				     db_text(r, row, 1), "url", url, "web_url",
				     db_text(r, row, 3), "created_at",
				     db_text(r, row, 4)));
		free(url);
	}
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "repos", repos));
}

/* A jsonb column parsed, or null. */
static json_t *jsonb_value(const PGresult *r, int row, int col)
{
	json_error_t e;
	json_t *v = json_loads(db_text(r, row, col), JSON_DECODE_ANY, &e);

	return v != NULL ? v : json_null();
}

/* GET /api/v1/testcases */
static void api_more_testcases_list(struct http_response *res,
				    struct http_request *req)
{
	json_t *testcases;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT id, name, build, run, kpi, higher_is_better,"
		    " min_change_pct, runs_min, runs_max, timeout_s, params,"
		    " monitors,"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM testcases ORDER BY name",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	testcases = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		json_array_append_new(
		    testcases,
		    json_pack("{s:I,s:s,s:s,s:s,s:s,s:b,s:f,s:I,s:I,s:I,"
			      "s:o,s:o,s:s}",
			      "id", (json_int_t)db_int(r, row, 0), "name",
			      db_text(r, row, 1), "build", db_text(r, row, 2),
			      "run", db_text(r, row, 3), "kpi",
			      db_text(r, row, 4), "higher_is_better",
			      db_bool(r, row, 5), "min_change_pct",
			      db_double(r, row, 6), "runs_min",
			      (json_int_t)db_int(r, row, 7), "runs_max",
			      (json_int_t)db_int(r, row, 8), "timeout_s",
			      (json_int_t)db_int(r, row, 9), "params",
			      jsonb_value(r, row, 10), "monitors",
			      jsonb_value(r, row, 11), "created_at",
			      db_text(r, row, 12)));
	}
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "testcases", testcases));
}

/* GET /api/v1/workers: each worker with the task it holds a live lease
 * on, if any. */
static void api_more_workers_list(struct http_response *res,
				  struct http_request *req)
{
	json_t *workers, *task;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT w.id, w.name, w.grp, w.machine,"
		    " to_char(w.registered_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " to_char(w.last_seen_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " t.id, t.job_id, t.commit_idx, c.sha,"
		    " to_char(t.lease_expires_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM workers w LEFT JOIN LATERAL"
		    " (SELECT id, job_id, commit_idx, lease_expires_at"
		    " FROM tasks WHERE worker_id = w.id AND state = 'running'"
		    " AND lease_expires_at > now() ORDER BY id DESC LIMIT 1) t"
		    " ON true LEFT JOIN job_commits c"
		    " ON c.job_id = t.job_id AND c.idx = t.commit_idx"
		    " ORDER BY w.grp, w.name",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	workers = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		if (db_is_null(r, row, 6))
			task = json_null();
		else
			task = json_pack(
			    "{s:I,s:I,s:I,s:s,s:s}", "id",
			    (json_int_t)db_int(r, row, 6), "job",
			    (json_int_t)db_int(r, row, 7), "commit_index",
			    (json_int_t)db_int(r, row, 8), "commit",
			    db_text(r, row, 9), "lease_expires_at",
			    db_text(r, row, 10));
		json_array_append_new(
		    workers,
		    json_pack("{s:I,s:s,s:s,s:s?,s:s,s:s,s:o}", "id",
			      (json_int_t)db_int(r, row, 0), "name",
			      db_text(r, row, 1), "group", db_text(r, row, 2),
			      "machine", db_text(r, row, 3), "registered_at",
			      db_text(r, row, 4), "last_seen_at",
			      db_text(r, row, 5), "task", task));
	}
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "workers", workers));
}

static json_t *token_json(const PGresult *r, int row)
{
	return json_pack("{s:I,s:s,s:s,s:s,s:s?}", "id",
			 (json_int_t)db_int(r, row, 0), "name",
			 db_text(r, row, 1), "role", db_text(r, row, 2),
			 "created_at", db_text(r, row, 3), "revoked_at",
			 db_text(r, row, 4));
}

/* GET /api/v1/tokens: never the hashes. */
static void api_more_tokens_list(struct http_response *res,
				 struct http_request *req)
{
	json_t *tokens;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT"
		    " id, name, role,"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " to_char(revoked_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM tokens ORDER BY id",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	tokens = json_array();
	for (row = 0; row < PQntuples(r); row++)
		json_array_append_new(tokens, token_json(r, row));
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "tokens", tokens));
}

/* DELETE /api/v1/tokens/{}: revokes; 409 when revoked already. */
static void api_more_tokens_revoke(struct http_response *res,
				   struct http_request *req)
{
	const char *params[1] = {req->params[0]};
	long long token_id;
	PGresult *r;

	if (!http_path_id(res, req->params[0], "not_found", "token",
			  &token_id))
		return;
	r = db_exec(db_conn(),
		    "UPDATE tokens SET revoked_at = now()"
		    " WHERE id = $1 AND revoked_at IS NULL"
		    " RETURNING"
		    " id, name, role,"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " to_char(revoked_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
		    1, params);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	if (PQntuples(r) == 1) {
		log_info("token %lld ('%s') revoked", token_id,
			 db_text(r, 0, 1));
		http_json(res, 200, token_json(r, 0));
		PQclear(r);
		return;
	}
	PQclear(r);
	r = db_exec(db_conn(), "SELECT 1 FROM tokens WHERE id = $1", 1,
		    params);
	if (r == NULL)
		http_db_failed(res);
	else if (PQntuples(r) == 0)
		http_error(res, 404, "not_found", "no token %lld", token_id);
	else
		http_error(res, 409, "revoked",
			   "token %lld is already revoked", token_id);
	PQclear(r);
}

/* POST /api/v1/jobs/{}/rerun: the same range again, as a new job. */
static void api_more_jobs_rerun(struct http_response *res,
				struct http_request *req)
{
	const char *params[1] = {req->params[0]};
	json_t *body = NULL;
	long long job_id;
	PGresult *r;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	r = db_exec(db_conn(),
		    "SELECT rp.name, t.name, j.good_sha, j.bad_sha, j.notify"
		    " FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
		    " JOIN testcases t ON t.id = j.testcase_id"
		    " WHERE j.id = $1",
		    1, params);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	if (PQntuples(r) == 0) {
		http_error(res, 404, "not_found", "no job %lld", job_id);
		goto out;
	}
	body =
	    json_pack("{s:s,s:s,s:s,s:s,s:o}", "repo", db_text(r, 0, 0),
		      "testcase", db_text(r, 0, 1), "good", db_text(r, 0, 2),
		      "bad", db_text(r, 0, 3), "notify", jsonb_value(r, 0, 4));
	if (body == NULL) {
		http_error(res, 500, "internal", "out of memory");
		goto out;
	}
	log_info("job %lld: re-run requested", job_id);
	api_job_create(res, req, body);
out:
	json_decref(body);
	PQclear(r);
}

/* <dir of this program>/../web/openapi.yaml, malloc'd. */
static char *openapi_path(void)
{
	char exe[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return strdup("web/openapi.yaml");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash != NULL)
		*slash = '\0';
	if (asprintf(&path, "%s/../web/openapi.yaml", exe) < 0)
		return NULL;
	return path;
}

/* GET /api/v1/openapi.yaml */
static void api_more_openapi(struct http_response *res,
			     struct http_request *req)
{
	char *path = openapi_path(), *text = NULL;
	size_t len = 0;
	FILE *f = NULL;

	(void)req;
	if (path == NULL || (f = fopen(path, "r")) == NULL) {
		log_error("cannot open the OpenAPI document %s",
			  path != NULL ? path : "(no memory)");
		http_error(res, 500, "internal",
			   "the OpenAPI document is not installed beside the "
			   "server");
		goto out;
	}
	text = malloc(API_MORE_OPENAPI_MAX + 1);
	if (text == NULL) {
		http_error(res, 500, "internal", "out of memory");
		goto out;
	}
	len = fread(text, 1, API_MORE_OPENAPI_MAX + 1, f);
	if (ferror(f) || len > API_MORE_OPENAPI_MAX ||
	    memchr(text, '\0', len) != NULL) {
		log_error("cannot read the OpenAPI document %s", path);
		http_error(res, 500, "internal",
			   "the OpenAPI document cannot be read");
		goto out;
	}
	text[len] = '\0';
	http_text(res, 200, "application/yaml", text);
out:
	if (f != NULL)
		fclose(f);
	free(text);
	free(path);
}

const struct http_route api_more_routes[] = {
    {"GET", "/api/v1/jobs", ROLE_READ, api_more_jobs_list},
    {"GET", "/api/v1/jobs/{}/runs", ROLE_READ, api_more_jobs_runs},
    {"GET", "/api/v1/jobs/{}/runs.csv", ROLE_READ, api_more_jobs_runs_csv},
    {"POST", "/api/v1/jobs/{}/rerun", ROLE_SUBMIT, api_more_jobs_rerun},
    {"GET", "/api/v1/repos", ROLE_READ, api_more_repos_list},
    {"GET", "/api/v1/testcases", ROLE_READ, api_more_testcases_list},
    {"GET", "/api/v1/workers", ROLE_READ, api_more_workers_list},
    {"GET", "/api/v1/tokens", ROLE_ADMIN, api_more_tokens_list},
    {"DELETE", "/api/v1/tokens/{}", ROLE_ADMIN, api_more_tokens_revoke},
    {"GET", "/api/v1/openapi.yaml", ROLE_NONE, api_more_openapi},
    {NULL, NULL, ROLE_NONE, NULL},
};
