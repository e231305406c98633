#include "store_watches.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"
#include "store.h"

void store_heads_free(struct store_head *heads, size_t count)
{
	size_t i;

	for (i = 0; heads != NULL && i < count; i++)
		free(heads[i].subject);
	free(heads);
}

static double double_or_nan(const PGresult *r, int row, int col)
{
	return db_is_null(r, row, col) ? NAN : db_double(r, row, col);
}

#define HEAD_COLUMNS                                                          \
	"SELECT h.id, h.testcase_id, t.name, h.branch, h.sha, h.subject,"     \
	" h.state, coalesce(h.outcome, ''), h.change_pct,"                    \
	" coalesce(h.job_id, 0), coalesce(h.base_head_id, "                   \
	"0), " STORE_TIMESTAMP("h.seen_at") ", coalesce(" STORE_TIMESTAMP(    \
	    "h.measured_at") ", '')"

/* Fills `out` from the HEAD_COLUMNS of row `row`. */
static int head_from_row(struct store_head *out, const PGresult *r, int row)
{
	memset(out, 0, sizeof(*out));
	out->id = db_int(r, row, 0);
	out->testcase_id = db_int(r, row, 1);
	store_watches_row_copy(out->testcase, sizeof(out->testcase), r, row,
			       2);
	store_watches_row_copy(out->branch, sizeof(out->branch), r, row, 3);
	store_watches_row_copy(out->sha, sizeof(out->sha), r, row, 4);
	out->subject = store_watches_row_dup(r, row, 5);
	store_watches_row_copy(out->state, sizeof(out->state), r, row, 6);
	store_watches_row_copy(out->outcome, sizeof(out->outcome), r, row, 7);
	out->change_pct = double_or_nan(r, row, 8);
	out->job_id = db_int(r, row, 9);
	out->base_head_id = db_int(r, row, 10);
	store_watches_row_copy(out->seen_at, sizeof(out->seen_at), r, row, 11);
	store_watches_row_copy(out->measured_at, sizeof(out->measured_at), r,
			       row, 12);
	out->median = out->min = out->max = out->q1 = out->q3 = NAN;
	return out->subject != NULL ? 0 : -1;
}

int store_watches_base_head(struct store_head *out, bool *measuring,
			    PGconn *conn, long long watch_id,
			    long long testcase_id, const char *branch)
{
	char watch[24], tc[24];
	const char *params[3] = {watch, tc, branch};
	PGresult *r;
	int rc = 1;

	snprintf(watch, sizeof(watch), "%lld", watch_id);
	snprintf(tc, sizeof(tc), "%lld", testcase_id);
	r = db_exec(conn,
		    "SELECT count(*) FROM watch_heads WHERE watch_id = $1"
		    " AND testcase_id = $2 AND branch = $3"
		    " AND state = 'measuring'",
		    3, params);
	if (r == NULL)
		return -1;
	*measuring = db_int(r, 0, 0) > 0;
	PQclear(r);
	r = db_exec(conn,
		    HEAD_COLUMNS
		    " FROM watch_heads h JOIN testcases t"
		    " ON t.id = h.testcase_id WHERE h.watch_id = $1"
		    " AND h.testcase_id = $2 AND h.branch = $3"
		    " AND h.state <> 'measuring'"
		    " AND h.outcome IS DISTINCT FROM 'failed'"
		    " ORDER BY h.id DESC LIMIT 1",
		    3, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1)
		rc = head_from_row(out, r, 0);
	PQclear(r);
	return rc;
}

int store_watches_add_head(PGconn *conn, long long watch_id,
			   long long testcase_id, const char *branch,
			   const char *sha, const char *subject,
			   const char *state, long long base_head_id,
			   long long *id_out)
{
	char watch[24], tc[24], base[24];
	const char *params[7] = {watch,
				 tc,
				 branch,
				 sha,
				 subject,
				 state,
				 base_head_id > 0 ? base : NULL};
	PGresult *r;
	int rc = 1;

	snprintf(watch, sizeof(watch), "%lld", watch_id);
	snprintf(tc, sizeof(tc), "%lld", testcase_id);
	snprintf(base, sizeof(base), "%lld", base_head_id);
	r = db_exec(conn,
		    "INSERT INTO watch_heads (watch_id, testcase_id, branch,"
		    " sha, subject, state, base_head_id)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7)"
		    " ON CONFLICT DO NOTHING RETURNING id",
		    7, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		*id_out = db_int(r, 0, 0);
		rc = 0;
	}
	PQclear(r);
	return rc;
}

int store_watches_drop_head(PGconn *conn, long long head_id)
{
	char id[24];
	const char *params[1] = {id};

	snprintf(id, sizeof(id), "%lld", head_id);
	return store_watches_exec(
	    conn, "DELETE FROM watch_heads WHERE id = $1", 1, params);
}

int store_watches_rebase_head(PGconn *conn, long long head_id)
{
	char id[24];
	const char *params[1] = {id};

	snprintf(id, sizeof(id), "%lld", head_id);
	return store_watches_exec(conn,
				  "UPDATE watch_heads SET state = 'baseline',"
				  " base_head_id = NULL WHERE id = $1",
				  1, params);
}

int store_watches_link_job(PGconn *conn, long long watch_id, long long head_id,
			   long long job_id, const char *branch)
{
	char watch[24], head[24], job[24];
	const char *params[4] = {job, watch, head, branch};
	const char *head_job[2] = {head, job};
	const char *job_branch[2] = {job, branch};

	snprintf(watch, sizeof(watch), "%lld", watch_id);
	snprintf(head, sizeof(head), "%lld", head_id);
	snprintf(job, sizeof(job), "%lld", job_id);
	if (store_watches_exec(
		conn,
		"INSERT INTO watch_jobs (job_id, watch_id, head_id,"
		" branch, role) VALUES ($1, $2, $3, $4, 'measure')",
		4, params) < 0 ||
	    store_watches_exec(
		conn, "UPDATE watch_heads SET job_id = $2 WHERE id = $1", 2,
		head_job) < 0)
		return -1;
	return store_watches_exec(
	    conn, "UPDATE jobs SET bad_rev = $2 WHERE id = $1", 2, job_branch);
}

int store_watches_job(struct store_watch_job *out, PGconn *conn,
		      long long job_id)
{
	char job[24];
	const char *params[1] = {job};
	PGresult *r;
	int rc = 1;

	memset(out, 0, sizeof(*out));
	snprintf(job, sizeof(job), "%lld", job_id);
	r = db_exec(conn,
		    "SELECT wj.job_id, coalesce(wj.watch_id, 0),"
		    " coalesce(wj.head_id, 0), coalesce(h.base_head_id, 0),"
		    " j.testcase_id, wj.role, wj.branch,"
		    " coalesce(w.regressions_only, false)"
		    " FROM watch_jobs wj JOIN jobs j ON j.id = wj.job_id"
		    " LEFT JOIN watch_heads h ON h.id = wj.head_id"
		    " LEFT JOIN watches w ON w.id = wj.watch_id"
		    " WHERE wj.job_id = $1",
		    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		out->job_id = db_int(r, 0, 0);
		out->watch_id = db_int(r, 0, 1);
		out->head_id = db_int(r, 0, 2);
		out->base_head_id = db_int(r, 0, 3);
		out->testcase_id = db_int(r, 0, 4);
		store_watches_row_copy(out->role, sizeof(out->role), r, 0, 5);
		store_watches_row_copy(out->branch, sizeof(out->branch), r, 0,
				       6);
		out->regressions_only = db_bool(r, 0, 7);
		rc = 0;
	}
	PQclear(r);
	return rc;
}

/* Copies the KPI of the job's search runs of commit `idx` to `head`. */
static int copy_runs(PGconn *conn, const char *job, long long head_id,
		     size_t idx)
{
	char head[24], idx_text[24];
	const char *params[3] = {head, job, idx_text};

	if (head_id <= 0)
		return 0;
	snprintf(head, sizeof(head), "%lld", head_id);
	snprintf(idx_text, sizeof(idx_text), "%zu", idx);
	return store_watches_exec(
	    conn,
	    "INSERT INTO watch_head_runs (head_id, run_id, kpi)"
	    " SELECT $1, id, kpi FROM runs WHERE job_id = $2"
	    " AND commit_idx = $3 AND purpose = 'search' AND NOT superseded"
	    " AND kpi IS NOT NULL ON CONFLICT DO NOTHING",
	    3, params);
}

int store_watches_measured(PGconn *conn, const struct store_watch_job *wj,
			   const char *outcome, double change_pct,
			   size_t last_idx)
{
	char job[24], head[24], change[40];
	const char *params[3] = {head, outcome,
				 isfinite(change_pct) ? change : NULL};

	snprintf(job, sizeof(job), "%lld", wj->job_id);
	snprintf(head, sizeof(head), "%lld", wj->head_id);
	snprintf(change, sizeof(change), "%.17g", change_pct);
	if (copy_runs(conn, job, wj->head_id, last_idx) < 0 ||
	    copy_runs(conn, job, wj->base_head_id, 0) < 0)
		return -1;
	return store_watches_exec(
	    conn,
	    "UPDATE watch_heads SET state = 'measured',"
	    " outcome = $2, change_pct = $3, measured_at = now()"
	    " WHERE id = $1",
	    3, params);
}

int store_watches_promote(PGconn *conn, long long job_id)
{
	char job[24];
	const char *params[1] = {job};

	snprintf(job, sizeof(job), "%lld", job_id);
	return store_watches_exec(conn,
				  "UPDATE watch_jobs SET role = 'bisect'"
				  " WHERE job_id = $1",
				  1, params);
}

int store_watches_finish_job(PGconn *conn, long long job_id,
			     const char *verdict, double change_pct,
			     double p_value, const char *message)
{
	char job[24], change[40], p[40];
	const char *params[5] = {job, verdict,
				 isfinite(change_pct) ? change : NULL,
				 isfinite(p_value) ? p : NULL, message};

	snprintf(job, sizeof(job), "%lld", job_id);
	snprintf(change, sizeof(change), "%.17g", change_pct);
	snprintf(p, sizeof(p), "%.17g", p_value);
	return store_watches_exec(
	    conn,
	    "UPDATE jobs SET state = 'done', verdict = $2,"
	    " change_pct = $3, p_value = $4, message = $5,"
	    " finished_at = now() WHERE id = $1",
	    5, params);
}

int store_watches_claim_report(PGconn *conn, long long testcase_id,
			       const char *sha, long long job_id,
			       long long *earlier)
{
	char tc[24], job[24];
	const char *params[3] = {tc, sha, job};
	PGresult *r;
	int rc;

	snprintf(tc, sizeof(tc), "%lld", testcase_id);
	snprintf(job, sizeof(job), "%lld", job_id);
	r = db_exec(conn,
		    "INSERT INTO watch_reported (testcase_id, culprit_sha,"
		    " job_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
		    " RETURNING 1",
		    3, params);
	if (r == NULL)
		return -1;
	rc = PQntuples(r) == 1 ? 0 : 1;
	PQclear(r);
	*earlier = 0;
	if (rc == 0)
		return 0;
	r = db_exec(conn,
		    "SELECT coalesce(job_id, 0) FROM watch_reported"
		    " WHERE testcase_id = $1 AND culprit_sha = $2",
		    2, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1)
		*earlier = db_int(r, 0, 0);
	PQclear(r);
	return 1;
}

int store_watches_note(PGconn *conn, long long job_id, const char *note)
{
	char job[24];
	const char *params[2] = {job, note};

	snprintf(job, sizeof(job), "%lld", job_id);
	return store_watches_exec(conn,
				  "INSERT INTO watch_notes (job_id, note)"
				  " VALUES ($1, $2)",
				  2, params);
}

int store_watches_open_regression(PGconn *conn, long long watch_id,
				  long long testcase_id, const char *branch,
				  long long *job_id)
{
	char watch[24], tc[24];
	const char *params[3] = {watch, tc, branch};
	PGresult *r;
	int rc = 1;

	snprintf(watch, sizeof(watch), "%lld", watch_id);
	snprintf(tc, sizeof(tc), "%lld", testcase_id);
	r = db_exec(conn,
		    "SELECT j.id, j.verdict = 'regression'"
		    " FROM watch_jobs wj JOIN jobs j ON j.id = wj.job_id"
		    " WHERE wj.watch_id = $1 AND j.testcase_id = $2"
		    " AND wj.branch = $3 AND wj.role = 'bisect'"
		    " AND j.state = 'done' ORDER BY j.id DESC LIMIT 1",
		    3, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1 && db_bool(r, 0, 1)) {
		*job_id = db_int(r, 0, 0);
		rc = 0;
	}
	PQclear(r);
	return rc;
}

int store_watches_reconcile(PGconn *conn, size_t *count)
{
	PGresult *r;

	r = db_exec(conn,
		    "UPDATE watch_heads h SET state = 'measured',"
		    " outcome = 'failed', measured_at = now()"
		    " WHERE h.state = 'measuring' AND (EXISTS (SELECT 1"
		    " FROM jobs j WHERE j.id = h.job_id AND j.state IN"
		    " ('failed', 'cancelled')) OR (h.job_id IS NULL AND"
		    " h.seen_at < now() - interval '1 minute'))",
		    0, NULL);
	if (r == NULL)
		return -1;
	*count = (size_t)atol(PQcmdTuples(r));
	PQclear(r);
	return 0;
}

int store_watches_heads(struct store_head **out, size_t *count, PGconn *conn,
			long long watch_id, long long testcase_id,
			size_t limit)
{
	char watch[24], tc[24], lim[24];
	const char *params[3] = {watch, tc, limit > 0 ? lim : NULL};
	PGresult *r;
	size_t n, i;

	*out = NULL;
	*count = 0;
	snprintf(watch, sizeof(watch), "%lld", watch_id);
	snprintf(tc, sizeof(tc), "%lld", testcase_id);
	snprintf(lim, sizeof(lim), "%zu", limit);
	r = db_exec(
	    conn,
	    "SELECT * FROM (" HEAD_COLUMNS ", count(r.kpi),"
	    " percentile_cont(0.5) WITHIN GROUP (ORDER BY r.kpi),"
	    " min(r.kpi), max(r.kpi),"
	    " percentile_cont(0.25) WITHIN GROUP (ORDER BY r.kpi),"
	    " percentile_cont(0.75) WITHIN GROUP (ORDER BY r.kpi),"
	    " coalesce(wj.role, ''), coalesce(j.verdict, ''),"
	    " coalesce(j.culprit_sha, '')"
	    " FROM watch_heads h JOIN testcases t ON t.id = h.testcase_id"
	    " LEFT JOIN watch_head_runs r ON r.head_id = h.id"
	    " LEFT JOIN watch_jobs wj ON wj.job_id = h.job_id"
	    " LEFT JOIN jobs j ON j.id = h.job_id"
	    " WHERE h.watch_id = $1 AND ($2 = 0 OR h.testcase_id = $2)"
	    " GROUP BY h.id, t.name, wj.role, j.verdict, j.culprit_sha"
	    " ORDER BY h.id DESC LIMIT $3) newest ORDER BY 1",
	    3, params);
	if (r == NULL)
		return -1;
	n = (size_t)PQntuples(r);
	*out = calloc(n + 1, sizeof(**out));
	if (*out == NULL) {
		PQclear(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct store_head *h = &(*out)[i];
		int row = (int)i;

		*count = i + 1;
		if (head_from_row(h, r, row) < 0) {
			PQclear(r);
			store_heads_free(*out, *count);
			*out = NULL;
			*count = 0;
			return -1;
		}
		h->run_count = (size_t)db_int(r, row, 13);
		h->median = double_or_nan(r, row, 14);
		h->min = double_or_nan(r, row, 15);
		h->max = double_or_nan(r, row, 16);
		h->q1 = double_or_nan(r, row, 17);
		h->q3 = double_or_nan(r, row, 18);
		store_watches_row_copy(h->job_role, sizeof(h->job_role), r,
				       row, 19);
		store_watches_row_copy(h->verdict, sizeof(h->verdict), r, row,
				       20);
		store_watches_row_copy(h->culprit, sizeof(h->culprit), r, row,
				       21);
	}
	PQclear(r);
	return 0;
}

void store_watch_jobrows_free(struct store_watch_jobrow *rows, size_t count)
{
	size_t i;

	for (i = 0; rows != NULL && i < count; i++)
		free(rows[i].notes);
	free(rows);
}

int store_watches_jobs(struct store_watch_jobrow **out, size_t *count,
		       PGconn *conn, long long watch_id)
{
	char watch[24];
	const char *params[1] = {watch};
	PGresult *r;
	size_t n, i;

	*out = NULL;
	*count = 0;
	snprintf(watch, sizeof(watch), "%lld", watch_id);
	r = db_exec(conn,
		    "SELECT j.id, wj.role, j.state, coalesce(j.verdict, ''),"
		    " coalesce(j.culprit_sha, ''), t.name, wj.branch,"
		    " coalesce((SELECT json_agg(n.note ORDER BY n.id)"
		    " FROM watch_notes n WHERE n.job_id = j.id), '[]')"
		    " FROM watch_jobs wj JOIN jobs j ON j.id = wj.job_id"
		    " JOIN testcases t ON t.id = j.testcase_id"
		    " WHERE wj.watch_id = $1 ORDER BY j.id",
		    1, params);
	if (r == NULL)
		return -1;
	n = (size_t)PQntuples(r);
	*out = calloc(n + 1, sizeof(**out));
	if (*out == NULL) {
		PQclear(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct store_watch_jobrow *j = &(*out)[i];
		int row = (int)i;

		j->id = db_int(r, row, 0);
		store_watches_row_copy(j->role, sizeof(j->role), r, row, 1);
		store_watches_row_copy(j->state, sizeof(j->state), r, row, 2);
		store_watches_row_copy(j->verdict, sizeof(j->verdict), r, row,
				       3);
		store_watches_row_copy(j->culprit, sizeof(j->culprit), r, row,
				       4);
		store_watches_row_copy(j->testcase, sizeof(j->testcase), r,
				       row, 5);
		store_watches_row_copy(j->branch, sizeof(j->branch), r, row,
				       6);
		j->notes = store_watches_row_dup(r, row, 7);
		*count = i + 1;
		if (j->notes == NULL) {
			PQclear(r);
			store_watch_jobrows_free(*out, *count);
			*out = NULL;
			*count = 0;
			return -1;
		}
	}
	PQclear(r);
	return 0;
}
