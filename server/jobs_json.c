/* The job as the API shows it: its row, what the engine makes of its runs,
 * and its report's delivery. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlog.h"
#include "compare.h"
#include "jobs.h"
#include "rechecks.h"
#include "scheduler.h"
#include "store/store_engine.h"
#include "store/store_spread.h"
#include "store/store_tasks.h"
#include "timeleft.h"
#include "url.h"
#include "webhooks.h"

/*
 * Where the job stands.  While it runs: the engine's segment and estimate,
 * and the phase ("endpoints", "bisecting", "confirming", or "follow-up":
 * a culprit is found and the search looks for another change, often in
 * an older part of the range).  Once it has ended nothing is left to do:
 * a done job's range is its culprit's parent through the culprit (the
 * whole range without a culprit) with no candidate left but the culprit's
 * ambiguous set, and every ended job has no step left.
 */
static void job_progress(const struct sched_job *job, const char *state,
			 size_t *lo, size_t *hi, size_t *candidates_left,
			 size_t *steps_left, const char **phase)
{
	const struct bisect_result *res = &job->result;
	bool confirming = false;
	size_t i;

	*lo = res->lo;
	*hi = res->hi;
	*candidates_left = res->candidates_left;
	*steps_left = res->steps_left;
	for (i = 0; i < res->request_count; i++)
		confirming |= res->requests[i].purpose == BISECT_CONFIRM;
	if (state != NULL && strcmp(state, "done") == 0) {
		*phase = "done";
		*steps_left = 0;
		*candidates_left = 0;
		if (res->culprit_count > 0 &&
		    (res->verdict == BISECT_REGRESSION ||
		     res->verdict == BISECT_IMPROVEMENT)) {
			*lo = res->culprits[0].parent;
			*hi = res->culprits[0].commit;
			*candidates_left = res->culprits[0].ambiguous_count;
		} else {
			*lo = 0;
			*hi = job->count - 1;
		}
	} else if (state != NULL && strcmp(state, "resolving") == 0) {
		/* The range is being listed: no candidates yet. */
		*phase = state;
	} else if (state != NULL && (strcmp(state, "failed") == 0 ||
				     strcmp(state, "cancelled") == 0)) {
		/* Where the search stopped, with nothing more to come. */
		*phase = state;
		*steps_left = 0;
	} else if (res->culprit_count > 0 && !confirming) {
		*phase = "follow-up";
	} else if (confirming) {
		*phase = "confirming";
	} else if (res->steps_done == 0) {
		*phase = "endpoints";
	} else {
		*phase = "bisecting";
	}
}

/* A JSON string of `text`, or null. */
/* The job's benchmark repository (password masked), revision and the
 * commit it runs, or null when the testcase names none. */
static json_t *bench_json(const struct store_job *row)
{
	char *url = NULL;
	json_t *bench;

	if (row->bench_repo == NULL || url_redact(&url, row->bench_repo) < 0)
		return json_null();
	bench = json_pack("{s:s,s:s?,s:s?}", "repo", url, "rev",
			  row->bench_rev, "commit", row->bench_sha);
	free(url);
	return bench != NULL ? bench : json_null();
}

static json_t *text_or_null(const char *text)
{
	return text != NULL ? json_string(text) : json_null();
}

static json_t *number_or_null(double value)
{
	return isnan(value) ? json_null() : json_real(value);
}

/* The tested commits of the job with their runs, and how many runs and
 * commits that makes. */
static json_t *commits_json(const struct sched_job *job, size_t *total_runs,
			    size_t *tested)
{
	json_t *commits = json_array();
	size_t i, k;

	*total_runs = 0;
	*tested = 0;
	for (i = 0; i < job->count; i++) {
		const struct bisect_commit *c = &job->input[i];
		json_t *values, *confirm;

		*total_runs += c->value_count + c->confirm_count +
			       job->commits[i].failed_runs;
		if (c->value_count == 0 && c->confirm_count == 0 &&
		    !c->build_failed && job->commits[i].failed_runs == 0)
			continue;
		(*tested)++;
		values = json_array();
		confirm = json_array();
		for (k = 0; k < c->value_count; k++)
			json_array_append_new(values, json_real(c->values[k]));
		for (k = 0; k < c->confirm_count; k++)
			json_array_append_new(confirm,
					      json_real(c->confirm_values[k]));
		json_array_append_new(
		    commits,
		    json_pack("{s:I,s:s,s:s,s:o,s:o,s:I,s:b,s:s}", "index",
			      (json_int_t)i, "commit", job->commits[i].sha,
			      "subject", job->commits[i].subject, "runs",
			      values, "confirm_runs", confirm, "failed_runs",
			      (json_int_t)job->commits[i].failed_runs,
			      "build_failed", c->build_failed,
			      "classification",
			      bisect_class_name(job->classes[i])));
	}
	return commits;
}

/* Adds to each tested commit what happened to it (null: not reported). */
static void add_outcomes(json_t *commits, PGconn *conn, long long job_id)
{
	json_t *outcomes = NULL, *c;
	char key[24];
	size_t i;

	if (commitlog_outcomes(&outcomes, conn, job_id) < 0)
		outcomes = NULL;
	json_array_foreach(commits, i, c)
	{
		json_t *o;

		snprintf(key, sizeof(key), "%lld",
			 (long long)json_integer_value(
			     json_object_get(c, "index")));
		o = json_object_get(outcomes, key);
		json_object_set(c, "outcome", o != NULL ? o : json_null());
	}
	json_decref(outcomes);
}

/* The fields of the job's row that may be null, and where it stands. */
static void add_details(json_t *out, const struct store_job *row,
			const struct sched_job *job)
{
	size_t range_lo, range_hi, candidates_left, steps_left;
	const char *phase;
	json_error_t e;
	json_t *culprits = json_loads(row->culprits, 0, &e);

	if (!json_is_array(culprits)) {
		json_decref(culprits);
		culprits = json_array();
	}
	job_progress(job, row->state, &range_lo, &range_hi, &candidates_left,
		     &steps_left, &phase);
	json_object_set_new(out, "verdict", text_or_null(row->verdict));
	json_object_set_new(out, "culprit", text_or_null(row->culprit));
	json_object_set_new(out, "parent", text_or_null(row->parent));
	json_object_set_new(out, "culprits", culprits);
	json_object_set_new(out, "change_pct",
			    number_or_null(row->change_pct));
	json_object_set_new(
	    out, "change_ci95",
	    isnan(row->change_ci95_lo) || isnan(row->change_ci95_hi)
		? json_null()
		: sched_ci95_json(row->change_ci95_lo, row->change_ci95_hi));
	json_object_set_new(out, "p_value", number_or_null(row->p_value));
	json_object_set_new(out, "message", text_or_null(row->message));
	json_object_set_new(out, "bench", bench_json(row));
	/* The machine group whose workers run it ("machine" below says
	 * which of them does). */
	json_object_set_new(out, "group", json_string(row->group));
	json_object_set_new(out, "created_at", json_string(row->created_at));
	json_object_set_new(out, "finished_at",
			    text_or_null(row->finished_at));
	json_object_set_new(out, "notify", json_loads(row->notify, 0, &e));
	json_object_set_new(
	    out, "range",
	    json_pack(
		"{s:s,s:s}", "after",
		job->count > 0 ? job->commits[range_lo].sha : row->good_sha,
		"through",
		job->count > 0 ? job->commits[range_hi].sha : row->bad_sha));
	json_object_set_new(out, "confidence",
			    number_or_null(row->confidence));
	json_object_set_new(out, "runs_min",
			    json_integer((json_int_t)job->opts.runs_min));
	json_object_set_new(out, "runs_max",
			    json_integer((json_int_t)job->opts.runs_max));
	json_object_set_new(out, "runs_from",
			    json_pack("{s:s,s:s}", "runs_min",
				      row->runs_min > 0 ? "job" : "testcase",
				      "runs_max",
				      row->runs_max > 0 ? "job" : "testcase"));
	json_object_set_new(
	    out, "progress",
	    json_pack("{s:I,s:I,s:I,s:s}", "candidates_left",
		      (json_int_t)candidates_left, "steps_done",
		      (json_int_t)job->result.steps_done, "steps_left",
		      (json_int_t)steps_left, "phase", phase));
}

/*
 * The report's delivery: none (nobody to tell: no mail goes out),
 * pending (not tried yet), retrying (an attempt failed; last_error says
 * why), failed (given up) or sent; null while the job has no report.
 */
static json_t *delivery_json(PGconn *conn, long long job_id)
{
	struct store_job_delivery d;
	json_t *report;
	json_error_t e;

	if (store_jobs_delivery(&d, conn, job_id) != 0)
		return json_null();
	report = json_pack("{s:s,s:I,s:o}", "state", d.state, "attempts",
			   (json_int_t)d.attempts, "recipients",
			   json_loads(d.recipients, 0, &e));
	if (report == NULL)
		report = json_object();
	json_object_set_new(report, "last_error", text_or_null(d.last_error));
	json_object_set_new(report, "sent_at", text_or_null(d.sent_at));
	json_object_set_new(
	    report, "next_attempt_at",
	    text_or_null(strcmp(d.state, "pending") == 0 ||
				 strcmp(d.state, "retrying") == 0
			     ? d.next_attempt_at
			     : NULL));
	store_job_delivery_clear(&d);
	return report;
}

/*
 * The job's time (issue 15): elapsed_s since its first claim (to its end
 * once it has ended; null before the claim), and while it runs
 * time_left_s, the estimate of lib/timeleft.h (null when there is nothing
 * to go by yet, or the job is not running).
 */
static void job_clock(struct jobs_clock *clock, const struct store_job *row,
		      const struct sched_job *job, size_t runs, size_t tested)
{
	size_t i;

	memset(clock, 0, sizeof(*clock));
	clock->in.elapsed_s = row->elapsed_s;
	clock->in.runs_done = runs;
	clock->in.commits_tested = tested;
	clock->in.step_runs_min = job->opts.step_runs_min;
	/* store_jobs_get counts to now() until the job has finished. */
	clock->ticking = !isnan(row->elapsed_s) && row->finished_at == NULL;
	clock->estimated = strcmp(row->state, "running") == 0;
	if (!clock->estimated)
		return;
	for (i = 0; i < job->result.request_count; i++)
		clock->in.runs_pending += job->result.requests[i].runs;
	for (i = 0; i < job->count; i++)
		clock->in.search_runs += job->input[i].value_count;
	clock->in.steps_left = job->result.steps_left;
}

void jobs_json_times(json_t *answer, const struct jobs_clock *clock,
		     double later_s)
{
	json_t *progress = json_object_get(answer, "progress");
	struct timeleft_input in = clock->in;

	if (progress == NULL)
		return;
	if (clock->ticking)
		in.elapsed_s += later_s;
	json_object_set_new(progress, "elapsed_s",
			    number_or_null(in.elapsed_s));
	json_object_set_new(
	    progress, "time_left_s",
	    number_or_null(clock->estimated ? timeleft_estimate(&in) : NAN));
}

/*
 * The machine the job keeps to (issue 14): {"worker_id", "name", "group",
 * "machine", "bound_at", "moves", "runs_superseded"}, or null before its
 * first claim.  Its "runs" and commits count that machine's runs only;
 * GET /api/v1/jobs/{id}/runs lists the superseded ones too.
 */
static json_t *machine_json(PGconn *conn, long long job_id)
{
	struct store_engine_machine m;

	if (store_engine_machine(&m, conn, job_id) != STORE_OK || !m.bound)
		return json_null();
	return json_pack("{s:I,s:s,s:s,s:s?,s:s?,s:I,s:I}", "worker_id",
			 (json_int_t)m.worker_id, "name", m.name, "group",
			 m.group, "machine",
			 m.machine[0] != '\0' ? m.machine : NULL, "bound_at",
			 m.bound_at[0] != '\0' ? m.bound_at : NULL, "moves",
			 (json_int_t)m.moves, "runs_superseded",
			 (json_int_t)m.runs_superseded);
}

/*
 * Several machines at once (spreadjob.h): {"machines", "active",
 * "settled_reason", "joined": [{"name", "left"}]}, or null for a job of
 * one machine.
 */
static json_t *spread_json(PGconn *conn, long long job_id)
{
	struct store_spread_summary s;
	json_t *out = NULL, *joined;
	size_t i;

	if (store_spread_summary(&s, conn, job_id) != STORE_OK ||
	    s.machines <= 1 || (joined = json_array()) == NULL)
		goto out;
	for (i = 0; i < s.count; i++)
		json_array_append_new(joined, json_pack("{s:s,s:b}", "name",
							s.names[i], "left",
							s.left[i]));
	out = json_pack("{s:I,s:b,s:s?,s:o}", "machines",
			(json_int_t)s.machines, "active", s.spread,
			"settled_reason", s.reason, "joined", joined);
out:
	store_spread_summary_clear(&s);
	return out != NULL ? out : json_null();
}

/*
 * What the job's machine does for it now (issue 15), as its worker last
 * said with a heartbeat: {"text", "since", "worker"}, or null when the
 * job is not running or no running task has said.
 */
static json_t *activity_json(PGconn *conn, long long job_id, const char *state)
{
	struct store_activity a;
	json_t *out;

	if (strcmp(state, "running") != 0 ||
	    store_tasks_activity(&a, conn, job_id) != STORE_OK)
		return json_null();
	out = json_pack("{s:s,s:s?,s:s}", "text", a.text, "since", a.since,
			"worker", a.worker);
	store_activity_clear(&a);
	return out != NULL ? out : json_null();
}

json_t *jobs_json(PGconn *conn, long long job_id, bool *failed)
{
	struct jobs_clock clock;

	return jobs_json_clocked(conn, job_id, failed, &clock);
}

json_t *jobs_json_clocked(PGconn *conn, long long job_id, bool *failed,
			  struct jobs_clock *clock)
{
	struct store_job row;
	struct sched_job job;
	json_t *out, *commits, *hook;
	size_t total_runs, tested;
	long long builds = 0;
	int rc;

	rc = store_jobs_get(&row, conn, job_id);
	*failed = rc == STORE_FAILED;
	if (rc != 0)
		return NULL;
	rc = sched_load(&job, conn, job_id);
	if (rc != 0) {
		*failed = rc < 0;
		store_job_clear(&row);
		return NULL;
	}
	commits = commits_json(&job, &total_runs, &tested);
	add_outcomes(commits, conn, job_id);
	out = json_pack(
	    "{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:I,s:I,s:I,s:o}", "id",
	    (json_int_t)job_id, "state", row.state, "repo", row.repo,
	    "testcase", row.testcase, "good", row.good_sha, "bad", row.bad_sha,
	    "good_rev", row.good_rev, "bad_rev", row.bad_rev, "kpi", row.kpi,
	    "higher_is_better", row.higher_is_better, "candidates",
	    (json_int_t)job.count, "runs", (json_int_t)total_runs,
	    "commits_tested", (json_int_t)tested, "commits", commits);
	add_details(out, &row, &job);
	job_clock(clock, &row, &job, total_runs, tested);
	jobs_json_times(out, clock, 0);
	if (compare_json_add(conn, out, &job) < 0 ||
	    rechecks_json_add(conn, out, job_id) < 0) {
		*failed = true;
		json_decref(out);
		out = NULL;
		goto out;
	}
	json_object_set_new(out, "report", delivery_json(conn, job_id));
	json_object_set_new(out, "machine", machine_json(conn, job_id));
	json_object_set_new(out, "spread", spread_json(conn, job_id));
	json_object_set_new(out, "activity",
			    activity_json(conn, job_id, row.state));
	json_object_set_new(out, "webhooks",
			    webhooks_deliveries_json(conn, job_id));
	hook = webhooks_json(conn, STORE_WEBHOOK_JOB, job_id);
	json_object_set_new(out, "webhook", hook != NULL ? hook : json_null());
	/* Builds the workers did for the job; a task uploaded by a worker
	 * that did not say counts none. */
	if (store_jobs_builds(&builds, conn, job_id) < 0)
		builds = 0;
	json_object_set_new(out, "builds", json_integer((json_int_t)builds));
out:
	sched_job_clear(&job);
	store_job_clear(&row);
	return out;
}
