#include "store_runs.h"

#include <stdlib.h>
#include <string.h>

#include "../db.h"

int store_runs_metric(struct store_run_value **out, size_t *count,
		      PGconn *conn, long long job_id, const char *name)
{
	char job[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id), name};
	PGresult *r;
	size_t i;

	*out = NULL;
	*count = 0;
	r = db_exec(conn,
		    "SELECT commit_idx, (metrics->>$2)::float8 FROM runs"
		    " WHERE job_id = $1 AND NOT superseded"
		    " AND jsonb_typeof(metrics->$2) = 'number' ORDER BY id",
		    2, params);
	*out = store_rows_alloc(count, r, sizeof(**out));
	if (*out == NULL)
		return STORE_FAILED;
	for (i = 0; i < *count; i++) {
		(*out)[i].commit_index = db_int(r, (int)i, 0);
		(*out)[i].value = db_double(r, (int)i, 1);
	}
	PQclear(r);
	return STORE_OK;
}

int store_runs_metric_names(struct store_names *out, PGconn *conn,
			    long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};

	return store_names_take(out,
				db_exec(conn,
					"SELECT DISTINCT n FROM runs,"
					" jsonb_object_keys(metrics) AS n"
					" WHERE job_id = $1 AND NOT superseded"
					" AND jsonb_typeof(metrics) = 'object'"
					" ORDER BY n",
					1, params));
}
