/* The web form of patch jobs (issue 13): GET and POST /jobs/new-patch, a
 * thin adapter over patches_submit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "patches.h"
#include "server.h"
#include "store/store_patches.h"
#include "web.h"

static const char *const patch_fields[] = {
    "repo", "testcase", "base", "mbox", "archive", "notify", NULL};

/* [{"name", "selected"}] of the repos or testcases. */
static json_t *options(PGconn *conn, bool testcases, const char *selected)
{
	json_t *names = NULL, *out = json_array(), *name;
	size_t i;

	if (conn != NULL &&
	    store_patches_names(&names, conn, testcases) == 0) {
		json_array_foreach(names, i, name) json_array_append_new(
		    out, json_pack("{s:O,s:b}", "name", name, "selected",
				   selected != NULL &&
				       strcmp(selected,
					      json_string_value(name)) == 0));
	}
	json_decref(names);
	return out;
}

static void render(struct http_response *res, unsigned status,
		   const struct web_session *session, json_t *values,
		   const char *general)
{
	PGconn *conn = db_conn();

	web_render(res, status, "patch_new",
		   json_pack("{s:s,s:O,s:o,s:o,s:s?,s:s}", "title",
			     "Test a patch series", "values", values, "repos",
			     options(conn, false,
				     json_string_value(
					 json_object_get(values, "repo"))),
			     "testcases",
			     options(conn, true,
				     json_string_value(
					 json_object_get(values, "testcase"))),
			     "general_error", general, "csrf", session->csrf),
		   session, "new");
}

void web_patch_new(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *values;

	if (!web_require(&session, res, req, ROLE_SUBMIT, true))
		return;
	values = json_object();
	render(res, 200, &session, values, NULL);
	json_decref(values);
}

void web_patch_submit(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	json_t *form, *body, *values, *refusal = NULL;
	long long job_id;
	char location[64];
	size_t i;

	if (!web_require_post(&session, &form, res, req, ROLE_SUBMIT))
		return;
	values = json_object();
	for (i = 0; patch_fields[i] != NULL; i++)
		json_object_set(values, patch_fields[i],
				json_object_get(form, patch_fields[i]));
	body = json_pack("{s:s}", "kind", "patch");
	for (i = 0; patch_fields[i] != NULL; i++) {
		const char *v =
		    json_string_value(json_object_get(form, patch_fields[i]));

		if (strcmp(patch_fields[i], "notify") == 0)
			json_object_set_new(body, "notify",
					    web_notify_list(v));
		else if (v != NULL &&
			 (v[0] != '\0' || strcmp(patch_fields[i], "archive")))
			json_object_set_new(body, patch_fields[i],
					    json_string(v));
	}
	fields_init(&errors);
	if (patches_submit(&job_id, &refusal, &errors, req->token_id, body,
			   NULL, NULL) == 0) {
		snprintf(location, sizeof(location), "/jobs/%lld", job_id);
		web_redirect(res, location);
	} else {
		/* A refusal's message names every failing patch, uncut. */
		const char *message =
		    refusal != NULL ? json_string_value(
					  json_object_get(refusal, "message"))
		    : errors.count > 0 ? errors.items[0].message
				       : "The series was refused.";

		render(res, errors.count > 0 ? errors.items[0].status : 500,
		       &session, values, message);
	}
	json_decref(refusal);
	json_decref(body);
	json_decref(values);
	json_decref(form);
}
