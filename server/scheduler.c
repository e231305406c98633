#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "reportjob.h"

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
	free(job->classes);
	memset(job, 0, sizeof(*job));
}

static int load_options(struct sched_job *job, PGconn *conn,
			const char *id_text)
{
	const char *params[1] = {id_text};
	PGresult *r;

	r = db_exec(conn,
		    "SELECT j.state, t.runs_min, t.runs_max, t.min_change_pct,"
		    " t.higher_is_better FROM jobs j JOIN testcases t"
		    " ON t.id = j.testcase_id WHERE j.id = $1",
		    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return 1;
	}
	snprintf(job->state, sizeof(job->state), "%s", db_text(r, 0, 0));
	bisect_options_init(&job->opts, db_bool(r, 0, 4));
	job->opts.runs_min = (size_t)db_int(r, 0, 1);
	job->opts.runs_max = (size_t)db_int(r, 0, 2);
	job->opts.min_change_pct = db_double(r, 0, 3);
	PQclear(r);
	return 0;
}

static int load_commits(struct sched_job *job, PGconn *conn,
			const char *id_text)
{
	const char *params[1] = {id_text};
	PGresult *r;
	size_t i;

	r = db_exec(conn,
		    "SELECT idx, sha, subject, author_name, author_email,"
		    " build_failed FROM job_commits WHERE job_id = $1"
		    " ORDER BY idx",
		    1, params);
	if (r == NULL)
		return -1;
	job->count = (size_t)PQntuples(r);
	job->commits = calloc(job->count, sizeof(*job->commits));
	job->input = calloc(job->count, sizeof(*job->input));
	job->classes = calloc(job->count, sizeof(*job->classes));
	if (job->count < 2 || job->commits == NULL || job->input == NULL ||
	    job->classes == NULL) {
		PQclear(r);
		return -1;
	}
	for (i = 0; i < job->count; i++) {
		struct sched_commit *c = &job->commits[i];

		c->idx = db_int(r, (int)i, 0);
		snprintf(c->sha, sizeof(c->sha), "%s", db_text(r, (int)i, 1));
		c->subject = strdup(db_text(r, (int)i, 2));
		c->author_name = strdup(db_text(r, (int)i, 3));
		c->author_email = strdup(db_text(r, (int)i, 4));
		c->build_failed = db_bool(r, (int)i, 5);
		if (c->idx != (long long)i || c->subject == NULL ||
		    c->author_name == NULL || c->author_email == NULL) {
			PQclear(r);
			return -1;
		}
	}
	PQclear(r);
	return 0;
}

/* Fills the engine input with the KPI of every run, grouped by commit. */
static int load_runs(struct sched_job *job, PGconn *conn, const char *id_text)
{
	const char *params[1] = {id_text};
	size_t *fill = NULL;
	size_t i, n, offset = 0;
	PGresult *r;

	r = db_exec(conn,
		    "SELECT commit_idx, kpi FROM runs WHERE job_id = $1"
		    " ORDER BY id",
		    1, params);
	if (r == NULL)
		return -1;
	n = (size_t)PQntuples(r);
	job->values = malloc((n != 0 ? n : 1) * sizeof(*job->values));
	fill = calloc(job->count, sizeof(*fill));
	if (job->values == NULL || fill == NULL) {
		PQclear(r);
		free(fill);
		return -1;
	}
	for (i = 0; i < n; i++) {
		long long idx = db_int(r, (int)i, 0);

		if (idx < 0 || (size_t)idx >= job->count)
			continue;
		if (db_is_null(r, (int)i, 1))
			job->commits[idx].failed_runs++;
		else
			fill[idx]++;
	}
	for (i = 0; i < job->count; i++) {
		job->input[i].values = job->values + offset;
		offset += fill[i];
		fill[i] = 0;
	}
	for (i = 0; i < n; i++) {
		long long idx = db_int(r, (int)i, 0);

		if (idx < 0 || (size_t)idx >= job->count ||
		    db_is_null(r, (int)i, 1))
			continue;
		((double *)job->input[idx].values)[fill[idx]++] =
			db_double(r, (int)i, 1);
	}
	for (i = 0; i < job->count; i++) {
		job->input[i].value_count = fill[i];
		/* A benchmark that keeps failing on a commit is treated like
		 * a failed build: the commit is skipped, not blamed. */
		job->input[i].build_failed =
			job->commits[i].build_failed ||
			job->commits[i].failed_runs >= job->opts.runs_min;
	}
	free(fill);
	PQclear(r);
	return 0;
}

int sched_load(struct sched_job *out, PGconn *conn, long long job_id)
{
	char id_text[24];
	int rc;

	memset(out, 0, sizeof(*out));
	out->id = job_id;
	snprintf(id_text, sizeof(id_text), "%lld", job_id);
	rc = load_options(out, conn, id_text);
	if (rc != 0)
		return rc;
	if (load_commits(out, conn, id_text) < 0 ||
	    load_runs(out, conn, id_text) < 0 ||
	    bisect_step(&out->result, out->classes, out->input, out->count,
			&out->opts) < 0) {
		sched_job_clear(out);
		return -1;
	}
	return 0;
}

static int queue_tasks(PGconn *conn, const struct sched_job *job)
{
	char id_text[24], idx[24], runs[24];
	const char *params[3] = {id_text, idx, runs};
	size_t i;

	snprintf(id_text, sizeof(id_text), "%lld", job->id);
	for (i = 0; i < job->result.request_count; i++) {
		PGresult *r;

		snprintf(idx, sizeof(idx), "%zu", job->result.requests[i].commit);
		snprintf(runs, sizeof(runs), "%zu", job->result.requests[i].runs);
		r = db_exec(conn,
			    "INSERT INTO tasks (job_id, commit_idx, runs_wanted)"
			    " VALUES ($1, $2, $3)",
			    3, params);
		if (r == NULL)
			return -1;
		PQclear(r);
		log_info("job %lld: %s runs of %.12s", job->id, runs,
			 job->commits[job->result.requests[i].commit].sha);
	}
	return 0;
}

static int finish_job(PGconn *conn, const struct sched_job *job,
		      const char *base_url)
{
	const struct bisect_result *res = &job->result;
	bool culprit = res->verdict == BISECT_REGRESSION ||
		       res->verdict == BISECT_IMPROVEMENT;
	char id_text[24], change[40], p[40];
	const char *params[7];
	PGresult *r;

	snprintf(id_text, sizeof(id_text), "%lld", job->id);
	snprintf(change, sizeof(change), "%.17g", res->change_pct);
	snprintf(p, sizeof(p), "%.17g", res->p_value);
	params[0] = id_text;
	params[1] = bisect_verdict_name(res->verdict);
	params[2] = culprit ? job->commits[res->culprit].sha : NULL;
	params[3] = culprit ? job->commits[res->parent].sha : NULL;
	params[4] = change;
	params[5] = p;
	params[6] = res->reason != NULL ? res->reason
		    : res->culprit_ambiguous
			    ? "commits next to the culprit could not be built; "
			      "the culprit may be any of them"
			    : NULL;
	r = db_exec(conn,
		    "UPDATE jobs SET state = 'done', verdict = $2,"
		    " culprit_sha = $3, parent_sha = $4, change_pct = $5,"
		    " p_value = $6, message = $7, finished_at = now()"
		    " WHERE id = $1",
		    7, params);
	if (r == NULL)
		return -1;
	PQclear(r);
	log_info("job %lld: %s%s%.12s", job->id, params[1],
		 culprit ? ", culprit " : "", culprit ? params[2] : "");
	/* The report goes into the outbox in the verdict's transaction: a
	 * verdict is never stored without its report, nor sent twice. */
	if (reportjob_queue(conn, job, base_url) < 0)
		return -1;
	return 0;
}

int sched_advance(PGconn *conn, long long job_id, const char *base_url)
{
	char id_text[24];
	const char *params[1] = {id_text};
	struct sched_job job;
	PGresult *r;
	int rc, error = -1;

	snprintf(id_text, sizeof(id_text), "%lld", job_id);
	r = db_exec(conn,
		    "SELECT count(*) FROM tasks WHERE job_id = $1"
		    " AND state IN ('queued', 'running')",
		    1, params);
	if (r == NULL)
		return -1;
	rc = db_int(r, 0, 0) > 0;
	PQclear(r);
	if (rc)
		return 0; /* the engine decides once the open runs are in */
	rc = sched_load(&job, conn, job_id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (strcmp(job.state, "queued") != 0 &&
	    strcmp(job.state, "running") != 0) {
		error = 0;
		goto out;
	}
	if (job.result.verdict == BISECT_PENDING &&
	    job.result.request_count == 0) {
		job.result.verdict = BISECT_INCONCLUSIVE;
		job.result.reason = "the engine asked for no further runs";
	}
	if (job.result.verdict == BISECT_PENDING)
		error = queue_tasks(conn, &job);
	else
		error = finish_job(conn, &job, base_url);
out:
	sched_job_clear(&job);
	return error;
}
