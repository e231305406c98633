/*
 * The admin pages that change what exists (issue 15): the testcase form
 * with every field of the API (shared by the create form of web_admin.c
 * and the edit page), the edit pages of a repository and a testcase, and
 * the confirmation page of a deletion, which works without JavaScript: a
 * link opens it, its button POSTs with the CSRF token.  They call the
 * resources' service functions, as the REST routes do.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repos.h"
#include "server.h"
#include "strbuf.h"
#include "testcases.h"
#include "web.h"

/* The monitors the API takes (testcases.c), as the form's checkboxes. */
static const char *const monitor_names[] = {"vmstat", "proc-vmstat",
					    "perf-stat", "time", NULL};

const struct web_admin_field web_admin_testcase_fields[] = {
    {"name", "Name"},
    {"build", "Build command"},
    {"run", "Run command"},
    {"kpi", "KPI metric"},
    {"higher_is_better", "Better is"},
    {"min_change_pct", "Smallest change, %"},
    {"runs_min", "Fewest runs"},
    {"runs_max", "Most runs"},
    {"timeout_s", "Timeout, s"},
    {"params", "Parameters"},
    {"monitors", "Monitors"},
    {"notify", "Notify"},
    {"notify_author", "Also mail the author of the culprit"},
    {"bench_repo", "Benchmark repository"},
    {"bench_rev", "Benchmark revision"},
    {"group", "Machine group"},
    {"webhook_url", "Webhook URL"},
    {"webhook_format", "Webhook format"},
    {"webhook_secret", "Webhook secret"},
    {NULL, NULL},
};

static const struct web_admin_field repo_edit_fields[] = {
    {"url", "Git URL or path"},
    {"web_url", "Commit link"},
    {NULL, NULL},
};

/* True when the form's field `key` is there and not empty. */
static bool form_set(json_t *form, const char *key)
{
	const char *v = json_string_value(json_object_get(form, key));

	return v != NULL && v[0] != '\0';
}

json_t *web_admin_testcase_values(json_t *form)
{
	json_t *values =
	    web_admin_form_values(form, web_admin_testcase_fields);
	json_t *options = json_array();
	const char *better =
	    json_string_value(json_object_get(values, "higher_is_better"));
	char key[64];
	size_t i;

	for (i = 0; monitor_names[i] != NULL; i++) {
		snprintf(key, sizeof(key), "monitor_%s", monitor_names[i]);
		json_array_append_new(
		    options, json_pack("{s:s,s:b}", "name", monitor_names[i],
				       "checked", form_set(form, key)));
	}
	json_object_set_new(values, "monitor_options", options);
	json_object_set_new(
	    values, "better_lower",
	    json_boolean(better != NULL && strcmp(better, "false") == 0));
	json_object_set_new(values, "notify_author",
			    json_boolean(form_set(form, "notify_author")));
	json_object_set_new(
	    values, "webhook_github",
	    json_boolean(json_string_value(json_object_get(
			     values, "webhook_format")) != NULL &&
			 strcmp(json_string_value(
				    json_object_get(values, "webhook_format")),
				"github-status") == 0));
	return values;
}

/* The form's webhook as the API takes it: null when the URL is empty
 * (none; on an edit, removed), and a secret left empty keeps the one
 * stored. */
static json_t *webhook_of_form(json_t *values)
{
	const char *url =
	    json_string_value(json_object_get(values, "webhook_url"));
	const char *format =
	    json_string_value(json_object_get(values, "webhook_format"));
	const char *secret =
	    json_string_value(json_object_get(values, "webhook_secret"));

	if (url == NULL || url[0] == '\0')
		return json_null();
	return json_pack("{s:s,s:s?,s:s?}", "url", url, "format",
			 format != NULL && format[0] != '\0' ? format : NULL,
			 "secret",
			 secret != NULL && secret[0] != '\0' ? secret : NULL);
}

/* A parameter's value: a JSON number when the text is one, else the
 * text. */
static json_t *param_value(const char *text, size_t len)
{
	json_error_t e;
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY, &e);

	if (v != NULL && json_is_number(v))
		return v;
	json_decref(v);
	return json_stringn(text, len);
}

/* The span [*start, *end) without the white space around it. */
static void trim(const char **start, const char **end)
{
	while (*start < *end && isspace((unsigned char)**start))
		(*start)++;
	while (*end > *start && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

/*
 * The params text of the form, one key=value a line (blank lines
 * skipped), as the API's object; NULL after adding the error of a line
 * that is no key=value.  The API checks keys and values afterwards.
 */
static json_t *params_from_lines(struct field_errors *errors, const char *text)
{
	json_t *params = json_object();
	const char *line = text, *next, *end, *eq, *key_end;
	char key[FIELDS_VALUE_MAX];
	int number = 0;

	for (; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		end = next != NULL ? next : line + strlen(line);
		next = next != NULL ? next + 1 : NULL;
		number++;
		trim(&line, &end);
		if (line == end)
			continue;
		eq = memchr(line, '=', (size_t)(end - line));
		key_end = eq;
		if (eq != NULL)
			trim(&line, &key_end);
		if (eq == NULL || key_end == line ||
		    (size_t)(key_end - line) >= sizeof(key)) {
			fields_add(errors, "params", 400, "invalid_field",
				   "'params' line %d must be key=value",
				   number);
			json_decref(params);
			return NULL;
		}
		memcpy(key, line, (size_t)(key_end - line));
		key[key_end - line] = '\0';
		eq++;
		trim(&eq, &end);
		json_object_set_new(params, key,
				    param_value(eq, (size_t)(end - eq)));
	}
	return params;
}

/* The notify text: addresses separated by commas or white space. */
static json_t *notify_from_text(const char *text)
{
	json_t *list = json_array();
	size_t n;

	while (text != NULL && *text != '\0') {
		while (*text == ',' || isspace((unsigned char)*text))
			text++;
		n = strcspn(text, ", \t\r\n");
		if (n > 0)
			json_array_append_new(list, json_stringn(text, n));
		text += n;
	}
	return list;
}

/* Numbers typed into the testcase form become JSON numbers; text that is
 * no number stays a string, which the API refuses with its own words.
 * An empty number is null: the default. */
static void testcase_numbers(json_t *body)
{
	static const char *const integers[] = {"runs_min", "runs_max",
					       "timeout_s", NULL};
	const char *text;
	char *end;
	size_t i;

	for (i = 0; integers[i] != NULL; i++) {
		text = json_string_value(json_object_get(body, integers[i]));
		if (text != NULL && text[0] != '\0') {
			long long v = strtoll(text, &end, 10);

			if (*end == '\0')
				json_object_set_new(body, integers[i],
						    json_integer(v));
		} else {
			json_object_set_new(body, integers[i], json_null());
		}
	}
	text = json_string_value(json_object_get(body, "min_change_pct"));
	if (text != NULL && text[0] != '\0') {
		double v = strtod(text, &end);

		if (*end == '\0')
			json_object_set_new(body, "min_change_pct",
					    json_real(v));
	} else {
		json_object_set_new(body, "min_change_pct", json_null());
	}
	text = json_string_value(json_object_get(body, "higher_is_better"));
	if (text != NULL &&
	    (strcmp(text, "true") == 0 || strcmp(text, "false") == 0))
		json_object_set_new(body, "higher_is_better",
				    json_boolean(strcmp(text, "true") == 0));
}

json_t *web_admin_testcase_body(json_t *values, struct field_errors *errors)
{
	static const char *const copied[] = {"name",
					     "build",
					     "run",
					     "kpi",
					     "higher_is_better",
					     "min_change_pct",
					     "runs_min",
					     "runs_max",
					     "timeout_s",
					     NULL};
	static const char *const required[] = {"name", "run", "kpi",
					       "higher_is_better", NULL};
	json_t *body = json_object(), *options, *option, *monitors, *params;
	const char *text;
	size_t i;

	for (i = 0; copied[i] != NULL; i++)
		json_object_set(body, copied[i],
				json_object_get(values, copied[i]));
	/* Required texts left empty are missing, as the API words it. */
	for (i = 0; required[i] != NULL; i++) {
		text = json_string_value(json_object_get(body, required[i]));
		if (text != NULL && text[0] == '\0')
			json_object_del(body, required[i]);
	}
	testcase_numbers(body);
	params = params_from_lines(
	    errors, json_string_value(json_object_get(values, "params")));
	if (params != NULL)
		json_object_set_new(body, "params", params);
	monitors = json_array();
	options = json_object_get(values, "monitor_options");
	json_array_foreach(options, i, option)
	{
		if (json_is_true(json_object_get(option, "checked")))
			json_array_append(monitors,
					  json_object_get(option, "name"));
	}
	json_object_set_new(body, "monitors", monitors);
	json_object_set_new(body, "notify",
			    notify_from_text(json_string_value(
				json_object_get(values, "notify"))));
	json_object_set(body, "notify_author",
			json_object_get(values, "notify_author"));
	/* Left empty: no benchmark repository, its HEAD, the default
	 * group. */
	for (i = 0; i < 3; i++) {
		const char *key = (const char *const[]){
		    "bench_repo", "bench_rev", "group"}[i];

		text = json_string_value(json_object_get(values, key));
		json_object_set_new(body, key,
				    text != NULL && text[0] != '\0'
					? json_string(text)
					: json_null());
	}
	json_object_set_new(body, "webhook", webhook_of_form(values));
	return body;
}

/* Sets the form's field `key` to what `b` holds ("" when it failed). */
static void set_text(json_t *form, const char *key, struct strbuf *b)
{
	char *text = NULL;
	size_t len = 0;

	if (strbuf_finish(&text, &len, b) < 0 || text == NULL)
		json_object_set_new(form, key, json_string(""));
	else
		json_object_set_new(form, key, json_stringn(text, len));
	free(text);
}

/* The params, monitors, notify and notify_author of a stored testcase as
 * its form posts them. */
static void testcase_lists_as_form(json_t *form, json_t *testcase)
{
	struct strbuf b = STRBUF_INIT;
	const char *key;
	char buf[64], *text;
	json_t *v;
	size_t i;

	json_object_foreach(json_object_get(testcase, "params"), key, v)
	{
		text =
		    json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);
		strbuf_printf(&b, "%s=%s\n", key,
			      text != NULL ? text : json_string_value(v));
		free(text);
	}
	set_text(form, "params", &b);
	json_array_foreach(json_object_get(testcase, "notify"), i, v)
	{
		strbuf_printf(&b, "%s%s", i > 0 ? ", " : "",
			      json_string_value(v));
	}
	set_text(form, "notify", &b);
	json_array_foreach(json_object_get(testcase, "monitors"), i, v)
	{
		snprintf(buf, sizeof(buf), "monitor_%s", json_string_value(v));
		json_object_set_new(form, buf, json_string("1"));
	}
	if (json_is_true(json_object_get(testcase, "notify_author")))
		json_object_set_new(form, "notify_author", json_string("1"));
}

/* A stored testcase (as the API shows it) as its form would post it. */
static json_t *testcase_as_form(json_t *testcase)
{
	static const char *const texts[] = {"name",  "build",	   "run",
					    "kpi",   "bench_repo", "bench_rev",
					    "group", NULL};
	json_t *form = json_object(), *v;
	const char *key;
	char buf[64];
	size_t i;

	for (i = 0; texts[i] != NULL; i++) {
		if (json_is_string(json_object_get(testcase, texts[i])))
			json_object_set(form, texts[i],
					json_object_get(testcase, texts[i]));
	}
	json_object_set_new(form, "higher_is_better",
			    json_string(json_is_true(json_object_get(
					    testcase, "higher_is_better"))
					    ? "true"
					    : "false"));
	snprintf(
	    buf, sizeof(buf), "%g",
	    json_number_value(json_object_get(testcase, "min_change_pct")));
	json_object_set_new(form, "min_change_pct", json_string(buf));
	json_object_foreach(testcase, key, v)
	{
		if (json_is_integer(v) && strcmp(key, "id") != 0) {
			snprintf(buf, sizeof(buf), "%lld",
				 (long long)json_integer_value(v));
			json_object_set_new(form, key, json_string(buf));
		}
	}
	testcase_lists_as_form(form, testcase);
	json_object_set(
	    form, "webhook_url",
	    json_object_get(json_object_get(testcase, "webhook"), "url"));
	json_object_set(
	    form, "webhook_format",
	    json_object_get(json_object_get(testcase, "webhook"), "format"));
	return form;
}

/* What the edit and delete pages of a repository or testcase need. */
struct admin_kind {
	const char *kind;     /* "repository" */
	const char *back;     /* the list page: "/admin/repos" */
	const char *nav;      /* its navigation entry */
	const char *title;    /* "Repository" */
	const char *template; /* the edit page's */
	const struct web_admin_field *fields;
	json_t *(*get)(struct field_errors *errors, const char *name);
	int (*delete_fn)(struct field_errors *errors, const char *name);
};

static const struct admin_kind repo_kind = {
    "repository",      "/admin/repos",	 "repos",	 "Repository",
    "admin_repo_edit", repo_edit_fields, repos_get_json, repos_delete,
};

static const struct admin_kind testcase_kind = {
    "testcase",		"/admin/testcases",    "testcases",
    "Testcase",		"admin_testcase_edit", web_admin_testcase_fields,
    testcases_get_json, testcases_delete,
};

/* The error page of the first error in `errors`. */
static void error_page(struct http_response *res,
		       const struct web_session *session,
		       const struct field_errors *errors)
{
	web_error_page(res, errors->items[0].status, session,
		       errors->items[0].message);
}

/*
 * The edit page of `kind`'s `name` with `values` (borrowed) and the
 * errors of `found` (may be NULL) next to their fields; an error of the
 * whole request that is no 4xx of a field (unknown, a failed database)
 * shows the error page instead.
 */
static void edit_page(struct http_response *res,
		      const struct web_session *session, unsigned status,
		      const struct admin_kind *kind, const char *name,
		      json_t *values, const struct field_errors *found)
{
	const char *general = NULL;
	json_t *errors = NULL, *ctx;
	char title[160];

	if (found != NULL && found->count > 0 &&
	    (found->items[0].status >= 500 || found->items[0].status == 404)) {
		error_page(res, session, found);
		return;
	}
	if (found != NULL)
		web_admin_form_errors(&errors, &general, found, kind->fields);
	snprintf(title, sizeof(title), "%s %s", kind->title, name);
	ctx = json_pack("{s:s,s:s,s:O,s:o,s:s?,s:s}", "title", title, "name",
			name, "values", values, "errors",
			errors != NULL ? errors : json_object(),
			"general_error", general, "csrf", session->csrf);
	web_render(res, status, kind->template, ctx, session, kind->nav);
}

/* The form's values of a stored repository or testcase. */
static json_t *stored_values(const struct admin_kind *kind, json_t *item)
{
	json_t *form, *values;

	if (kind == &repo_kind)
		return web_admin_form_values(item, repo_edit_fields);
	form = testcase_as_form(item);
	values = web_admin_testcase_values(form);
	json_decref(form);
	return values;
}

static void edit_get(struct http_response *res, struct http_request *req,
		     const struct admin_kind *kind)
{
	struct web_session session;
	struct field_errors errors;
	json_t *item, *values;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	fields_init(&errors);
	item = kind->get(&errors, req->params[0]);
	if (item == NULL) {
		error_page(res, &session, &errors);
		return;
	}
	if (json_is_null(json_object_get(item, "web_url")))
		json_object_del(item, "web_url");
	values = stored_values(kind, item);
	edit_page(res, &session, 200, kind, req->params[0], values, NULL);
	json_decref(values);
	json_decref(item);
}

void web_admin_repo_edit(struct http_response *res, struct http_request *req)
{
	edit_get(res, req, &repo_kind);
}

void web_admin_testcase_edit(struct http_response *res,
			     struct http_request *req)
{
	edit_get(res, req, &testcase_kind);
}

/* The status a form answers with its errors: the first error's. */
static unsigned errors_status(const struct field_errors *errors)
{
	return errors->count > 0 ? errors->items[0].status : 500;
}

void web_admin_repo_save(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct store_repo repo = {0};
	struct field_errors errors;
	json_t *form, *values, *body;
	const char *web_url;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = web_admin_form_values(form, repo_edit_fields);
	body = json_deep_copy(values);
	web_url = json_string_value(json_object_get(body, "web_url"));
	if (web_url != NULL && web_url[0] == '\0')
		json_object_set_new(body, "web_url", json_null());
	fields_init(&errors);
	if (repos_update(&repo, &errors, req->params[0], body) == 0)
		web_redirect(res, repo_kind.back);
	else
		edit_page(res, &session, errors_status(&errors), &repo_kind,
			  req->params[0], values, &errors);
	store_repo_clear(&repo);
	json_decref(body);
	json_decref(values);
	json_decref(form);
}

void web_admin_testcase_save(struct http_response *res,
			     struct http_request *req)
{
	struct web_session session;
	struct store_testcase testcase = {0};
	struct field_errors errors;
	json_t *form, *values, *body;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	json_object_set_new(form, "name", json_string(req->params[0]));
	values = web_admin_testcase_values(form);
	fields_init(&errors);
	body = web_admin_testcase_body(values, &errors);
	/* A params line that is no key=value is in `errors` already: the
	 * update then checks the rest, adds its errors and changes nothing. */
	if (testcases_update(&testcase, &errors, req->params[0], body) == 0 &&
	    fields_ok(&errors))
		web_redirect(res, testcase_kind.back);
	else
		edit_page(res, &session, errors_status(&errors),
			  &testcase_kind, req->params[0], values, &errors);
	store_testcase_clear(&testcase);
	json_decref(body);
	json_decref(values);
	json_decref(form);
}

/* The confirmation page of deleting `kind`'s `name`, with `general` (may
 * be NULL) saying why it was not deleted. */
static void delete_page(struct http_response *res,
			const struct web_session *session, unsigned status,
			const struct admin_kind *kind, const char *name,
			const char *general)
{
	char title[160];

	snprintf(title, sizeof(title), "Delete %s %s", kind->kind, name);
	web_render(res, status, "admin_delete",
		   json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s}", "title", title,
			     "kind", kind->kind, "name", name, "back",
			     kind->back, "general_error", general, "csrf",
			     session->csrf),
		   session, kind->nav);
}

static void delete_get(struct http_response *res, struct http_request *req,
		       const struct admin_kind *kind)
{
	struct web_session session;
	struct field_errors errors;
	json_t *item;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	fields_init(&errors);
	item = kind->get(&errors, req->params[0]);
	if (item == NULL)
		error_page(res, &session, &errors);
	else
		delete_page(res, &session, 200, kind, req->params[0], NULL);
	json_decref(item);
}

static void delete_post(struct http_response *res, struct http_request *req,
			const struct admin_kind *kind)
{
	struct web_session session;
	struct field_errors errors;

	if (!web_require_post(&session, NULL, res, req, ROLE_ADMIN))
		return;
	fields_init(&errors);
	if (kind->delete_fn(&errors, req->params[0]) == 0)
		web_redirect(res, kind->back);
	else if (errors.items[0].status == 409)
		delete_page(res, &session, 409, kind, req->params[0],
			    errors.items[0].message);
	else
		error_page(res, &session, &errors);
}

void web_admin_repo_delete_page(struct http_response *res,
				struct http_request *req)
{
	delete_get(res, req, &repo_kind);
}

void web_admin_repo_delete(struct http_response *res, struct http_request *req)
{
	delete_post(res, req, &repo_kind);
}

void web_admin_testcase_delete_page(struct http_response *res,
				    struct http_request *req)
{
	delete_get(res, req, &testcase_kind);
}

void web_admin_testcase_delete(struct http_response *res,
			       struct http_request *req)
{
	delete_post(res, req, &testcase_kind);
}
