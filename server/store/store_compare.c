#include "store_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"

static double number_or_nan(const PGresult *r, int row, int col)
{
	return db_is_null(r, row, col) ? NAN : db_double(r, row, col);
}

int store_compare_mark(PGconn *conn, long long job_id,
		       const char *const *revisions, const char *const *labels,
		       size_t count, long long retest_of)
{
	char id[STORE_INT_TEXT], idx[STORE_INT_TEXT], source[STORE_INT_TEXT];
	const char *params[4];
	PGresult *r;
	size_t i;

	params[0] = store_int_text(id, job_id);
	params[1] = retest_of > 0 ? store_int_text(source, retest_of) : NULL;
	r = db_exec(conn,
		    "UPDATE jobs SET kind = 'compare', retest_of = $2"
		    " WHERE id = $1",
		    2, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	for (i = 0; i < count; i++) {
		params[1] = store_int_text(idx, (long long)i);
		params[2] = revisions[i];
		params[3] = labels[i];
		r = db_exec(conn,
			    "INSERT INTO job_columns (job_id, idx, revision,"
			    " label) VALUES ($1, $2, $3, $4)",
			    4, params);
		if (r == NULL)
			return STORE_FAILED;
		PQclear(r);
	}
	return STORE_OK;
}

void store_compare_clear(struct store_compare *cmp)
{
	free(cmp->columns);
	PQclear(cmp->result);
	memset(cmp, 0, sizeof(*cmp));
}

int store_compare_get(struct store_compare *out, PGconn *conn,
		      long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;
	size_t i;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT c.idx, c.revision, c.label, c.verdict,"
		    " c.change_pct, c.p_value, j.retest_of"
		    " FROM job_columns c JOIN jobs j ON j.id = c.job_id"
		    " WHERE c.job_id = $1 AND j.kind = 'compare'"
		    " ORDER BY c.idx",
		    1, params);
	out->columns = store_rows_alloc(&out->count, r, sizeof(*out->columns));
	if (out->columns == NULL)
		return STORE_FAILED;
	out->result = r;
	if (out->count == 0) {
		store_compare_clear(out);
		return STORE_NOT_FOUND;
	}
	for (i = 0; i < out->count; i++) {
		struct store_compare_column *c = &out->columns[i];

		c->idx = db_int(r, (int)i, 0);
		c->revision = db_text(r, (int)i, 1);
		c->label = db_text(r, (int)i, 2);
		c->verdict = db_text(r, (int)i, 3);
		c->change_pct = number_or_nan(r, (int)i, 4);
		c->p_value = number_or_nan(r, (int)i, 5);
	}
	out->retest_of = db_is_null(r, 0, 6) ? 0 : db_int(r, 0, 6);
	return STORE_OK;
}

int store_compare_set_column(PGconn *conn, long long job_id, size_t idx,
			     const char *verdict, double change_pct,
			     double p_value)
{
	char id[STORE_INT_TEXT], idx_text[STORE_INT_TEXT], change[40], p[40];
	const char *params[5];
	PGresult *r;

	snprintf(change, sizeof(change), "%.17g", change_pct);
	snprintf(p, sizeof(p), "%.17g", p_value);
	params[0] = store_int_text(id, job_id);
	params[1] = store_int_text(idx_text, (long long)idx);
	params[2] = verdict;
	params[3] = isfinite(change_pct) ? change : NULL;
	params[4] = isfinite(p_value) ? p : NULL;
	r = db_exec(conn,
		    "UPDATE job_columns SET verdict = $3, change_pct = $4,"
		    " p_value = $5 WHERE job_id = $1 AND idx = $2",
		    5, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_compare_finish(PGconn *conn, long long job_id, const char *verdict,
			 double change_pct, double p_value,
			 const char *message)
{
	char id[STORE_INT_TEXT], change[40], p[40];
	const char *params[5];
	PGresult *r;

	snprintf(change, sizeof(change), "%.17g", change_pct);
	snprintf(p, sizeof(p), "%.17g", p_value);
	params[0] = store_int_text(id, job_id);
	params[1] = verdict;
	params[2] = isfinite(change_pct) ? change : NULL;
	params[3] = isfinite(p_value) ? p : NULL;
	params[4] = message;
	r = db_exec(conn,
		    "UPDATE jobs SET state = 'done', verdict = $2,"
		    " change_pct = $3, p_value = $4, message = $5,"
		    " finished_at = now() WHERE id = $1",
		    5, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_compare_kind(PGconn *conn, long long job_id, char kind[16])
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;
	int rc;

	r = db_exec(conn, "SELECT kind FROM jobs WHERE id = $1", 1, params);
	rc = store_one_row(r);
	if (rc != STORE_OK)
		return rc;
	snprintf(kind, 16, "%s", db_text(r, 0, 0));
	PQclear(r);
	return STORE_OK;
}

void store_compare_source_clear(struct store_compare_source *source)
{
	PQclear(source->result);
	memset(source, 0, sizeof(*source));
}

int store_compare_source(struct store_compare_source *out, PGconn *conn,
			 long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;
	int rc;

	memset(out, 0, sizeof(*out));
	r = db_exec(
	    conn,
	    "SELECT j.kind, j.state, j.verdict, j.culprit_sha,"
	    " j.parent_sha, rp.name, t.name, j.notify, j.bad_rev,"
	    " j.group_name FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
	    " JOIN testcases t ON t.id = j.testcase_id"
	    " WHERE j.id = $1",
	    1, params);
	rc = store_one_row(r);
	if (rc != STORE_OK)
		return rc;
	out->result = r;
	out->kind = db_text(r, 0, 0);
	out->state = db_text(r, 0, 1);
	out->verdict = db_text(r, 0, 2);
	out->culprit_sha = db_text(r, 0, 3);
	out->parent_sha = db_text(r, 0, 4);
	out->repo = db_text(r, 0, 5);
	out->testcase = db_text(r, 0, 6);
	out->notify = db_text(r, 0, 7);
	out->bad_rev = db_text(r, 0, 8);
	out->group = db_text(r, 0, 9);
	return STORE_OK;
}
