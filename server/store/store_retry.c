#include "store_retry.h"

#include <stdio.h>
#include <string.h>

#include "../db.h"

int store_retry_target(struct store_retry_target *out, PGconn *conn,
		       long long job_id, const char *prefix)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id, job_id), prefix};
	PGresult *r;
	int rc;

	memset(out, 0, sizeof(*out));
	out->index = -1;
	r = db_exec(conn,
		    "SELECT j.state, j.kind, coalesce(j.runs_min, t.runs_min),"
		    " coalesce(j.runs_max, t.runs_max) FROM jobs j"
		    " JOIN testcases t ON t.id = j.testcase_id"
		    " WHERE j.id = $1 FOR UPDATE OF j",
		    1, params);
	if ((rc = store_one_row(r)) != STORE_OK)
		return rc;
	snprintf(out->state, sizeof(out->state), "%s", db_text(r, 0, 0));
	snprintf(out->kind, sizeof(out->kind), "%s", db_text(r, 0, 1));
	out->runs_min = db_int(r, 0, 2);
	out->runs_max = db_int(r, 0, 3);
	PQclear(r);
	/* At most two rows: one names the commit, two say it is ambiguous. */
	r = db_exec(conn,
		    "SELECT idx, sha FROM job_commits WHERE job_id = $1"
		    " AND left(sha, length($2)) = $2 ORDER BY idx LIMIT 2",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	out->matches = PQntuples(r);
	if (out->matches == 1) {
		out->index = db_int(r, 0, 0);
		snprintf(out->sha, sizeof(out->sha), "%s", db_text(r, 0, 1));
	}
	PQclear(r);
	return STORE_OK;
}

int store_retry_reopen(PGconn *conn, long long job_id, long long index,
		       bool rebuild)
{
	char id[STORE_INT_TEXT], idx[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id, job_id),
				 store_int_text(idx, index)};
	PGresult *r;

	r = db_exec(conn,
		    "UPDATE jobs SET state = 'running', finished_at = NULL,"
		    " verdict = NULL, culprit_sha = NULL, parent_sha = NULL,"
		    " change_pct = NULL, p_value = NULL, message = NULL,"
		    " confidence = NULL, change_ci95_lo = NULL,"
		    " change_ci95_hi = NULL, culprits = '[]' WHERE id = $1",
		    1, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	if (!rebuild)
		return STORE_OK;
	r = db_exec(conn,
		    "UPDATE job_commits SET build_failed = false,"
		    " outcome = NULL WHERE job_id = $1 AND idx = $2",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}
