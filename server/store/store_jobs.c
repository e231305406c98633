#include "store_jobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"
#include "store.h"

/* A double column, NAN when NULL. */
static double number_or_nan(const PGresult *r, int row, int col)
{
	return db_is_null(r, row, col) ? NAN : db_double(r, row, col);
}

/* Runs `sql` with job `job_id` as its one parameter $1. */
static PGresult *job_query(PGconn *conn, const char *sql, long long job_id)
{
	char job_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job_text, job_id)};

	return db_exec(conn, sql, 1, params);
}

/* Postgres array text of the commit's parents: "{3,7}"; merges rarely
 * have more than a few parents, and an octopus beyond what fits keeps its
 * first ones. */
static void parents_text(char *buf, size_t size,
			 const struct gitrepo_commit *commit)
{
	size_t k, used = 0;

	buf[used++] = '{';
	for (k = 0; k < commit->parent_count && used + 24 < size; k++)
		used += (size_t)snprintf(buf + used, size - used, "%s%zu",
					 k ? "," : "", commit->parents[k]);
	buf[used++] = '}';
	buf[used] = '\0';
}

/* Inserts the job's row in state `state` with its two ends. */
static int insert_job(long long *out_id, PGconn *conn,
		      const struct store_job_new *job, const char *good_sha,
		      const char *bad_sha, const char *state)
{
	char repo_id[STORE_INT_TEXT], testcase_id[STORE_INT_TEXT],
	    token[STORE_INT_TEXT];
	char runs_min[STORE_INT_TEXT], runs_max[STORE_INT_TEXT];
	const char *params[12];
	PGresult *r;

	store_int_text(repo_id, job->repo_id);
	store_int_text(testcase_id, job->testcase_id);
	store_int_text(token, job->created_by);
	store_int_text(runs_min, job->runs_min);
	store_int_text(runs_max, job->runs_max);
	params[0] = repo_id;
	params[1] = testcase_id;
	params[2] = job->good_rev;
	params[3] = job->bad_rev;
	params[4] = good_sha;
	params[5] = bad_sha;
	params[6] = job->notify;
	params[7] = job->created_by > 0 ? token : NULL;
	params[8] = job->runs_min > 0 ? runs_min : NULL;
	params[9] = job->runs_max > 0 ? runs_max : NULL;
	params[10] = state;
	params[11] = job->group;
	r = db_exec(
	    conn,
	    "INSERT INTO jobs (repo_id, testcase_id, good_rev, bad_rev,"
	    " good_sha, bad_sha, notify, created_by, runs_min, runs_max,"
	    " state, group_name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
	    " $10, $11, coalesce($12, (SELECT group_name FROM testcases"
	    " WHERE id = $2))) RETURNING id",
	    12, params);
	if (r == NULL)
		return STORE_FAILED;
	*out_id = db_int(r, 0, 0);
	PQclear(r);
	return STORE_OK;
}

int store_jobs_create(long long *out_id, PGconn *conn,
		      const struct store_job_new *job,
		      const struct gitrepo_commit *commits, size_t count)
{
	if (insert_job(out_id, conn, job, commits[0].sha,
		       commits[count - 1].sha, "queued") < 0)
		return STORE_FAILED;
	return store_jobs_add_commits(conn, *out_id, commits, count);
}

int store_jobs_create_resolving(long long *out_id, PGconn *conn,
				const struct store_job_new *job,
				const char *good_sha, const char *bad_sha)
{
	char id[STORE_INT_TEXT];
	const char *params[1];
	PGresult *r;

	if (insert_job(out_id, conn, job, good_sha, bad_sha, "resolving") < 0)
		return STORE_FAILED;
	params[0] = store_int_text(id, *out_id);
	r = db_exec(conn, "INSERT INTO job_resolving (job_id) VALUES ($1)", 1,
		    params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

/* Flush the COPY buffer to the server at about this size. */
#define COPY_CHUNK (1 << 20)

int store_jobs_add_commits(PGconn *conn, long long job_id,
			   const struct gitrepo_commit *commits, size_t count)
{
	struct strbuf rows = STRBUF_INIT;
	char job_text[STORE_INT_TEXT], idx[STORE_INT_TEXT], parents[256];
	bool ok = true;
	size_t i;

	store_int_text(job_text, job_id);
	if (db_copy_start(conn, "COPY job_commits (job_id, idx, sha, subject,"
				" author_name, author_email, parents)"
				" FROM STDIN") < 0)
		return STORE_FAILED;
	for (i = 0; i < count && ok; i++) {
		parents_text(parents, sizeof(parents), &commits[i]);
		snprintf(idx, sizeof(idx), "%zu", i);
		db_copy_field(&rows, job_text);
		db_copy_field(&rows, idx);
		db_copy_field(&rows, commits[i].sha);
		db_copy_field(&rows, commits[i].subject);
		db_copy_field(&rows, commits[i].author_name);
		db_copy_field(&rows, commits[i].author_email);
		db_copy_field(&rows, parents);
		db_copy_row_end(&rows);
		if (rows.len >= COPY_CHUNK && db_copy_put(conn, &rows) < 0)
			ok = false;
	}
	return db_copy_finish(conn, &rows, ok) < 0 ? STORE_FAILED : STORE_OK;
}

int store_jobs_lock(PGconn *conn, long long job_id, char state[16])
{
	PGresult *r;
	int found;

	r = job_query(conn, "SELECT state FROM jobs WHERE id = $1 FOR UPDATE",
		      job_id);
	if (r == NULL)
		return STORE_FAILED;
	found = PQntuples(r) == 1;
	if (found && state != NULL)
		snprintf(state, 16, "%s", db_text(r, 0, 0));
	PQclear(r);
	return found ? STORE_OK : STORE_NOT_FOUND;
}

int store_jobs_token_usage(struct store_token_usage *out, PGconn *conn,
			   long long token_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, token_id)};
	PGresult *r;
	int error;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT coalesce(max_jobs_per_hour, -1),"
		    " coalesce(max_open_jobs, -1) FROM tokens"
		    " WHERE id = $1 FOR UPDATE",
		    1, params);
	error = store_one_row(r);
	if (error != STORE_OK)
		return error;
	out->max_jobs_per_hour = db_int(r, 0, 0);
	out->max_open_jobs = db_int(r, 0, 1);
	PQclear(r);
	/* Read committed: this statement's snapshot is taken after the lock
	 * was granted, so it counts the job of the submission that held it. */
	r = db_exec(conn,
		    "SELECT count(*) FILTER (WHERE state IN"
		    " ('resolving', 'queued', 'running')),"
		    " count(*) FILTER (WHERE created_at >"
		    " now() - interval '1 hour'),"
		    " coalesce(ceil(extract(epoch FROM min(created_at)"
		    " FILTER (WHERE created_at > now() - interval '1 hour')"
		    " + interval '1 hour' - now())), 0)::bigint"
		    " FROM jobs WHERE created_by = $1",
		    1, params);
	error = store_one_row(r);
	if (error != STORE_OK)
		return error;
	out->open_jobs = db_int(r, 0, 0);
	out->jobs_last_hour = db_int(r, 0, 1);
	out->hour_frees_in_s = db_int(r, 0, 2);
	PQclear(r);
	return STORE_OK;
}

void store_job_clear(struct store_job *job)
{
	PQclear(job->result);
	memset(job, 0, sizeof(*job));
}

/* A job's row: the columns store_jobs_get reads, in order. */
/* clang-format off */
static const char job_get_sql[] =
    "SELECT j.id, j.state, j.verdict, j.culprit_sha, j.parent_sha,"
    " j.change_pct, j.p_value, j.good_sha, j.bad_sha, j.good_rev,"
    " j.bad_rev, rp.name, t.name, j.message, "
    STORE_TIMESTAMP("j.created_at") ", "
    STORE_TIMESTAMP("j.finished_at") ","
    " j.notify, t.kpi, t.higher_is_better, j.culprits, j.confidence,"
    " j.change_ci95_lo, j.change_ci95_hi, coalesce(j.runs_min, 0),"
    " coalesce(j.runs_max, 0), "
    STORE_TIMESTAMP("j.started_at") ","
    " extract(epoch FROM coalesce(j.finished_at, now()) - j.started_at),"
    " t.bench_repo, t.bench_rev, j.bench_sha, j.group_name"
    " FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
    " JOIN testcases t ON t.id = j.testcase_id WHERE j.id = $1";
/* clang-format on */

int store_jobs_get(struct store_job *out, PGconn *conn, long long job_id)
{
	PGresult *r;

	memset(out, 0, sizeof(*out));
	r = job_query(conn, job_get_sql, job_id);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->result = r;
	out->id = db_int(r, 0, 0);
	out->state = db_text(r, 0, 1);
	out->verdict = db_text(r, 0, 2);
	out->culprit = db_text(r, 0, 3);
	out->parent = db_text(r, 0, 4);
	out->change_pct = number_or_nan(r, 0, 5);
	out->p_value = number_or_nan(r, 0, 6);
	out->good_sha = db_text(r, 0, 7);
	out->bad_sha = db_text(r, 0, 8);
	out->good_rev = db_text(r, 0, 9);
	out->bad_rev = db_text(r, 0, 10);
	out->repo = db_text(r, 0, 11);
	out->testcase = db_text(r, 0, 12);
	out->message = db_text(r, 0, 13);
	out->created_at = db_text(r, 0, 14);
	out->finished_at = db_text(r, 0, 15);
	out->notify = db_text(r, 0, 16);
	out->kpi = db_text(r, 0, 17);
	out->higher_is_better = db_bool(r, 0, 18);
	out->culprits = db_text(r, 0, 19);
	out->confidence = number_or_nan(r, 0, 20);
	out->change_ci95_lo = number_or_nan(r, 0, 21);
	out->change_ci95_hi = number_or_nan(r, 0, 22);
	out->runs_min = db_int(r, 0, 23);
	out->runs_max = db_int(r, 0, 24);
	out->started_at = db_text(r, 0, 25);
	out->elapsed_s = number_or_nan(r, 0, 26);
	out->bench_repo = db_text(r, 0, 27);
	out->bench_rev = db_text(r, 0, 28);
	out->bench_sha = db_text(r, 0, 29);
	out->group = db_text(r, 0, 30);
	return 0;
}

void store_job_delivery_clear(struct store_job_delivery *delivery)
{
	PQclear(delivery->result);
	memset(delivery, 0, sizeof(*delivery));
}

int store_jobs_delivery(struct store_job_delivery *out, PGconn *conn,
			long long job_id)
{
	PGresult *r;

	memset(out, 0, sizeof(*out));
	r = job_query(
	    conn,
	    "SELECT CASE WHEN recipients = '[]'::jsonb THEN 'none'"
	    " WHEN sent_at IS NOT NULL THEN 'sent'"
	    " WHEN failed_at IS NOT NULL THEN 'failed'"
	    " WHEN attempts > 0 THEN 'retrying'"
	    " ELSE 'pending' END, attempts, last_error, " STORE_TIMESTAMP(
		"sent_at") ", " STORE_TIMESTAMP("next_attempt_at") ", "
								   "recipients"
								   " FROM "
								   "outbox "
								   "WHERE "
								   "job_id = "
								   "$1 ORDER "
								   "BY id DESC"
								   " LIMIT 1",
	    job_id);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->result = r;
	out->state = db_text(r, 0, 0);
	out->attempts = db_int(r, 0, 1);
	out->last_error = db_text(r, 0, 2);
	out->sent_at = db_text(r, 0, 3);
	out->next_attempt_at = db_text(r, 0, 4);
	out->recipients = db_text(r, 0, 5);
	return 0;
}

int store_jobs_builds(long long *out, PGconn *conn, long long job_id)
{
	PGresult *r;

	r = job_query(conn,
		      "SELECT coalesce(sum(builds), 0)"
		      " FROM tasks WHERE job_id = $1",
		      job_id);
	if (r == NULL)
		return STORE_FAILED;
	*out = db_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int store_jobs_report(char **out, PGconn *conn, long long job_id)
{
	PGresult *r;
	int rc = 0;

	*out = NULL;
	r = job_query(conn,
		      "SELECT j.id, o.message FROM jobs j LEFT JOIN outbox o"
		      " ON o.job_id = j.id WHERE j.id = $1 ORDER BY o.id DESC"
		      " LIMIT 1",
		      job_id);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) == 0)
		rc = STORE_NOT_FOUND;
	else if (!db_is_null(r, 0, 1) &&
		 (*out = strdup(db_text(r, 0, 1))) == NULL)
		rc = STORE_FAILED;
	PQclear(r);
	return rc;
}

void store_jobs_page_clear(struct store_jobs_page *page)
{
	free(page->rows);
	PQclear(page->result);
	memset(page, 0, sizeof(*page));
}

/*
 * A page of jobs: the total first; the outer join yields one row (the
 * total) even for an empty page.  Runs and tested commits count as the
 * job's page does: the runs of its machine, and the commits with a run or
 * a failed build.  The filter is not materialized and names no table
 * but jobs, so the page is read backwards on the primary key, stopping
 * at its last job, and the count from an index, without joining all
 * jobs to their repositories and testcases (1.6 ms instead of 8 to 13
 * with 10,000 jobs, EXPLAIN ANALYZE).
 */
/* clang-format off */
static const char jobs_list_sql[] =
    "WITH f AS NOT MATERIALIZED (SELECT j.id FROM jobs j"
    " WHERE ($1::text IS NULL OR j.repo_id IN"
    " (SELECT rp.id FROM repos rp WHERE rp.name = $1))"
    " AND ($2::text IS NULL OR j.testcase_id IN"
    " (SELECT t.id FROM testcases t WHERE t.name = $2))"
    " AND ($3::text IS NULL OR j.state = $3)"
    " AND ($4::text IS NULL OR j.verdict = $4)"
    " AND ($7::text IS NULL OR j.group_name = $7)),"
    " page AS (SELECT id FROM f ORDER BY id DESC"
    " LIMIT $5::bigint OFFSET $6::bigint)"
    " SELECT (SELECT count(*) FROM f), j.id, j.state,"
    " j.verdict, rp.name, t.name, j.good_sha, j.bad_sha,"
    " j.culprit_sha, j.change_pct, "
    STORE_TIMESTAMP("j.created_at") ", "
    STORE_TIMESTAMP("j.finished_at") ","
    " extract(epoch FROM now() - j.created_at)::bigint, c.subject,"
    " (SELECT count(*) FROM runs r WHERE r.job_id = j.id"
    " AND NOT r.superseded),"
    " (SELECT count(*) FROM (SELECT r.commit_idx FROM runs r"
    " WHERE r.job_id = j.id AND NOT r.superseded UNION"
    " SELECT b.idx FROM job_commits b WHERE b.job_id = j.id"
    " AND b.build_failed) tested), j.group_name"
    " FROM (SELECT 1) one LEFT JOIN (page"
    " JOIN jobs j ON j.id = page.id"
    " JOIN repos rp ON rp.id = j.repo_id"
    " JOIN testcases t ON t.id = j.testcase_id"
    " LEFT JOIN job_commits c ON c.job_id = j.id"
    " AND c.sha = j.culprit_sha) ON true"
    " ORDER BY j.id DESC";
/* clang-format on */

int store_jobs_list(struct store_jobs_page *out, PGconn *conn,
		    const struct store_jobs_filter *filter)
{
	char limit[STORE_INT_TEXT], offset[STORE_INT_TEXT];
	const char *params[7] = {
	    filter->repo, filter->testcase, filter->state, filter->verdict,
	    limit,	  offset,	    filter->group};
	PGresult *r;
	int row;

	memset(out, 0, sizeof(*out));
	store_int_text(limit, filter->limit);
	store_int_text(offset, filter->offset);
	r = db_exec(conn, jobs_list_sql, 7, params);
	if (r == NULL)
		return STORE_FAILED;
	out->result = r;
	out->total = db_int(r, 0, 0);
	out->rows = calloc((size_t)PQntuples(r) + 1, sizeof(*out->rows));
	if (out->rows == NULL) {
		store_jobs_page_clear(out);
		return STORE_FAILED;
	}
	for (row = 0; row < PQntuples(r); row++) {
		struct store_jobs_row *j = &out->rows[out->count];

		if (db_is_null(r, row, 1))
			continue;
		j->id = db_int(r, row, 1);
		j->state = db_text(r, row, 2);
		j->verdict = db_text(r, row, 3);
		j->repo = db_text(r, row, 4);
		j->testcase = db_text(r, row, 5);
		j->good_sha = db_text(r, row, 6);
		j->bad_sha = db_text(r, row, 7);
		j->culprit = db_text(r, row, 8);
		j->change_pct = number_or_nan(r, row, 9);
		j->created_at = db_text(r, row, 10);
		j->finished_at = db_text(r, row, 11);
		j->age_seconds = db_int(r, row, 12);
		j->culprit_subject = db_text(r, row, 13);
		j->runs = db_int(r, row, 14);
		j->commits_tested = db_int(r, row, 15);
		j->group = db_text(r, row, 16);
		out->count++;
	}
	return 0;
}

/* Runs one job statement with the job's id as $1. */
static int exec_job(PGconn *conn, const char *sql, long long job_id)
{
	PGresult *r = job_query(conn, sql, job_id);

	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return 0;
}

int store_jobs_cancel(char state[16], PGconn *conn, long long job_id)
{
	int rc;

	if (db_begin(conn) < 0)
		return STORE_FAILED;
	rc = store_jobs_lock(conn, job_id, state);
	if (rc != 0) {
		db_rollback(conn);
		return rc;
	}
	if (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0 &&
	    strcmp(state, "resolving") != 0) {
		db_rollback(conn);
		return STORE_CONFLICT;
	}
	if (exec_job(conn,
		     "UPDATE jobs SET state = 'cancelled',"
		     " finished_at = now(),"
		     " message = 'cancelled on request' WHERE id = $1",
		     job_id) < 0 ||
	    exec_job(conn,
		     "UPDATE tasks SET state = 'cancelled',"
		     " finished_at = now() WHERE job_id = $1"
		     " AND state IN ('queued', 'running')",
		     job_id) < 0 ||
	    db_commit(conn) < 0) {
		db_rollback(conn);
		return STORE_FAILED;
	}
	return STORE_OK;
}

void store_job_rerun_clear(struct store_job_rerun *rerun)
{
	PQclear(rerun->result);
	memset(rerun, 0, sizeof(*rerun));
}

int store_jobs_rerun_source(struct store_job_rerun *out, PGconn *conn,
			    long long job_id)
{
	PGresult *r;

	memset(out, 0, sizeof(*out));
	r = job_query(
	    conn,
	    "SELECT rp.name, t.name, j.good_sha, j.bad_sha, j.notify,"
	    " j.group_name FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
	    " JOIN testcases t ON t.id = j.testcase_id"
	    " WHERE j.id = $1",
	    job_id);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->result = r;
	out->repo = db_text(r, 0, 0);
	out->testcase = db_text(r, 0, 1);
	out->good_sha = db_text(r, 0, 2);
	out->bad_sha = db_text(r, 0, 3);
	out->notify = db_text(r, 0, 4);
	out->group = db_text(r, 0, 5);
	return 0;
}

void store_job_runs_clear(struct store_job_runs *runs)
{
	free(runs->runs);
	PQclear(runs->result);
	memset(runs, 0, sizeof(*runs));
}

int store_jobs_runs(struct store_job_runs *out, PGconn *conn, long long job_id)
{
	PGresult *r;
	int row;

	memset(out, 0, sizeof(*out));
	/* One row with a NULL run for a job without runs. */
	r = job_query(
	    conn,
	    "SELECT r.id, r.commit_idx, c.sha, w.name, r.exit_code,"
	    " r.wall_s, r.kpi, r.metrics, " STORE_TIMESTAMP(
		"r.created_at") ", r.worker_id, w.grp, w.machine,"
				" NOT r.superseded FROM jobs j LEFT JOIN runs "
				"r ON r.job_id = "
				"j.id"
				" LEFT JOIN job_commits c"
				" ON c.job_id = r.job_id AND c.idx = "
				"r.commit_idx"
				" LEFT JOIN workers w ON w.id = r.worker_id"
				" WHERE j.id = $1 ORDER BY r.id",
	    job_id);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->result = r;
	out->runs = calloc((size_t)PQntuples(r), sizeof(*out->runs));
	if (out->runs == NULL) {
		store_job_runs_clear(out);
		return STORE_FAILED;
	}
	for (row = 0; row < PQntuples(r); row++) {
		struct store_job_run *run = &out->runs[out->count];

		if (db_is_null(r, row, 0))
			continue;
		run->commit_index = db_int(r, row, 1);
		run->commit = db_text(r, row, 2);
		run->worker = db_text(r, row, 3);
		run->exit_code = db_int(r, row, 4);
		run->wall_s = number_or_nan(r, row, 5);
		run->kpi = number_or_nan(r, row, 6);
		run->metrics = db_text(r, row, 7);
		run->created_at = db_text(r, row, 8);
		run->worker_id = db_is_null(r, row, 9) ? 0 : db_int(r, row, 9);
		run->group = db_text(r, row, 10);
		run->machine = db_text(r, row, 11);
		run->counted = db_bool(r, row, 12);
		out->count++;
	}
	return 0;
}

void store_job_page_info_clear(struct store_job_page_info *info)
{
	PQclear(info->result);
	memset(info, 0, sizeof(*info));
}

int store_jobs_page_info(struct store_job_page_info *out, PGconn *conn,
			 long long job_id, const char *range_after,
			 const char *range_through, const char *culprit)
{
	char job_text[STORE_INT_TEXT];
	const char *params[4] = {job_text, range_after, range_through,
				 culprit};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	out->range_lo = out->range_hi = -1;
	store_int_text(job_text, job_id);
	r = db_exec(
	    conn,
	    "SELECT (SELECT idx FROM job_commits WHERE job_id = $1"
	    " AND sha = $2), (SELECT idx FROM job_commits"
	    " WHERE job_id = $1 AND sha = $3),"
	    " (SELECT author_name || ' <' || author_email || '>'"
	    " FROM job_commits WHERE job_id = $1 AND sha = $4),"
	    " rp.web_url FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
	    " WHERE j.id = $1",
	    4, params);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->result = r;
	if (!db_is_null(r, 0, 0) && !db_is_null(r, 0, 1)) {
		out->range_lo = (long)db_int(r, 0, 0);
		out->range_hi = (long)db_int(r, 0, 1);
	}
	out->culprit_author = db_text(r, 0, 2);
	out->web_url = db_text(r, 0, 3);
	return 0;
}

void store_job_path_clear(struct store_job_path *path)
{
	free(path->commits);
	PQclear(path->result);
	memset(path, 0, sizeof(*path));
}

int store_jobs_path(struct store_job_path *out, PGconn *conn, long long job_id)
{
	PGresult *r;
	int row;

	memset(out, 0, sizeof(*out));
	/* The end of the log that explains a commit that gave no value:
	 * its build's when it did not build, else its run's. */
	r = job_query(
	    conn,
	    "SELECT c.idx, c.sha, c.subject, c.author_name,"
	    " (SELECT right(CASE WHEN x.build_failed"
	    " OR x.outcome = 'build_failed' THEN x.build_log"
	    " WHEN x.outcome IN ('crashed', 'timed_out', 'no_kpi')"
	    " THEN x.run_output END, 2048) FROM job_commits x"
	    " WHERE x.job_id = t.job_id AND x.idx = c.idx)"
	    " FROM tasks t CROSS JOIN LATERAL"
	    " jsonb_array_elements(t.plan) WITH ORDINALITY AS p(e, ord)"
	    " JOIN job_commits c ON c.job_id = t.job_id"
	    " AND c.idx = (p.e->>'idx')::int"
	    " WHERE t.job_id = $1"
	    " GROUP BY t.job_id, c.idx, c.sha, c.subject,"
	    " c.author_name"
	    " ORDER BY min(t.id * 64 + p.ord)",
	    job_id);
	if (r == NULL)
		return STORE_FAILED;
	out->result = r;
	out->commits = calloc((size_t)PQntuples(r) + 1, sizeof(*out->commits));
	if (out->commits == NULL) {
		store_job_path_clear(out);
		return STORE_FAILED;
	}
	for (row = 0; row < PQntuples(r); row++) {
		struct store_path_commit *c = &out->commits[row];

		c->index = db_int(r, row, 0);
		c->sha = db_text(r, row, 1);
		c->subject = db_text(r, row, 2);
		c->author_name = db_text(r, row, 3);
		c->log_tail = db_text(r, row, 4);
	}
	out->count = (size_t)PQntuples(r);
	return 0;
}
