/*
 * What the files of the web UI (web*.c) share: sessions, forms, page
 * rendering and calls into the REST handlers.  Pages are rendered from
 * web/templates with lib/tmpl.h; every value a page shows passes through
 * the template's HTML escaping.
 */
#ifndef STATBISECT_WEB_H
#define STATBISECT_WEB_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "fields.h"
#include "http.h"

#define WEB_SESSION_COOKIE "sb_session"
#define WEB_SIGNIN_COOKIE "sb_signin"
#define WEB_SESSION_SECONDS (12 * 3600)

/* The signed-in person, from the session cookie. */
struct web_session {
	bool valid;
	enum http_role role;
	long long token_id; /* 0: the bootstrap admin token */
	char csrf[65];
	char name[129]; /* the token's name */
};

/* A field of an admin form: the API's name for it and the form's label. */
struct web_admin_field {
	const char *name;
	const char *label;
};

/* web_admin.c: the admin forms' helpers, shared with web_watches.c. */

/* The form's values of `fields` (trimmed strings), a new object. */
json_t *web_admin_form_values(json_t *form,
			      const struct web_admin_field *fields);

/*
 * The errors of `found` as the form shows them: each error of one of
 * its fields, in the form's words, under that field's name in *errors
 * (new object; the first error of a field wins); the first error that
 * is no field's in *general (borrowed from `found`), or NULL.
 */
void web_admin_form_errors(json_t **errors, const char **general,
			   const struct field_errors *found,
			   const struct web_admin_field *fields);

/* web_session.c */

/*
 * Checks that the request carries a live session of at least role `need`
 * and fills *out; sets req->role and req->token_id from it, so the REST
 * handlers called afterwards see the person.  Otherwise answers in `res`:
 * a redirect to the sign-in page for a page (`page` true) or 401 for
 * data, 403 when the role is too small, 503 when the database is down;
 * and returns false.
 */
bool web_require(struct web_session *out, struct http_response *res,
		 struct http_request *req, enum http_role need, bool page);

/*
 * The start of every form POST that changes something: web_require for
 * data (401, not a redirect, without a session), then the CSRF check of
 * the application/x-www-form-urlencoded body, so no handler can do the
 * one without the other.  Fills *out, and *form with the fields as a JSON
 * object of strings (new reference) unless `form` is NULL (a button with
 * no fields).  Returns false after answering: 401, 403 or 503 as
 * web_require, 400 (bad body) or 403 (missing or wrong CSRF token).
 */
bool web_require_post(struct web_session *out, json_t **form,
		      struct http_response *res, struct http_request *req,
		      enum http_role need);

void web_signin_page(struct http_response *res, struct http_request *req);
void web_signin(struct http_response *res, struct http_request *req);
void web_signout(struct http_response *res, struct http_request *req);

/* web.c */

/*
 * Renders template `name` (web/templates/NAME.html) with `context`
 * (stolen; an object) into an HTML answer with `status`, adding the
 * "session" value (role, name, CSRF token, navigation) and the security
 * headers.  `nav` names the current navigation entry, or NULL.
 */
/* web_render's page as text into *out (malloc'd): 0, or -1 (logged)
 * with *out NULL. */
int web_render_text(char **out, const char *name, json_t *context,
		    const struct web_session *session, const char *nav);

/* An HTML answer of `text` (stolen; NULL: the page could not be made)
 * with `status` and the security headers. */
void web_page(struct http_response *res, unsigned status, char *text);

void web_render(struct http_response *res, unsigned status, const char *name,
		json_t *context, const struct web_session *session,
		const char *nav);

/* Renders a template into *out (malloc'd) without the page around it.
 * Returns 0, or -1 (logged). */
int web_render_fragment(char **out, const char *name, json_t *context);

/* An error page with `message`. */
void web_error_page(struct http_response *res, unsigned status,
		    const struct web_session *session, const char *message);

/* The error page of an error the HTTP layer found, for a browser that
 * has no session at hand there (http_set_page_error). */
void web_layer_error_page(struct http_response *res, unsigned status,
			  const char *message);

/* The error page for a failed database call: 503 when trying again may
 * help, else 500 (as http_db_failed decides). */
void web_db_failed(struct http_response *res,
		   const struct web_session *session);

/* A 303 redirect to the local path `location`. */
void web_redirect(struct http_response *res, const char *location);

/* Adds Content-Security-Policy and the other headers of an HTML answer. */
void web_security_headers(struct http_response *res);

/* Age of an ISO 8601 UTC timestamp as "5 s", "3 min", "2 h", "4 d". */
void web_age(char *buf, size_t size, const char *iso);

/* A question asked before a change that cannot be undone, answered by a
 * POST with the CSRF token to `action` (no JavaScript needed). */
struct web_confirm {
	const char *question, *explain; /* "Revoke token 4?", what it does */
	const char *action, *button;	/* where the POST goes, its label */
	const char *back, *keep;	/* the way out, its label */
};

/* Renders the confirmation page `c` (200). */
void web_confirm_page(struct http_response *res,
		      const struct web_session *session, const char *nav,
		      const struct web_confirm *c);

/* A form's notify field as the API's list: the addresses in `text` (NULL:
 * none) split at commas, semicolons and white space. */
json_t *web_notify_list(const char *text);

/* web_jobs.c */

/* Answers the outcome `rc` of a jobs service call that did not succeed
 * (jobs.h: JOBS_REFUSED with `errors`, or JOBS_DB_FAILED) with an error
 * page: the first error's status and message, `fallback` for an empty
 * one. */
void web_jobs_failed(struct http_response *res, int rc,
		     const struct field_errors *errors,
		     const struct web_session *session, const char *fallback);

/* The registered repositories' (or testcases') names as a select's
 * options: [{"name", "selected"}], `selected` marked (new reference). */
json_t *web_jobs_names(bool testcases, const char *selected);

void web_dashboard(struct http_response *res, struct http_request *req);
void web_job_report(struct http_response *res, struct http_request *req);
void web_job_runs_csv(struct http_response *res, struct http_request *req);
void web_job_runs_json(struct http_response *res, struct http_request *req);
void web_job_cancel(struct http_response *res, struct http_request *req);
/* GET /jobs/{id}/cancel: the question before cancelling. */
void web_job_cancel_page(struct http_response *res, struct http_request *req);
void web_job_rerun(struct http_response *res, struct http_request *req);

/* web_compare.c: a compare job's table on the job page, and the "Re-test
 * a fix" button of a finished bisection (compare_retest, as the API). */
void web_compare_add(json_t *ctx, json_t *job,
		     const struct web_session *session, bool final);
void web_job_retest(struct http_response *res, struct http_request *req);

/* web_job_form.c */
void web_job_new(struct http_response *res, struct http_request *req);
void web_job_submit(struct http_response *res, struct http_request *req);

/* web_keys.c */

/*
 * web_require(ROLE_READ) for the read-only pages of one job, which the
 * links of its report open too: a `key` query parameter that is a live
 * read key of the job named by req->params[0] lets the request read that
 * job, and nothing else, without a session (*out is then no session and
 * req->role is ROLE_READ).  A key that opens nothing is a 403 page.
 */
bool web_require_job_reader(struct web_session *out, struct http_response *res,
			    struct http_request *req, bool page);

/* Sets ctx's "key_query" to "?key=K" when the page was opened with a key,
 * so that the page's own links keep it. */
void web_key_query(json_t *ctx, struct http_request *req);

/* web_outcome.c: what happened to a tested commit, in words for the page,
 * from the "outcome" of its entry in the job JSON; null when none was
 * reported.  A new reference. */
json_t *web_outcome_label(json_t *outcome);

/* web_job_plots.c: what the job page's plots are drawn from. */
struct web_plot_request {
	long long job_id;
	const char *metric;	 /* the metric asked for (?metric=), or NULL */
	const char *web_url;	 /* the repository's commit link template */
	const char *key_query;	 /* "?key=..." of a capability link, or NULL */
	long range_lo, range_hi; /* the open range to shade, or -1 */
};

/*
 * Adds to `ctx` the plots of job JSON `job` ("plot_range", "plot_pair":
 * SVG text) of the metric asked for when its runs reported it, else of
 * the KPI; "metrics" to choose from, "metric" (the one drawn),
 * "metric_unknown" (a name asked for that no run reported) and
 * "live_query" (the query that keeps key and metric).
 */
void web_job_add_plots(json_t *ctx, PGconn *conn, json_t *job,
		       const struct web_plot_request *req);

/* Every run of a tested commit of the job JSON, search and confirmation
 * runs together: those the report and the change estimate count.  A new
 * reference (an empty array for NULL). */
json_t *web_job_all_runs(json_t *commit);

/* The index of the tested commit `sha` in `commits`, or -1. */
long web_job_find_commit(json_t *commits, const char *sha);

/* The repository's commit link for `sha`, when its template is http(s);
 * null otherwise.  A new reference. */
json_t *web_commit_link(const char *web_url, const char *sha);

/* web_job_page.c */
void web_job_page(struct http_response *res, struct http_request *req);
void web_job_live(struct http_response *res, struct http_request *req);
void web_commit_log(struct http_response *res, struct http_request *req);

/* web_admin.c */
void web_admin_repos(struct http_response *res, struct http_request *req);
void web_admin_repos_create(struct http_response *res,
			    struct http_request *req);
void web_admin_testcases(struct http_response *res, struct http_request *req);
void web_admin_testcases_create(struct http_response *res,
				struct http_request *req);
void web_admin_tokens(struct http_response *res, struct http_request *req);
void web_admin_tokens_create(struct http_response *res,
			     struct http_request *req);
/* GET /admin/tokens/{id}/revoke: the question before revoking. */
void web_admin_tokens_revoke_page(struct http_response *res,
				  struct http_request *req);
void web_admin_tokens_revoke(struct http_response *res,
			     struct http_request *req);
void web_admin_workers(struct http_response *res, struct http_request *req);

/* web_admin_edit.c: the testcase form, edit and delete pages. */

/* The testcase form's fields and labels. */
extern const struct web_admin_field web_admin_testcase_fields[];

/*
 * The testcase form `form` as it is shown again: its trimmed strings,
 * "monitor_options" (each monitor the API takes, with "checked"),
 * "better_lower" (the select's state) and "notify_author" (a boolean).
 * A new object.
 */
json_t *web_admin_testcase_values(json_t *form);

/*
 * The body of POST /api/v1/testcases for the form's `values` (from
 * web_admin_testcase_values): numbers typed become numbers (empty ones
 * null, the default), params from key=value lines, monitors from the
 * checkboxes, notify split at commas and white space.  A params line
 * that is no key=value is added to `errors` and params left out.  A new
 * object.
 */
json_t *web_admin_testcase_body(json_t *values, struct field_errors *errors);

void web_admin_repo_edit(struct http_response *res, struct http_request *req);
void web_admin_repo_save(struct http_response *res, struct http_request *req);
void web_admin_repo_delete_page(struct http_response *res,
				struct http_request *req);
void web_admin_repo_delete(struct http_response *res,
			   struct http_request *req);
void web_admin_testcase_edit(struct http_response *res,
			     struct http_request *req);
void web_admin_testcase_save(struct http_response *res,
			     struct http_request *req);
void web_admin_testcase_delete_page(struct http_response *res,
				    struct http_request *req);
void web_admin_testcase_delete(struct http_response *res,
			       struct http_request *req);

#endif
