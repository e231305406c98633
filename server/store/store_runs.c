#include "store_runs.h"

#include <stdlib.h>
#include <string.h>

#include "../db.h"
#include "store_tasks.h"

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

static int runs_kpis(struct store_run_kpi **out, size_t *count, PGconn *conn,
		     long long job_id, bool every_machine)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {job};
	PGresult *r;
	size_t i, n;

	*out = NULL;
	*count = 0;
	store_int_text(job, job_id);
	/* While a job is spread over several machines, the engine's view
	 * of it is its first machine's (lib/spread.h). */
	r = db_exec(conn,
		    every_machine
			? "SELECT r.commit_idx, r.kpi, r.purpose = 'confirm',"
			  " coalesce(r.worker_id, 0) FROM runs r"
			  " WHERE r.job_id = $1 AND NOT r.superseded"
			  " ORDER BY r.id"
			: "SELECT r.commit_idx, r.kpi, r.purpose = 'confirm',"
			  " coalesce(r.worker_id, 0) FROM runs r"
			  " JOIN jobs j ON j.id = r.job_id"
			  " WHERE r.job_id = $1 AND NOT r.superseded"
			  " AND (NOT j.spread OR r.worker_id = j.worker_id)"
			  " ORDER BY r.id",
		    1, params);
	if (r == NULL)
		return -1;
	n = (size_t)PQntuples(r);
	*out = calloc(n != 0 ? n : 1, sizeof(**out));
	if (*out == NULL) {
		PQclear(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		(*out)[i].commit_index = db_int(r, (int)i, 0);
		(*out)[i].has_kpi = !db_is_null(r, (int)i, 1);
		(*out)[i].kpi =
		    (*out)[i].has_kpi ? db_double(r, (int)i, 1) : 0;
		(*out)[i].confirm = db_bool(r, (int)i, 2);
		(*out)[i].worker_id = db_int(r, (int)i, 3);
	}
	*count = n;
	PQclear(r);
	return 0;
}

int store_runs_kpis(struct store_run_kpi **out, size_t *count, PGconn *conn,
		    long long job_id)
{
	return runs_kpis(out, count, conn, job_id, false);
}

int store_runs_by_machine(struct store_run_kpi **out, size_t *count,
			  PGconn *conn, long long job_id)
{
	return runs_kpis(out, count, conn, job_id, true);
}
