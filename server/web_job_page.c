/*
 * The job page of the web UI: the job with its live part, the bisection
 * path, the plots of its runs and its report, and the log of one commit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlog.h"
#include "db.h"
#include "id.h"
#include "jobs.h"
#include "server.h"
#include "strbuf.h"
#include "svgplot.h"
#include "timeleft.h"
#include "web.h"
#include "webhooks.h"

/* A JSON string of malloc'd `text`, which it frees. */
static json_t *string_take(char *text)
{
	json_t *v = text != NULL ? json_string(text) : json_null();

	free(text);
	return v;
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

/* The repository's commit link for `sha`, when its template is http(s). */
json_t *web_commit_link(const char *web_url, const char *sha)
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

/* One commit on the bisection path, with what the job JSON says of it. */
static json_t *path_entry(const struct store_path_commit *pc, size_t step,
			  json_t *commits, const char *id, const char *web_url)
{
	long at = web_job_find_commit(commits, pc->sha);
	json_t *c = at >= 0 ? json_array_get(commits, (size_t)at) : NULL;
	json_t *runs = web_job_all_runs(c);
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
	    pc->author_name, "link", web_commit_link(web_url, pc->sha), "runs",
	    (json_int_t)json_array_size(runs), "median", median_text, "class",
	    c != NULL ? json_string_value(json_object_get(c, "classification"))
		      : "untested");
	json_decref(runs);
	if (entry == NULL)
		return NULL;
	json_object_set_new(entry, "outcome",
			    web_outcome_label(json_object_get(c, "outcome")));
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

	if (store_jobs_report(&message, conn, job_id) != 0 || message == NULL)
		return text;
	/* The stored message has CRLF line ends (RFC 5322). */
	strbuf_lf(&b, message, strlen(message));
	if (strbuf_finish(&out, NULL, &b) == 0)
		text = string_take(out);
	free(message);
	return text;
}

/* The culprit of `job` as the page shows it. */
static json_t *culprit_json(json_t *job, const char *culprit,
			    const char *web_url, const char *author)
{
	json_t *culprits = json_object_get(job, "culprits"), *c;
	json_t *named = json_array_get(culprits, 0);
	const char *parent = json_string_value(json_object_get(job, "parent"));
	char change[96];
	size_t k;

	/* the job's culprit among its changes (the regression of a range
	 * that also improved need not be the first) */
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
	return json_pack("{s:s,s:o,s:o,s:s?,s:s?,s:s,s:o,s:o}", "sha", culprit,
			 "short", short_sha(culprit), "link",
			 web_commit_link(web_url, culprit), "subject",
			 json_string_value(json_object_get(named, "subject")),
			 "author", author, "change", change, "parent_short",
			 short_sha(parent), "parent_link",
			 web_commit_link(web_url, parent));
}

/* Every change found, each with its own direction. */
static json_t *changes_json(json_t *job, const char *web_url)
{
	json_t *list = json_array(), *c;
	char change[96];
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
			 json_number_value(json_object_get(c, "change_pct")));
		json_array_append_new(
		    list,
		    json_pack("{s:o,s:o,s:s?,s:s,s:s,s:b}", "short",
			      short_sha(sha), "link",
			      web_commit_link(web_url, sha), "subject",
			      json_string_value(json_object_get(c, "subject")),
			      "direction", dir ? dir : "change", "change",
			      change, "confirmed",
			      json_is_true(json_object_get(c, "confirmed"))));
	}
	return list;
}

/* The range still searched, candidates `lo` to `hi`. */
static json_t *range_json(json_t *job, long lo, long hi, bool final)
{
	json_t *range = json_object_get(job, "range");
	long remaining = hi - lo;
	long left = remaining > 1 ? (long)ceil(log2((double)remaining)) : 0;
	char steps[64];

	if (final)
		snprintf(steps, sizeof(steps), "none: finished");
	else if (left == 0)
		snprintf(steps, sizeof(steps), "confirming the culprit");
	else
		snprintf(steps, sizeof(steps), "about %ld", left);
	return json_pack(
	    "{s:I,s:I,s:I,s:o,s:o,s:s}", "lo", (json_int_t)lo, "hi",
	    (json_int_t)hi, "remaining", (json_int_t)remaining, "after_short",
	    short_sha(json_string_value(json_object_get(range, "after"))),
	    "through_short",
	    short_sha(json_string_value(json_object_get(range, "through"))),
	    "steps_left", steps);
}

/* The job's time as the page says it: {"elapsed", "left"} (either may be
 * missing), or null before its first claim. */
static json_t *times_json(json_t *job)
{
	json_t *progress = json_object_get(job, "progress");
	json_t *elapsed = json_object_get(progress, "elapsed_s");
	json_t *left = json_object_get(progress, "time_left_s");
	json_t *out;
	char text[64];

	if (!json_is_number(elapsed))
		return json_null();
	out = json_object();
	json_object_set_new(
	    out, "elapsed",
	    json_string(timeleft_format(text, sizeof(text),
					json_number_value(elapsed))));
	if (json_is_number(left))
		json_object_set_new(
		    out, "left",
		    json_string(timeleft_format(text, sizeof(text),
						json_number_value(left))));
	return out;
}

/* The job's recipients, joined with commas. */
static json_t *notify_text(json_t *job)
{
	struct strbuf b = STRBUF_INIT;
	char *text;
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(job, "notify"), i, v)
	{
		if (i > 0)
			strbuf_append(&b, ", ");
		if (json_is_string(v))
			strbuf_append(&b, json_string_value(v));
	}
	if (strbuf_finish(&text, NULL, &b) < 0)
		return json_null();
	return string_take(text);
}

/* Adds the endpoints' short names and links to `ctx`. */
static void add_endpoints(json_t *ctx, json_t *job, const char *web_url)
{
	const char *good = json_string_value(json_object_get(job, "good"));
	const char *bad = json_string_value(json_object_get(job, "bad"));

	json_object_set_new(ctx, "good_short", short_sha(good));
	json_object_set_new(ctx, "bad_short", short_sha(bad));
	json_object_set_new(ctx, "good_link", web_commit_link(web_url, good));
	json_object_set_new(ctx, "bad_link", web_commit_link(web_url, bad));
}

/* Adds the plots of the metric the request asks for (web_job_plots.c). */
static void add_plots(json_t *ctx, PGconn *conn, json_t *job,
		      struct http_request *req,
		      const struct store_job_page_info *info, bool final)
{
	const char *key = http_query(req, "key");
	struct web_plot_request plot = {
	    .job_id = json_integer_value(json_object_get(job, "id")),
	    .metric = http_query(req, "metric"),
	    .web_url = info->web_url,
	    .range_lo = final ? -1 : info->range_lo,
	    .range_hi = final ? -1 : info->range_hi};
	char *key_query = NULL;

	if (key != NULL && asprintf(&key_query, "?key=%s", key) < 0)
		key_query = NULL;
	plot.key_query = key_query;
	if (key != NULL) /* for the metric form */
		json_object_set_new(ctx, "key", json_string(key));
	web_job_add_plots(ctx, conn, job, &plot);
	free(key_query);
}

/*
 * Everything the job page and its live part show (new reference), or NULL
 * when there is no such job (or the database failed: *db_error).
 */
static json_t *job_context(PGconn *conn, long long job_id,
			   const struct web_session *session,
			   struct http_request *req, bool *db_error)
{
	const char *state, *culprit;
	struct store_job_page_info info;
	json_t *job, *ctx = NULL, *range;
	char id[24], text[64];
	bool final;
	int rc;

	job = jobs_json(conn, job_id, db_error);
	if (job == NULL)
		return NULL;
	snprintf(id, sizeof(id), "%lld", job_id);
	state = json_string_value(json_object_get(job, "state"));
	culprit = json_string_value(json_object_get(job, "culprit"));
	range = json_object_get(job, "range");
	final = strcmp(state, "queued") != 0 &&
		strcmp(state, "running") != 0 &&
		strcmp(state, "resolving") != 0;
	rc = store_jobs_page_info(
	    &info, conn, job_id,
	    json_string_value(json_object_get(range, "after")),
	    json_string_value(json_object_get(range, "through")), culprit);
	if (rc != 0) {
		*db_error = rc == STORE_FAILED;
		json_decref(job);
		return NULL;
	}
	ctx = json_pack("{s:O,s:b,s:b,s:b,s:b,s:s}", "job", job, "final",
			final, "running", !final, "can_cancel",
			!final && session->role >= ROLE_SUBMIT, "can_rerun",
			final && session->role >= ROLE_SUBMIT, "csrf",
			session->csrf);
	if (ctx == NULL)
		goto out;
	snprintf(text, sizeof(text), "Job %lld", job_id);
	json_object_set_new(ctx, "title", json_string(text));
	json_object_set_new(ctx, "resolving",
			    json_boolean(strcmp(state, "resolving") == 0));
	add_endpoints(ctx, job, info.web_url);
	if (culprit != NULL)
		json_object_set_new(ctx, "culprit",
				    culprit_json(job, culprit, info.web_url,
						 info.culprit_author));
	if (json_array_size(json_object_get(job, "culprits")) > 1) {
		json_object_set_new(ctx, "changes",
				    changes_json(job, info.web_url));
		json_object_set_new(ctx, "several_changes", json_true());
	}
	if (json_is_number(json_object_get(job, "p_value"))) {
		snprintf(text, sizeof(text), "%.3g",
			 json_number_value(json_object_get(job, "p_value")));
		json_object_set_new(ctx, "p_value", json_string(text));
	}
	if (info.range_lo >= 0 && info.range_hi > info.range_lo)
		json_object_set_new(
		    ctx, "range",
		    range_json(job, info.range_lo, info.range_hi, final));
	json_object_set_new(ctx, "notify", notify_text(job));
	json_object_set_new(ctx, "times", times_json(job));
	/* One commit can be retried while the job runs or once it is done
	 * (retry.h); a compare job is re-tested as a whole. */
	json_object_set_new(
	    ctx, "can_retry",
	    json_boolean(session->role >= ROLE_SUBMIT &&
			 (strcmp(state, "running") == 0 ||
			  strcmp(state, "done") == 0) &&
			 !json_is_array(json_object_get(job, "revisions"))));
	json_object_set_new(ctx, "webhooks", webhooks_page_lines(job));
	/* Runs of a machine the job moved away from are not in its plots
	 * nor its numbers (issue 14): say so. */
	json_object_set_new(
	    ctx, "moved",
	    json_boolean(json_integer_value(json_object_get(
			     json_object_get(job, "machine"), "moves")) > 0));
	json_object_set_new(
	    ctx, "path", bisection_path(conn, job, job_id, id, info.web_url));
	json_object_set_new(ctx, "report",
			    final ? report_text(conn, job_id) : json_null());
	add_plots(ctx, conn, job, req, &info, final);
	web_compare_add(ctx, job, session, final);
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
		ctx = job_context(conn, *job_id, session, req, &db_error);
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

	if (!web_require_job_reader(&session, res, req, true))
		return;
	ctx = load_job_context(res, req, &session, &job_id);
	web_key_query(ctx, req);
	if (ctx != NULL)
		web_render(res, 200, "job", ctx, &session, NULL);
}

void web_job_live(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	long long job_id;
	char *text = NULL;
	json_t *ctx;

	if (!web_require_job_reader(&session, res, req, false))
		return;
	ctx = load_job_context(res, req, &session, &job_id);
	if (ctx == NULL)
		return;
	web_key_query(ctx, req);
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

/* The build log and last run output of one commit of a job, as
 * commitlog_log() gives them to the REST route too. */
void web_commit_log(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	struct field_errors errors;
	long long job_id;
	json_t *reply = NULL, *ctx;
	char title[96];

	if (!web_require_job_reader(&session, res, req, true))
		return;
	fields_init(&errors);
	if (id_parse(&job_id, req->params[0]) < 0) {
		char text[512];

		snprintf(text, sizeof(text), "no job '%s'", req->params[0]);
		web_error_page(res, 404, &session, text);
		return;
	}
	if (commitlog_log(&reply, &errors, job_id, req->params[1]) < 0) {
		web_error_page(res,
			       errors.count > 0 ? errors.items[0].status : 500,
			       &session,
			       errors.count > 0 ? errors.items[0].message
						: "There is no such log.");
		goto out;
	}
	snprintf(title, sizeof(title), "Job %lld, commit %.12s",
		 (long long)json_integer_value(json_object_get(reply, "job")),
		 json_string_value(json_object_get(reply, "commit")));
	ctx =
	    json_pack("{s:s,s:O,s:o}", "title", title, "log", reply, "outcome",
		      web_outcome_label(json_object_get(reply, "outcome")));
	web_render(res, 200, "commit_log", ctx, &session, "jobs");
out:
	json_decref(reply);
}
