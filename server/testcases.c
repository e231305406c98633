#include "testcases.h"

#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "repos.h"
#include "url.h"
#include "validate.h"

#define TESTCASES_COMMAND_MAX 8192
#define TESTCASES_PARAM_MAX 256
#define TESTCASES_REV_MAX 255

/* params: an object of short string or number values. */
static void check_params(struct field_errors *errors, json_t *params)
{
	const char *key;
	json_t *value;

	if (params == NULL)
		return;
	if (!json_is_object(params)) {
		fields_add(errors, "params", 400, "invalid_field",
			   "'params' must be an object");
		return;
	}
	json_object_foreach(params, key, value)
	{
		if (!validate_metric_name(key) || strchr(key, '/') != NULL ||
		    !(json_is_string(value) || json_is_number(value)) ||
		    (json_is_string(value) &&
		     (!validate_text(json_string_value(value),
				     TESTCASES_PARAM_MAX, false) ||
		      strchr(json_string_value(value), '/') != NULL))) {
			fields_add(errors, "params", 400, "invalid_field",
				   "'params' entry '%s' must be a string or "
				   "number without '/' or control characters",
				   key);
			return;
		}
	}
}

static void check_monitors(struct field_errors *errors, json_t *monitors)
{
	static const char *const known[] = {"vmstat", "proc-vmstat",
					    "perf-stat", "time"};
	size_t i, k;
	json_t *m;

	if (monitors == NULL)
		return;
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
	return;
bad:
	fields_add(errors, "monitors", 400, "invalid_field",
		   "'monitors' must be a list of: vmstat, proc-vmstat, "
		   "perf-stat, time");
}

/* higher_is_better and min_change_pct. */
static void read_change(struct testcase_request *out,
			struct field_errors *errors, json_t *body)
{
	json_t *higher_is_better = json_object_get(body, "higher_is_better");
	json_t *min_change_pct = json_object_get(body, "min_change_pct");

	if (!json_is_boolean(higher_is_better))
		fields_add(errors, "higher_is_better", 400, "invalid_field",
			   "field 'higher_is_better' is required and must be "
			   "true or false");
	out->fields.higher_is_better = json_is_true(higher_is_better);
	if (min_change_pct != NULL && !json_is_null(min_change_pct)) {
		if (!json_is_number(min_change_pct) ||
		    !(json_number_value(min_change_pct) > 0) ||
		    json_number_value(min_change_pct) > 1000)
			fields_add(errors, "min_change_pct", 400,
				   "invalid_field",
				   "'min_change_pct' must be a number in "
				   "(0, 1000]");
		else
			out->fields.min_change_pct =
			    json_number_value(min_change_pct);
	}
}

/* notify_author, then notify. */
static void read_notify(struct testcase_request *out,
			struct field_errors *errors, json_t *body)
{
	json_t *notify_author = json_object_get(body, "notify_author");

	out->fields.notify_author = json_is_true(notify_author);
	if (notify_author != NULL && !json_is_null(notify_author) &&
	    !json_is_boolean(notify_author))
		fields_add(errors, "notify_author", 400, "invalid_field",
			   "'notify_author' must be true or false");
	validate_notify(errors, json_object_get(body, "notify"));
}

/* bench_repo, a git URL as a repository's, and bench_rev, a branch, tag
 * or commit of it (NULL: its HEAD), which needs a bench_repo. */
static void read_bench(struct testcase_request *out,
		       struct field_errors *errors, json_t *body)
{
	struct store_testcase_fields *f = &out->fields;
	bool repo_read, rev_read;
	size_t i;

	repo_read = fields_json_string(errors, body, "bench_repo", false,
				       &f->bench_repo);
	rev_read = fields_json_string(errors, body, "bench_rev", false,
				      &f->bench_rev);
	if (repo_read && f->bench_repo != NULL &&
	    !repos_url_valid(f->bench_repo))
		fields_add(errors, "bench_repo", 400, "invalid_field",
			   "'bench_repo' must be a git URL or path");
	if (!rev_read || f->bench_rev == NULL)
		return;
	for (i = 0; f->bench_rev[i] != '\0'; i++) {
		if (f->bench_rev[i] == ' ')
			break;
	}
	if (f->bench_rev[0] == '\0' || f->bench_rev[0] == '-' ||
	    f->bench_rev[i] != '\0' ||
	    !validate_text(f->bench_rev, TESTCASES_REV_MAX, false))
		fields_add(errors, "bench_rev", 400, "invalid_field",
			   "'bench_rev' must be a branch, tag or commit of "
			   "'bench_repo' (no spaces, no leading '-')");
	else if (f->bench_repo == NULL)
		fields_add(errors, "bench_rev", 400, "invalid_field",
			   "'bench_rev' needs a 'bench_repo'");
}

/* group, the machine group its jobs run on (absent or null: 'default'),
 * named as a worker names its group. */
static void read_group(struct testcase_request *out,
		       struct field_errors *errors, json_t *body)
{
	if (fields_json_string(errors, body, "group", false,
			       &out->fields.group) &&
	    out->fields.group != NULL && !validate_group(out->fields.group))
		fields_add(errors, "group", 400, "invalid_field",
			   "'group' must be 1 to 64 bytes without control "
			   "characters, as a worker's group");
}

/* The JSON texts the table stores; 500 when out of memory. */
static void keep_json(struct testcase_request *out,
		      struct field_errors *errors, json_t *body)
{
	json_t *p = json_object_get(body, "params");
	json_t *m = json_object_get(body, "monitors");
	json_t *notify = json_object_get(body, "notify");

	out->params_text =
	    p != NULL ? json_dumps(p, JSON_COMPACT) : strdup("{}");
	out->monitors_text =
	    m != NULL ? json_dumps(m, JSON_COMPACT) : strdup("[]");
	out->notify_text = notify != NULL && !json_is_null(notify)
			       ? json_dumps(notify, JSON_COMPACT)
			       : strdup("[]");
	if (out->params_text == NULL || out->monitors_text == NULL ||
	    out->notify_text == NULL)
		fields_add(errors, "", 500, "internal", "out of memory");
	out->fields.params = out->params_text;
	out->fields.monitors = out->monitors_text;
	out->fields.notify = out->notify_text;
}

void testcases_request_read(struct testcase_request *out,
			    struct field_errors *errors, json_t *body)
{
	struct store_testcase_fields *f = &out->fields;
	bool name_read, build_read, run_read, kpi_read, runs_read;

	memset(out, 0, sizeof(*out));
	f->runs_min = 5;
	f->runs_max = 50;
	f->timeout_s = 600;
	f->min_change_pct = 1.0;
	name_read = fields_json_string(errors, body, "name", true, &f->name);
	build_read =
	    fields_json_string(errors, body, "build", true, &f->build);
	run_read = fields_json_string(errors, body, "run", true, &f->run);
	kpi_read = fields_json_string(errors, body, "kpi", true, &f->kpi);
	runs_read =
	    fields_json_int(errors, body, "runs_min", 2, 1000, &f->runs_min);
	runs_read &=
	    fields_json_int(errors, body, "runs_max", 2, 10000, &f->runs_max);
	fields_json_int(errors, body, "timeout_s", 1, 7 * 86400,
			&f->timeout_s);
	if (name_read && !validate_name(f->name))
		fields_add(errors, "name", 400, "invalid_field",
			   "'name' must be 1 to 64 of A-Z a-z 0-9 . _ -");
	if (build_read &&
	    !validate_text(f->build, TESTCASES_COMMAND_MAX, true))
		fields_add(errors, "build", 400, "invalid_field",
			   "'build' and 'run' must be shell commands ('run' "
			   "not empty)");
	if (run_read && (!validate_text(f->run, TESTCASES_COMMAND_MAX, true) ||
			 f->run[0] == '\0'))
		fields_add(errors, "run", 400, "invalid_field",
			   "'build' and 'run' must be shell commands ('run' "
			   "not empty)");
	if (kpi_read && !validate_metric_name(f->kpi))
		fields_add(errors, "kpi", 400, "invalid_field",
			   "'kpi' must be a metric name without spaces");
	read_change(out, errors, body);
	if (runs_read && f->runs_max < f->runs_min)
		fields_add(errors, "runs_max", 400, "invalid_field",
			   "'runs_max' must not be below 'runs_min'");
	check_params(errors, json_object_get(body, "params"));
	check_monitors(errors, json_object_get(body, "monitors"));
	read_notify(out, errors, body);
	read_bench(out, errors, body);
	read_group(out, errors, body);
	keep_json(out, errors, body);
	webhooks_request_read(&out->webhook, body, errors);
}

void testcases_request_clear(struct testcase_request *request)
{
	if (request == NULL)
		return;
	free(request->params_text);
	free(request->monitors_text);
	free(request->notify_text);
	memset(request, 0, sizeof(*request));
}

int testcases_create(struct store_testcase *out, struct field_errors *errors,
		     const struct testcase_request *request)
{
	PGconn *conn = db_conn();
	int error =
	    conn != NULL && db_begin(conn) == 0 ? STORE_OK : STORE_FAILED;

	/* The testcase and its webhook are stored together or not at all. */
	if (error == STORE_OK)
		error = store_testcases_create(out, conn, &request->fields);
	if (error == STORE_OK &&
	    (webhooks_save(conn, STORE_WEBHOOK_TESTCASE, out->id,
			   &request->webhook, false) < 0 ||
	     db_commit(conn) < 0))
		error = STORE_FAILED;
	if (error != STORE_OK && conn != NULL)
		db_rollback(conn);
	if (error == STORE_EXISTS) {
		fields_add(errors, "name", 409, "exists",
			   "testcase '%s' exists", request->fields.name);
		return -1;
	}
	if (error < 0) {
		fields_db_failed(errors);
		return -1;
	}
	return 0;
}

/* A jsonb text parsed, or null. */
static json_t *jsonb_value(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &e);

	return v != NULL ? v : json_null();
}

/* The bench fields of `f` into `shown`, the URL's password masked, and
 * its group. */
static json_t *with_bench(json_t *shown, const struct store_testcase_fields *f)
{
	char *url = NULL;

	if (shown == NULL ||
	    (f->bench_repo != NULL && url_redact(&url, f->bench_repo) < 0)) {
		json_decref(shown);
		return NULL;
	}
	json_object_set_new(shown, "bench_repo",
			    url != NULL ? json_string(url) : json_null());
	json_object_set_new(shown, "bench_rev",
			    f->bench_rev != NULL ? json_string(f->bench_rev)
						 : json_null());
	json_object_set_new(
	    shown, "group",
	    json_string(f->group != NULL ? f->group : "default"));
	free(url);
	return shown;
}

json_t *testcases_json(const struct store_testcase *testcase)
{
	const struct store_testcase_fields *f = &testcase->fields;
	json_error_t e;

	json_t *shown = json_pack(
	    "{s:I,s:s,s:s,s:s,s:s,s:b,s:f,s:I,s:I,s:I,s:o,s:o,s:o,s:b}", "id",
	    (json_int_t)testcase->id, "name", f->name, "build", f->build,
	    "run", f->run, "kpi", f->kpi, "higher_is_better",
	    f->higher_is_better, "min_change_pct", f->min_change_pct,
	    "runs_min", (json_int_t)f->runs_min, "runs_max",
	    (json_int_t)f->runs_max, "timeout_s", (json_int_t)f->timeout_s,
	    "params", json_loads(f->params, 0, &e), "monitors",
	    json_loads(f->monitors, 0, &e), "notify",
	    json_loads(f->notify, 0, &e), "notify_author", f->notify_author);

	return with_bench(shown, f);
}

json_t *testcases_json_full(const struct store_testcase *testcase,
			    struct field_errors *errors)
{
	json_t *shown = testcases_json(testcase);
	json_t *hook =
	    webhooks_json(db_conn(), STORE_WEBHOOK_TESTCASE, testcase->id);

	if (shown == NULL || hook == NULL) {
		json_decref(shown);
		json_decref(hook);
		fields_db_failed(errors);
		return NULL;
	}
	json_object_set_new(shown, "webhook", hook);
	return shown;
}

json_t *testcases_list_json(struct field_errors *errors)
{
	struct store_testcase_list list;
	json_t *testcases;
	size_t i;

	if (store_testcases_list(&list, db_conn()) < 0) {
		fields_db_failed(errors);
		return NULL;
	}
	testcases = json_array();
	for (i = 0; i < list.count; i++) {
		const struct store_testcase *t = &list.items[i];
		const struct store_testcase_fields *f = &t->fields;

		json_array_append_new(
		    testcases,
		    with_bench(
			json_pack("{s:I,s:s,s:s,s:s,s:s,s:b,s:f,s:I,s:I,s:I,"
				  "s:o,s:o,s:s}",
				  "id", (json_int_t)t->id, "name", f->name,
				  "build", f->build, "run", f->run, "kpi",
				  f->kpi, "higher_is_better",
				  f->higher_is_better, "min_change_pct",
				  f->min_change_pct, "runs_min",
				  (json_int_t)f->runs_min, "runs_max",
				  (json_int_t)f->runs_max, "timeout_s",
				  (json_int_t)f->timeout_s, "params",
				  jsonb_value(f->params), "monitors",
				  jsonb_value(f->monitors), "created_at",
				  t->created_at),
			f));
	}
	store_testcase_list_clear(&list);
	return testcases;
}

void testcases_api_create(struct http_response *res, struct http_request *req)
{
	struct testcase_request request;
	struct store_testcase testcase = {0};
	struct field_errors errors;
	json_t *body = http_json_body(res, req), *shown = NULL;

	if (body == NULL)
		return;
	fields_init(&errors);
	testcases_request_read(&request, &errors, body);
	if (!fields_ok(&errors) ||
	    testcases_create(&testcase, &errors, &request) < 0 ||
	    (shown = testcases_json_full(&testcase, &errors)) == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 201, shown);
	store_testcase_clear(&testcase);
	testcases_request_clear(&request);
	json_decref(body);
}

void testcases_api_list(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	json_t *testcases;

	(void)req;
	fields_init(&errors);
	testcases = testcases_list_json(&errors);
	if (testcases == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 200,
			  json_pack("{s:o}", "testcases", testcases));
}

/* The live testcase `name` into *out: 0, or -1 with 404 or the
 * database's error in `errors`. */
static int testcase_find(struct store_testcase *out,
			 struct field_errors *errors, const char *name)
{
	int error = store_testcases_find(out, db_conn(), name);

	if (error == STORE_NOT_FOUND)
		fields_add(errors, "", 404, "not_found",
			   "testcase '%s' is not registered", name);
	else if (error < 0)
		fields_db_failed(errors);
	return error == STORE_OK ? 0 : -1;
}

json_t *testcases_get_json(struct field_errors *errors, const char *name)
{
	struct store_testcase testcase;
	json_t *shown;

	if (testcase_find(&testcase, errors, name) < 0)
		return NULL;
	shown = testcases_json_full(&testcase, errors);
	if (shown != NULL)
		json_object_set_new(shown, "created_at",
				    json_string(testcase.created_at));
	store_testcase_clear(&testcase);
	return shown;
}

int testcases_update(struct store_testcase *out, struct field_errors *errors,
		     const char *name, json_t *patch)
{
	struct store_testcase current = {0};
	struct testcase_request request = {0};
	json_t *now = NULL, *body = NULL;
	int error, rc = -1;

	memset(out, 0, sizeof(*out));
	if (testcase_find(&current, errors, name) < 0)
		return -1;
	now = testcases_json(&current);
	json_object_del(now, "id");
	body = repos_patched_body(errors, current.fields.name, now, patch);
	if (body == NULL)
		goto out;
	repos_keep_masked_url(body, "bench_repo", current.fields.bench_repo);
	testcases_request_read(&request, errors, body);
	if (!fields_ok(errors))
		goto out;
	error = db_begin(db_conn()) == 0 ? STORE_OK : STORE_FAILED;
	if (error == STORE_OK)
		error =
		    store_testcases_update(out, db_conn(), &request.fields);
	if (error == STORE_OK &&
	    (webhooks_save(db_conn(), STORE_WEBHOOK_TESTCASE, out->id,
			   &request.webhook, true) < 0 ||
	     db_commit(db_conn()) < 0))
		error = STORE_FAILED;
	if (error != STORE_OK)
		db_rollback(db_conn());
	if (error == STORE_NOT_FOUND)
		fields_add(errors, "", 404, "not_found",
			   "testcase '%s' is not registered", name);
	else if (error == STORE_CONFLICT)
		fields_add(errors, "", 409, "conflict",
			   "testcase '%s' has jobs queued or running, which "
			   "read what they measure from it as they run: its "
			   "build, run, kpi, limits, params, monitors and "
			   "benchmark repository cannot change until they "
			   "end (cancel them, or register a new testcase)",
			   name);
	else if (error < 0)
		fields_db_failed(errors);
	else
		rc = 0;
out:
	testcases_request_clear(&request);
	json_decref(body);
	json_decref(now);
	store_testcase_clear(&current);
	return rc;
}

int testcases_delete(struct field_errors *errors, const char *name)
{
	return repos_soft_delete(errors, "testcase", name,
				 store_testcases_delete);
}

void testcases_api_get(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	json_t *testcase;

	fields_init(&errors);
	testcase = testcases_get_json(&errors, req->params[0]);
	if (testcase == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 200, testcase);
}

void testcases_api_update(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	struct store_testcase testcase = {0};
	json_t *body = http_json_body(res, req), *shown = NULL;

	if (body == NULL)
		return;
	fields_init(&errors);
	if (testcases_update(&testcase, &errors, req->params[0], body) < 0 ||
	    (shown = testcases_json_full(&testcase, &errors)) == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 200, shown);
	store_testcase_clear(&testcase);
	json_decref(body);
}

void testcases_api_delete(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;

	fields_init(&errors);
	if (testcases_delete(&errors, req->params[0]) < 0)
		fields_answer(res, &errors);
	else
		http_json(res, 200,
			  json_pack("{s:s,s:b}", "name", req->params[0],
				    "deleted", true));
}
