/*
 * The jobs of the web UI beside a job's own page (web_job_page.c) and the
 * submit form (web_job_form.c): the dashboard, the report, the downloads,
 * cancel and re-run, each a thin adapter over the jobs service.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "id.h"
#include "jobs.h"
#include "listcache.h"
#include "repos.h"
#include "secret.h"
#include "server.h"
#include "strbuf.h"
#include "testcases.h"
#include "web.h"

#define WEB_PAGE_SIZE 25

static const char *const job_states[] = {
    "resolving", "queued", "running", "done", "failed", "cancelled", NULL};

/* The names of the live repositories or testcases (listcache_names). */
static json_t *names_load(bool testcases)
{
	struct field_errors errors;
	json_t *names, *items, *item;
	size_t i;

	fields_init(&errors);
	items = testcases ? testcases_list_json(&errors)
			  : repos_list_json(&errors);
	if (items == NULL)
		return NULL;
	names = json_array();
	json_array_foreach(items, i, item)
	    json_array_append(names, json_object_get(item, "name"));
	json_decref(items);
	return names;
}

json_t *web_jobs_names(bool testcases, const char *selected)
{
	json_t *options = json_array(), *items, *item;
	size_t i;

	items = listcache_names(testcases, names_load);
	json_array_foreach(items, i, item)
	{
		const char *name = json_string_value(item);

		json_array_append_new(
		    options, json_pack("{s:s,s:b}", "name", name, "selected",
				       selected != NULL &&
					   strcmp(selected, name) == 0));
	}
	json_decref(items);
	return options;
}

static void format_age(char *buf, size_t size, long long seconds)
{
	if (seconds < 60)
		snprintf(buf, size, "%lld s", seconds < 0 ? 0 : seconds);
	else if (seconds < 3600)
		snprintf(buf, size, "%lld min", seconds / 60);
	else if (seconds < 2 * 86400)
		snprintf(buf, size, "%lld h", seconds / 3600);
	else
		snprintf(buf, size, "%lld d", seconds / 86400);
}

/* "/?repo=..&testcase=..&state=..&page=N" with the values URL-encoded, as
 * a JSON string. */
static json_t *dashboard_href(const char *repo, const char *testcase,
			      const char *state, long long page)
{
	struct strbuf b = STRBUF_INIT;
	const char *sep = "?";
	json_t *href;
	char *out;

	strbuf_append(&b, "/");
	if (repo != NULL) {
		strbuf_append(&b, "?repo=");
		strbuf_url(&b, repo, strlen(repo));
		sep = "&";
	}
	if (testcase != NULL) {
		strbuf_printf(&b, "%stestcase=", sep);
		strbuf_url(&b, testcase, strlen(testcase));
		sep = "&";
	}
	if (state != NULL) {
		strbuf_printf(&b, "%sstate=%s", sep, state);
		sep = "&";
	}
	strbuf_printf(&b, "%spage=%lld", sep, page);
	if (strbuf_finish(&out, NULL, &b) < 0)
		return json_string("/");
	href = json_string(out);
	free(out);
	return href;
}

/* A query argument, or NULL when absent or empty. */
static const char *query_or_null(struct http_request *req, const char *name)
{
	const char *v = http_query(req, name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* One job of the dashboard. */
static json_t *dashboard_row(const struct store_jobs_row *j)
{
	char short_sha[13] = "", change[32], age[32];

	if (j->culprit != NULL)
		snprintf(short_sha, sizeof(short_sha), "%.12s", j->culprit);
	format_age(age, sizeof(age), j->age_seconds);
	snprintf(change, sizeof(change), "%+.2f%%", j->change_pct);
	return json_pack("{s:I,s:s,s:s?,s:s,s:s,s:s?,s:s?,s:s?,s:s}", "id",
			 (json_int_t)j->id, "state", j->state, "verdict",
			 j->verdict, "repo", j->repo, "testcase", j->testcase,
			 "culprit_short",
			 j->culprit != NULL ? short_sha : NULL,
			 "culprit_subject", j->culprit_subject, "change",
			 isnan(j->change_pct) ? NULL : change, "age", age);
}

/*
 * A dashboard is kept written (listcache.h) for each role, with marks
 * where each view puts its own session's name and CSRF token: random,
 * so that no job's text can hold them.  Empty when there is no
 * randomness: then nothing is kept.
 */
static pthread_once_t marks_once = PTHREAD_ONCE_INIT;
static char mark_name[40], mark_csrf[40];

static void marks_init(void)
{
	char hex[33];

	if (secret_hex(hex, 16) < 0)
		return;
	snprintf(mark_name, sizeof(mark_name), "sbname%s", hex);
	snprintf(mark_csrf, sizeof(mark_csrf), "sbcsrf%s", hex);
}

/* What a dashboard shows besides its page of jobs. */
struct dashboard_view {
	long long page;
	const struct web_session *session;
};

/* The dashboard of `list`, the page of `filter` (listcache_render). */
static char *dashboard_page(const struct store_jobs_page *list,
			    const struct store_jobs_filter *filter,
			    const void *arg)
{
	const struct dashboard_view *view = arg;
	long long page = view->page, pages;
	json_t *jobs = json_array(), *states, *ctx;
	char *text;
	size_t i;

	for (i = 0; i < list->count; i++)
		json_array_append_new(jobs, dashboard_row(&list->rows[i]));
	pages = list->total == 0
		    ? 1
		    : (list->total + WEB_PAGE_SIZE - 1) / WEB_PAGE_SIZE;
	states = json_array();
	for (i = 0; job_states[i] != NULL; i++)
		json_array_append_new(
		    states,
		    json_pack("{s:s,s:b}", "name", job_states[i], "selected",
			      filter->state == job_states[i]));
	ctx = json_pack("{s:s,s:b,s:s,s:o,s:o,s:o,s:o,s:I,s:I,s:I}", "title",
			"Jobs", "has_jobs", json_array_size(jobs) > 0,
			"jobs_word", list->total == 1 ? "job" : "jobs", "jobs",
			jobs, "repos", web_jobs_names(false, filter->repo),
			"testcases", web_jobs_names(true, filter->testcase),
			"states", states, "total", (json_int_t)list->total,
			"page", (json_int_t)page, "pages", (json_int_t)pages);
	/* Past the end: say so and link to the first page (issue 15). */
	if (ctx != NULL && page > pages) {
		json_object_set_new(ctx, "past_end", json_true());
		json_object_set_new(ctx, "first_href",
				    dashboard_href(filter->repo,
						   filter->testcase,
						   filter->state, 1));
	} else if (ctx != NULL && page > 1)
		json_object_set_new(ctx, "prev_href",
				    dashboard_href(filter->repo,
						   filter->testcase,
						   filter->state, page - 1));
	if (ctx != NULL && page < pages)
		json_object_set_new(ctx, "next_href",
				    dashboard_href(filter->repo,
						   filter->testcase,
						   filter->state, page + 1));
	if (web_render_text(&text, "dashboard", ctx, view->session, "jobs") <
	    0)
		return NULL;
	return text;
}

/* `kept` with `session`'s name and CSRF token in place of the marks
 * (malloc'd; NULL when out of memory). */
static char *unmark(const char *kept, const struct web_session *session)
{
	struct strbuf b = STRBUF_INIT;
	const char *p = kept, *name, *csrf, *next;
	char *out;

	for (;;) {
		name = strstr(p, mark_name);
		csrf = strstr(p, mark_csrf);
		next = name == NULL   ? csrf
		       : csrf == NULL ? name
		       : name < csrf  ? name
				      : csrf;
		if (next == NULL)
			break;
		strbuf_appendn(&b, p, (size_t)(next - p));
		if (next == name)
			strbuf_html(&b, session->name, strlen(session->name));
		else
			strbuf_html(&b, session->csrf, strlen(session->csrf));
		p = next + strlen(mark_name);
	}
	strbuf_append(&b, p);
	if (strbuf_finish(&out, NULL, &b) < 0)
		return NULL;
	return out;
}

void web_dashboard(struct http_response *res, struct http_request *req)
{
	struct store_jobs_filter filter = {.limit = WEB_PAGE_SIZE};
	struct web_session session, marked;
	struct dashboard_view view;
	struct listcache_text list;
	const char *page_text;
	long long page = 1;
	size_t i;

	if (!web_require(&session, res, req, ROLE_READ, true))
		return;
	filter.repo = query_or_null(req, "repo");
	filter.testcase = query_or_null(req, "testcase");
	for (i = 0; job_states[i] != NULL; i++) {
		const char *s = query_or_null(req, "state");

		if (s != NULL && strcmp(s, job_states[i]) == 0)
			filter.state = job_states[i];
	}
	page_text = query_or_null(req, "page");
	if (page_text != NULL &&
	    (id_parse(&page, page_text) < 0 || page > 1000000))
		page = 1;
	filter.offset = (page - 1) * WEB_PAGE_SIZE;
	pthread_once(&marks_once, marks_init);
	marked = session;
	snprintf(marked.name, sizeof(marked.name), "%s", mark_name);
	snprintf(marked.csrf, sizeof(marked.csrf), "%s", mark_csrf);
	view.page = page;
	view.session = mark_name[0] != '\0' ? &marked : &session;
	/* It shows ages: kept for the second they hold. */
	if (listcache_text(&list, db_conn(), &filter,
			   mark_name[0] != '\0'
			       ? LISTCACHE_DASHBOARD +
				     (session.role - ROLE_READ)
			       : LISTCACHE_VIEWS,
			   false, dashboard_page, &view) < 0) {
		web_db_failed(res, &session);
		return;
	}
	web_page(res, 200,
		 mark_name[0] != '\0' ? unmark(list.text, &session)
				      : strdup(list.text));
	free(list.text);
}

/* The job named by the path into *job_id, or false after answering with
 * an error page as the API words it ("no job 'x'"). */
static bool path_job(long long *job_id, struct http_response *res,
		     struct http_request *req,
		     const struct web_session *session)
{
	if (id_parse(job_id, req->params[0]) == 0)
		return true;
	web_error_page(res, 404, session, "There is no such job.");
	return false;
}

/* Answers the outcome `rc` of a jobs service call that did not succeed
 * with an error page. */
void web_jobs_failed(struct http_response *res, int rc,
		     const struct field_errors *errors,
		     const struct web_session *session, const char *fallback)
{
	if (rc == JOBS_DB_FAILED || errors->count == 0)
		web_db_failed(res, session);
	else
		web_error_page(res, errors->items[0].status, session,
			       errors->items[0].message[0] != '\0'
				   ? errors->items[0].message
				   : fallback);
}

void web_job_report(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	char *message = NULL, text[512];
	long long job_id;
	int rc;

	if (!web_require_job_reader(&session, res, req, true))
		return;
	if (id_parse(&job_id, req->params[0]) < 0) {
		snprintf(text, sizeof(text), "no job '%s'", req->params[0]);
		web_error_page(res, 404, &session, text);
		return;
	}
	fields_init(&errors);
	rc = jobs_report(&message, db_conn(), job_id, &errors);
	if (rc == 0)
		http_text(res, 200, "text/plain; charset=utf-8", message);
	else
		web_jobs_failed(res, rc, &errors, &session,
				"There is no report.");
	free(message);
}

/* Answers a download with the REST handler `handler`. */
static void download(struct http_response *res, struct http_request *req,
		     http_handler handler, const char *extension)
{
	struct web_session session;
	char disposition[80];
	long long job_id;

	if (!web_require_job_reader(&session, res, req, true) ||
	    !path_job(&job_id, res, req, &session))
		return;
	handler(res, req);
	if (res->status == 200 && res->extra_header_count == 0) {
		snprintf(disposition, sizeof(disposition),
			 "attachment; filename=\"job-%lld-runs.%s\"", job_id,
			 extension);
		http_add_header(res, "Content-Disposition", disposition);
	}
}

void web_job_runs_csv(struct http_response *res, struct http_request *req)
{
	download(res, req, api_jobs_runs_csv, "csv");
}

void web_job_runs_json(struct http_response *res, struct http_request *req)
{
	download(res, req, api_jobs_runs, "json");
}

void web_job_cancel_page(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	char question[64], action[64], back[64];
	long long job_id;
	bool failed = false;
	json_t *job;

	if (!web_require(&session, res, req, ROLE_SUBMIT, true) ||
	    !path_job(&job_id, res, req, &session))
		return;
	job = jobs_json(db_conn(), job_id, &failed);
	if (job == NULL) {
		if (failed)
			web_db_failed(res, &session);
		else
			web_error_page(res, 404, &session,
				       "There is no such job.");
		return;
	}
	json_decref(job);
	snprintf(question, sizeof(question), "Cancel job %lld?", job_id);
	snprintf(action, sizeof(action), "/jobs/%lld/cancel", job_id);
	snprintf(back, sizeof(back), "/jobs/%lld", job_id);
	web_confirm_page(
	    res, &session, "jobs",
	    &(struct web_confirm){
		question,
		"Its queued runs are dropped and no report is sent.  The "
		"runs made so far stay on its page; a cancelled job can be "
		"run again from there.",
		action, "Cancel the job", back, "Keep it running"});
}

void web_job_cancel(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	char location[64];
	json_t *job = NULL;
	long long job_id;
	int rc;

	if (!web_require_post(&session, NULL, res, req, ROLE_SUBMIT) ||
	    !path_job(&job_id, res, req, &session))
		return;
	fields_init(&errors);
	rc = jobs_cancel(&job, db_conn(), job_id, &errors);
	json_decref(job);
	/* 409: it finished meanwhile; the job page shows how. */
	if (rc == 0 || (rc == JOBS_REFUSED && errors.items[0].status == 409)) {
		snprintf(location, sizeof(location), "/jobs/%lld", job_id);
		web_redirect(res, location);
	} else {
		web_jobs_failed(res, rc, &errors, &session, "Cannot cancel.");
	}
}

void web_job_rerun(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	char location[64], text[512];
	long long job_id, new_id;
	int rc;

	if (!web_require_post(&session, NULL, res, req, ROLE_SUBMIT))
		return;
	if (id_parse(&job_id, req->params[0]) < 0) {
		snprintf(text, sizeof(text), "no job '%s'", req->params[0]);
		web_error_page(res, 404, &session, text);
		return;
	}
	fields_init(&errors);
	rc = jobs_rerun(&new_id, db_conn(), job_id, req->token_id, &errors);
	if (rc == 0) {
		snprintf(location, sizeof(location), "/jobs/%lld", new_id);
		web_redirect(res, location);
	} else {
		web_jobs_failed(res, rc, &errors, &session, "Cannot re-run.");
	}
}
