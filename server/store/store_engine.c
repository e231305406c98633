/* The scheduler's reads and writes of jobs and their candidates. */
#include "store_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"

int store_engine_options(struct store_engine_options *out, PGconn *conn,
			 long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT j.state, coalesce(j.runs_min, t.runs_min),"
		    " greatest(coalesce(j.runs_max, t.runs_max),"
		    " coalesce(j.runs_min, t.runs_min)), t.min_change_pct,"
		    " t.higher_is_better, j.machines > 1 FROM jobs j"
		    " JOIN testcases t"
		    " ON t.id = j.testcase_id WHERE j.id = $1",
		    1, params);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	snprintf(out->state, sizeof(out->state), "%s", db_text(r, 0, 0));
	out->runs_min = db_int(r, 0, 1);
	out->runs_max = db_int(r, 0, 2);
	out->min_change_pct = db_double(r, 0, 3);
	out->higher_is_better = db_bool(r, 0, 4);
	out->several_machines = db_bool(r, 0, 5);
	PQclear(r);
	return STORE_OK;
}

void store_engine_commits_clear(struct store_engine_commits *list)
{
	free(list->commits);
	free(list->parents);
	PQclear(list->result);
	memset(list, 0, sizeof(*list));
}

/* Reads the comma-separated parents of row `row` into `parents` from
 * `*used` on.  Returns 0, or -1 for text that is not such a list. */
static int parse_parents(struct store_engine_commit *c, long long *parents,
			 size_t *used, const char *list)
{
	c->parents = &parents[*used];
	while (list != NULL && *list != '\0') {
		char *end;
		long long p = strtoll(list, &end, 10);

		if (end == list || p < 0)
			return -1;
		parents[(*used)++] = p;
		list = *end == ',' ? end + 1 : end;
	}
	c->parent_count = (size_t)(&parents[*used] - c->parents);
	return 0;
}

int store_engine_commits(struct store_engine_commits *out, PGconn *conn,
			 long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	size_t i, room, used = 0;
	int row;

	memset(out, 0, sizeof(*out));
	out->result =
	    db_exec(conn,
		    "SELECT idx, sha, subject, author_name,"
		    " author_email, build_failed,"
		    " array_to_string(parents, ',')"
		    " FROM job_commits WHERE job_id = $1 ORDER BY idx",
		    1, params);
	if (out->result == NULL)
		return STORE_FAILED;
	out->count = (size_t)PQntuples(out->result);
	/* Room for every listed parent: at most one per comma, plus one. */
	room = out->count;
	for (row = 0; row < PQntuples(out->result); row++) {
		const char *list = db_text(out->result, row, 6);

		for (; list != NULL && *list != '\0'; list++)
			room += *list == ',';
	}
	out->commits = calloc(out->count + 1, sizeof(*out->commits));
	out->parents = calloc(room + 1, sizeof(*out->parents));
	if (out->commits == NULL || out->parents == NULL)
		goto fail;
	for (i = 0; i < out->count; i++) {
		struct store_engine_commit *c = &out->commits[i];

		c->index = db_int(out->result, (int)i, 0);
		c->sha = db_text(out->result, (int)i, 1);
		c->subject = db_text(out->result, (int)i, 2);
		c->author_name = db_text(out->result, (int)i, 3);
		c->author_email = db_text(out->result, (int)i, 4);
		c->build_failed = db_bool(out->result, (int)i, 5);
		if (parse_parents(c, out->parents, &used,
				  db_text(out->result, (int)i, 6)) < 0)
			goto fail;
	}
	return STORE_OK;
fail:
	store_engine_commits_clear(out);
	return STORE_FAILED;
}

int store_engine_finish(PGconn *conn, long long job_id,
			const struct store_engine_verdict *verdict)
{
	char id[STORE_INT_TEXT], change[40], p[40], confidence[40];
	char ci_lo[40], ci_hi[40];
	bool interval = isfinite(verdict->change_ci95_lo) &&
			isfinite(verdict->change_ci95_hi);
	const char *params[11] = {store_int_text(id, job_id),
				  verdict->verdict,
				  verdict->culprit_sha,
				  verdict->parent_sha,
				  isfinite(verdict->change_pct) ? change
								: NULL,
				  p,
				  verdict->message,
				  verdict->culprits,
				  confidence,
				  interval ? ci_lo : NULL,
				  interval ? ci_hi : NULL};
	PGresult *r;

	snprintf(change, sizeof(change), "%.17g", verdict->change_pct);
	snprintf(p, sizeof(p), "%.17g", verdict->p_value);
	snprintf(confidence, sizeof(confidence), "%.17g", verdict->confidence);
	snprintf(ci_lo, sizeof(ci_lo), "%.17g", verdict->change_ci95_lo);
	snprintf(ci_hi, sizeof(ci_hi), "%.17g", verdict->change_ci95_hi);
	r = db_exec(conn,
		    "UPDATE jobs SET state = 'done', verdict = $2,"
		    " culprit_sha = $3, parent_sha = $4, change_pct = $5,"
		    " p_value = $6, message = $7, culprits = $8,"
		    " confidence = $9, change_ci95_lo = $10,"
		    " change_ci95_hi = $11, finished_at = now() WHERE id = $1",
		    11, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_engine_machine(struct store_engine_machine *out, PGconn *conn,
			 long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT j.worker_id, j.machine_moves, w.name, w.grp,"
		    " w.machine, " STORE_TIMESTAMP(
			"j.bound_at") ","
				      " (SELECT count(*) FROM runs r WHERE "
				      "r.job_id = j.id"
				      " AND r.superseded)"
				      " FROM jobs j LEFT JOIN workers w ON "
				      "w.id = j.worker_id"
				      " WHERE j.id = $1",
		    1, params);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->bound = !db_is_null(r, 0, 0);
	out->worker_id = out->bound ? db_int(r, 0, 0) : 0;
	out->moves = db_int(r, 0, 1);
	snprintf(out->name, sizeof(out->name), "%s",
		 out->bound ? db_text(r, 0, 2) : "");
	snprintf(out->group, sizeof(out->group), "%s",
		 out->bound ? db_text(r, 0, 3) : "");
	snprintf(out->machine, sizeof(out->machine), "%s",
		 !db_is_null(r, 0, 4) ? db_text(r, 0, 4) : "");
	snprintf(out->bound_at, sizeof(out->bound_at), "%s",
		 !db_is_null(r, 0, 5) ? db_text(r, 0, 5) : "");
	out->runs_superseded = db_int(r, 0, 6);
	PQclear(r);
	return STORE_OK;
}

int store_engine_fail(PGconn *conn, long long job_id, const char *message)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id, job_id), message};
	PGresult *r;

	r = db_exec(conn,
		    "UPDATE jobs SET state = 'failed', message = $2,"
		    " finished_at = now() WHERE id = $1",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}
