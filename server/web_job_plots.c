/*
 * The job page's plots: the runs of every tested commit along the range
 * and those of the culprit's parent beside the culprit's, of the KPI or of
 * any other metric the runs reported (?metric=NAME), each commit linking
 * to its commit (issue 15).
 */
#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_runs.h"
#include "strbuf.h"
#include "svgplot.h"
#include "web.h"

/* The longest metric name taken from a query. */
#define PLOT_METRIC_MAX 200

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
	if (strcmp(name, "neither") == 0)
		return SVGPLOT_NEITHER;
	return SVGPLOT_UNDECIDED;
}

json_t *web_job_all_runs(json_t *commit)
{
	json_t *out = json_array();

	json_array_extend(out, json_object_get(commit, "runs"));
	json_array_extend(out, json_object_get(commit, "confirm_runs"));
	return out;
}

long web_job_find_commit(json_t *commits, const char *sha)
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

/* The plots' input: one entry per tested commit, with the memory its
 * labels, links and values live in. */
struct plot_input {
	struct svgplot_commit *commits;
	size_t count;
	char (*labels)[13];
	char **hrefs;
	double *values;
};

static void plot_input_clear(struct plot_input *in)
{
	size_t i;

	for (i = 0; in->hrefs != NULL && i < in->count; i++)
		free(in->hrefs[i]);
	free(in->hrefs);
	free(in->commits);
	free(in->labels);
	free(in->values);
	memset(in, 0, sizeof(*in));
}

/* Where commit `sha`'s marks link: its page in the repository's web view,
 * else its build log and run output on this job. */
static char *commit_href(const struct web_plot_request *req, const char *sha)
{
	json_t *link = web_commit_link(req->web_url, sha);
	char *href = NULL;

	if (json_is_string(link))
		href = strdup(json_string_value(link));
	else if (asprintf(&href, "/jobs/%lld/commits/%s/log%s", req->job_id,
			  sha,
			  req->key_query != NULL ? req->key_query : "") < 0)
		href = NULL;
	json_decref(link);
	return href;
}

/* The values of commit `index` in `runs`, appended to in->values. */
static size_t take_values(struct plot_input *in, size_t used,
			  const struct store_run_value *runs, size_t n,
			  long long index)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (runs[k].commit_index == index)
			in->values[used++] = runs[k].value;
	return used;
}

/*
 * The tested commits of `commits` (the job JSON's) as plot input: their
 * KPI runs, or with `runs` (n of them) the values of another metric.
 */
static int plot_input(struct plot_input *in, json_t *commits,
		      const struct web_plot_request *req,
		      const struct store_run_value *runs, size_t n)
{
	size_t total = n, i, k, used = 0;
	json_t *c, *v;

	memset(in, 0, sizeof(*in));
	in->count = json_array_size(commits);
	if (runs == NULL)
		json_array_foreach(commits, i, c)
		{
			total += json_array_size(json_object_get(c, "runs")) +
				 json_array_size(
				     json_object_get(c, "confirm_runs"));
		}
	in->commits = calloc(in->count + 1, sizeof(*in->commits));
	in->labels = calloc(in->count + 1, sizeof(*in->labels));
	in->hrefs = calloc(in->count + 1, sizeof(*in->hrefs));
	in->values = calloc(total + 1, sizeof(*in->values));
	if (in->commits == NULL || in->labels == NULL || in->hrefs == NULL ||
	    in->values == NULL) {
		plot_input_clear(in);
		return -1;
	}
	json_array_foreach(commits, i, c)
	{
		struct svgplot_commit *out = &in->commits[i];
		const char *sha =
		    json_string_value(json_object_get(c, "commit"));
		json_t *kpi_runs = web_job_all_runs(c);
		size_t first = used;

		snprintf(in->labels[i], sizeof(in->labels[i]), "%.12s",
			 sha != NULL ? sha : "");
		out->index =
		    (size_t)json_integer_value(json_object_get(c, "index"));
		out->label = in->labels[i];
		out->title = json_string_value(json_object_get(c, "subject"));
		out->cls = plot_class(
		    json_string_value(json_object_get(c, "classification")));
		if (runs != NULL)
			used = take_values(in, used, runs, n,
					   (long long)out->index);
		else
			json_array_foreach(kpi_runs, k, v)
			{
				in->values[used++] = json_number_value(v);
			}
		json_decref(kpi_runs);
		out->values = in->values + first;
		out->count = used - first;
		in->hrefs[i] = sha != NULL ? commit_href(req, sha) : NULL;
		out->href = in->hrefs[i];
	}
	return 0;
}

/* Renders both plots of `in` into `ctx`. */
static void render(json_t *ctx, json_t *job, const struct plot_input *in,
		   const struct web_plot_request *req, const char *metric)
{
	json_t *commits = json_object_get(job, "commits");
	const char *culprit =
	    json_string_value(json_object_get(job, "culprit"));
	const char *parent = json_string_value(json_object_get(job, "parent"));
	long ci = web_job_find_commit(commits, culprit);
	long pi = web_job_find_commit(commits, parent);
	struct svgplot_range range = {0};
	char title[512], *svg = NULL;

	range.candidates =
	    (size_t)json_integer_value(json_object_get(job, "candidates"));
	range.commits = in->commits;
	range.count = in->count;
	range.culprit = ci >= 0 ? (long)in->commits[ci].index : -1;
	range.range_lo = req->range_lo;
	range.range_hi = req->range_hi;
	range.kpi = metric;
	snprintf(title, sizeof(title),
		 "Runs of the %zu tested commits of job %lld along the range "
		 "of %zu commits: %s",
		 range.count, req->job_id, range.candidates, metric);
	range.title = title;
	if (range.candidates >= 1 && svgplot_render_range(&svg, &range) == 0)
		json_object_set_new(ctx, "plot_range", json_string(svg));
	free(svg);
	svg = NULL;
	if (ci >= 0 && pi >= 0) {
		struct svgplot_pair pair = {&in->commits[pi], &in->commits[ci],
					    metric, NULL};

		snprintf(title, sizeof(title),
			 "Runs of the parent %.12s and of the culprit %.12s: "
			 "%s",
			 parent, culprit, metric);
		pair.title = title;
		if (svgplot_render_pair(&svg, &pair) == 0)
			json_object_set_new(ctx, "plot_pair",
					    json_string(svg));
		free(svg);
	}
}

/*
 * The metrics the page offers, the KPI first: [{"name", "selected"}];
 * *chosen is req->metric when the runs reported it, else the KPI.
 */
static json_t *metric_choices(const struct store_names *names, const char *kpi,
			      const char *wanted, const char **chosen)
{
	json_t *list = json_array();
	size_t i;

	*chosen = kpi;
	for (i = 0; wanted != NULL && i < names->count; i++)
		if (strcmp(names->names[i], wanted) == 0)
			*chosen = names->names[i];
	json_array_append_new(list, json_pack("{s:s,s:b}", "name", kpi,
					      "selected", *chosen == kpi));
	for (i = 0; i < names->count; i++)
		if (strcmp(names->names[i], kpi) != 0)
			json_array_append_new(
			    list,
			    json_pack("{s:s,s:b}", "name", names->names[i],
				      "selected", *chosen == names->names[i]));
	return list;
}

/* The query that keeps the page's key and metric ("?key=K&metric=M"),
 * for the live part's address. */
static json_t *live_query(const struct web_plot_request *req,
			  const char *metric, const char *kpi)
{
	struct strbuf b = STRBUF_INIT;
	char *escaped = NULL, *text;
	json_t *query;

	strbuf_append(&b, req->key_query != NULL ? req->key_query : "");
	if (strcmp(metric, kpi) != 0 &&
	    (escaped = curl_easy_escape(NULL, metric, 0)) != NULL)
		strbuf_printf(&b, "%smetric=%s",
			      req->key_query != NULL ? "&" : "?", escaped);
	curl_free(escaped);
	if (strbuf_finish(&text, NULL, &b) < 0)
		return json_string("");
	query = json_string(text);
	free(text);
	return query != NULL ? query : json_string("");
}

void web_job_add_plots(json_t *ctx, PGconn *conn, json_t *job,
		       const struct web_plot_request *req)
{
	const char *kpi = json_string_value(json_object_get(job, "kpi"));
	struct store_names names = {0};
	struct store_run_value *runs = NULL;
	struct plot_input in;
	const char *metric = kpi;
	size_t n = 0;
	int rc = 0;

	if (kpi == NULL)
		return;
	if (store_runs_metric_names(&names, conn, req->job_id) == STORE_OK) {
		json_object_set_new(
		    ctx, "metrics",
		    metric_choices(&names, kpi, req->metric, &metric));
		json_object_set_new(
		    ctx, "several_metrics",
		    json_boolean(
			json_array_size(json_object_get(ctx, "metrics")) > 1));
	}
	/* A name asked for that no run reported (shown back when short). */
	if (req->metric != NULL && strcmp(req->metric, metric) != 0)
		json_object_set_new(ctx, "metric_unknown",
				    strlen(req->metric) <= PLOT_METRIC_MAX
					? json_string(req->metric)
					: json_string("(a name too long)"));
	json_object_set_new(ctx, "metric", json_string(metric));
	json_object_set_new(ctx, "live_query", live_query(req, metric, kpi));
	if (metric != kpi)
		rc = store_runs_metric(&runs, &n, conn, req->job_id, metric);
	if (rc == STORE_OK &&
	    plot_input(&in, json_object_get(job, "commits"), req,
		       metric != kpi ? runs : NULL, n) == 0) {
		render(ctx, job, &in, req, metric);
		plot_input_clear(&in);
	}
	free(runs);
	store_names_clear(&names);
}
