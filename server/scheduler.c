#include "scheduler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "commitlog.h"
#include "compare.h"
#include "db.h"
#include "log.h"
#include "reportjob.h"
#include "spreadjob.h"
#include "store/store_engine.h"
#include "store/store_tasks.h"
#include "watcher.h"
#include "webhooks.h"

void sched_job_clear(struct sched_job *job)
{
	size_t i;

	if (job->commits != NULL) {
		for (i = 0; i < job->count; i++) {
			free(job->commits[i].subject);
			free(job->commits[i].author_name);
			free(job->commits[i].author_email);
		}
	}
	free(job->commits);
	free(job->input);
	free(job->values);
	free(job->seq);
	free(job->parents);
	free(job->classes);
	memset(job, 0, sizeof(*job));
}

static int load_options(struct sched_job *job, PGconn *conn)
{
	struct store_engine_options options;
	int rc = store_engine_options(&options, conn, job->id);

	if (rc != STORE_OK)
		return rc == STORE_NOT_FOUND ? 1 : -1;
	snprintf(job->state, sizeof(job->state), "%s", options.state);
	bisect_options_init(&job->opts, options.higher_is_better);
	job->opts.runs_min = (size_t)options.runs_min;
	job->opts.runs_max = (size_t)options.runs_max;
	if (job->opts.step_runs_min > job->opts.runs_max)
		job->opts.step_runs_min = job->opts.runs_max;
	job->opts.min_change_pct = options.min_change_pct;
	/* Settled after several machines narrowed it, the job goes on from
	 * the commits its machine measured (lib/spread.h). */
	job->opts.prefer_measured = options.several_machines;
	/* A testcase that lets a commit have many search runs lets a
	 * confirmation have as many fresh runs a side: the engine sizes it
	 * by the change found, so a clear change still takes a few. */
	if (job->opts.confirm_max < job->opts.runs_max)
		job->opts.confirm_max = job->opts.runs_max;
	return 0;
}

/* Copies candidate `from` into commit `i` of `job`, with its parents
 * inside the range as stored at submission (jobs from before that got
 * theirs in sql/009_no_compat.sql); each parent comes before it. */
static int copy_commit(struct sched_job *job, size_t i, size_t *used,
		       const struct store_engine_commit *from)
{
	struct sched_commit *c = &job->commits[i];
	size_t k;

	c->idx = from->index;
	snprintf(c->sha, sizeof(c->sha), "%s", from->sha);
	c->subject = strdup(from->subject);
	c->author_name = strdup(from->author_name);
	c->author_email = strdup(from->author_email);
	c->build_failed = from->build_failed;
	job->input[i].parents = &job->parents[*used];
	for (k = 0; k < from->parent_count; k++) {
		if (from->parents[k] >= (long long)i)
			return -1;
		job->parents[(*used)++] = (size_t)from->parents[k];
	}
	job->input[i].parent_count = from->parent_count;
	if (c->idx != (long long)i || c->subject == NULL ||
	    c->author_name == NULL || c->author_email == NULL)
		return -1;
	return 0;
}

static int load_commits(struct sched_job *job, PGconn *conn)
{
	struct store_engine_commits list;
	size_t i, room = 1, used = 0;
	int error = -1;

	if (store_engine_commits(&list, conn, job->id) != STORE_OK)
		return -1;
	for (i = 0; i < list.count; i++)
		room += list.commits[i].parent_count;
	/* None at all: a job still resolving (resolver.h). */
	job->count = list.count;
	job->commits = calloc(job->count + 1, sizeof(*job->commits));
	job->input = calloc(job->count + 1, sizeof(*job->input));
	job->classes = calloc(job->count + 1, sizeof(*job->classes));
	job->parents = calloc(room, sizeof(*job->parents));
	if (job->count == 1 || job->commits == NULL || job->input == NULL ||
	    job->classes == NULL || job->parents == NULL)
		goto out;
	for (i = 0; i < job->count; i++) {
		if (copy_commit(job, i, &used, &list.commits[i]) < 0)
			goto out;
	}
	error = 0;
out:
	store_engine_commits_clear(&list);
	return error;
}

/*
 * Whether the benchmark keeps failing on commit `i` of `job`: at least
 * runs_min of its runs gave no KPI, and they outnumber the runs that gave
 * one.  Such a commit is treated like a failed build: skipped, not blamed.
 * A benchmark that fails now and then is measured by the runs that work;
 * over a long job its failures alone would pass any fixed count.
 */
static bool keeps_failing(const struct sched_job *job, size_t i)
{
	size_t failed = job->commits[i].failed_runs;
	size_t measured =
	    job->input[i].value_count + job->input[i].confirm_count;

	return failed >= job->opts.runs_min && failed > measured;
}

int sched_fill_runs(struct sched_job *job, const struct store_run_kpi *runs,
		    size_t n)
{
	size_t *fill;
	size_t i, offset = 0;

	job->values = malloc((n != 0 ? n : 1) * sizeof(*job->values));
	job->seq = calloc(n != 0 ? n : 1, sizeof(*job->seq));
	/* fill[2 * idx + confirm]: runs of each commit and purpose */
	fill = calloc(2 * job->count, sizeof(*fill));
	if (job->values == NULL || job->seq == NULL || fill == NULL) {
		free(fill);
		return -1;
	}
	for (i = 0; i < n; i++) {
		long long idx = runs[i].commit_index;

		if (idx < 0 || (size_t)idx >= job->count)
			continue;
		if (!runs[i].has_kpi)
			job->commits[idx].failed_runs++;
		else
			fill[2 * idx + runs[i].confirm]++;
	}
	for (i = 0; i < job->count; i++) {
		job->input[i].values = job->values + offset;
		job->input[i].seq = job->seq + offset;
		offset += fill[2 * i];
		job->input[i].confirm_values = job->values + offset;
		job->input[i].confirm_seq = job->seq + offset;
		offset += fill[2 * i + 1];
		fill[2 * i] = fill[2 * i + 1] = 0;
	}
	for (i = 0; i < n; i++) {
		long long idx = runs[i].commit_index;
		bool confirm = runs[i].confirm;
		double *dst;

		if (idx < 0 || (size_t)idx >= job->count || !runs[i].has_kpi)
			continue;
		dst = (double *)(confirm ? job->input[idx].confirm_values
					 : job->input[idx].values);
		/* job->seq runs beside job->values */
		job->seq[dst - job->values + fill[2 * idx + confirm]] = i + 1;
		dst[fill[2 * idx + confirm]++] = runs[i].kpi;
	}
	for (i = 0; i < job->count; i++) {
		job->input[i].value_count = fill[2 * i];
		job->input[i].confirm_count = fill[2 * i + 1];
		job->input[i].build_failed =
		    job->commits[i].build_failed || keeps_failing(job, i);
	}
	free(fill);
	return 0;
}

static int load_runs(struct sched_job *job, PGconn *conn)
{
	struct store_run_kpi *runs;
	size_t n;
	int rc;

	if (store_runs_kpis(&runs, &n, conn, job->id) < 0)
		return -1;
	rc = sched_fill_runs(job, runs, n);
	free(runs);
	return rc;
}

int sched_load_shape(struct sched_job *out, PGconn *conn, long long job_id)
{
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	out->id = job_id;
	rc = load_options(out, conn);
	if (rc != 0)
		return rc;
	if (load_commits(out, conn) < 0) {
		sched_job_clear(out);
		return -1;
	}
	for (i = 0; i < out->count; i++)
		out->input[i].build_failed = out->commits[i].build_failed;
	return 0;
}

int sched_load(struct sched_job *out, PGconn *conn, long long job_id)
{
	int rc = sched_load_shape(out, conn, job_id);

	if (rc != 0)
		return rc;
	/* A job still resolving (or failed at it) has no candidates yet:
	 * nothing for the engine to answer. */
	if (load_runs(out, conn) < 0 ||
	    (out->count > 0 &&
	     bisect_step(&out->result, out->classes, out->input, out->count,
			 &out->opts) < 0)) {
		sched_job_clear(out);
		return -1;
	}
	return 0;
}

/* Stores the engine's requests as one task: the worker runs its commits
 * alternately when the engine asked for interleaving. */
static int queue_tasks(PGconn *conn, const struct sched_job *job)
{
	const struct bisect_result *res = &job->result;
	struct store_plan plan = {0};
	size_t i;
	int rc;

	plan.entries = calloc(res->request_count, sizeof(*plan.entries));
	if (plan.entries == NULL)
		return -1;
	plan.count = res->request_count;
	plan.interleave = res->interleave && res->request_count > 1;
	for (i = 0; i < res->request_count; i++) {
		const struct bisect_request *q = &res->requests[i];
		bool confirm = q->purpose == BISECT_CONFIRM;

		plan.entries[i].index = (long long)q->commit;
		plan.entries[i].runs = (long long)q->runs;
		snprintf(plan.entries[i].purpose,
			 sizeof(plan.entries[i].purpose), "%s",
			 confirm ? "confirm" : "search");
		log_info("job %lld: %zu %s runs of %.12s", job->id, q->runs,
			 confirm ? "confirmation" : "search",
			 job->commits[q->commit].sha);
	}
	rc = store_tasks_insert(conn, job->id, &plan);
	store_plan_clear(&plan);
	return rc;
}

json_t *sched_ci95_json(double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi))
		return json_null();
	return json_pack("[f,f]", lo, hi);
}

/* The culprits as stored in jobs.culprits. */
static json_t *culprits_json(const struct sched_job *job)
{
	const struct bisect_result *res = &job->result;
	json_t *list = json_array();
	size_t i, k;

	for (i = 0; i < res->culprit_count; i++) {
		const struct bisect_culprit *c = &res->culprits[i];
		json_t *ambiguous = json_array(), *item;

		/* Only when failed builds hide the exact culprit: else the
		 * culprit is the one commit and the list is empty. */
		for (k = 0; c->ambiguous_count > 1 && k < c->ambiguous_count;
		     k++)
			json_array_append_new(
			    ambiguous,
			    json_string(
				job->commits
				    [res->ambiguous[c->ambiguous_first + k]]
					.sha));
		item = json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:b,s:s,s:o}",
				 "commit", job->commits[c->commit].sha,
				 "parent", job->commits[c->parent].sha,
				 "subject", job->commits[c->commit].subject,
				 "change_pct", c->change_pct, "p_value",
				 c->p_value, "confidence", c->confidence,
				 "confirmed", c->confirmed, "direction",
				 c->regression ? "regression" : "improvement",
				 "ambiguous", ambiguous);
		if (item != NULL)
			json_object_set_new(
			    item, "change_ci95",
			    sched_ci95_json(c->change_ci95_lo,
					    c->change_ci95_hi));
		json_array_append_new(list, item);
	}
	return list;
}

/*
 * The culprit a job names (culprit_sha, change_pct): the oldest confirmed
 * one in the verdict's direction (the regression of a range that also
 * improved), else NULL.  Only a verdict of change names one, and only a
 * culprit the engine gave.
 */
static const struct bisect_culprit *
headline_culprit(const struct sched_job *job)
{
	const struct bisect_result *res = &job->result;
	size_t i;

	if (res->verdict != BISECT_REGRESSION &&
	    res->verdict != BISECT_IMPROVEMENT)
		return NULL;
	for (i = 0; i < res->culprit_count; i++) {
		const struct bisect_culprit *c = &res->culprits[i];

		if ((c->confirmed || !job->opts.confirm) &&
		    c->regression == (res->verdict == BISECT_REGRESSION))
			return c;
	}
	return NULL;
}

static int finish_job(PGconn *conn, const struct sched_job *job,
		      const char *base_url)
{
	const struct bisect_result *res = &job->result;
	const struct bisect_culprit *first = headline_culprit(job);
	bool found = first != NULL;
	struct store_engine_verdict verdict = {0};
	char *culprits = NULL, *cause = NULL;
	json_t *list;
	size_t i;
	int rc;

	/* An endpoint that gave no measurement: say what it did. */
	if (commitlog_cause(&cause, conn, job) < 0)
		return -1;
	list = culprits_json(job);
	culprits = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (culprits == NULL) {
		free(cause);
		return -1;
	}
	verdict.change_pct = found ? first->change_pct : res->change_pct;
	verdict.p_value = found ? first->p_value : res->p_value;
	verdict.confidence = res->confidence;
	verdict.change_ci95_lo =
	    found ? first->change_ci95_lo : res->change_ci95_lo;
	verdict.change_ci95_hi =
	    found ? first->change_ci95_hi : res->change_ci95_hi;
	/* A verdict of change names a confirmed culprit (the engine's
	 * rule); should one ever come without, it is stored as what it
	 * is. */
	verdict.verdict = !found && (res->verdict == BISECT_REGRESSION ||
				     res->verdict == BISECT_IMPROVEMENT)
			      ? "inconclusive"
			      : bisect_verdict_name(res->verdict);
	verdict.culprit_sha = found ? job->commits[first->commit].sha : NULL;
	verdict.parent_sha = found ? job->commits[first->parent].sha : NULL;
	verdict.message =
	    cause != NULL	  ? cause
	    : res->reason != NULL ? res->reason
	    : !found && strcmp(verdict.verdict, "inconclusive") == 0 &&
		    res->verdict != BISECT_INCONCLUSIVE
		? "the search named no culprit"
	    : found && first->ambiguous_count > 1
		? "commits next to the culprit could not be built; "
		  "the culprit may be any of them"
	    : found && !first->confirmed && job->opts.confirm
		? "fresh runs did not confirm the culprit"
		: NULL;
	verdict.culprits = culprits;
	rc = store_engine_finish(conn, job->id, &verdict);
	free(culprits);
	if (rc != STORE_OK) {
		free(cause);
		return -1;
	}
	log_info("job %lld: %s, %zu culprit(s)%s%.12s", job->id,
		 verdict.verdict, found ? res->culprit_count : 0,
		 found ? ", first " : "", found ? verdict.culprit_sha : "");
	/* The reports go into the outbox in the verdict's transaction: a
	 * verdict is never stored without them, nor sent twice.  One report
	 * per culprit; a job without culprits gets one about the range. */
	if (!found) {
		/* The report says the real cause too. */
		struct sched_job with_cause = *job;

		if (cause != NULL)
			with_cause.result.reason = cause;
		rc = reportjob_queue(conn, &with_cause, base_url, 0);
		free(cause);
		return rc;
	}
	free(cause);
	for (i = 0; i < res->culprit_count; i++) {
		rc = watcher_report_wanted(conn, job, i);
		if (rc < 0 ||
		    (rc > 0 && reportjob_queue(conn, job, base_url, i) < 0))
			return -1;
	}
	return 0;
}

/*
 * Fails the job at once with `message`, before the engine skips its
 * endpoints as unbuildable, and queues a report that says why (an
 * inconclusive one about the range, with the message as its reason).
 */
static int fail_job(PGconn *conn, const struct sched_job *job,
		    const char *message, const char *base_url)
{
	struct sched_job report = *job;

	if (store_engine_fail(conn, job->id, message) != STORE_OK)
		return -1;
	log_info("job %lld: failed: %s", job->id, message);
	report.result.verdict = BISECT_INCONCLUSIVE;
	report.result.reason = message;
	report.result.culprit_count = 0;
	return reportjob_queue(conn, &report, base_url, 0);
}

int sched_fail(PGconn *conn, long long job_id, const char *message,
	       const char *base_url)
{
	struct sched_job job;
	int rc;

	rc = sched_load(&job, conn, job_id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	rc = 0;
	if (strcmp(job.state, "queued") == 0 ||
	    strcmp(job.state, "running") == 0)
		rc = fail_job(conn, &job, message, base_url);
	sched_job_clear(&job);
	return rc;
}

int sched_advance(PGconn *conn, long long job_id, const char *base_url)
{
	struct sched_job job;
	long long open_tasks;
	char *cause = NULL;
	int rc, error = -1;

	/* A job spread over several machines is the k-section's until it
	 * settles on one (spreadjob.h). */
	rc = spreadjob_advance(conn, job_id);
	if (rc <= 0)
		return rc;
	if (store_tasks_open_count(&open_tasks, conn, job_id) < 0)
		return -1;
	if (open_tasks > 0)
		return 0; /* the engine decides once the open runs are in */
	rc = sched_load(&job, conn, job_id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (strcmp(job.state, "queued") != 0 &&
	    strcmp(job.state, "running") != 0) {
		error = 0;
		goto out;
	}
	/* A KPI that no run of the endpoints prints (misspelt, say) fails
	 * the job now, naming the metrics they did print. */
	rc = commitlog_missing_kpi(&cause, conn, &job);
	if (rc != 0) {
		error = rc < 0 ? -1 : fail_job(conn, &job, cause, base_url);
		goto ended;
	}
	/* A compare job is measured, never bisected (compare.h). */
	rc = compare_advance(conn, &job, base_url);
	if (rc != 0) {
		error = rc < 0 ? -1 : 0;
		goto ended;
	}
	/* A head the watcher measures ends its own way (watcher.h). */
	rc = watcher_advance(conn, &job);
	if (rc != 0) {
		error = rc < 0 ? -1 : 0;
		goto ended;
	}
	if (job.result.verdict == BISECT_PENDING &&
	    job.result.request_count == 0) {
		job.result.verdict = BISECT_INCONCLUSIVE;
		job.result.reason = "the engine asked for no further runs";
	}
	if (job.result.verdict == BISECT_PENDING) {
		error = queue_tasks(conn, &job);
		goto out;
	}
	error = finish_job(conn, &job, base_url);
ended:
	/* A job that ended in this step queues its webhooks' POSTs in the
	 * same transaction, as its reports (webhooks.h). */
	if (error == 0)
		error = webhooks_job_ended(conn, job_id, base_url);
out:
	free(cause);
	sched_job_clear(&job);
	return error;
}
