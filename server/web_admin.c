/*
 * The admin pages of the web UI: repositories, testcases, tokens and
 * workers.  Lists and changes call the resources' service functions, the
 * ones the REST API calls, so the rules (names, commands, roles) are the
 * API's; a form shows every field's error at once, in its own labels.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "id.h"
#include "repos.h"
#include "server.h"
#include "testcases.h"
#include "tokens.h"
#include "web.h"

static const struct web_admin_field repo_fields[] = {
    {"name", "Name"},
    {"url", "Git URL or path"},
    {"web_url", "Commit link"},
    {NULL, NULL},
};

static const struct web_admin_field token_fields[] = {
    {"name", "Name"},
    {"role", "Role"},
    {"max_open_jobs", "Open jobs at most"},
    {"max_jobs_per_hour", "Jobs per hour at most"},
    {NULL, NULL},
};

json_t *web_admin_form_values(json_t *form,
			      const struct web_admin_field *fields)
{
	json_t *values = json_object();
	size_t i;

	for (i = 0; fields[i].name != NULL; i++) {
		const char *v =
		    json_string_value(json_object_get(form, fields[i].name));
		size_t start = 0, end;

		if (v == NULL)
			v = "";
		end = strlen(v);
		while (start < end && isspace((unsigned char)v[start]))
			start++;
		while (end > start && isspace((unsigned char)v[end - 1]))
			end--;
		json_object_set_new(values, fields[i].name,
				    json_stringn(v + start, end - start));
	}
	return values;
}

/* The label of the form's field quoted at `text` ('name'), or NULL. */
static const struct web_admin_field *
quoted_field(const char *text, const struct web_admin_field *fields)
{
	size_t i, n;

	for (i = 0; fields[i].name != NULL; i++) {
		n = strlen(fields[i].name);
		if (text[0] == '\'' &&
		    strncmp(text + 1, fields[i].name, n) == 0 &&
		    text[n + 1] == '\'')
			return &fields[i];
	}
	return NULL;
}

/*
 * A validation message in the form's words: each of its fields the API
 * names ("field 'runs_max'", "'runs_min'") becomes its label in quotes
 * ("“Most runs”").  New string.
 */
static json_t *form_message(const struct field_error *error,
			    const struct web_admin_field *fields)
{
	const char *m = error->message, *field_word = "field ";
	const struct web_admin_field *f;
	char out[2 * FIELDS_MESSAGE_MAX];
	size_t n = 0, len;

	if (strcmp(error->code, "invalid_field") != 0 &&
	    strcmp(error->code, "missing_field") != 0)
		return json_string(m);
	while (*m != '\0' && n + 1 < sizeof(out)) {
		if (strncmp(m, field_word, strlen(field_word)) == 0 &&
		    quoted_field(m + strlen(field_word), fields) != NULL)
			m += strlen(field_word);
		f = quoted_field(m, fields);
		if (f == NULL) {
			out[n++] = *m++;
			continue;
		}
		len = (size_t)snprintf(out + n, sizeof(out) - n,
				       "\u201c%s\u201d", f->label);
		n = n + len < sizeof(out) ? n + len : sizeof(out) - 1;
		m += strlen(f->name) + 2;
	}
	out[n] = '\0';
	return json_string(out);
}

void web_admin_form_errors(json_t **errors, const char **general,
			   const struct field_errors *found,
			   const struct web_admin_field *fields)
{
	const struct field_error *e;
	size_t i, k;

	*errors = json_object();
	*general = NULL;
	for (i = 0; i < found->count; i++) {
		char name[sizeof(e->field)], *dot;

		e = &found->items[i];
		/* The API's "webhook.url" is the form's "webhook_url". */
		snprintf(name, sizeof(name), "%s", e->field);
		while ((dot = strchr(name, '.')) != NULL)
			*dot = '_';
		for (k = 0; fields[k].name != NULL; k++)
			if (strcmp(fields[k].name, name) == 0)
				break;
		if (fields[k].name == NULL) {
			if (*general == NULL)
				*general = e->message;
			continue;
		}
		if (json_object_get(*errors, name) == NULL)
			json_object_set_new(*errors, name,
					    form_message(e, fields));
	}
}

/* An admin page: `list` is its items (stolen), `key` its navigation. */
static void admin_render(struct http_response *res,
			 const struct web_session *session, unsigned status,
			 const char *name, const char *key, json_t *list,
			 json_t *values, json_t *errors, const char *general,
			 json_t *extra)
{
	static const char *const titles[][2] = {
	    {"repos", "Repositories"},
	    {"testcases", "Testcases"},
	    {"tokens", "Tokens"},
	};
	const char *title = key;
	json_t *ctx;
	size_t i;

	for (i = 0; i < sizeof(titles) / sizeof(titles[0]); i++) {
		if (strcmp(titles[i][0], key) == 0)
			title = titles[i][1];
	}
	/* The caller keeps its values and errors: borrowed ("O"), or a new
	 * empty object given away ("o"). */
	ctx = json_pack(
	    "{s:s,s:o,s:o,s:o,s:s?,s:s}", "title", title, "items", list,
	    "values", values != NULL ? json_incref(values) : json_object(),
	    "errors", errors != NULL ? json_incref(errors) : json_object(),
	    "general_error", general, "csrf", session->csrf);
	if (ctx != NULL && extra != NULL)
		json_object_update(ctx, extra);
	web_render(res, status, name, ctx, session, key);
}

/* The list of each admin page, as the API lists it. */
static json_t *admin_list(const char *key, struct field_errors *errors)
{
	if (strcmp(key, "repos") == 0)
		return repos_list_json(errors);
	if (strcmp(key, "testcases") == 0)
		return testcases_list_json(errors);
	return tokens_list_json(errors);
}

/*
 * Renders the admin page `key` with template `name`: its list, and the
 * form with `values` and the errors of `found` (may be NULL).  A list
 * that cannot be read, or an error of the whole request (a failed
 * database), shows the error page instead.
 */
static void admin_page(struct http_response *res,
		       const struct web_session *session, unsigned status,
		       const char *name, const char *key, json_t *values,
		       const struct field_errors *found,
		       const struct web_admin_field *fields, json_t *extra)
{
	struct field_errors list_errors;
	const char *general = NULL;
	json_t *list, *errors = NULL;

	if (found != NULL && found->count > 0 &&
	    found->items[0].status >= 500) {
		web_error_page(res, found->items[0].status, session,
			       found->items[0].message);
		return;
	}
	fields_init(&list_errors);
	list = admin_list(key, &list_errors);
	if (list == NULL) {
		web_error_page(res, list_errors.items[0].status, session,
			       list_errors.items[0].message);
		return;
	}
	if (found != NULL)
		web_admin_form_errors(&errors, &general, found, fields);
	admin_render(res, session, status, name, key, list, values, errors,
		     general, extra);
	json_decref(errors);
}

/* The status a form answers with its errors: the first error's. */
static unsigned errors_status(const struct field_errors *errors)
{
	return errors->count > 0 ? errors->items[0].status : 500;
}

void web_admin_repos(struct http_response *res, struct http_request *req)
{
	struct web_session session;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	admin_page(res, &session, 200, "admin_repos", "repos", NULL, NULL,
		   repo_fields, NULL);
}

/* Empty optional fields are left out, as if not given. */
static void drop_empty(json_t *body)
{
	const char *key;
	json_t *value;
	void *tmp;

	json_object_foreach_safe(body, tmp, key, value)
	{
		if (json_is_string(value) && json_string_length(value) == 0)
			json_object_del(body, key);
	}
}

void web_admin_repos_create(struct http_response *res,
			    struct http_request *req)
{
	struct web_session session;
	struct repo_request request = {0};
	struct store_repo repo = {0};
	struct field_errors errors;
	json_t *form, *values, *body;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = web_admin_form_values(form, repo_fields);
	body = json_deep_copy(values);
	drop_empty(body);
	fields_init(&errors);
	repos_request_read(&request, &errors, body);
	if (fields_ok(&errors) && repos_create(&repo, &errors, &request) == 0)
		web_redirect(res, "/admin/repos");
	else
		admin_page(res, &session, errors_status(&errors),
			   "admin_repos", "repos", values, &errors,
			   repo_fields, NULL);
	store_repo_clear(&repo);
	json_decref(body);
	json_decref(values);
	json_decref(form);
}

void web_admin_testcases(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *form, *values;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	form = json_pack("{s:s}", "higher_is_better", "true");
	values = web_admin_testcase_values(form);
	json_decref(form);
	admin_page(res, &session, 200, "admin_testcases", "testcases", values,
		   NULL, web_admin_testcase_fields, NULL);
	json_decref(values);
}

void web_admin_testcases_create(struct http_response *res,
				struct http_request *req)
{
	struct web_session session;
	struct testcase_request request;
	struct store_testcase testcase = {0};
	struct field_errors errors;
	json_t *form, *values, *body;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = web_admin_testcase_values(form);
	fields_init(&errors);
	body = web_admin_testcase_body(values, &errors);
	testcases_request_read(&request, &errors, body);
	if (fields_ok(&errors) &&
	    testcases_create(&testcase, &errors, &request) == 0)
		web_redirect(res, "/admin/testcases");
	else
		admin_page(res, &session, errors_status(&errors),
			   "admin_testcases", "testcases", values, &errors,
			   web_admin_testcase_fields, NULL);
	store_testcase_clear(&testcase);
	testcases_request_clear(&request);
	json_decref(body);
	json_decref(values);
	json_decref(form);
}

/* The cookie that carries a token just made to the page the POST
 * redirects to, once: "<id>:<secret>", for five minutes at most. */
#define NEW_TOKEN_COOKIE "sb_new_token"

/* The token just made, from its cookie, as the page shows it (checked to
 * be the live token it names); NULL when there is none. */
static json_t *new_token_shown(struct http_request *req)
{
	const char *cookie = http_cookie(req, NEW_TOKEN_COOKIE), *secret;
	struct token_identity who;
	struct field_errors errors;
	json_t *list, *t, *out = NULL;
	long long id;
	size_t i;

	if (cookie == NULL || (secret = strchr(cookie, ':')) == NULL)
		return NULL;
	id = strtoll(cookie, NULL, 10);
	secret++;
	if (tokens_identify(&who, secret, NULL) < 0 || who.role == ROLE_NONE ||
	    who.token_id != id)
		return NULL;
	fields_init(&errors);
	list = tokens_list_json(&errors);
	json_array_foreach(list, i, t)
	{
		if (json_integer_value(json_object_get(t, "id")) == id) {
			out = json_deep_copy(t);
			json_object_set_new(out, "token", json_string(secret));
		}
	}
	json_decref(list);
	return out;
}

void web_admin_tokens(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *values, *made, *extra = NULL;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	made = new_token_shown(req);
	if (http_cookie(req, NEW_TOKEN_COOKIE) != NULL)
		http_add_header(res, "Set-Cookie",
				NEW_TOKEN_COOKIE "=; Path=/admin/tokens; "
						 "Max-Age=0; HttpOnly; "
						 "SameSite=Strict");
	if (made != NULL)
		extra = json_pack("{s:o}", "new_token", made);
	values = json_pack("{s:s}", "role", "read");
	admin_page(res, &session, 200, "admin_tokens", "tokens", values, NULL,
		   token_fields, extra);
	json_decref(extra);
	json_decref(values);
}

/* The job limits typed into the token form: empty for the server's, else
 * a number checked as the API checks it (the same words). */
static void token_limits(struct token_request *request,
			 struct field_errors *errors, json_t *values)
{
	static const char *const keys[] = {"max_open_jobs",
					   "max_jobs_per_hour", NULL};
	long long *outs[] = {&request->max_open_jobs,
			     &request->max_jobs_per_hour};
	json_t *body = json_object();
	const char *text;
	char *end;
	long long v;
	size_t i;

	for (i = 0; keys[i] != NULL; i++) {
		*outs[i] = -1; /* the server's */
		text = json_string_value(json_object_get(values, keys[i]));
		if (text == NULL || text[0] == '\0')
			continue;
		v = strtoll(text, &end, 10);
		json_object_set_new(body, keys[i],
				    *end == '\0' ? json_integer(v)
						 : json_string(text));
		fields_json_int(errors, body, keys[i], 0, TOKENS_JOB_LIMIT_MAX,
				outs[i]);
	}
	json_decref(body);
}

void web_admin_tokens_create(struct http_response *res,
			     struct http_request *req)
{
	char secret[TOKENS_SECRET_SIZE];
	struct web_session session;
	struct token_request request;
	struct store_token token = {0};
	struct field_errors errors;
	json_t *form, *values;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = web_admin_form_values(form, token_fields);
	request.name = json_string_value(json_object_get(values, "name"));
	request.role = json_string_value(json_object_get(values, "role"));
	fields_init(&errors);
	token_limits(&request, &errors, values);
	if (tokens_create(&token, secret, &errors, &request) == 0) {
		/* Redirected after the POST, so that a reload makes no second
		 * token; the page shows the secret once, from a cookie only
		 * it receives, and clears it. */
		char cookie[sizeof(NEW_TOKEN_COOKIE) + TOKENS_SECRET_SIZE +
			    128];

		snprintf(cookie, sizeof(cookie),
			 NEW_TOKEN_COOKIE "=%lld:%s; Path=/admin/tokens; "
					  "Max-Age=300; HttpOnly; "
					  "SameSite=Strict%s",
			 token.id, secret,
			 strncmp(server_config.base_url, "https:", 6) == 0
			     ? "; Secure"
			     : "");
		if (http_add_header(res, "Set-Cookie", cookie) < 0)
			web_error_page(res, 500, &session,
				       "Cannot set a cookie.");
		else
			web_redirect(res, "/admin/tokens");
	} else {
		admin_page(res, &session, errors_status(&errors),
			   "admin_tokens", "tokens", values, &errors,
			   token_fields, NULL);
	}
	store_token_clear(&token);
	json_decref(values);
	json_decref(form);
}

/* True when token `id` is listed (revoked or not). */
static bool token_exists(long long id)
{
	struct field_errors errors;
	json_t *list, *t;
	bool found = false;
	size_t i;

	fields_init(&errors);
	list = tokens_list_json(&errors);
	json_array_foreach(
	    list, i, t) if (json_integer_value(json_object_get(t, "id")) == id)
	    found = true;
	json_decref(list);
	return found;
}

void web_admin_tokens_revoke_page(struct http_response *res,
				  struct http_request *req)
{
	struct web_session session;
	char question[96], action[96];
	long long id;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	if (id_parse(&id, req->params[0]) < 0 || !token_exists(id)) {
		web_error_page(res, 404, &session, "There is no such token.");
		return;
	}
	snprintf(question, sizeof(question), "Revoke token %lld?", id);
	snprintf(action, sizeof(action), "/admin/tokens/%lld/revoke", id);
	web_confirm_page(
	    res, &session, "tokens",
	    &(struct web_confirm){
		question,
		"Whoever uses it is refused from now on: CI jobs, scripts and "
		"web sessions signed in with it.  Its jobs stay.  This cannot "
		"be undone; make a new token instead.",
		action, "Revoke the token", "/admin/tokens", "Keep it"});
}

void web_admin_tokens_revoke(struct http_response *res,
			     struct http_request *req)
{
	struct web_session session;
	struct store_token token;
	struct field_errors errors;

	if (!web_require_post(&session, NULL, res, req, ROLE_ADMIN))
		return;
	fields_init(&errors);
	/* Revoked already is as good as revoked now. */
	if (tokens_revoke(&token, &errors, req->params[0]) == 0 ||
	    errors.items[0].status == 409)
		web_redirect(res, "/admin/tokens");
	else
		web_error_page(res, errors.items[0].status, &session,
			       errors.items[0].message);
	store_token_clear(&token);
}

void web_admin_workers(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *list = NULL, *items, *w, *ctx;
	char age[32];
	size_t i;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	if (workers_list_json(&list) < 0) {
		web_db_failed(res, &session);
		return;
	}
	items = json_object_get(list, "workers");
	json_array_foreach(items, i, w)
	{
		const char *sha = json_string_value(
		    json_object_get(json_object_get(w, "task"), "commit"));

		web_age(age, sizeof(age),
			json_string_value(json_object_get(w, "last_seen_at")));
		json_object_set_new(w, "last_seen_age", json_string(age));
		if (sha != NULL)
			json_object_set_new(
			    json_object_get(w, "task"), "short",
			    json_stringn(sha,
					 strlen(sha) < 12 ? strlen(sha) : 12));
	}
	ctx = json_pack("{s:s,s:O}", "title", "Workers", "items", items);
	json_decref(list);
	web_render(res, 200, "admin_workers", ctx, &session, "workers");
}
