/* The figures of GET /metrics: a few aggregate queries, read in one
 * snapshot of the database (REPEATABLE READ), none of them writing. */
#include "store_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/strbuf.h"
#include "../db.h"
#include "store.h"

/* The groups of workers and of jobs with queued tasks. */
static int read_groups(struct store_metrics *out, PGconn *conn,
		       unsigned machine_timeout_s)
{
	char seconds[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(seconds, machine_timeout_s)};
	PGresult *r = db_exec(
	    conn,
	    "SELECT g.name,"
	    " (SELECT count(*) FROM tasks t JOIN jobs j ON j.id = t.job_id"
	    "  WHERE t.state = 'queued' AND j.group_name = g.name),"
	    " (SELECT count(*) FROM workers w WHERE w.grp = g.name"
	    "  AND w.last_seen_at >= now() - make_interval(secs => $1))"
	    " FROM (SELECT grp AS name FROM workers"
	    "  UNION SELECT j.group_name FROM jobs j"
	    "  JOIN tasks t ON t.job_id = j.id WHERE t.state = 'queued') g"
	    " ORDER BY g.name",
	    1, params);
	size_t i;

	out->groups =
	    store_rows_alloc(&out->group_count, r, sizeof(*out->groups));
	if (out->groups == NULL)
		return STORE_FAILED;
	for (i = 0; i < out->group_count; i++) {
		out->groups[i].name = strdup(db_text(r, (int)i, 0));
		out->groups[i].tasks_queued = db_int(r, (int)i, 1);
		out->groups[i].workers_alive = db_int(r, (int)i, 2);
		if (out->groups[i].name == NULL) {
			PQclear(r);
			return STORE_FAILED;
		}
	}
	PQclear(r);
	return 0;
}

static int read_states(struct store_metrics *out, PGconn *conn)
{
	PGresult *r = db_exec(conn,
			      "SELECT state, count(*) FROM jobs"
			      " GROUP BY state ORDER BY state",
			      0, NULL);
	size_t i;

	out->states =
	    store_rows_alloc(&out->state_count, r, sizeof(*out->states));
	if (out->states == NULL)
		return STORE_FAILED;
	for (i = 0; i < out->state_count; i++) {
		out->states[i].state = strdup(db_text(r, (int)i, 0));
		out->states[i].jobs = db_int(r, (int)i, 1);
		if (out->states[i].state == NULL) {
			PQclear(r);
			return STORE_FAILED;
		}
	}
	PQclear(r);
	return 0;
}

/* The runs, the outbox, and the ended jobs' durations: one row. */
static int read_totals(struct store_metrics *out, PGconn *conn)
{
	PGresult *r = db_exec(
	    conn,
	    "SELECT (SELECT count(*) FROM runs),"
	    " count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL),"
	    " count(*) FILTER (WHERE sent_at IS NULL"
	    "  AND failed_at IS NOT NULL),"
	    " count(*) FILTER (WHERE sent_at IS NOT NULL)"
	    " FROM outbox",
	    0, NULL);

	if (store_one_row(r) != STORE_OK)
		return STORE_FAILED;
	out->runs_total = db_int(r, 0, 0);
	out->outbox_pending = db_int(r, 0, 1);
	out->outbox_failed = db_int(r, 0, 2);
	out->outbox_sent = db_int(r, 0, 3);
	PQclear(r);
	return 0;
}

/* The bounds as the text of a float8[] parameter. */
static char *bounds_text(const double *bounds, size_t bound_count)
{
	struct strbuf text = STRBUF_INIT;
	char *out = NULL;
	size_t i, len;

	strbuf_append(&text, "{");
	for (i = 0; i < bound_count; i++)
		strbuf_printf(&text, "%s%.17g", i > 0 ? "," : "", bounds[i]);
	strbuf_append(&text, "}");
	if (strbuf_finish(&out, &len, &text) < 0)
		return NULL;
	return out;
}

static int read_durations(struct store_metrics *out, PGconn *conn,
			  const double *bounds, size_t bound_count)
{
	char *array = bounds_text(bounds, bound_count);
	const char *params[1] = {array};
	PGresult *r;
	int i;

	if (array == NULL)
		return STORE_FAILED;
	r = db_exec(conn,
		    "WITH d AS (SELECT extract(epoch FROM finished_at -"
		    "  created_at)::float8 AS s FROM jobs"
		    "  WHERE state IN ('done', 'failed')"
		    "  AND finished_at IS NOT NULL)"
		    " SELECT 0::bigint, count(*), coalesce(sum(s), 0) FROM d"
		    " UNION ALL SELECT u.n, (SELECT count(*) FROM d"
		    "  WHERE s <= u.b), 0 FROM unnest($1::float8[])"
		    "  WITH ORDINALITY AS u(b, n)"
		    " ORDER BY 1",
		    1, params);
	free(array);
	if (r == NULL)
		return STORE_FAILED;
	if ((size_t)PQntuples(r) != bound_count + 1) {
		PQclear(r);
		return STORE_FAILED;
	}
	out->duration_count = db_int(r, 0, 1);
	out->duration_sum = db_double(r, 0, 2);
	for (i = 1; i < PQntuples(r); i++)
		out->duration_le[i - 1] = db_int(r, i, 1);
	PQclear(r);
	return 0;
}

void store_metrics_clear(struct store_metrics *m)
{
	size_t i;

	for (i = 0; i < m->group_count; i++)
		free(m->groups[i].name);
	for (i = 0; i < m->state_count; i++)
		free(m->states[i].state);
	free(m->groups);
	free(m->states);
	memset(m, 0, sizeof(*m));
}

int store_metrics_read(struct store_metrics *out, PGconn *conn,
		       unsigned machine_timeout_s, const double *bounds,
		       size_t bound_count)
{
	PGresult *r;
	int error = STORE_FAILED;

	memset(out, 0, sizeof(*out));
	if (bound_count > STORE_METRICS_BUCKETS_MAX)
		return STORE_FAILED;
	r = db_exec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0,
		    NULL);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	if (read_groups(out, conn, machine_timeout_s) == 0 &&
	    read_states(out, conn) == 0 && read_totals(out, conn) == 0 &&
	    read_durations(out, conn, bounds, bound_count) == 0)
		error = 0;
	if (error == 0 && db_commit(conn) < 0)
		error = STORE_FAILED;
	if (error != 0) {
		db_rollback(conn);
		store_metrics_clear(out);
	}
	return error;
}
