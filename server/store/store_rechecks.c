#include "store_rechecks.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"

int store_rechecks_add(PGconn *conn, long long job_id,
		       long long compare_job_id, const char *branch)
{
	char job[STORE_INT_TEXT], compare[STORE_INT_TEXT];
	const char *params[3] = {store_int_text(job, job_id),
				 store_int_text(compare, compare_job_id),
				 branch};
	PGresult *r = db_exec(conn,
			      "INSERT INTO rechecks (job_id, compare_job_id,"
			      " branch, head_sha) SELECT $1, $2, $3, sha"
			      " FROM job_commits WHERE job_id = $2"
			      " ORDER BY idx DESC LIMIT 1",
			      3, params);
	bool added;

	if (r == NULL)
		return STORE_FAILED;
	added = strcmp(PQcmdTuples(r), "1") == 0;
	PQclear(r);
	return added ? STORE_OK : STORE_NOT_FOUND;
}

int store_rechecks_of_compare(struct store_recheck *out, PGconn *conn,
			      long long compare_job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, compare_job_id)};
	PGresult *r =
	    db_exec(conn,
		    "SELECT id, job_id, branch, head_sha FROM rechecks"
		    " WHERE compare_job_id = $1",
		    1, params);
	int status = store_one_row(r);

	memset(out, 0, sizeof(*out));
	if (status != STORE_OK)
		return status;
	out->id = db_int(r, 0, 0);
	out->job_id = db_int(r, 0, 1);
	snprintf(out->branch, sizeof(out->branch), "%s", db_text(r, 0, 2));
	snprintf(out->head_sha, sizeof(out->head_sha), "%s", db_text(r, 0, 3));
	PQclear(r);
	return STORE_OK;
}

int store_rechecks_finish(PGconn *conn, long long id, const char *verdict,
			  double change_pct, double p_worse)
{
	char id_text[STORE_INT_TEXT], change[32], p[32];
	const char *params[4] = {store_int_text(id_text, id), verdict,
				 isfinite(change_pct) ? change : NULL,
				 isfinite(p_worse) ? p : NULL};
	PGresult *r;

	snprintf(change, sizeof(change), "%.17g", change_pct);
	snprintf(p, sizeof(p), "%.17g", p_worse);
	r = db_exec(conn,
		    "UPDATE rechecks SET verdict = $2, change_pct = $3,"
		    " p_worse = $4, finished_at = now() WHERE id = $1",
		    4, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_rechecks_json(json_t **out, PGconn *conn, long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	json_error_t error;
	PGresult *r;

	*out = NULL;
	r = db_exec(
	    conn,
	    "SELECT coalesce(json_agg(json_build_object('job',"
	    " c.compare_job_id, 'branch', c.branch, 'head', c.head_sha,"
	    " 'state', j.state, 'verdict', c.verdict, 'change_pct',"
	    " c.change_pct, 'note', CASE WHEN c.verdict IS NULL THEN NULL"
	    " ELSE c.verdict || ' on ' || c.branch || ' '"
	    " || left(c.head_sha, 12) END) ORDER BY c.id), '[]')"
	    " FROM rechecks c JOIN jobs j ON j.id = c.compare_job_id"
	    " WHERE c.job_id = $1",
	    1, params);
	if (r == NULL)
		return STORE_FAILED;
	*out = json_loads(db_text(r, 0, 0), 0, &error);
	PQclear(r);
	return *out != NULL ? STORE_OK : STORE_FAILED;
}

int store_rechecks_due(long long *out, size_t max, size_t *count, PGconn *conn)
{
	char limit[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(limit, (long long)max)};
	PGresult *r;
	int i;

	*count = 0;
	r = db_exec(
	    conn,
	    "SELECT j.id FROM jobs j JOIN testcases t ON t.id = j.testcase_id"
	    " WHERE t.recheck_interval_s IS NOT NULL AND j.kind = 'bisect'"
	    " AND j.state = 'done' AND j.verdict = 'regression'"
	    " AND j.culprit_sha IS NOT NULL"
	    " AND j.finished_at < now() - make_interval(secs =>"
	    " t.recheck_interval_s)"
	    " AND (j.recheck_tried_at IS NULL OR j.recheck_tried_at <"
	    " now() - make_interval(secs => t.recheck_interval_s))"
	    " AND NOT EXISTS (SELECT 1 FROM rechecks c"
	    " JOIN jobs cj ON cj.id = c.compare_job_id WHERE c.job_id = j.id"
	    " AND (cj.state IN ('queued', 'running') OR c.created_at >"
	    " now() - make_interval(secs => t.recheck_interval_s)))"
	    " ORDER BY j.id LIMIT $1",
	    1, params);
	if (r == NULL)
		return STORE_FAILED;
	for (i = 0; i < PQntuples(r); i++)
		out[(*count)++] = db_int(r, i, 0);
	PQclear(r);
	return STORE_OK;
}

int store_rechecks_tried(PGconn *conn, long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r = db_exec(
	    conn, "UPDATE jobs SET recheck_tried_at = now() WHERE id = $1", 1,
	    params);

	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_rechecks_last_report(char **recipients, char **message, PGconn *conn,
			       long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r = db_exec(conn,
			      "SELECT recipients::text, message FROM outbox"
			      " WHERE job_id = $1 AND recipients <> '[]'"
			      " ORDER BY id DESC LIMIT 1",
			      1, params);
	int status = store_one_row(r);

	*recipients = *message = NULL;
	if (status != STORE_OK)
		return status;
	*recipients = strdup(db_text(r, 0, 0));
	*message = strdup(db_text(r, 0, 1));
	PQclear(r);
	if (*recipients == NULL || *message == NULL) {
		free(*recipients);
		free(*message);
		*recipients = *message = NULL;
		return STORE_FAILED;
	}
	return STORE_OK;
}

int store_rechecks_set_interval(PGconn *conn, const char *testcase,
				long long interval_s)
{
	char interval[STORE_INT_TEXT];
	const char *params[2] = {
	    testcase,
	    interval_s > 0 ? store_int_text(interval, interval_s) : NULL};
	PGresult *r = db_exec(conn,
			      "UPDATE testcases SET recheck_interval_s = $2"
			      " WHERE name = $1",
			      2, params);
	bool found;

	if (r == NULL)
		return STORE_FAILED;
	found = strcmp(PQcmdTuples(r), "1") == 0;
	PQclear(r);
	return found ? STORE_OK : STORE_NOT_FOUND;
}
