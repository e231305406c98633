/* GET /metrics: the database's figures (store/store_metrics.c) and the
 * HTTP layer's request counts, rendered with lib/promtext.h. */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "promtext.h"
#include "server.h"

const double metrics_duration_bounds[] = {
    10, 30, 60, 300, 900, 1800, 3600, 7200, 21600, 86400, 604800};
const size_t metrics_duration_bound_count =
    sizeof(metrics_duration_bounds) / sizeof(metrics_duration_bounds[0]);

/* The states a job can be in, shown even with no job in them. */
static const char *const job_states[] = {"resolving", "queued", "running",
					 "done",      "failed", "cancelled"};

static void render_groups(struct strbuf *out, const struct store_metrics *db)
{
	size_t i;

	promtext_family(out, "statbisect_tasks_queued", "gauge",
			"Tasks waiting for a worker, by the group of their "
			"job.");
	for (i = 0; i < db->group_count; i++) {
		struct promtext_label group = {"group", db->groups[i].name};

		promtext_sample(out, "statbisect_tasks_queued", &group, 1,
				(double)db->groups[i].tasks_queued);
	}
	promtext_family(out, "statbisect_workers_alive", "gauge",
			"Workers seen within the machine timeout, by group.");
	for (i = 0; i < db->group_count; i++) {
		struct promtext_label group = {"group", db->groups[i].name};

		promtext_sample(out, "statbisect_workers_alive", &group, 1,
				(double)db->groups[i].workers_alive);
	}
}

static long long state_jobs(const struct store_metrics *db, const char *state)
{
	size_t i;

	for (i = 0; i < db->state_count; i++)
		if (strcmp(db->states[i].state, state) == 0)
			return db->states[i].jobs;
	return 0;
}

static void render_jobs(struct strbuf *out, const struct store_metrics *db)
{
	struct promtext_label label = {"state", NULL};
	size_t i, n = sizeof(job_states) / sizeof(job_states[0]);
	char bound[32];

	promtext_family(out, "statbisect_jobs", "gauge", "Jobs by state.");
	for (i = 0; i < n; i++) {
		label.value = job_states[i];
		promtext_sample(out, "statbisect_jobs", &label, 1,
				(double)state_jobs(db, job_states[i]));
	}
	promtext_family(out, "statbisect_runs_total", "counter",
			"Benchmark runs stored.");
	promtext_sample(out, "statbisect_runs_total", NULL, 0,
			(double)db->runs_total);
	promtext_family(out, "statbisect_job_duration_seconds", "histogram",
			"Seconds from submission to the end of jobs that "
			"ended done or failed.");
	label.name = "le";
	for (i = 0; i < metrics_duration_bound_count; i++) {
		snprintf(bound, sizeof(bound), "%g",
			 metrics_duration_bounds[i]);
		label.value = bound;
		promtext_sample(out, "statbisect_job_duration_seconds_bucket",
				&label, 1, (double)db->duration_le[i]);
	}
	label.value = "+Inf";
	promtext_sample(out, "statbisect_job_duration_seconds_bucket", &label,
			1, (double)db->duration_count);
	promtext_sample(out, "statbisect_job_duration_seconds_sum", NULL, 0,
			db->duration_sum);
	promtext_sample(out, "statbisect_job_duration_seconds_count", NULL, 0,
			(double)db->duration_count);
}

static void render_outbox(struct strbuf *out, const struct store_metrics *db)
{
	const struct {
		const char *state;
		long long rows;
	} rows[] = {{"pending", db->outbox_pending},
		    {"failed", db->outbox_failed},
		    {"sent", db->outbox_sent}};
	size_t i;

	promtext_family(out, "statbisect_mail_outbox", "gauge",
			"Mails of the outbox: pending (waiting for an "
			"attempt), failed (given up), sent.");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct promtext_label label = {"state", rows[i].state};

		promtext_sample(out, "statbisect_mail_outbox", &label, 1,
				(double)rows[i].rows);
	}
}

static void render_requests(struct strbuf *out,
			    const struct http_count *requests, size_t count)
{
	size_t i;

	promtext_family(out, "statbisect_http_requests_total", "counter",
			"HTTP requests answered since the server started, by "
			"method, route pattern (\"unmatched\" for none) and "
			"status.");
	for (i = 0; i < count; i++) {
		char status[16];
		struct promtext_label labels[3] = {
		    {"method", requests[i].method},
		    {"route", requests[i].route != NULL ? requests[i].route
							: "unmatched"},
		    {"status", status}};

		snprintf(status, sizeof(status), "%u", requests[i].status);
		promtext_sample(out, "statbisect_http_requests_total", labels,
				3, (double)requests[i].count);
	}
}

static void render_process(struct strbuf *out,
			   const struct metrics_process *proc)
{
	const struct jobcache_stats *cache = &proc->cache;
	const struct {
		const char *name, *help;
		unsigned long long value;
	} counters[] = {
	    {"statbisect_jobcache_hits_total",
	     "GET /api/v1/jobs/{id} answered from the job cache.",
	     cache->hits},
	    {"statbisect_jobcache_misses_total",
	     "GET /api/v1/jobs/{id} that found no usable answer kept.",
	     cache->misses},
	    {"statbisect_jobcache_kept_total", "Job answers kept.",
	     cache->kept},
	    {"statbisect_listcache_hits_total",
	     "Pages of jobs (the dashboard, GET /api/v1/jobs) given from the "
	     "list cache.",
	     proc->lists.hits},
	    {"statbisect_listcache_joined_total",
	     "Of them, pages that waited for another request's read.",
	     proc->lists.joined},
	    {"statbisect_listcache_misses_total",
	     "Pages of jobs read from the database.", proc->lists.misses},
	    {"statbisect_claims_woken_total",
	     "Waiting claims woken by a task queued for their group.",
	     proc->claims_woken}};
	size_t i;

	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		promtext_family(out, counters[i].name, "counter",
				counters[i].help);
		promtext_sample(out, counters[i].name, NULL, 0,
				(double)counters[i].value);
	}
	promtext_family(out, "statbisect_claims_waiting", "gauge",
			"Claims held by this server, waiting for a task.");
	promtext_sample(out, "statbisect_claims_waiting", NULL, 0,
			(double)proc->claims_waiting);
}

int metrics_render(char **out, const struct store_metrics *db,
		   const struct metrics_process *proc)
{
	struct strbuf text = STRBUF_INIT;
	size_t len;

	render_groups(&text, db);
	render_jobs(&text, db);
	render_outbox(&text, db);
	render_requests(&text, proc->requests, proc->request_count);
	render_process(&text, proc);
	return strbuf_finish(out, &len, &text);
}

void metrics_get(struct http_response *res, struct http_request *req)
{
	struct store_metrics db;
	struct metrics_process proc = {0};
	struct http_count *requests = NULL;
	size_t count = 0;
	char *text = NULL;

	if (store_metrics_read(&db, db_conn(), server_config.machine_timeout_s,
			       metrics_duration_bounds,
			       metrics_duration_bound_count) < 0) {
		http_db_failed(res);
		return;
	}
	if (req->server != NULL &&
	    http_counts(req->server, &requests, &count) < 0)
		count = 0;
	proc.requests = requests;
	proc.request_count = count;
	jobcache_stats(&proc.cache);
	listcache_stats(&proc.lists);
	proc.claims_woken = http_woken(req->server, &proc.claims_waiting);
	if (metrics_render(&text, &db, &proc) < 0) {
		http_error(res, 500, "internal", "out of memory");
	} else {
		http_text(res, 200, PROMTEXT_CONTENT_TYPE, text);
		free(text);
	}
	free(requests);
	store_metrics_clear(&db);
}
