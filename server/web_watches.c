/*
 * The web pages of watches (issue 12): the list, one page per watch (its
 * heads, its jobs with their notes) and one per watch and testcase that
 * plots the KPI along the branch's history.  Thin adapters over
 * watches.h and store/store_watches.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "histplot.h"
#include "id.h"
#include "log.h"
#include "server.h"
#include "watcher.h"
#include "watches.h"
#include "web.h"

#define WEB_WATCHES_HEADS_SHOWN 50

static const struct web_admin_field watch_fields[] = {
    {"repo", "Repository"},
    {"branch", "Branch or glob"},
    {"testcases", "Testcases"},
    {"interval_s", "Poll every, s"},
    {"regressions_only", "Regressions only"},
    {NULL, NULL},
};

/*
 * The list of watches with the create form (admins): `values` (may be
 * NULL) fill the form, `found` (may be NULL) the errors next to the
 * fields.  An error of the whole request shows the error page instead.
 */
static void watches_page(struct http_response *res,
			 const struct web_session *session, unsigned status,
			 json_t *values, const struct field_errors *found)
{
	struct store_watch *watches = NULL;
	PGconn *conn = db_conn();
	const char *general = NULL;
	json_t *items, *errors = NULL, *ctx;
	size_t count = 0, i;

	if (found != NULL && found->count > 0 &&
	    found->items[0].status >= 500) {
		web_error_page(res, found->items[0].status, session,
			       found->items[0].message);
		return;
	}
	if (conn == NULL || store_watches_list(&watches, &count, conn) < 0) {
		web_db_failed(res, session);
		return;
	}
	items = json_array();
	for (i = 0; i < count; i++)
		json_array_append_new(items, watches_json(&watches[i]));
	store_watches_free(watches, count);
	if (found != NULL)
		web_admin_form_errors(&errors, &general, found, watch_fields);
	/* Borrowed values and errors, or a new empty object given away. */
	ctx = json_pack(
	    "{s:s,s:o,s:o,s:o,s:s?,s:s}", "title", "Watches", "items", items,
	    "values", values != NULL ? json_incref(values) : json_object(),
	    "errors", errors != NULL ? json_incref(errors) : json_object(),
	    "general_error", general, "csrf", session->csrf);
	web_render(res, status, "watches", ctx, session, "watches");
	json_decref(errors);
}

static void web_watches_list(struct http_response *res,
			     struct http_request *req)
{
	struct web_session session;
	json_t *values;

	if (!web_require(&session, res, req, ROLE_READ, true))
		return;
	values = json_pack("{s:s}", "interval_s", "300");
	watches_page(res, &session, 200, values, NULL);
	json_decref(values);
}

/*
 * The form's strings as POST /api/v1/watches takes them: testcases split
 * at commas and spaces, a whole number of seconds as a number (other
 * text stays a string, which the API refuses in its own words), the
 * checkbox as a boolean; empty optional fields left out.  New object.
 */
static json_t *watch_body(json_t *values)
{
	const char *text =
	    json_string_value(json_object_get(values, "testcases"));
	json_t *body =
	    json_pack("{s:O,s:O}", "repo", json_object_get(values, "repo"),
		      "branch", json_object_get(values, "branch"));
	json_t *names = json_array();
	char *end;
	size_t n;

	while (text != NULL && *text != '\0') {
		n = strcspn(text, ", \t\r\n");
		if (n > 0)
			json_array_append_new(names, json_stringn(text, n));
		text += n;
		text += strspn(text, ", \t\r\n");
	}
	json_object_set_new(body, "testcases", names);
	text = json_string_value(json_object_get(values, "interval_s"));
	if (text != NULL && text[0] != '\0') {
		long long v = strtoll(text, &end, 10);

		json_object_set_new(body, "interval_s",
				    *end == '\0' ? json_integer(v)
						 : json_string(text));
	}
	text = json_string_value(json_object_get(values, "regressions_only"));
	json_object_set_new(body, "regressions_only",
			    json_boolean(text != NULL && text[0] != '\0'));
	return body;
}

static void web_watches_create(struct http_response *res,
			       struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	char location[64];
	long long id = 0;
	json_t *form, *values, *body;
	PGconn *conn;
	int rc;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	values = web_admin_form_values(form, watch_fields);
	body = watch_body(values);
	fields_init(&errors);
	conn = db_conn();
	rc = conn != NULL
		 ? watches_create(&errors, &id, conn, body, session.token_id)
		 : -1;
	if (rc < 0 && fields_ok(&errors))
		fields_db_failed(&errors);
	if (rc == 0) {
		snprintf(location, sizeof(location), "/watches/%lld", id);
		web_redirect(res, location);
	} else {
		watches_page(res, &session, errors.items[0].status, values,
			     &errors);
	}
	json_decref(body);
	json_decref(values);
	json_decref(form);
}

/* Loads watch path parameter 0; false after answering. */
static bool load_watch(struct http_response *res, struct http_request *req,
		       const struct web_session *session,
		       struct store_watch *watch)
{
	PGconn *conn = db_conn();
	long long id;
	int rc;

	if (id_parse(&id, req->params[0]) < 0) {
		web_error_page(res, 404, session, "There is no such watch.");
		return false;
	}
	rc = conn != NULL ? store_watches_get(watch, conn, id) : -1;
	if (rc < 0)
		web_db_failed(res, session);
	else if (rc > 0)
		web_error_page(res, 404, session, "There is no such watch.");
	return rc == 0;
}

static json_t *jobs_json(const struct store_watch_jobrow *jobs, size_t count)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; i < count; i++) {
		const struct store_watch_jobrow *j = &jobs[i];

		json_array_append_new(
		    list, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "id",
				    (json_int_t)j->id, "role", j->role,
				    "state", j->state, "verdict", j->verdict,
				    "culprit", j->culprit, "testcase",
				    j->testcase, "branch", j->branch, "notes",
				    json_loads(j->notes, 0, NULL)));
	}
	return list;
}

static void web_watch_page(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct store_watch watch = {0};
	struct store_head *heads = NULL;
	struct store_watch_jobrow *jobs = NULL;
	size_t head_count = 0, job_count = 0, i;
	PGconn *conn = db_conn();
	json_t *ctx, *list;

	if (!web_require(&session, res, req, ROLE_READ, true) ||
	    !load_watch(res, req, &session, &watch))
		return;
	if (store_watches_heads(&heads, &head_count, conn, watch.id, 0,
				WEB_WATCHES_HEADS_SHOWN) < 0 ||
	    store_watches_jobs(&jobs, &job_count, conn, watch.id) < 0) {
		web_db_failed(res, &session);
		goto out;
	}
	list = json_array();
	for (i = head_count; i-- > 0;) {
		json_t *h = watches_head_json(&heads[i]);

		json_object_set_new(h, "short",
				    json_stringn(heads[i].sha, 12));
		json_array_append_new(list, h);
	}
	ctx = json_pack("{s:s,s:o,s:o,s:o}", "title", "Watch", "watch",
			watches_json(&watch), "heads", list, "jobs",
			jobs_json(jobs, job_count));
	web_render(res, 200, "watch", ctx, &session, "watches");
out:
	store_heads_free(heads, head_count);
	store_watch_jobrows_free(jobs, job_count);
	store_watch_clear(&watch);
}

/* The commit link of `sha` from the repository's template, or NULL. */
static char *commit_url(const char *web_url, const char *sha)
{
	const char *at = web_url != NULL ? strstr(web_url, "{sha}") : NULL;
	char *out;

	if (at == NULL || asprintf(&out, "%.*s%s%s", (int)(at - web_url),
				   web_url, sha, at + 5) < 0)
		return NULL;
	return out;
}

/* The plot points of the measured heads, with their malloc'd texts in
 * texts[5 * i ..]. */
static struct histplot_point *plot_points(const struct store_head *heads,
					  size_t count, const char *web_url,
					  char **texts)
{
	struct histplot_point *points = calloc(count + 1, sizeof(*points));
	size_t i;

	if (points == NULL)
		return NULL;
	for (i = 0; i < count; i++) {
		const struct store_head *h = &heads[i];
		struct histplot_point *q = &points[i];
		char **t = &texts[5 * i];

		if (asprintf(&t[0], "%.8s", h->sha) < 0)
			t[0] = NULL;
		if (asprintf(&t[1], "%.12s %s: %zu runs, median %g, %s",
			     h->sha, h->subject, h->run_count, h->median,
			     h->outcome[0] ? h->outcome : h->state) < 0)
			t[1] = NULL;
		if (h->job_id <= 0 ||
		    asprintf(&t[2], "/jobs/%lld", h->job_id) < 0)
			t[2] = NULL;
		t[3] = commit_url(web_url, h->sha);
		q->label = t[0];
		q->title = t[1];
		q->job_url = t[2];
		q->commit_url = t[3];
		q->median = h->median;
		q->q1 = h->q1;
		q->q3 = h->q3;
		q->min = h->min;
		q->max = h->max;
		if (strcmp(h->job_role, "bisect") == 0 && h->culprit[0] &&
		    asprintf(&t[4], "culprit %.10s", h->culprit) >= 0) {
			q->culprit = t[4];
			q->regression = strcmp(h->verdict, "regression") == 0;
		}
	}
	return points;
}

/* The testcase path parameter 1 among the watch's: its id, or 0. */
static long long watch_testcase(const struct store_watch *watch,
				const char *name)
{
	size_t i;

	for (i = 0; i < watch->testcase_count; i++)
		if (strcmp(watch->testcase_names[i], name) == 0)
			return watch->testcase_ids[i];
	return 0;
}

/* Adds the plot of `heads` as "plot" (SVG text) to `ctx`. */
static void add_plot(json_t *ctx, const struct store_watch *watch,
		     const char *testcase, const struct store_head *heads,
		     size_t count)
{
	char **texts = calloc(5 * count + 1, sizeof(*texts));
	struct histplot_point *points;
	struct histplot plot = {0};
	char title[512], *svg = NULL;
	size_t i;

	if (texts == NULL)
		return;
	points = plot_points(heads, count, watch->web_url, texts);
	snprintf(title, sizeof(title),
		 "%s along the history of %s %s: median and spread of the "
		 "runs of each measured head",
		 testcase, watch->repo, watch->branch);
	plot.points = points;
	plot.count = count;
	plot.kpi = testcase;
	plot.title = title;
	if (points != NULL && histplot_render(&svg, &plot) == 0)
		json_object_set_new(ctx, "plot", json_string(svg));
	free(svg);
	for (i = 0; i < 5 * count; i++)
		free(texts[i]);
	free(texts);
	free(points);
}

static void web_watch_history(struct http_response *res,
			      struct http_request *req)
{
	struct web_session session;
	struct store_watch watch = {0};
	struct store_head *heads = NULL;
	size_t count = 0, i;
	long long testcase_id;
	PGconn *conn = db_conn();
	json_t *ctx, *list;

	if (!web_require(&session, res, req, ROLE_READ, true) ||
	    !load_watch(res, req, &session, &watch))
		return;
	testcase_id = watch_testcase(&watch, req->params[1]);
	if (testcase_id == 0) {
		web_error_page(res, 404, &session,
			       "The watch does not run that testcase.");
		goto out;
	}
	if (store_watches_heads(&heads, &count, conn, watch.id, testcase_id,
				0) < 0) {
		web_db_failed(res, &session);
		goto out;
	}
	list = json_array();
	for (i = count; i-- > 0;) {
		json_t *h = watches_head_json(&heads[i]);

		json_object_set_new(h, "short",
				    json_stringn(heads[i].sha, 12));
		if (heads[i].culprit[0] &&
		    strcmp(heads[i].job_role, "bisect") == 0)
			json_object_set_new(h, "culprit",
					    json_string(heads[i].culprit));
		json_array_append_new(list, h);
	}
	ctx = json_pack("{s:s,s:o,s:s,s:o}", "title", "Watch history", "watch",
			watches_json(&watch), "testcase", req->params[1],
			"heads", list);
	add_plot(ctx, &watch, req->params[1], heads, count);
	web_render(res, 200, "watch_history", ctx, &session, "watches");
out:
	store_heads_free(heads, count);
	store_watch_clear(&watch);
}

/* Pauses (`paused`) or resumes the watch, as the API does, and shows
 * its page again. */
static void watch_set_paused(struct http_response *res,
			     struct http_request *req, bool paused)
{
	struct web_session session;
	struct store_watch watch = {0};
	char location[64];

	if (!web_require_post(&session, NULL, res, req, ROLE_ADMIN) ||
	    !load_watch(res, req, &session, &watch))
		return;
	if (store_watches_set_paused(db_conn(), watch.id, paused) < 0) {
		web_db_failed(res, &session);
	} else {
		log_info("watch %lld: %s from the web", watch.id,
			 paused ? "paused" : "resumed");
		if (!paused)
			watcher_wake();
		snprintf(location, sizeof(location), "/watches/%lld",
			 watch.id);
		web_redirect(res, location);
	}
	store_watch_clear(&watch);
}

static void web_watch_pause(struct http_response *res,
			    struct http_request *req)
{
	watch_set_paused(res, req, true);
}

static void web_watch_resume(struct http_response *res,
			     struct http_request *req)
{
	watch_set_paused(res, req, false);
}

/* Deletes the watch when the form's "confirm" box is ticked; its jobs
 * stay.  Without the tick nothing changes. */
static void web_watch_delete(struct http_response *res,
			     struct http_request *req)
{
	struct web_session session;
	struct store_watch watch = {0};
	json_t *form;

	if (!web_require_post(&session, &form, res, req, ROLE_ADMIN))
		return;
	if (!load_watch(res, req, &session, &watch)) {
		json_decref(form);
		return;
	}
	if (json_object_get(form, "confirm") == NULL) {
		web_error_page(res, 400, &session,
			       "The watch was not deleted: tick \u201cYes, "
			       "delete this watch\u201d to delete it.");
	} else if (store_watches_delete(db_conn(), watch.id) < 0) {
		web_db_failed(res, &session);
	} else {
		log_info("watch %lld: deleted from the web", watch.id);
		web_redirect(res, "/watches");
	}
	store_watch_clear(&watch);
	json_decref(form);
}

const struct http_route web_watches_routes[] = {
    {"GET", "/watches", ROLE_NONE, web_watches_list},
    {"GET", "/watches/{}", ROLE_NONE, web_watch_page},
    {"GET", "/watches/{}/testcases/{}", ROLE_NONE, web_watch_history},
    {"POST", "/watches", ROLE_NONE, web_watches_create},
    {"POST", "/watches/{}/pause", ROLE_NONE, web_watch_pause},
    {"POST", "/watches/{}/resume", ROLE_NONE, web_watch_resume},
    {"POST", "/watches/{}/delete", ROLE_NONE, web_watch_delete},
    {NULL, NULL, ROLE_NONE, NULL},
};
