#include "watches.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "report.h"
#include "strbuf.h"
#include "watcher.h"

bool watches_branch_valid(const char *branch)
{
	size_t n = branch != NULL ? strlen(branch) : 0, i;

	if (n == 0 || n > WATCHES_BRANCH_MAX || branch[0] == '-' ||
	    branch[0] == '/' || branch[n - 1] == '/' ||
	    strstr(branch, "..") != NULL || strstr(branch, "@{") != NULL ||
	    strstr(branch, "//") != NULL ||
	    (n >= 5 && strcmp(branch + n - 5, ".lock") == 0))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)branch[i];

		if (c <= ' ' || c == 0x7f || strchr("~^:\\", c) != NULL)
			return false;
	}
	return true;
}

/* An optional integer field within [min, max]; *out keeps its default
 * when absent. */
static void field_int(struct field_errors *errors, json_t *body,
		      const char *key, long long min, long long max,
		      long long *out)
{
	json_t *v = json_object_get(body, key);

	if (v == NULL || json_is_null(v))
		return;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		fields_add(errors, key, 400, "invalid_field",
			   "'%s' must be an integer from %lld to %lld", key,
			   min, max);
		return;
	}
	*out = (long long)json_integer_value(v);
}

static void field_bool(struct field_errors *errors, json_t *body,
		       const char *key, bool *out)
{
	json_t *v = json_object_get(body, key);

	if (v == NULL || json_is_null(v))
		return;
	if (!json_is_boolean(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "'%s' must be true or false", key);
		return;
	}
	*out = json_is_true(v);
}

/* A required plain string (no NUL inside), or NULL after adding why. */
static const char *field_string(struct field_errors *errors, json_t *body,
				const char *key)
{
	json_t *v = json_object_get(body, key);

	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "'%s' must be a string", key);
		return NULL;
	}
	return json_string_value(v);
}

static void field_notify(struct field_errors *errors, json_t *notify)
{
	size_t i;
	json_t *v;

	if (notify == NULL || json_is_null(notify))
		return;
	if (!json_is_array(notify) ||
	    json_array_size(notify) > WATCHES_NOTIFY_MAX) {
		fields_add(errors, "notify", 400, "invalid_field",
			   "'notify' must be a list of at most %d addresses",
			   WATCHES_NOTIFY_MAX);
		return;
	}
	json_array_foreach(notify, i, v)
	{
		if (!json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v) ||
		    !report_address_is_valid(json_string_value(v))) {
			fields_add(errors, "notify", 400, "invalid_email",
				   "'notify' entry %zu is not a plain email "
				   "address (local@domain)",
				   i);
			return;
		}
	}
}

/* The testcases by name into ids (without repeats): -1 on a database
 * failure, else 0 with what was wrong in `errors`. */
static int field_testcases(struct field_errors *errors, PGconn *conn,
			   json_t *list, long long *ids, size_t *count)
{
	size_t i, k;
	json_t *v;

	*count = 0;
	if (!json_is_array(list) || json_array_size(list) == 0 ||
	    json_array_size(list) > WATCHES_TESTCASES_MAX) {
		fields_add(errors, "testcases", 400, "invalid_field",
			   "'testcases' must list 1 to %d testcase names",
			   WATCHES_TESTCASES_MAX);
		return 0;
	}
	json_array_foreach(list, i, v)
	{
		long long id;
		int rc;

		if (!json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			fields_add(errors, "testcases", 400, "invalid_field",
				   "'testcases' entry %zu is not a name", i);
			return 0;
		}
		rc =
		    store_watches_testcase_id(conn, json_string_value(v), &id);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			fields_add(errors, "testcases", 404,
				   "unknown_testcase",
				   "testcase '%s' is not registered",
				   json_string_value(v));
			return 0;
		}
		for (k = 0; k < *count && ids[k] != id; k++)
			;
		if (k == *count)
			ids[(*count)++] = id;
	}
	return 0;
}

int watches_create(struct field_errors *errors, long long *id_out,
		   PGconn *conn, json_t *body, long long token_id)
{
	long long ids[WATCHES_TESTCASES_MAX];
	struct store_watch_new in = {0};
	const char *repo, *branch;
	json_t *notify = json_object_get(body, "notify");
	char *notify_text = NULL;
	int rc;

	in.interval_s = WATCHES_INTERVAL_DEFAULT;
	in.token_id = token_id;
	repo = field_string(errors, body, "repo");
	branch = field_string(errors, body, "branch");
	if (branch != NULL && !watches_branch_valid(branch))
		fields_add(errors, "branch", 400, "invalid_field",
			   "'branch' must be a branch name or a glob of "
			   "them (release/*), at most %d bytes",
			   WATCHES_BRANCH_MAX);
	field_int(errors, body, "interval_s", WATCHES_INTERVAL_MIN,
		  WATCHES_INTERVAL_MAX, &in.interval_s);
	field_bool(errors, body, "regressions_only", &in.regressions_only);
	field_bool(errors, body, "paused", &in.paused);
	field_notify(errors, notify);
	if (repo != NULL) {
		rc = store_watches_repo_id(conn, repo, &in.repo_id);
		if (rc < 0)
			return -1;
		if (rc > 0)
			fields_add(errors, "repo", 404, "unknown_repo",
				   "repository '%s' is not registered", repo);
	}
	if (field_testcases(errors, conn, json_object_get(body, "testcases"),
			    ids, &in.testcase_count) < 0)
		return -1;
	if (!fields_ok(errors))
		return 1;
	notify_text = notify != NULL && json_is_array(notify)
			  ? json_dumps(notify, JSON_COMPACT)
			  : strdup("[]");
	if (notify_text == NULL)
		return -1;
	in.branch = branch;
	in.notify = notify_text;
	in.testcase_ids = ids;
	rc = store_watches_insert(conn, &in, id_out);
	free(notify_text);
	if (rc == 0) {
		log_info("watch %lld: %s %s, %zu testcase(s)", *id_out, repo,
			 branch, in.testcase_count);
		watcher_wake();
	}
	return rc;
}

json_t *watches_json(const struct store_watch *watch)
{
	json_t *names = json_array(), *out;
	size_t i;

	for (i = 0; i < watch->testcase_count; i++)
		json_array_append_new(names,
				      json_string(watch->testcase_names[i]));
	out =
	    json_pack("{s:I,s:s,s:s,s:o,s:I,s:b,s:b,s:o,s:s?,s:s?,s:s?}", "id",
		      (json_int_t)watch->id, "repo", watch->repo, "branch",
		      watch->branch, "testcases", names, "interval_s",
		      (json_int_t)watch->interval_s, "regressions_only",
		      watch->regressions_only, "paused", watch->paused,
		      "notify", json_loads(watch->notify, 0, NULL),
		      "created_at", watch->created_at, "last_poll_at",
		      watch->last_poll_at, "last_error", watch->last_error);
	return out;
}

static json_t *number_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *watches_head_json(const struct store_head *head)
{
	json_t *out = json_pack(
	    "{s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:s,s:o}", "testcase",
	    head->testcase, "branch", head->branch, "sha", head->sha,
	    "subject", head->subject, "state", head->state, "outcome",
	    head->outcome[0] ? json_string(head->outcome) : json_null(),
	    "change_pct", number_or_null(head->change_pct), "job",
	    head->job_id > 0 ? json_integer(head->job_id) : json_null(),
	    "seen_at", head->seen_at, "measured_at",
	    head->measured_at[0] ? json_string(head->measured_at)
				 : json_null());

	if (out != NULL && head->run_count > 0) {
		json_object_set_new(out, "runs",
				    json_integer((json_int_t)head->run_count));
		json_object_set_new(out, "median",
				    number_or_null(head->median));
		json_object_set_new(out, "min", number_or_null(head->min));
		json_object_set_new(out, "max", number_or_null(head->max));
		json_object_set_new(out, "q1", number_or_null(head->q1));
		json_object_set_new(out, "q3", number_or_null(head->q3));
	}
	return out;
}

/* A number as CSV shows it: "%.17g", or nothing. */
static void csv_number(struct strbuf *b, double v)
{
	if (isfinite(v))
		strbuf_printf(b, "%.17g", v);
}

/* A CSV field: quoted, with quotes doubled, when it needs it. */
static void csv_text(struct strbuf *b, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		strbuf_append(b, s);
		return;
	}
	strbuf_append(b, "\"");
	for (; *s != '\0'; s++)
		strbuf_appendn(b, s, 1 + (*s == '"'));
	strbuf_append(b, "\"");
}

char *watches_history_csv(const struct store_head *heads, size_t count)
{
	struct strbuf b = STRBUF_INIT;
	size_t i, len;
	char *out;

	strbuf_append(&b, "testcase,branch,sha,subject,state,outcome,"
			  "change_pct,runs,median,min,max,q1,q3,job,"
			  "job_role,verdict,culprit,measured_at\r\n");
	for (i = 0; i < count; i++) {
		const struct store_head *h = &heads[i];

		csv_text(&b, h->testcase);
		strbuf_append(&b, ",");
		csv_text(&b, h->branch);
		strbuf_printf(&b, ",%s,", h->sha);
		csv_text(&b, h->subject);
		strbuf_printf(&b, ",%s,%s,", h->state, h->outcome);
		csv_number(&b, h->change_pct);
		strbuf_printf(&b, ",%zu,", h->run_count);
		csv_number(&b, h->median);
		strbuf_append(&b, ",");
		csv_number(&b, h->min);
		strbuf_append(&b, ",");
		csv_number(&b, h->max);
		strbuf_append(&b, ",");
		csv_number(&b, h->q1);
		strbuf_append(&b, ",");
		csv_number(&b, h->q3);
		strbuf_append(&b, ",");
		if (h->job_id > 0)
			strbuf_printf(&b, "%lld", h->job_id);
		strbuf_printf(&b, ",%s,%s,%s,%s\r\n", h->job_role, h->verdict,
			      h->culprit, h->measured_at);
	}
	if (strbuf_finish(&out, &len, &b) < 0)
		return NULL;
	return out;
}

/* ---- REST handlers ---------------------------------------------------- */

/* Loads watch path parameter 0 into *watch; answers 404/5xx and returns
 * false when it cannot. */
static bool load_watch(struct http_response *res, struct http_request *req,
		       PGconn *conn, struct store_watch *watch)
{
	long long id;
	int rc;

	if (!http_path_id(res, req->params[0], "not_found", "watch", &id))
		return false;
	if (conn == NULL) {
		http_db_failed(res);
		return false;
	}
	rc = store_watches_get(watch, conn, id);
	if (rc < 0)
		http_db_failed(res);
	else if (rc > 0)
		http_error(res, 404, "not_found", "no watch '%s'",
			   req->params[0]);
	return rc == 0;
}

static void answer_watch(struct http_response *res, unsigned status,
			 const struct store_watch *watch)
{
	json_t *out = watches_json(watch);

	if (out == NULL) {
		http_error(res, 500, "internal", "out of memory");
		return;
	}
	http_json(res, status, out);
}

static void api_create(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req);
	struct field_errors errors;
	struct store_watch watch = {0};
	PGconn *conn = db_conn();
	long long id = 0;
	int rc;

	if (body == NULL)
		return;
	fields_init(&errors);
	rc = conn == NULL
		 ? -1
		 : watches_create(&errors, &id, conn, body, req->token_id);
	json_decref(body);
	if (rc > 0) {
		fields_answer(res, &errors);
		return;
	}
	if (rc < 0 || store_watches_get(&watch, conn, id) != 0) {
		http_db_failed(res);
		return;
	}
	if (asprintf(&res->location, "/api/v1/watches/%lld", id) < 0)
		res->location = NULL;
	answer_watch(res, 201, &watch);
	store_watch_clear(&watch);
}

static void api_list(struct http_response *res, struct http_request *req)
{
	struct store_watch *watches = NULL;
	PGconn *conn = db_conn();
	json_t *list;
	size_t count = 0, i;

	(void)req;
	if (conn == NULL || store_watches_list(&watches, &count, conn) < 0) {
		http_db_failed(res);
		return;
	}
	list = json_array();
	for (i = 0; i < count; i++)
		json_array_append_new(list, watches_json(&watches[i]));
	store_watches_free(watches, count);
	http_json(res, 200, json_pack("{s:o}", "watches", list));
}

/* The watch with its newest heads and its jobs. */
static void api_get(struct http_response *res, struct http_request *req)
{
	struct store_watch watch = {0};
	struct store_head *heads = NULL;
	struct store_watch_jobrow *jobs = NULL;
	size_t head_count = 0, job_count = 0, i;
	PGconn *conn = db_conn();
	json_t *out, *list;

	if (!load_watch(res, req, conn, &watch))
		return;
	if (store_watches_heads(&heads, &head_count, conn, watch.id, 0, 200) <
		0 ||
	    store_watches_jobs(&jobs, &job_count, conn, watch.id) < 0) {
		http_db_failed(res);
		goto out;
	}
	out = watches_json(&watch);
	list = json_array();
	for (i = 0; i < head_count; i++)
		json_array_append_new(list, watches_head_json(&heads[i]));
	json_object_set_new(out, "heads", list);
	list = json_array();
	for (i = 0; i < job_count; i++) {
		const struct store_watch_jobrow *j = &jobs[i];

		json_array_append_new(
		    list,
		    json_pack(
			"{s:I,s:s,s:s,s:o,s:o,s:s,s:s,s:o}", "id",
			(json_int_t)j->id, "role", j->role, "state", j->state,
			"verdict",
			j->verdict[0] ? json_string(j->verdict) : json_null(),
			"culprit",
			j->culprit[0] ? json_string(j->culprit) : json_null(),
			"testcase", j->testcase, "branch", j->branch, "notes",
			json_loads(j->notes, 0, NULL)));
	}
	json_object_set_new(out, "jobs", list);
	http_json(res, 200, out);
out:
	store_heads_free(heads, head_count);
	store_watch_jobrows_free(jobs, job_count);
	store_watch_clear(&watch);
}

static void set_paused(struct http_response *res, struct http_request *req,
		       bool paused)
{
	struct store_watch watch = {0};
	PGconn *conn = db_conn();

	if (!load_watch(res, req, conn, &watch))
		return;
	if (store_watches_set_paused(conn, watch.id, paused) < 0) {
		http_db_failed(res);
	} else {
		watch.paused = paused;
		log_info("watch %lld: %s", watch.id,
			 paused ? "paused" : "resumed");
		if (!paused)
			watcher_wake();
		answer_watch(res, 200, &watch);
	}
	store_watch_clear(&watch);
}

static void api_pause(struct http_response *res, struct http_request *req)
{
	set_paused(res, req, true);
}

static void api_resume(struct http_response *res, struct http_request *req)
{
	set_paused(res, req, false);
}

static void api_delete(struct http_response *res, struct http_request *req)
{
	struct store_watch watch = {0};
	PGconn *conn = db_conn();

	if (!load_watch(res, req, conn, &watch))
		return;
	if (store_watches_delete(conn, watch.id) < 0) {
		http_db_failed(res);
	} else {
		log_info("watch %lld: deleted", watch.id);
		http_json(res, 200,
			  json_pack("{s:I,s:b}", "id", (json_int_t)watch.id,
				    "deleted", true));
	}
	store_watch_clear(&watch);
}

/* The testcase a history request names (?testcase=NAME, one of the
 * watch's), 0 for all; false after answering 404. */
static bool history_testcase(struct http_response *res,
			     struct http_request *req,
			     const struct store_watch *watch, long long *out)
{
	const char *name = http_query(req, "testcase");
	size_t i;

	*out = 0;
	if (name == NULL)
		return true;
	for (i = 0; i < watch->testcase_count; i++) {
		if (strcmp(watch->testcase_names[i], name) == 0) {
			*out = watch->testcase_ids[i];
			return true;
		}
	}
	http_error(res, 404, "unknown_testcase",
		   "watch %lld does not run testcase '%s'", watch->id, name);
	return false;
}

static void api_history(struct http_response *res, struct http_request *req)
{
	const char *format = http_query(req, "format");
	struct store_watch watch = {0};
	struct store_head *heads = NULL;
	size_t count = 0, i;
	long long testcase_id;
	PGconn *conn = db_conn();

	if (format != NULL && strcmp(format, "json") != 0 &&
	    strcmp(format, "csv") != 0) {
		http_error(res, 400, "invalid_field",
			   "'format' must be json or csv");
		return;
	}
	if (!load_watch(res, req, conn, &watch))
		return;
	if (!history_testcase(res, req, &watch, &testcase_id))
		goto out;
	if (store_watches_heads(&heads, &count, conn, watch.id, testcase_id,
				0) < 0) {
		http_db_failed(res);
		goto out;
	}
	if (format != NULL && strcmp(format, "csv") == 0) {
		char *csv = watches_history_csv(heads, count);

		if (csv == NULL)
			http_error(res, 500, "internal", "out of memory");
		else
			http_text(res, 200, "text/csv; charset=utf-8", csv);
		free(csv);
	} else {
		json_t *points = json_array();

		for (i = 0; i < count; i++)
			json_array_append_new(points,
					      watches_head_json(&heads[i]));
		http_json(res, 200,
			  json_pack("{s:I,s:o}", "watch", (json_int_t)watch.id,
				    "points", points));
	}
out:
	store_heads_free(heads, count);
	store_watch_clear(&watch);
}

/* The push hook: every unpaused watch of the repository polls now. */
static void api_push(struct http_response *res, struct http_request *req)
{
	PGconn *conn = db_conn();
	size_t count = 0;
	int rc;

	rc = conn != NULL
		 ? store_watches_poke_repo(conn, req->params[0], &count)
		 : -1;
	if (rc < 0) {
		http_db_failed(res);
		return;
	}
	if (rc > 0) {
		http_error(res, 404, "unknown_repo",
			   "repository '%s' is not registered",
			   req->params[0]);
		return;
	}
	if (count > 0)
		watcher_wake();
	http_json(res, 202,
		  json_pack("{s:s,s:I}", "repo", req->params[0], "watches",
			    (json_int_t)count));
}

const struct http_route watches_routes[] = {
    {"POST", "/api/v1/watches", ROLE_ADMIN, api_create},
    {"GET", "/api/v1/watches", ROLE_READ, api_list},
    {"GET", "/api/v1/watches/{}", ROLE_READ, api_get},
    {"DELETE", "/api/v1/watches/{}", ROLE_ADMIN, api_delete},
    {"POST", "/api/v1/watches/{}/pause", ROLE_ADMIN, api_pause},
    {"POST", "/api/v1/watches/{}/resume", ROLE_ADMIN, api_resume},
    {"GET", "/api/v1/watches/{}/history", ROLE_READ, api_history},
    {"POST", "/api/v1/repos/{}/push", ROLE_SUBMIT, api_push},
    {NULL, NULL, ROLE_NONE, NULL},
};
