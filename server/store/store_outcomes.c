/* Outcomes, logs and metric names of a job's commits in PostgreSQL. */
#include "store_outcomes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"

int store_outcomes_set(PGconn *conn, long long job_id,
		       const struct store_outcome_new *o)
{
	char job[STORE_INT_TEXT], idx[STORE_INT_TEXT];
	char exit_code[STORE_INT_TEXT], signal[STORE_INT_TEXT];
	const char *params[8] = {
	    store_int_text(job, job_id),
	    store_int_text(idx, o->index),
	    o->status,
	    o->exit_code != NULL ? store_int_text(exit_code, *o->exit_code)
				 : NULL,
	    o->signal != NULL ? store_int_text(signal, *o->signal) : NULL,
	    o->metrics_seen,
	    o->run_output,
	    o->build_log};
	PGresult *r;

	r = db_exec(conn,
		    "UPDATE job_commits SET outcome = $3,"
		    " outcome_exit_code = $4, outcome_signal = $5,"
		    " metrics_seen = coalesce($6::jsonb, metrics_seen),"
		    " run_output = coalesce(right($7, 16384),"
		    " run_output),"
		    " build_log = coalesce(right($8, 65536), build_log)"
		    " WHERE job_id = $1 AND idx = $2",
		    8, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

void store_outcome_list_clear(struct store_outcome_list *list)
{
	free(list->items);
	PQclear(list->result);
	memset(list, 0, sizeof(*list));
}

/* Row `row` of `r` from column `col` on: index, outcome, exit code,
 * signal, metrics seen. */
static void read_outcome(struct store_outcome *o, const PGresult *r, int row,
			 int col)
{
	o->index = db_int(r, row, col);
	o->status = db_text(r, row, col + 1);
	o->has_exit_code = !db_is_null(r, row, col + 2);
	o->exit_code = db_int(r, row, col + 2);
	o->has_signal = !db_is_null(r, row, col + 3);
	o->signal = db_int(r, row, col + 3);
	o->metrics_seen = db_text(r, row, col + 4);
}

static int outcome_rows(struct store_outcome_list *out, PGresult *r)
{
	size_t i;

	if (r == NULL)
		return STORE_FAILED;
	out->result = r;
	out->count = (size_t)PQntuples(r);
	out->items = calloc(out->count + 1, sizeof(*out->items));
	if (out->items == NULL) {
		store_outcome_list_clear(out);
		return STORE_FAILED;
	}
	for (i = 0; i < out->count; i++)
		read_outcome(&out->items[i], r, (int)i, 0);
	return STORE_OK;
}

int store_outcomes_list(struct store_outcome_list *out, PGconn *conn,
			long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};

	memset(out, 0, sizeof(*out));
	return outcome_rows(
	    out, db_exec(conn,
			 "SELECT idx, outcome, outcome_exit_code,"
			 " outcome_signal, metrics_seen FROM job_commits"
			 " WHERE job_id = $1 AND outcome IS NOT NULL",
			 1, params));
}

int store_outcomes_get(struct store_outcome_list *out, PGconn *conn,
		       long long job_id, long long index)
{
	char job[STORE_INT_TEXT], idx[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id),
				 store_int_text(idx, index)};
	int rc;

	memset(out, 0, sizeof(*out));
	rc =
	    outcome_rows(out, db_exec(conn,
				      "SELECT idx, outcome, outcome_exit_code,"
				      " outcome_signal, metrics_seen"
				      " FROM job_commits"
				      " WHERE job_id = $1 AND idx = $2",
				      2, params));
	if (rc == STORE_OK && out->count != 1) {
		store_outcome_list_clear(out);
		return STORE_NOT_FOUND;
	}
	return rc;
}

int store_outcomes_endpoint_runs(struct store_endpoint_runs *out, PGconn *conn,
				 long long job_id, long long last)
{
	char job[STORE_INT_TEXT], last_text[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id),
				 store_int_text(last_text, last)};
	PGresult *r;

	r = db_exec(conn,
		    "SELECT count(*) FILTER (WHERE kpi IS NOT NULL),"
		    " count(*) FILTER (WHERE kpi IS NULL AND exit_code = 0),"
		    " count(DISTINCT commit_idx) FROM runs"
		    " WHERE job_id = $1 AND commit_idx IN (0, $2::int)",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	out->with_kpi = db_int(r, 0, 0);
	out->exited_without = db_int(r, 0, 1);
	out->commits = db_int(r, 0, 2);
	PQclear(r);
	return STORE_OK;
}

void store_names_clear(struct store_names *names)
{
	free(names->names);
	PQclear(names->result);
	memset(names, 0, sizeof(*names));
}

int store_names_take(struct store_names *out, PGresult *r)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if ((out->result = r) == NULL)
		return STORE_FAILED;
	out->count = (size_t)PQntuples(r);
	out->names = calloc(out->count + 1, sizeof(*out->names));
	if (out->names == NULL) {
		store_names_clear(out);
		return STORE_FAILED;
	}
	for (i = 0; i < out->count; i++)
		out->names[i] = db_text(r, (int)i, 0);
	return STORE_OK;
}

int store_outcomes_names(struct store_names *out, PGconn *conn,
			 long long job_id, long long first, long long second,
			 enum store_names_source source)
{
	static const char *const sql[] = {
	    [STORE_NAMES_REPORTED] =
		"SELECT n FROM job_commits,"
		" jsonb_array_elements_text(metrics_seen) AS n"
		" WHERE job_id = $1 AND idx IN ($2::int, $3::int)"
		" AND jsonb_typeof(metrics_seen) = 'array' ORDER BY n",
	    [STORE_NAMES_DISTINCT] =
		"SELECT DISTINCT n FROM job_commits,"
		" jsonb_array_elements_text(metrics_seen) AS n"
		" WHERE job_id = $1 AND idx IN ($2::int, $3::int)"
		" AND jsonb_typeof(metrics_seen) = 'array' ORDER BY n",
	    [STORE_NAMES_FROM_RUNS] =
		"SELECT DISTINCT n FROM runs,"
		" jsonb_object_keys(metrics) AS n"
		" WHERE job_id = $1 AND commit_idx IN ($2::int, $3::int)"
		" ORDER BY n",
	};
	char job[STORE_INT_TEXT], a[STORE_INT_TEXT], b[STORE_INT_TEXT];
	const char *params[3] = {store_int_text(job, job_id),
				 store_int_text(a, first),
				 store_int_text(b, second)};

	return store_names_take(out, db_exec(conn, sql[source], 3, params));
}

int store_outcomes_kpi(char **out, PGconn *conn, long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};
	PGresult *r;
	int rc = STORE_NOT_FOUND;

	*out = NULL;
	r = db_exec(conn,
		    "SELECT t.kpi FROM jobs j JOIN testcases t"
		    " ON t.id = j.testcase_id WHERE j.id = $1",
		    1, params);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) == 1) {
		*out = strdup(db_text(r, 0, 0));
		rc = *out != NULL ? STORE_OK : STORE_FAILED;
	}
	PQclear(r);
	return rc;
}

void store_commit_log_clear(struct store_commit_log *log)
{
	PQclear(log->result);
	memset(log, 0, sizeof(*log));
}

int store_outcomes_log(struct store_commit_log *out, PGconn *conn,
		       long long job_id, const char *prefix)
{
	char job[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id), prefix};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	/* One row per matching commit; one with NULLs when none does. */
	r = db_exec(conn,
		    "SELECT c.idx, c.outcome, c.outcome_exit_code,"
		    " c.outcome_signal, c.metrics_seen, c.sha,"
		    " c.build_failed, c.build_log, c.run_output"
		    " FROM jobs j LEFT JOIN job_commits c ON c.job_id = j.id"
		    " AND left(c.sha, length($2)) = $2"
		    " WHERE j.id = $1 ORDER BY c.idx LIMIT 2",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	out->result = r;
	out->job_found = PQntuples(r) > 0;
	out->matches =
	    out->job_found && !db_is_null(r, 0, 0) ? (size_t)PQntuples(r) : 0;
	if (out->matches > 0) {
		read_outcome(&out->outcome, r, 0, 0);
		out->index = out->outcome.index;
		out->sha = db_text(r, 0, 5);
		out->build_failed = db_bool(r, 0, 6);
		out->build_log = db_text(r, 0, 7);
		out->run_output = db_text(r, 0, 8);
	}
	return STORE_OK;
}
