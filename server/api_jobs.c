/*
 * The REST API of jobs: thin adapters that read the request, call the
 * jobs service (jobs.h) and answer its outcome as JSON, CSV or text.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "jobs.h"
#include "listcache.h"
#include "patches.h"
#include "server.h"
#include "validate.h"

#define API_JOBS_LIMIT_DEFAULT 50
#define API_JOBS_LIMIT_MAX 200
#define API_JOBS_OFFSET_MAX 1000000000LL

static json_t *real_or_null(double value)
{
	return isnan(value) ? json_null() : json_real(value);
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

/* A job of a list as GET /api/v1/jobs shows it. */
static json_t *job_row_json(const struct store_jobs_row *j)
{
	return json_pack(
	    "{s:I,s:s,s:s?,s:s,s:s,s:s,s:s,s:s?,s:o,s:s,s:s?,s:I,s:I,s:s}",
	    "id", (json_int_t)j->id, "state", j->state, "verdict", j->verdict,
	    "repo", j->repo, "testcase", j->testcase, "good", j->good_sha,
	    "bad", j->bad_sha, "culprit", j->culprit, "change_pct",
	    isnan(j->change_pct) ? json_null() : json_real(j->change_pct),
	    "created_at", j->created_at, "finished_at", j->finished_at, "runs",
	    (json_int_t)j->runs, "commits_tested",
	    (json_int_t)j->commits_tested, "group", j->group);
}

/* The "?group=" of a list: a group as validate_group takes it, or none. */
static bool query_group(struct http_response *res, struct http_request *req,
			const char **out)
{
	*out = http_query(req, "group");
	if (*out == NULL || validate_group(*out))
		return true;
	http_error(res, 400, "invalid_query",
		   "'group' must be 1 to 64 bytes of UTF-8 without control "
		   "characters");
	return false;
}

/* GET /api/v1/jobs's answer of `page`, the page of `filter`, as JSON
 * text (listcache_render). */
static char *list_answer(const struct store_jobs_page *page,
			 const struct store_jobs_filter *filter,
			 const void *arg)
{
	json_t *jobs = json_array(), *answer;
	char *text;
	size_t i;

	(void)arg;
	for (i = 0; i < page->count; i++)
		json_array_append_new(jobs, job_row_json(&page->rows[i]));
	answer = json_pack("{s:o,s:I,s:I,s:I}", "jobs", jobs, "total",
			   (json_int_t)page->total, "limit",
			   (json_int_t)filter->limit, "offset",
			   (json_int_t)filter->offset);
	text = answer != NULL ? json_dumps(answer, HTTP_JSON_FLAGS) : NULL;
	json_decref(answer);
	return text;
}

/* GET /api/v1/jobs: a page of jobs, newest first, with the total. */
void api_jobs_list(struct http_response *res, struct http_request *req)
{
	static const char *const states[] = {
	    "resolving", "queued",    "running", "done",
	    "failed",	 "cancelled", NULL};
	static const char *const verdicts[] = {
	    "regression", "improvement", "no-change", "inconclusive", NULL};
	struct store_jobs_filter filter = {.limit = API_JOBS_LIMIT_DEFAULT};
	struct listcache_text list;

	if (!query_name(res, req, "repo", &filter.repo) ||
	    !query_name(res, req, "testcase", &filter.testcase) ||
	    !query_group(res, req, &filter.group) ||
	    !query_choice(res, req, "state", states,
			  "queued, running, done, failed, cancelled",
			  &filter.state) ||
	    !query_choice(res, req, "verdict", verdicts,
			  "regression, improvement, no-change, inconclusive",
			  &filter.verdict) ||
	    !query_int(res, req, "limit", 1, API_JOBS_LIMIT_MAX,
		       &filter.limit) ||
	    !query_int(res, req, "offset", 0, API_JOBS_OFFSET_MAX,
		       &filter.offset))
		return;
	/* Its answer does not change with time: kept as written. */
	if (listcache_text(&list, db_conn(), &filter, LISTCACHE_API, true,
			   list_answer, NULL) < 0) {
		http_db_failed(res);
		return;
	}
	http_json_text(res, 200, list.text);
}

/* The runs of the job named by the request's path into *out, or false
 * after answering 404 or 503. */
static bool runs_load(struct http_response *res, struct http_request *req,
		      long long *job_id, struct store_job_runs *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (!http_path_id(res, req->params[0], "not_found", "job", job_id))
		return false;
	rc = store_jobs_runs(out, db_conn(), *job_id);
	if (rc == STORE_FAILED)
		http_db_failed(res);
	else if (rc == STORE_NOT_FOUND)
		http_error(res, 404, "not_found", "no job %lld", *job_id);
	return rc == 0;
}

/* The metrics of a run, parsed; an empty object if broken. */
static json_t *run_metrics(const struct store_job_run *run)
{
	json_error_t e;
	json_t *m = json_loads(run->metrics, 0, &e);

	if (!json_is_object(m)) {
		json_decref(m);
		m = json_object();
	}
	return m;
}

/* GET /api/v1/jobs/{}/runs */
void api_jobs_runs(struct http_response *res, struct http_request *req)
{
	struct store_job_runs runs;
	long long job_id;
	json_t *list;
	size_t i;

	if (!runs_load(res, req, &job_id, &runs))
		return;
	list = json_array();
	for (i = 0; i < runs.count; i++) {
		const struct store_job_run *run = &runs.runs[i];

		json_t *item = json_pack(
		    "{s:s,s:I,s:s?,s:I,s:o,s:o,s:o,s:s,s:s?,s:s?,s:b}",
		    "commit", run->commit, "commit_index",
		    (json_int_t)run->commit_index, "worker", run->worker,
		    "exit_code", (json_int_t)run->exit_code, "wall_s",
		    real_or_null(run->wall_s), "kpi", real_or_null(run->kpi),
		    "metrics", run_metrics(run), "created_at", run->created_at,
		    "group", run->group, "machine", run->machine, "counted",
		    run->counted);

		/* Which machine made it (issue 14); "counted": it is one of
		 * the runs the job's comparisons use. */
		if (item != NULL)
			json_object_set_new(
			    item, "worker_id",
			    run->worker_id > 0
				? json_integer((json_int_t)run->worker_id)
				: json_null());
		json_array_append_new(list, item);
	}
	http_json(
	    res, 200,
	    json_pack("{s:I,s:o}", "job", (json_int_t)job_id, "runs", list));
	store_job_runs_clear(&runs);
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

static void csv_number(FILE *f, double value)
{
	char buf[40];

	if (isnan(value))
		return;
	format_double(buf, sizeof(buf), value);
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

/* One run as a CSV line, its metrics in the columns `names`. */
static void csv_run(FILE *f, long long job_id, const struct store_job_run *run,
		    json_t *metrics, const char **names, size_t count)
{
	size_t i;

	fprintf(f, "%lld,%lld,", job_id, run->commit_index);
	csv_field(f, run->commit);
	fputc(',', f);
	if (run->worker != NULL)
		csv_field(f, run->worker);
	fprintf(f, ",%lld,", run->exit_code);
	csv_number(f, run->wall_s);
	fputc(',', f);
	csv_number(f, run->kpi);
	for (i = 0; i < count; i++) {
		fputc(',', f);
		csv_json_number(f, json_object_get(metrics, names[i]));
	}
	fputs("\r\n", f);
}

/*
 * Writes the CSV of `runs` of job `job_id` to `f`.  Returns 0 or -1 when
 * out of memory.
 */
static int runs_csv_write(FILE *f, const struct store_job_runs *runs,
			  long long job_id)
{
	json_t **metrics = calloc(runs->count + 1, sizeof(*metrics));
	json_t *all_names = json_object(), *value;
	const char **names = NULL, *name;
	size_t count = 0, i;
	int error = -1;

	if (metrics == NULL || all_names == NULL)
		goto out;
	for (i = 0; i < runs->count; i++) {
		metrics[i] = run_metrics(&runs->runs[i]);
		json_object_foreach(metrics[i], name, value)
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
	for (i = 0; i < runs->count; i++)
		csv_run(f, job_id, &runs->runs[i], metrics[i], names, count);
	error = 0;
out:
	for (i = 0; metrics != NULL && i < runs->count; i++)
		json_decref(metrics[i]);
	free(metrics);
	free(names);
	json_decref(all_names);
	return error;
}

/* GET /api/v1/jobs/{}/runs.csv */
void api_jobs_runs_csv(struct http_response *res, struct http_request *req)
{
	struct store_job_runs runs;
	char *text = NULL, filename[64];
	size_t len = 0;
	long long job_id;
	FILE *f;
	int error;

	if (!runs_load(res, req, &job_id, &runs))
		return;
	f = open_memstream(&text, &len);
	if (f == NULL) {
		store_job_runs_clear(&runs);
		http_error(res, 500, "internal", "out of memory");
		return;
	}
	error = runs_csv_write(f, &runs, job_id);
	if (fclose(f) != 0)
		error = -1;
	store_job_runs_clear(&runs);
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

/* Answers the outcome `rc` of a jobs service call that did not succeed. */
static void api_jobs_failed(struct http_response *res, int rc,
			    const struct field_errors *errors)
{
	if (rc == JOBS_DB_FAILED || !fields_answer(res, errors))
		http_db_failed(res);
}

/* Answers 201 with job `job_id`, just created, or 202 when its range is
 * still being listed in the background (state 'resolving'). */
static void api_jobs_created(struct http_response *res, PGconn *conn,
			     long long job_id)
{
	struct field_errors errors;
	json_t *job;
	int rc;

	fields_init(&errors);
	rc = jobs_get(&job, conn, job_id, &errors);
	if (rc != 0) {
		api_jobs_failed(res, rc, &errors);
		return;
	}
	if (asprintf(&res->location, "/api/v1/jobs/%lld", job_id) < 0)
		res->location = NULL;
	http_json(res,
		  strcmp(json_string_value(json_object_get(job, "state")),
			 "resolving") == 0
		      ? 202
		      : 201,
		  job);
}

void api_jobs_create(struct http_response *res, struct http_request *req)
{
	struct jobs_request request;
	struct field_errors errors;
	json_t *body = http_json_body(res, req);
	PGconn *conn = db_conn();
	long long job_id;
	int rc;

	if (body == NULL)
		return;
	if (patches_is_request(body)) {
		patches_create(res, req, body);
		goto out;
	}
	fields_init(&errors);
	if (conn == NULL) {
		http_db_failed(res);
		goto out;
	}
	jobs_request_from_json(&request, body, &errors);
	rc = jobs_create(&job_id, conn, &request, req->token_id, &errors);
	if (rc == 0)
		api_jobs_created(res, conn, job_id);
	else
		api_jobs_failed(res, rc, &errors);
out:
	json_decref(body);
}

/* The job named by the path into *job_id, and the connection; false
 * after answering. */
static bool api_jobs_target(struct http_response *res,
			    struct http_request *req, long long *job_id,
			    PGconn **conn)
{
	if (!http_path_id(res, req->params[0], "not_found", "job", job_id))
		return false;
	*conn = db_conn();
	if (*conn == NULL) {
		http_db_failed(res);
		return false;
	}
	return true;
}

void api_jobs_get(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	long long job_id;
	PGconn *conn;
	char *job;
	int rc;

	if (!api_jobs_target(res, req, &job_id, &conn))
		return;
	fields_init(&errors);
	rc = jobs_get_text(&job, conn, job_id, &errors);
	if (rc == 0)
		http_json_text(res, 200, job);
	else
		api_jobs_failed(res, rc, &errors);
}

void api_jobs_report(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	char *message = NULL;
	long long job_id;
	PGconn *conn;
	int rc;

	if (!api_jobs_target(res, req, &job_id, &conn))
		return;
	fields_init(&errors);
	rc = jobs_report(&message, conn, job_id, &errors);
	if (rc == 0)
		http_text(res, 200, "text/plain; charset=utf-8", message);
	else
		api_jobs_failed(res, rc, &errors);
	free(message);
}

void api_jobs_cancel(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	long long job_id;
	PGconn *conn;
	json_t *job;
	int rc;

	if (!api_jobs_target(res, req, &job_id, &conn))
		return;
	fields_init(&errors);
	rc = jobs_cancel(&job, conn, job_id, &errors);
	if (rc == 0)
		http_json(res, 200, job);
	else
		api_jobs_failed(res, rc, &errors);
}

void api_jobs_rerun(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	long long job_id, new_id;
	PGconn *conn;
	int rc;

	if (!api_jobs_target(res, req, &job_id, &conn))
		return;
	fields_init(&errors);
	rc = jobs_rerun(&new_id, conn, job_id, req->token_id, &errors);
	if (rc == 0)
		api_jobs_created(res, conn, new_id);
	else
		api_jobs_failed(res, rc, &errors);
}
