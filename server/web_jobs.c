/*
 * The job pages of the web UI: the dashboard, the submit form, the job page
 * with its live part, plots and report, the downloads, cancel and re-run.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlog.h"
#include "db.h"
#include "id.h"
#include "jobs.h"
#include "log.h"
#include "server.h"
#include "strbuf.h"
#include "svgplot.h"
#include "web.h"

#define WEB_PAGE_SIZE 25
#define WEB_RUNS_MAX 10000

static const char *const job_states[] = {"queued", "running",	"done",
					 "failed", "cancelled", NULL};

/* An array of {"name", "selected"} from the first column of `sql`. */
static json_t *name_options(const char *sql, const char *selected)
{
	json_t *list = json_array();
	PGresult *r = db_exec(db_conn(), sql, 0, NULL);
	int row;

	if (r == NULL)
		return list;
	for (row = 0; row < PQntuples(r); row++) {
		const char *name = db_text(r, row, 0);

		json_array_append_new(
		    list, json_pack("{s:s,s:b}", "name", name, "selected",
				    selected != NULL &&
					strcmp(selected, name) == 0));
	}
	PQclear(r);
	return list;
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

/* "/?repo=..&testcase=..&state=..&page=N" with the values URL-encoded. */
static char *dashboard_href(const char *repo, const char *testcase,
			    const char *state, long long page)
{
	struct strbuf b = STRBUF_INIT;
	const char *sep = "?";
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
		return strdup("/");
	return out;
}

/* A JSON string of malloc'd `text`, which it frees. */
static json_t *string_take(char *text)
{
	json_t *v = text != NULL ? json_string(text) : json_null();

	free(text);
	return v;
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

void web_dashboard(struct http_response *res, struct http_request *req)
{
	struct store_jobs_filter filter = {.limit = WEB_PAGE_SIZE};
	struct web_session session;
	struct store_jobs_page list;
	const char *page_text;
	long long page = 1, pages;
	json_t *jobs, *states, *ctx;
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
	if (jobs_list(&list, db_conn(), &filter) < 0) {
		web_db_failed(res, &session);
		return;
	}
	jobs = json_array();
	for (i = 0; i < list.count; i++)
		json_array_append_new(jobs, dashboard_row(&list.rows[i]));
	pages = list.total == 0
		    ? 1
		    : (list.total + WEB_PAGE_SIZE - 1) / WEB_PAGE_SIZE;
	states = json_array();
	for (i = 0; job_states[i] != NULL; i++)
		json_array_append_new(
		    states,
		    json_pack("{s:s,s:b}", "name", job_states[i], "selected",
			      filter.state == job_states[i]));
	ctx = json_pack(
	    "{s:s,s:b,s:s,s:o,s:o,s:o,s:o,s:I,s:I,s:I}", "title", "Jobs",
	    "has_jobs", json_array_size(jobs) > 0, "jobs_word",
	    list.total == 1 ? "job" : "jobs", "jobs", jobs, "repos",
	    name_options("SELECT name FROM repos ORDER BY name", filter.repo),
	    "testcases",
	    name_options("SELECT name FROM testcases ORDER BY name",
			 filter.testcase),
	    "states", states, "total", (json_int_t)list.total, "page",
	    (json_int_t)page, "pages", (json_int_t)pages);
	if (ctx != NULL && page > 1)
		json_object_set_new(
		    ctx, "prev_href",
		    string_take(dashboard_href(filter.repo, filter.testcase,
					       filter.state, page - 1)));
	if (ctx != NULL && page < pages)
		json_object_set_new(
		    ctx, "next_href",
		    string_take(dashboard_href(filter.repo, filter.testcase,
					       filter.state, page + 1)));
	store_jobs_page_clear(&list);
	web_render(res, 200, "dashboard", ctx, &session, "jobs");
}

/* The fields of the submit form, in page order. */
static const char *const form_fields[] = {
    "repo", "testcase", "good", "bad", "notify", "runs_min", "runs_max", NULL};

/*
 * Renders the submit form with `values` (the entered values) and `errors`
 * (field -> message), both borrowed.
 */
static void render_form(struct http_response *res, unsigned status,
			const struct web_session *session, json_t *values,
			json_t *errors, const char *general)
{
	const char *repo = json_string_value(json_object_get(values, "repo"));
	const char *testcase =
	    json_string_value(json_object_get(values, "testcase"));

	web_render(res, status, "job_new",
		   json_pack("{s:s,s:O,s:O,s:o,s:o,s:s?,s:s}", "title",
			     "New job", "values", values, "errors", errors,
			     "repos",
			     name_options("SELECT name FROM repos ORDER BY "
					  "name",
					  repo),
			     "testcases",
			     name_options("SELECT name FROM testcases ORDER "
					  "BY name",
					  testcase),
			     "general_error", general, "csrf", session->csrf),
		   session, "new");
}

/*
 * The job's change as every view shows it (as the CLI does): one decimal,
 * with its 95% interval when there is one.
 */
static void web_jobs_change(char *buf, size_t size, json_t *job)
{
	json_t *ci = json_object_get(job, "change_ci95");
	int n =
	    snprintf(buf, size, "%+.1f%%",
		     json_number_value(json_object_get(job, "change_pct")));

	if (n > 0 && (size_t)n < size && json_is_array(ci) &&
	    json_is_number(json_array_get(ci, 0)) &&
	    json_is_number(json_array_get(ci, 1)))
		snprintf(buf + n, size - (size_t)n,
			 " (95%% CI %+.1f%% to %+.1f%%)",
			 json_number_value(json_array_get(ci, 0)),
			 json_number_value(json_array_get(ci, 1)));
}

void web_job_new(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *values, *errors;
	size_t i;

	if (!web_require(&session, res, req, ROLE_SUBMIT, true))
		return;
	values = json_object();
	errors = json_object();
	/* Links may preselect fields: /jobs/new?repo=x&good=..&bad=.. */
	for (i = 0; form_fields[i] != NULL; i++) {
		const char *v = http_query(req, form_fields[i]);

		if (v != NULL && strlen(v) <= 1024)
			json_object_set_new(values, form_fields[i],
					    json_string(v));
	}
	render_form(res, 200, &session, values, errors, NULL);
	json_decref(values);
	json_decref(errors);
}

/* Trims spaces at both ends of the form value `key` (in place). */
static const char *form_text(json_t *form, const char *key)
{
	json_t *v = json_object_get(form, key);
	const char *text = json_string_value(v);
	size_t start = 0, end;

	if (text == NULL) {
		json_object_set_new(form, key, json_string(""));
		return "";
	}
	end = strlen(text);
	while (start < end && isspace((unsigned char)text[start]))
		start++;
	while (end > start && isspace((unsigned char)text[end - 1]))
		end--;
	if (start > 0 || end < strlen(text)) {
		json_object_set_new(form, key,
				    json_stringn(text + start, end - start));
		text = json_string_value(json_object_get(form, key));
	}
	return text;
}

/* Parses an optional runs limit; false (with the error set) if bad. */
static bool form_runs(json_t *form, json_t *errors, const char *key,
		      long long *out)
{
	const char *text = form_text(form, key);
	size_t i, n = strlen(text);

	*out = 0;
	if (n == 0)
		return true;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)text[i]))
			break;
	}
	if (i != n || n > 6 || atoll(text) < 2 || atoll(text) > WEB_RUNS_MAX) {
		json_object_set_new(
		    errors, key,
		    json_string("Give a whole number from 2 to 10000, or "
				"leave it empty for the testcase's "
				"default."));
		return false;
	}
	*out = atoll(text);
	return true;
}

/* The notify field as an array: addresses split at commas and spaces. */
static json_t *form_notify(const char *text)
{
	json_t *list = json_array();
	const char *p = text;

	while (*p != '\0') {
		size_t n;

		while (*p == ',' || *p == ';' || isspace((unsigned char)*p))
			p++;
		n = strcspn(p, ",; \t\r\n");
		if (n > 0)
			json_array_append_new(list, json_stringn(p, n));
		p += n;
	}
	return list;
}

/* The form field an API error belongs to, or NULL for none. */
static const char *error_field(json_t *answer, const char *good)
{
	const char *code = web_api_code(answer);
	const char *message = web_api_message(answer, "");
	char prefix[300];

	if (strcmp(code, "unknown_repo") == 0)
		return "repo";
	if (strcmp(code, "unknown_testcase") == 0)
		return "testcase";
	if (strcmp(code, "invalid_email") == 0)
		return "notify";
	if (strcmp(code, "invalid_range") == 0)
		return "bad";
	if (strcmp(code, "unknown_revision") == 0) {
		snprintf(prefix, sizeof(prefix), "revision '%s' ", good);
		return strncmp(message, prefix, strlen(prefix)) == 0 ? "good"
								     : "bad";
	}
	if (strstr(message, "runs_") != NULL)
		return strstr(message, "runs_max") != NULL ? "runs_max"
							   : "runs_min";
	return NULL;
}

void web_job_submit(struct http_response *res, struct http_request *req)
{
	static const char *const required[] = {"repo", "testcase", "good",
					       "bad", NULL};
	struct web_session session;
	json_t *form, *errors, *body = NULL, *reply = NULL, *values;
	unsigned status;
	long long runs_min = 0, runs_max = 0;
	const char *field;
	char location[64];
	size_t i;

	if (!web_require_post(&session, &form, res, req, ROLE_SUBMIT))
		return;
	errors = json_object();
	for (i = 0; required[i] != NULL; i++) {
		if (form_text(form, required[i])[0] == '\0')
			json_object_set_new(errors, required[i],
					    json_string("This is required."));
	}
	form_text(form, "notify");
	/* Both are checked, so both errors show at once. */
	if (form_runs(form, errors, "runs_min", &runs_min) &
		form_runs(form, errors, "runs_max", &runs_max) &&
	    runs_min > 0 && runs_max > 0 && runs_max < runs_min)
		json_object_set_new(
		    errors, "runs_max",
		    json_string("The most runs cannot be below the "
				"fewest."));
	values = json_object();
	for (i = 0; form_fields[i] != NULL; i++)
		json_object_set(values, form_fields[i],
				json_object_get(form, form_fields[i]));
	if (json_object_size(errors) > 0) {
		render_form(res, 400, &session, values, errors, NULL);
		goto out;
	}
	body = json_pack(
	    "{s:O,s:O,s:O,s:O,s:o}", "repo", json_object_get(form, "repo"),
	    "testcase", json_object_get(form, "testcase"), "good",
	    json_object_get(form, "good"), "bad", json_object_get(form, "bad"),
	    "notify", form_notify(form_text(form, "notify")));
	if (body != NULL && runs_min > 0)
		json_object_set_new(body, "runs_min", json_integer(runs_min));
	if (body != NULL && runs_max > 0)
		json_object_set_new(body, "runs_max", json_integer(runs_max));
	if (body == NULL) {
		web_error_page(res, 500, &session, "Out of memory.");
		goto out;
	}
	status = web_call_api(&reply, "POST", "/api/v1/jobs", req, body);
	if (status == 201 &&
	    json_integer_value(json_object_get(reply, "id")) > 0) {
		snprintf(location, sizeof(location), "/jobs/%lld",
			 (long long)json_integer_value(
			     json_object_get(reply, "id")));
		web_redirect(res, location);
		goto out;
	}
	field = error_field(reply,
			    json_string_value(json_object_get(form, "good")));
	if (field != NULL) {
		json_object_set_new(
		    errors, field,
		    json_string(web_api_message(reply, "refused")));
		render_form(res, status >= 400 ? status : 400, &session,
			    values, errors, NULL);
	} else {
		render_form(
		    res, status >= 400 ? status : 500, &session, values,
		    errors,
		    web_api_message(reply, "The job could not be created."));
	}
out:
	json_decref(reply);
	json_decref(body);
	json_decref(values);
	json_decref(errors);
	json_decref(form);
}

/* The repository's commit link for `sha`, when its template is http(s). */
static json_t *commit_link(const char *web_url, const char *sha)
{
	struct strbuf b = STRBUF_INIT;
	const char *at;
	char *out;

	if (web_url == NULL || sha == NULL ||
	    (strncmp(web_url, "https://", 8) != 0 &&
	     strncmp(web_url, "http://", 7) != 0) ||
	    (at = strstr(web_url, "{sha}")) == NULL)
		return json_null();
	strbuf_appendn(&b, web_url, (size_t)(at - web_url));
	strbuf_append(&b, sha);
	strbuf_append(&b, at + 5);
	if (strbuf_finish(&out, NULL, &b) < 0)
		return json_null();
	return string_take(out);
}

static json_t *short_sha(const char *sha)
{
	return sha != NULL
		   ? json_stringn(sha, strlen(sha) < 12 ? strlen(sha) : 12)
		   : json_null();
}

static enum svgplot_class plot_class(const char *name)
{
	if (name == NULL)
		return SVGPLOT_UNDECIDED;
	if (strcmp(name, "good") == 0)
		return SVGPLOT_GOOD;
	if (strcmp(name, "bad") == 0)
		return SVGPLOT_BAD;
	if (strcmp(name, "skipped") == 0)
		return SVGPLOT_SKIPPED;
	return SVGPLOT_UNDECIDED;
}

/*
 * Every run of a tested commit, search and confirmation runs together: the
 * runs the report and the change estimate count, so the plots and the
 * path count them too.  A new reference (an empty array for NULL).
 */
static json_t *all_runs(json_t *commit)
{
	json_t *out = json_array();

	json_array_extend(out, json_object_get(commit, "runs"));
	json_array_extend(out, json_object_get(commit, "confirm_runs"));
	return out;
}

/* The tested commits of a job as plot input; values point into a block
 * that *storage receives (free it). */
static struct svgplot_commit *plot_commits(json_t *commits, double **storage,
					   char (**labels)[13])
{
	size_t n = json_array_size(commits), total = 0, i, k, used = 0;
	struct svgplot_commit *out;
	json_t *c, *v;

	json_array_foreach(commits, i, c)
	{
		total += json_array_size(json_object_get(c, "runs")) +
			 json_array_size(json_object_get(c, "confirm_runs"));
	}
	out = calloc(n + 1, sizeof(*out));
	*storage = calloc(total + 1, sizeof(**storage));
	*labels = calloc(n + 1, sizeof(**labels));
	if (out == NULL || *storage == NULL || *labels == NULL) {
		free(out);
		free(*storage);
		free(*labels);
		*storage = NULL;
		*labels = NULL;
		return NULL;
	}
	json_array_foreach(commits, i, c)
	{
		json_t *runs = all_runs(c);
		const char *sha =
		    json_string_value(json_object_get(c, "commit"));

		snprintf((*labels)[i], sizeof((*labels)[i]), "%.12s",
			 sha != NULL ? sha : "");
		out[i].index =
		    (size_t)json_integer_value(json_object_get(c, "index"));
		out[i].label = (*labels)[i];
		out[i].title =
		    json_string_value(json_object_get(c, "subject"));
		out[i].values = *storage + used;
		out[i].cls = plot_class(
		    json_string_value(json_object_get(c, "classification")));
		json_array_foreach(runs, k, v)
		{
			(*storage)[used++] = json_number_value(v);
		}
		out[i].count = json_array_size(runs);
		json_decref(runs);
	}
	return out;
}

/* The index of the tested commit `sha` in `commits`, or -1. */
static long find_commit(json_t *commits, const char *sha)
{
	json_t *c;
	size_t i;

	if (sha == NULL)
		return -1;
	json_array_foreach(commits, i, c)
	{
		const char *s =
		    json_string_value(json_object_get(c, "commit"));

		if (s != NULL && strcmp(s, sha) == 0)
			return (long)i;
	}
	return -1;
}

/* Adds "plot_range" and "plot_pair" (SVG text) to `ctx`. */
static void add_plots(json_t *ctx, json_t *job, long range_lo, long range_hi)
{
	json_t *commits = json_object_get(job, "commits");
	const char *culprit =
	    json_string_value(json_object_get(job, "culprit"));
	const char *parent = json_string_value(json_object_get(job, "parent"));
	const char *kpi = json_string_value(json_object_get(job, "kpi"));
	struct svgplot_range range = {0};
	struct svgplot_commit *list;
	char(*labels)[13] = NULL, title[256];
	double *storage = NULL;
	char *svg = NULL;
	long ci, pi;

	list = plot_commits(commits, &storage, &labels);
	if (list == NULL)
		return;
	ci = find_commit(commits, culprit);
	pi = find_commit(commits, parent);
	range.candidates =
	    (size_t)json_integer_value(json_object_get(job, "candidates"));
	range.commits = list;
	range.count = json_array_size(commits);
	range.culprit = ci >= 0 ? (long)list[ci].index : -1;
	range.range_lo = range_lo;
	range.range_hi = range_hi;
	range.kpi = kpi;
	snprintf(title, sizeof(title),
		 "Runs of the %zu tested commits of job %lld along the range "
		 "of %zu commits",
		 range.count,
		 (long long)json_integer_value(json_object_get(job, "id")),
		 range.candidates);
	range.title = title;
	if (range.candidates >= 1 && svgplot_render_range(&svg, &range) == 0)
		json_object_set_new(ctx, "plot_range", string_take(svg));
	if (ci >= 0 && pi >= 0) {
		struct svgplot_pair pair = {&list[pi], &list[ci], kpi, NULL};

		snprintf(title, sizeof(title),
			 "Runs of the parent %.12s and of the culprit %.12s",
			 parent, culprit);
		pair.title = title;
		if (svgplot_render_pair(&svg, &pair) == 0)
			json_object_set_new(ctx, "plot_pair",
					    string_take(svg));
	}
	free(list);
	free(storage);
	free(labels);
}

static double median_of(json_t *runs)
{
	struct svgplot_summary s;
	size_t n = json_array_size(runs), i;
	double *values = calloc(n + 1, sizeof(*values));
	json_t *v;

	if (values == NULL)
		return NAN;
	json_array_foreach(runs, i, v)
	{
		values[i] = json_number_value(v);
	}
	if (svgplot_summarize(&s, values, n) < 0 || s.n == 0)
		s.median = NAN;
	free(values);
	return s.median;
}

/* What happened to a tested commit, in words for the page, from the
 * "outcome" of its entry in the job JSON; NULL when none was reported. */
static json_t *outcome_label(json_t *outcome)
{
	const char *status =
	    json_string_value(json_object_get(outcome, "status"));
	json_t *names = json_object_get(outcome, "metrics_seen"), *v;
	json_t *signal = json_object_get(outcome, "signal");
	struct strbuf b = STRBUF_INIT;
	char *text;
	size_t i;

	if (status == NULL)
		return json_null();
	if (strcmp(status, "build_failed") == 0) {
		strbuf_append(&b, "build failed");
	} else if (strcmp(status, "crashed") == 0) {
		if (json_integer_value(signal) > 0)
			strbuf_printf(&b, "run crashed (signal %lld)",
				      (long long)json_integer_value(signal));
		else
			strbuf_printf(
			    &b, "run crashed (exit status %lld)",
			    (long long)json_integer_value(
				json_object_get(outcome, "exit_code")));
	} else if (strcmp(status, "timed_out") == 0) {
		strbuf_append(&b, "run timed out");
	} else if (strcmp(status, "no_kpi") == 0) {
		strbuf_append(&b, "printed no KPI");
		json_array_foreach(names, i, v)
		{
			if (i == 20) {
				strbuf_printf(&b, " and %zu more",
					      json_array_size(names) - i);
				break;
			}
			strbuf_printf(&b, "%s%s",
				      i == 0 ? "; it printed " : ", ",
				      json_string_value(v));
		}
	} else {
		strbuf_append(&b, status);
	}
	if (strbuf_finish(&text, NULL, &b) < 0)
		return json_null();
	return string_take(text);
}

/* One commit on the bisection path, with what the job JSON says of it. */
static json_t *path_entry(const struct store_path_commit *pc, size_t step,
			  json_t *commits, const char *id, const char *web_url)
{
	long at = find_commit(commits, pc->sha);
	json_t *c = at >= 0 ? json_array_get(commits, (size_t)at) : NULL;
	json_t *runs = all_runs(c);
	double median = median_of(runs);
	char median_text[32] = "", log_href[128];
	json_t *entry;

	if (isfinite(median))
		snprintf(median_text, sizeof(median_text), "%.6g", median);
	snprintf(log_href, sizeof(log_href), "/jobs/%s/commits/%s/log", id,
		 pc->sha);
	entry = json_pack(
	    "{s:I,s:I,s:s,s:o,s:s,s:s,s:o,s:I,s:s,s:s}", "step",
	    (json_int_t)step, "index", (json_int_t)pc->index, "sha", pc->sha,
	    "short", short_sha(pc->sha), "subject", pc->subject, "author",
	    pc->author_name, "link", commit_link(web_url, pc->sha), "runs",
	    (json_int_t)json_array_size(runs), "median", median_text, "class",
	    c != NULL ? json_string_value(json_object_get(c, "classification"))
		      : "untested");
	json_decref(runs);
	if (entry == NULL)
		return NULL;
	json_object_set_new(entry, "outcome",
			    outcome_label(json_object_get(c, "outcome")));
	json_object_set_new(entry, "log_href", json_string(log_href));
	json_object_set_new(entry, "log_tail",
			    pc->log_tail != NULL ? json_string(pc->log_tail)
						 : json_null());
	return entry;
}

/*
 * The bisection path: the tested commits in the order they were first
 * asked for, with author, runs, median and what the engine made of them.
 */
static json_t *bisection_path(PGconn *conn, json_t *job, long long job_id,
			      const char *id, const char *web_url)
{
	json_t *path = json_array(), *entry;
	struct store_job_path list;
	size_t i;

	if (store_jobs_path(&list, conn, job_id) < 0)
		return path;
	for (i = 0; i < list.count; i++) {
		entry =
		    path_entry(&list.commits[i], i + 1,
			       json_object_get(job, "commits"), id, web_url);
		if (entry != NULL)
			json_array_append_new(path, entry);
	}
	store_job_path_clear(&list);
	return path;
}

/* The report message of a finished job, or null. */
static json_t *report_text(PGconn *conn, long long job_id)
{
	struct strbuf b = STRBUF_INIT;
	char *message = NULL, *out;
	json_t *text = json_null();
	const char *m;

	if (store_jobs_report(&message, conn, job_id) != 0 || message == NULL)
		return text;
	/* The stored message has CRLF line ends (RFC 5322). */
	for (m = message; *m != '\0'; m++) {
		if (m[0] != '\r' || m[1] != '\n')
			strbuf_appendn(&b, m, 1);
	}
	if (strbuf_finish(&out, NULL, &b) == 0)
		text = string_take(out);
	free(message);
	return text;
}

/*
 * Everything the job page and its live part show (new reference), or NULL
 * when there is no such job (or the database failed: *db_error).
 */
static json_t *job_context(PGconn *conn, long long job_id,
			   const struct web_session *session, bool *db_error)
{
	char id[24], steps[64], change[96], href[64];
	const char *state, *culprit, *range_after, *range_through;
	struct store_job_page_info info;
	const char *web_url = NULL;
	json_t *job, *ctx = NULL;
	long lo = -1, hi = -1;
	bool final;
	int rc;

	job = jobs_json(conn, job_id, db_error);
	if (job == NULL)
		return NULL;
	snprintf(id, sizeof(id), "%lld", job_id);
	state = json_string_value(json_object_get(job, "state"));
	culprit = json_string_value(json_object_get(job, "culprit"));
	range_after = json_string_value(
	    json_object_get(json_object_get(job, "range"), "after"));
	range_through = json_string_value(
	    json_object_get(json_object_get(job, "range"), "through"));
	final = strcmp(state, "queued") != 0 && strcmp(state, "running") != 0;
	rc = store_jobs_page_info(&info, conn, job_id, range_after,
				  range_through, culprit);
	if (rc != 0) {
		*db_error = rc == STORE_FAILED;
		json_decref(job);
		return NULL;
	}
	lo = info.range_lo;
	hi = info.range_hi;
	web_url = info.web_url;
	ctx = json_pack("{s:O,s:b,s:b,s:b,s:b,s:s}", "job", job, "final",
			final, "running", !final, "can_cancel",
			!final && session->role >= ROLE_SUBMIT, "can_rerun",
			final && session->role >= ROLE_SUBMIT, "csrf",
			session->csrf);
	if (ctx == NULL)
		goto out;
	snprintf(href, sizeof(href), "Job %lld", job_id);
	json_object_set_new(ctx, "title", json_string(href));
	json_object_set_new(
	    ctx, "good_short",
	    short_sha(json_string_value(json_object_get(job, "good"))));
	json_object_set_new(
	    ctx, "bad_short",
	    short_sha(json_string_value(json_object_get(job, "bad"))));
	json_object_set_new(
	    ctx, "good_link",
	    commit_link(web_url,
			json_string_value(json_object_get(job, "good"))));
	json_object_set_new(
	    ctx, "bad_link",
	    commit_link(web_url,
			json_string_value(json_object_get(job, "bad"))));
	if (culprit != NULL) {
		json_t *culprits = json_object_get(job, "culprits"), *c;
		json_t *named = json_array_get(culprits, 0);
		size_t k;

		/* the job's culprit among its changes (the regression of a
		 * range that also improved need not be the first) */
		json_array_foreach(culprits, k, c)
		{
			const char *sha =
			    json_string_value(json_object_get(c, "commit"));

			if (sha != NULL && strcmp(sha, culprit) == 0) {
				named = c;
				break;
			}
		}

		web_jobs_change(change, sizeof(change), job);
		json_object_set_new(
		    ctx, "culprit",
		    json_pack(
			"{s:s,s:o,s:o,s:s?,s:s?,s:s,s:o,s:o}", "sha", culprit,
			"short", short_sha(culprit), "link",
			commit_link(web_url, culprit), "subject",
			json_string_value(json_object_get(named, "subject")),
			"author", info.culprit_author, "change", change,
			"parent_short",
			short_sha(
			    json_string_value(json_object_get(job, "parent"))),
			"parent_link",
			commit_link(web_url, json_string_value(json_object_get(
						 job, "parent")))));
	}
	if (json_array_size(json_object_get(job, "culprits")) > 1) {
		/* Every change found, each with its own direction. */
		json_t *list = json_array(), *c;
		size_t k;

		json_array_foreach(json_object_get(job, "culprits"), k, c)
		{
			const char *sha =
			    json_string_value(json_object_get(c, "commit"));
			const char *dir =
			    json_string_value(json_object_get(c, "direction"));

			if (sha == NULL)
				continue;
			snprintf(change, sizeof(change), "%+.2f%%",
				 json_number_value(
				     json_object_get(c, "change_pct")));
			json_array_append_new(
			    list,
			    json_pack("{s:o,s:o,s:s?,s:s,s:s,s:b}", "short",
				      short_sha(sha), "link",
				      commit_link(web_url, sha), "subject",
				      json_string_value(
					  json_object_get(c, "subject")),
				      "direction", dir ? dir : "change",
				      "change", change, "confirmed",
				      json_is_true(
					  json_object_get(c, "confirmed"))));
		}
		json_object_set_new(ctx, "changes", list);
		json_object_set_new(ctx, "several_changes", json_true());
	}
	if (json_is_number(json_object_get(job, "p_value"))) {
		snprintf(change, sizeof(change), "%.3g",
			 json_number_value(json_object_get(job, "p_value")));
		json_object_set_new(ctx, "p_value", json_string(change));
	}
	if (lo >= 0 && hi > lo) {
		long remaining = hi - lo;
		long left =
		    remaining > 1 ? (long)ceil(log2((double)remaining)) : 0;

		if (final)
			snprintf(steps, sizeof(steps), "none: finished");
		else if (left == 0)
			snprintf(steps, sizeof(steps),
				 "confirming the culprit");
		else
			snprintf(steps, sizeof(steps), "about %ld", left);
		json_object_set_new(
		    ctx, "range",
		    json_pack("{s:I,s:I,s:I,s:o,s:o,s:s}", "lo",
			      (json_int_t)lo, "hi", (json_int_t)hi,
			      "remaining", (json_int_t)remaining,
			      "after_short", short_sha(range_after),
			      "through_short", short_sha(range_through),
			      "steps_left", steps));
	}
	{
		json_t *notify = json_object_get(job, "notify"), *v;
		struct strbuf b = STRBUF_INIT;
		char *text;
		size_t i;

		json_array_foreach(notify, i, v)
		{
			if (i > 0)
				strbuf_append(&b, ", ");
			if (json_is_string(v))
				strbuf_append(&b, json_string_value(v));
		}
		if (strbuf_finish(&text, NULL, &b) == 0)
			json_object_set_new(ctx, "notify", string_take(text));
	}
	json_object_set_new(ctx, "path",
			    bisection_path(conn, job, job_id, id, web_url));
	json_object_set_new(ctx, "report",
			    final ? report_text(conn, job_id) : json_null());
	add_plots(ctx, job, final ? -1 : lo, final ? -1 : hi);
out:
	store_job_page_info_clear(&info);
	json_decref(job);
	return ctx;
}

/* Loads the job named by the path for the page; false after answering. */
static json_t *load_job_context(struct http_response *res,
				struct http_request *req,
				const struct web_session *session,
				long long *job_id)
{
	PGconn *conn = db_conn();
	bool db_error = conn == NULL;
	json_t *ctx = NULL;

	if (id_parse(job_id, req->params[0]) < 0) {
		web_error_page(res, 404, session, "There is no such job.");
		return NULL;
	}
	if (conn != NULL)
		ctx = job_context(conn, *job_id, session, &db_error);
	if (ctx == NULL) {
		if (db_error)
			web_db_failed(res, session);
		else
			web_error_page(res, 404, session,
				       "There is no such job.");
	}
	return ctx;
}

void web_job_page(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	long long job_id;
	json_t *ctx;

	if (!web_require(&session, res, req, ROLE_READ, true))
		return;
	ctx = load_job_context(res, req, &session, &job_id);
	if (ctx != NULL)
		web_render(res, 200, "job", ctx, &session, NULL);
}

void web_job_live(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	long long job_id;
	char *text = NULL;
	json_t *ctx;

	if (!web_require(&session, res, req, ROLE_READ, false))
		return;
	ctx = load_job_context(res, req, &session, &job_id);
	if (ctx == NULL)
		return;
	if (web_render_fragment(&text, "job_live", ctx) < 0) {
		json_decref(ctx);
		web_error_page(res, 500, &session, "The page is broken.");
		return;
	}
	json_decref(ctx);
	free(res->body);
	res->status = 200;
	res->body = text;
	res->body_len = strlen(text);
	res->content_type = "text/html; charset=utf-8";
	web_security_headers(res);
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
static void jobs_failed(struct http_response *res, int rc,
			const struct field_errors *errors,
			const struct web_session *session,
			const char *fallback)
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

	if (!web_require(&session, res, req, ROLE_READ, true))
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
		jobs_failed(res, rc, &errors, &session, "There is no report.");
	free(message);
}

/* The build log and last run output of one commit of a job: the REST
 * answer of commitlog_get() as a page. */
void web_commit_log(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct http_response answer = {0};
	json_error_t jerr;
	json_t *reply, *ctx;
	char title[96];

	if (!web_require(&session, res, req, ROLE_READ, true))
		return;
	commitlog_get(&answer, req);
	reply = answer.body != NULL
		    ? json_loadb(answer.body, answer.body_len, 0, &jerr)
		    : NULL;
	if (answer.status != 200 || reply == NULL) {
		web_error_page(
		    res, answer.status >= 400 ? answer.status : 500, &session,
		    web_api_message(reply, "There is no such log."));
		goto out;
	}
	snprintf(title, sizeof(title), "Job %lld, commit %.12s",
		 (long long)json_integer_value(json_object_get(reply, "job")),
		 json_string_value(json_object_get(reply, "commit")));
	ctx =
	    json_pack("{s:s,s:O,s:o}", "title", title, "log", reply, "outcome",
		      outcome_label(json_object_get(reply, "outcome")));
	web_render(res, 200, "commit_log", ctx, &session, "jobs");
out:
	json_decref(reply);
	http_response_clear(&answer);
}

/* Answers a download with the REST handler `handler`. */
static void download(struct http_response *res, struct http_request *req,
		     http_handler handler, const char *extension)
{
	struct web_session session;
	char disposition[80];
	long long job_id;

	if (!web_require(&session, res, req, ROLE_READ, true) ||
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
		jobs_failed(res, rc, &errors, &session, "Cannot cancel.");
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
		jobs_failed(res, rc, &errors, &session, "Cannot re-run.");
	}
}
