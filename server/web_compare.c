/*
 * The web side of compare jobs (issue 13): the table of a compare job's
 * revisions on its page, and the "Re-test a fix" form of a finished
 * bisection, which calls compare_retest as POST /api/v1/jobs/{id}/retest
 * does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "db.h"
#include "id.h"
#include "jobs.h"
#include "web.h"

/* `value` of `key` formatted, or "" when it is not a number. */
static json_t *number_text(json_t *column, const char *key, const char *fmt)
{
	json_t *v = json_object_get(column, key);
	char text[64] = "";

	if (json_is_number(v))
		snprintf(text, sizeof(text), fmt, json_number_value(v));
	return json_string(text);
}

static json_t *columns_context(json_t *revisions)
{
	json_t *list = json_array(), *c;
	size_t i;

	json_array_foreach(revisions, i, c)
	{
		const char *sha = json_string_value(json_object_get(c, "sha"));
		json_t *verdict = json_object_get(c, "verdict");

		json_array_append_new(
		    list,
		    json_pack("{s:O,s:s,s:s%,s:O,s:O,s:o,s:o,s:o,s:O}",
			      "label", json_object_get(c, "label"), "sha",
			      sha ? sha : "", "short", sha ? sha : "",
			      sha ? (size_t)12 : (size_t)0, "subject",
			      json_object_get(c, "subject"), "runs",
			      json_object_get(c, "runs"), "mean",
			      number_text(c, "mean", "%.2f"), "sd",
			      number_text(c, "sd", "%.2f"), "change",
			      number_text(c, "change_pct", "%+.1f%%"),
			      "verdict", verdict ? verdict : json_null()));
	}
	return list;
}

void web_compare_add(json_t *ctx, json_t *job,
		     const struct web_session *session, bool final)
{
	const char *kind = json_string_value(json_object_get(job, "kind"));
	json_t *revisions = json_object_get(job, "revisions");

	if (ctx == NULL || kind == NULL)
		return;
	if (strcmp(kind, "compare") == 0) {
		/* A compare job is not re-run as a bisection. */
		json_object_set_new(ctx, "can_rerun", json_false());
		if (json_is_array(revisions))
			json_object_set_new(
			    ctx, "compare",
			    json_pack("{s:o,s:I}", "columns",
				      columns_context(revisions), "count",
				      (json_int_t)json_array_size(revisions)));
		return;
	}
	if (strcmp(kind, "bisect") == 0 && final &&
	    session->role >= ROLE_SUBMIT &&
	    json_is_string(json_object_get(job, "culprit")))
		json_object_set_new(ctx, "can_retest", json_true());
}

void web_job_retest(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	char location[64], text[1100];
	long long job_id, new_id;
	json_t *form = NULL;
	int rc;

	if (!web_require_post(&session, &form, res, req, ROLE_SUBMIT))
		return;
	if (id_parse(&job_id, req->params[0]) < 0) {
		snprintf(text, sizeof(text), "no job '%s'", req->params[0]);
		web_error_page(res, 404, &session, text);
		goto out;
	}
	fields_init(&errors);
	rc = compare_retest(&new_id, db_conn(), job_id,
			    json_string_value(json_object_get(form, "fix")),
			    req->token_id, &errors);
	if (rc == 0) {
		snprintf(location, sizeof(location), "/jobs/%lld", new_id);
		web_redirect(res, location);
	} else if (rc == JOBS_DB_FAILED || errors.count == 0) {
		web_db_failed(res, &session);
	} else {
		snprintf(text, sizeof(text), "Cannot re-test the fix: %s",
			 errors.items[0].message);
		web_error_page(res, errors.items[0].status, &session, text);
	}
out:
	json_decref(form);
}
