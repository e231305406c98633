#include "store_resolving.h"

#include <string.h>

#include "../db.h"

void store_resolving_clear(struct store_resolving *job)
{
	PQclear(job->result);
	memset(job, 0, sizeof(*job));
}

int store_resolving_claim(struct store_resolving *out, PGconn *conn)
{
	PGresult *r;
	int rc;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT q.job_id, j.good_sha, j.bad_sha, rp.name, rp.url"
		    " FROM job_resolving q JOIN jobs j ON j.id = q.job_id"
		    " JOIN repos rp ON rp.id = j.repo_id"
		    " ORDER BY q.job_id LIMIT 1 FOR UPDATE OF q SKIP LOCKED",
		    0, NULL);
	rc = store_one_row(r);
	if (rc != STORE_OK)
		return rc;
	out->result = r;
	out->job_id = db_int(r, 0, 0);
	out->good_sha = db_text(r, 0, 1);
	out->bad_sha = db_text(r, 0, 2);
	out->repo = db_text(r, 0, 3);
	out->repo_url = db_text(r, 0, 4);
	return STORE_OK;
}

int store_resolving_end(PGconn *conn, long long job_id, const char *failure)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id, job_id), failure};
	PGresult *r;

	r = db_exec(conn, "DELETE FROM job_resolving WHERE job_id = $1", 1,
		    params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	r = db_exec(conn,
		    "UPDATE jobs SET state = CASE WHEN $2::text IS NULL"
		    " THEN 'queued' ELSE 'failed' END, message = $2,"
		    " finished_at = CASE WHEN $2::text IS NULL THEN NULL"
		    " ELSE now() END WHERE id = $1 AND state = 'resolving'",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}
