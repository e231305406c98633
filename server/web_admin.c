/*
 * The admin pages of the web UI: repositories, testcases, tokens and
 * workers.  Lists and changes go through the REST handlers, so the rules
 * (names, commands, roles) are the API's.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "web.h"

/* The form field an API error message names ('field'), or NULL. */
static const char *message_field(const char *message,
				 const char *const *fields)
{
	char quoted[80];
	size_t i;

	for (i = 0; fields[i] != NULL; i++) {
		snprintf(quoted, sizeof(quoted), "'%s'", fields[i]);
		if (strstr(message, quoted) != NULL)
			return fields[i];
	}
	return NULL;
}

/* The form's values of `fields` (trimmed strings), a new object. */
static json_t *form_values(json_t *form, const char *const *fields)
{
	json_t *values = json_object();
	size_t i;

	for (i = 0; fields[i] != NULL; i++) {
		const char *v =
		    json_string_value(json_object_get(form, fields[i]));
		size_t start = 0, end;

		if (v == NULL)
			v = "";
		end = strlen(v);
		while (start < end && isspace((unsigned char)v[start]))
			start++;
		while (end > start && isspace((unsigned char)v[end - 1]))
			end--;
		json_object_set_new(values, fields[i],
				    json_stringn(v + start, end - start));
	}
	return values;
}

/* Renders an admin page: its list from GET `api_list` under `key`. */
static void admin_page(struct http_response *res, struct http_request *req,
		       const struct web_session *session, unsigned status,
		       const char *name, const char *key, json_t *values,
		       json_t *errors, const char *general, json_t *extra)
{
	static const char *const titles[][2] = {
	    {"repos", "Repositories"},
	    {"testcases", "Testcases"},
	    {"tokens", "Tokens"},
	    {"workers", "Workers"},
	};
	char pattern[64];
	const char *title = key;
	json_t *list = NULL, *ctx;
	unsigned got;
	size_t i;

	for (i = 0; i < sizeof(titles) / sizeof(titles[0]); i++) {
		if (strcmp(titles[i][0], key) == 0)
			title = titles[i][1];
	}
	snprintf(pattern, sizeof(pattern), "/api/v1/%s", key);
	got = web_call_api(&list, "GET", pattern, req, NULL);
	if (got != 200) {
		web_error_page(res, got >= 400 ? got : 500, session,
			       web_api_message(list, "Cannot list them."));
		json_decref(list);
		return;
	}
	ctx = json_pack("{s:s,s:O,s:O,s:O,s:s?,s:s}", "title", title, "items",
			json_object_get(list, key), "values",
			values != NULL ? values : json_object(), "errors",
			errors != NULL ? errors : json_object(),
			"general_error", general, "csrf", session->csrf);
	json_decref(list);
	if (ctx != NULL && extra != NULL)
		json_object_update(ctx, extra);
	web_render(res, status, name, ctx, session, key);
}

/*
 * Handles a create form: the fields of `fields` go into a JSON body for
 * POST `api` (`convert` may rewrite it); 201 redirects to `back`, an error
 * shows the form again with the values kept.
 */
static void admin_create(struct http_response *res, struct http_request *req,
			 const char *const *fields, const char *api,
			 const char *template_name, const char *key,
			 void (*convert)(json_t *body), const char *back)
{
	struct web_session session;
	json_t *form, *values, *body, *reply = NULL, *errors;
	const char *field, *message;
	unsigned status;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = form_values(form, fields);
	body = json_deep_copy(values);
	if (convert != NULL && body != NULL)
		convert(body);
	status =
	    body != NULL ? web_call_api(&reply, "POST", api, req, body) : 500;
	if (status == 201) {
		web_redirect(res, back);
		goto out;
	}
	message = web_api_message(reply, "refused");
	field = message_field(message, fields);
	if (field == NULL && strcmp(web_api_code(reply), "exists") == 0)
		field = "name";
	if (field == NULL &&
	    strcmp(web_api_code(reply), "unreachable_repo") == 0)
		field = "url";
	errors = json_object();
	if (field != NULL)
		json_object_set_new(errors, field, json_string(message));
	admin_page(res, req, &session, status >= 400 ? status : 500,
		   template_name, key, values, errors,
		   field == NULL ? message : NULL, NULL);
	json_decref(errors);
out:
	json_decref(reply);
	json_decref(body);
	json_decref(values);
	json_decref(form);
}

void web_admin_repos(struct http_response *res, struct http_request *req)
{
	struct web_session session;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	admin_page(res, req, &session, 200, "admin_repos", "repos", NULL, NULL,
		   NULL, NULL);
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
	static const char *const fields[] = {"name", "url", "web_url", NULL};

	admin_create(res, req, fields, "/api/v1/repos", "admin_repos", "repos",
		     drop_empty, "/admin/repos");
}

void web_admin_testcases(struct http_response *res, struct http_request *req)
{
	struct web_session session;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	admin_page(res, req, &session, 200, "admin_testcases", "testcases",
		   json_pack("{s:s}", "higher_is_better", "true"), NULL, NULL,
		   NULL);
}

/* Numbers typed into the testcase form become JSON numbers; text that is
 * no number stays a string, which the API refuses with its own words. */
static void testcase_numbers(json_t *body)
{
	static const char *const integers[] = {"runs_min", "runs_max",
					       "timeout_s", NULL};
	const char *text;
	char *end;
	size_t i;

	drop_empty(body);
	for (i = 0; integers[i] != NULL; i++) {
		text = json_string_value(json_object_get(body, integers[i]));
		if (text != NULL && text[0] != '\0') {
			long long v = strtoll(text, &end, 10);

			if (*end == '\0')
				json_object_set_new(body, integers[i],
						    json_integer(v));
		}
	}
	text = json_string_value(json_object_get(body, "min_change_pct"));
	if (text != NULL && text[0] != '\0') {
		double v = strtod(text, &end);

		if (*end == '\0')
			json_object_set_new(body, "min_change_pct",
					    json_real(v));
	}
	text = json_string_value(json_object_get(body, "higher_is_better"));
	if (text != NULL &&
	    (strcmp(text, "true") == 0 || strcmp(text, "false") == 0))
		json_object_set_new(body, "higher_is_better",
				    json_boolean(strcmp(text, "true") == 0));
	if (json_object_get(body, "build") == NULL)
		json_object_set_new(body, "build", json_string(""));
}

void web_admin_testcases_create(struct http_response *res,
				struct http_request *req)
{
	static const char *const fields[] = {"name",
					     "build",
					     "run",
					     "kpi",
					     "higher_is_better",
					     "min_change_pct",
					     "runs_min",
					     "runs_max",
					     "timeout_s",
					     NULL};

	admin_create(res, req, fields, "/api/v1/testcases", "admin_testcases",
		     "testcases", testcase_numbers, "/admin/testcases");
}

void web_admin_tokens(struct http_response *res, struct http_request *req)
{
	struct web_session session;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	admin_page(res, req, &session, 200, "admin_tokens", "tokens",
		   json_pack("{s:s}", "role", "read"), NULL, NULL, NULL);
}

void web_admin_tokens_create(struct http_response *res,
			     struct http_request *req)
{
	static const char *const fields[] = {"name", "role", NULL};
	struct web_session session;
	json_t *form, *values, *reply = NULL, *errors, *extra;
	const char *message;
	unsigned status;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = form_values(form, fields);
	status = web_call_api(&reply, "POST", "/api/v1/tokens", req, values);
	errors = json_object();
	if (status == 201) {
		/* The token is shown once, on this page, and never again. */
		extra = json_pack("{s:O}", "new_token", reply);
		admin_page(res, req, &session, 201, "admin_tokens", "tokens",
			   NULL, errors, NULL, extra);
		json_decref(extra);
	} else {
		message = web_api_message(reply, "refused");
		json_object_set_new(errors,
				    strstr(message, "'role'") != NULL ? "role"
								      : "name",
				    json_string(message));
		admin_page(res, req, &session, status >= 400 ? status : 500,
			   "admin_tokens", "tokens", values, errors, NULL,
			   NULL);
	}
	json_decref(errors);
	json_decref(reply);
	json_decref(values);
	json_decref(form);
}

void web_admin_tokens_revoke(struct http_response *res,
			     struct http_request *req)
{
	struct web_session session;
	json_t *reply = NULL;
	unsigned status;

	if (!web_require_post(&session, NULL, res, req, ROLE_ADMIN))
		return;
	status =
	    web_call_api(&reply, "DELETE", "/api/v1/tokens/{}", req, NULL);
	if (status == 200 || status == 204 || status == 409)
		web_redirect(res, "/admin/tokens");
	else
		web_error_page(res, status >= 400 ? status : 500, &session,
			       web_api_message(reply, "Cannot revoke it."));
	json_decref(reply);
}

void web_admin_workers(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *list = NULL, *items, *w, *ctx;
	char age[32];
	unsigned status;
	size_t i;

	if (!web_require(&session, res, req, ROLE_ADMIN, true))
		return;
	status = web_call_api(&list, "GET", "/api/v1/workers", req, NULL);
	if (status != 200) {
		web_error_page(res, status >= 400 ? status : 500, &session,
			       web_api_message(list, "Cannot list them."));
		json_decref(list);
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
