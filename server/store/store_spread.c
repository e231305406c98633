#include "store_spread.h"

#include <stdlib.h>
#include <string.h>

#include "../db.h"

int store_spread_start(PGconn *conn, long long job_id, long long machines)
{
	char job[STORE_INT_TEXT], k[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id),
				 store_int_text(k, machines)};

	return store_command(conn,
			     "UPDATE jobs SET machines = $2, spread = $2 > 1"
			     " WHERE id = $1",
			     2, params);
}

int store_spread_state(bool *spread, long long *machines, PGconn *conn,
		       long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};
	PGresult *r = db_exec_prepared(
	    conn, "SELECT spread, machines FROM jobs WHERE id = $1", 1,
	    params);
	int rc = store_one_row(r);

	if (rc != STORE_OK)
		return rc;
	*spread = db_bool(r, 0, 0);
	*machines = db_int(r, 0, 1);
	PQclear(r);
	return STORE_OK;
}

void store_spread_machines_clear(struct store_spread_machines *list)
{
	size_t i;

	for (i = 0; list->items != NULL && i < list->count; i++)
		free(list->items[i].open);
	free(list->items);
	memset(list, 0, sizeof(*list));
}

/* "3,17,40" into the machine's open commits. */
static int open_commits(struct store_spread_machine *m, const char *text)
{
	size_t n = 0, i;
	char *end;

	for (i = 0; text[i] != '\0'; i++)
		n += text[i] == ',';
	m->open = calloc(n + 1, sizeof(*m->open));
	if (m->open == NULL)
		return STORE_FAILED;
	while (*text != '\0' && m->open_count <= n) {
		m->open[m->open_count++] = strtoll(text, &end, 10);
		text = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			return STORE_FAILED;
	}
	return STORE_OK;
}

/* clang-format off */
static const char machines_sql[] =
    "SELECT m.worker_id, coalesce((SELECT string_agg(e->>'idx', ',')"
    " FROM tasks t, jsonb_array_elements(t.plan) e"
    " WHERE t.job_id = m.job_id AND t.for_worker = m.worker_id"
    " AND t.state IN ('queued', 'running')), '')"
    " FROM job_machines m WHERE m.job_id = $1 AND m.left_at IS NULL"
    " ORDER BY m.slot";
/* clang-format on */

int store_spread_machines(struct store_spread_machines *out, PGconn *conn,
			  long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};
	PGresult *r;
	size_t i;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn, machines_sql, 1, params);
	out->items = store_rows_alloc(&out->count, r, sizeof(*out->items));
	if (out->items == NULL)
		return STORE_FAILED;
	for (i = 0; i < out->count; i++) {
		out->items[i].worker_id = db_int(r, (int)i, 0);
		if (open_commits(&out->items[i], db_text(r, (int)i, 1)) !=
		    STORE_OK) {
			PQclear(r);
			store_spread_machines_clear(out);
			return STORE_FAILED;
		}
	}
	PQclear(r);
	r = db_exec(conn,
		    "SELECT count(*) FROM tasks WHERE job_id = $1"
		    " AND joining AND state = 'queued'",
		    1, params);
	if (r == NULL) {
		store_spread_machines_clear(out);
		return STORE_FAILED;
	}
	out->joins_queued = db_int(r, 0, 0);
	PQclear(r);
	return STORE_OK;
}

int store_spread_cancel_joins(PGconn *conn, long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};

	return store_command(
	    conn,
	    "UPDATE tasks SET state = 'cancelled',"
	    " finished_at = now() WHERE job_id = $1 AND joining"
	    " AND state = 'queued'",
	    1, params);
}

int store_spread_settle(PGconn *conn, long long job_id, long long worker_id,
			const char *reason)
{
	char job[STORE_INT_TEXT], worker[STORE_INT_TEXT];
	const char *params[3] = {store_int_text(job, job_id), NULL, reason};

	if (worker_id > 0)
		params[1] = store_int_text(worker, worker_id);
	/* A task another machine is running is left to end: its runs come
	 * in superseded (store_runs_insert). */
	if (store_command(
		conn,
		"UPDATE jobs SET spread = false, spread_reason = $3,"
		" worker_id = $2::bigint, bound_at = CASE WHEN $2::bigint"
		" IS NULL THEN NULL ELSE now() END WHERE id = $1",
		3, params) != STORE_OK ||
	    store_command(conn,
			  "UPDATE runs SET superseded = true WHERE job_id = $1"
			  " AND NOT superseded AND worker_id IS DISTINCT FROM"
			  " $2::bigint",
			  2, params) != STORE_OK ||
	    store_command(
		conn,
		"UPDATE tasks SET state = 'cancelled', finished_at = now()"
		" WHERE job_id = $1 AND state IN ('queued', 'running')"
		" AND (joining OR for_worker IS DISTINCT FROM $2::bigint)",
		2, params) != STORE_OK)
		return STORE_FAILED;
	return STORE_OK;
}

/* clang-format off */
static const char lost_sql[] =
    "WITH lost AS ("
    " SELECT m.job_id, m.worker_id FROM job_machines m"
    " JOIN jobs j ON j.id = m.job_id JOIN workers me ON me.id = $1"
    " JOIN workers w ON w.id = m.worker_id"
    " WHERE j.spread AND j.state IN ('queued', 'running')"
    " AND j.group_name = me.grp AND m.left_at IS NULL"
    " AND m.worker_id <> $1"
    " AND w.last_seen_at < now() - make_interval(secs => $2)"
    " ORDER BY m.job_id LIMIT 1 FOR NO KEY UPDATE OF j SKIP LOCKED)"
    " UPDATE job_machines m SET left_at = now() FROM lost"
    " WHERE m.job_id = lost.job_id AND m.worker_id = lost.worker_id"
    " RETURNING m.job_id, m.worker_id";
/* clang-format on */

int store_spread_drop_lost(long long *job_id, long long *lost_worker,
			   PGconn *conn, long long worker_id,
			   unsigned timeout_s)
{
	char worker[STORE_INT_TEXT], seconds[STORE_INT_TEXT];
	char job[STORE_INT_TEXT], lost[STORE_INT_TEXT];
	const char *params[2] = {
	    store_int_text(worker, worker_id),
	    store_int_text(seconds, (long long)timeout_s)};
	const char *job_params[2] = {job, lost};
	PGresult *r = db_exec(conn, lost_sql, 2, params);
	int rc = store_one_row(r);

	if (rc != STORE_OK)
		return rc;
	*job_id = db_int(r, 0, 0);
	*lost_worker = db_int(r, 0, 1);
	PQclear(r);
	store_int_text(job, *job_id);
	store_int_text(lost, *lost_worker);
	if (store_command(
		conn,
		"UPDATE tasks SET state = 'cancelled', finished_at = now()"
		" WHERE job_id = $1 AND for_worker = $2"
		" AND state IN ('queued', 'running')",
		2, job_params) != STORE_OK)
		return STORE_FAILED;
	/* the first machine of those left, or none */
	return store_command(
	    conn,
	    "UPDATE jobs j SET worker_id = (SELECT m.worker_id"
	    " FROM job_machines m WHERE m.job_id = j.id"
	    " AND m.left_at IS NULL ORDER BY m.slot LIMIT 1)"
	    " WHERE j.id = $1 AND j.worker_id = $2",
	    2, job_params);
}

void store_spread_summary_clear(struct store_spread_summary *s)
{
	PQclear(s->result[0]);
	PQclear(s->result[1]);
	free(s->names);
	free(s->left);
	memset(s, 0, sizeof(*s));
}

int store_spread_summary(struct store_spread_summary *out, PGconn *conn,
			 long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};
	PGresult *r;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT machines, spread, spread_reason FROM jobs"
		    " WHERE id = $1",
		    1, params);
	rc = store_one_row(r);
	if (rc != STORE_OK)
		return rc;
	out->result[0] = r;
	out->machines = db_int(r, 0, 0);
	out->spread = db_bool(r, 0, 1);
	out->reason = db_text(r, 0, 2);
	r = db_exec(conn,
		    "SELECT w.name, m.left_at IS NOT NULL FROM job_machines m"
		    " JOIN workers w ON w.id = m.worker_id"
		    " WHERE m.job_id = $1 ORDER BY m.slot",
		    1, params);
	out->names = store_rows_alloc(&out->count, r, sizeof(*out->names));
	if (out->names == NULL) {
		store_spread_summary_clear(out);
		return STORE_FAILED;
	}
	out->result[1] = r;
	out->left = calloc(out->count + 1, sizeof(*out->left));
	if (out->left == NULL) {
		store_spread_summary_clear(out);
		return STORE_FAILED;
	}
	for (i = 0; i < out->count; i++) {
		out->names[i] = db_text(r, (int)i, 0);
		out->left[i] = db_bool(r, (int)i, 1);
	}
	return STORE_OK;
}
