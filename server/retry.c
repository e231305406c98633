#include "retry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "id.h"
#include "jobs.h"
#include "log.h"
#include "store/store_retry.h"
#include "store/store_spread.h"
#include "store/store_tasks.h"
#include "web.h"

/* Why a job in `state` of `kind` takes no retry, or NULL when it does. */
static const char *refusal(const char *state, const char *kind)
{
	if (strcmp(kind, "compare") == 0)
		return "a compare job is measured as a whole: re-test it";
	if (strcmp(state, "running") == 0 || strcmp(state, "done") == 0)
		return NULL;
	if (strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0)
		return "it has ended without a verdict: re-run the job";
	return "it has not started yet";
}

/* Reads the body's fields into *runs (left as it is when absent) and
 * *rebuild; false after adding an error. */
static bool read_body(json_t *body, long long runs_max, long long *runs,
		      bool *rebuild, struct field_errors *errors)
{
	json_t *v = json_object_get(body, "rebuild");

	if (!fields_json_int(errors, body, "runs", 1, runs_max, runs))
		return false;
	if (v != NULL && !json_is_null(v) && !json_is_boolean(v)) {
		fields_add(errors, "rebuild", 400, "invalid_field",
			   "'rebuild' must be true or false");
		return false;
	}
	*rebuild = json_is_true(v);
	return true;
}

/* Checks the request against the locked job and queues the retry's task;
 * JOBS_REFUSED, JOBS_DB_FAILED or 0 (the caller commits). */
static int queue_retry(PGconn *conn, long long job_id, const char *prefix,
		       json_t *body, struct field_errors *errors)
{
	struct store_retry_target t;
	struct store_plan_entry entry = {0};
	struct store_plan plan = {.entries = &entry, .count = 1};
	const char *why;
	long long machines;
	bool spread;
	int rc;

	rc = store_retry_target(&t, conn, job_id, prefix);
	if (rc == STORE_FAILED)
		return JOBS_DB_FAILED;
	if (rc == STORE_NOT_FOUND) {
		fields_add(errors, "", 404, "not_found", "no job %lld",
			   job_id);
		return JOBS_REFUSED;
	}
	if ((why = refusal(t.state, t.kind)) == NULL &&
	    store_spread_state(&spread, &machines, conn, job_id) != STORE_OK)
		return JOBS_DB_FAILED;
	/* Which machine would retry it is not settled yet (spreadjob.h). */
	if (why == NULL && spread)
		why = "it runs on several machines at once until it settles "
		      "on one; retry then";
	if (why != NULL) {
		fields_add(errors, "", 409, "conflict",
			   "job %lld takes no retry of a commit: %s", job_id,
			   why);
		return JOBS_REFUSED;
	}
	if (t.matches != 1) {
		fields_add(errors, "commit", t.matches == 0 ? 404 : 400,
			   t.matches == 0 ? "not_found" : "ambiguous_commit",
			   t.matches == 0
			       ? "commit %s is not in the range of job %lld"
			       : "%s names more than one commit of job %lld: "
				 "give more of its digits",
			   prefix, job_id);
		return JOBS_REFUSED;
	}
	entry.index = t.index;
	entry.runs = t.runs_min;
	snprintf(entry.purpose, sizeof(entry.purpose), "search");
	if (!read_body(body, t.runs_max, &entry.runs, &entry.rebuild, errors))
		return JOBS_REFUSED;
	if (store_retry_reopen(conn, job_id, t.index, entry.rebuild) < 0 ||
	    store_tasks_insert(conn, job_id, &plan) < 0)
		return JOBS_DB_FAILED;
	log_info("job %lld: retry of %.12s: %lld runs%s", job_id, t.sha,
		 entry.runs, entry.rebuild ? ", built again" : "");
	return 0;
}

int retry_commit(json_t **out, PGconn *conn, long long job_id, const char *sha,
		 json_t *body, struct field_errors *errors)
{
	char prefix[41];
	int rc;

	*out = NULL;
	if (id_parse_sha_prefix(prefix, sha) < 0) {
		fields_add(errors, "commit", 400, "invalid_commit",
			   "'%.64s' is not a commit: give 4 to 40 hex digits "
			   "of its SHA",
			   sha != NULL ? sha : "");
		return JOBS_REFUSED;
	}
	if (conn == NULL || db_begin(conn) < 0)
		return JOBS_DB_FAILED;
	rc = queue_retry(conn, job_id, prefix, body, errors);
	if (rc != 0 || db_commit(conn) < 0) {
		db_rollback(conn);
		return rc != 0 ? rc : JOBS_DB_FAILED;
	}
	return jobs_get(out, conn, job_id, errors);
}

void retry_api(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	long long job_id;
	json_t *body = NULL, *job = NULL;
	int rc;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	/* An empty body takes the defaults. */
	if (req->body_len > 0 && (body = http_json_body(res, req)) == NULL)
		return;
	fields_init(&errors);
	rc = retry_commit(&job, db_conn(), job_id, req->params[1], body,
			  &errors);
	json_decref(body);
	if (rc == 0)
		http_json(res, 202, job);
	else if (rc == JOBS_DB_FAILED || !fields_answer(res, &errors))
		http_db_failed(res);
}

void retry_web(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	json_t *form = NULL, *body, *job = NULL;
	const char *runs;
	char location[64];
	long long job_id, n;
	int rc;

	if (!web_require_post(&session, &form, res, req, ROLE_SUBMIT))
		return;
	if (id_parse(&job_id, req->params[0]) < 0) {
		web_error_page(res, 404, &session, "There is no such job.");
		json_decref(form);
		return;
	}
	body = json_object();
	runs = json_string_value(json_object_get(form, "runs"));
	/* The form's runs field: a number, or empty for the default. */
	if (runs != NULL && runs[0] != '\0')
		json_object_set_new(body, "runs",
				    id_parse(&n, runs) == 0
					? json_integer(n)
					: json_string(runs));
	json_object_set_new(body, "rebuild",
			    json_boolean(json_object_get(form, "rebuild")));
	json_decref(form);
	fields_init(&errors);
	rc = retry_commit(&job, db_conn(), job_id, req->params[1], body,
			  &errors);
	json_decref(body);
	json_decref(job);
	if (rc == 0) {
		snprintf(location, sizeof(location), "/jobs/%lld", job_id);
		web_redirect(res, location);
	} else {
		web_jobs_failed(res, rc, &errors, &session,
				"Cannot retry the commit.");
	}
}
