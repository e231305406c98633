#include "store_watches.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../db.h"
#include "store.h"

char *store_watches_row_dup(const PGresult *r, int row, int col)
{
	const char *s = db_text(r, row, col);

	return s != NULL ? strdup(s) : NULL;
}

void store_watches_row_copy(char *dst, size_t size, const PGresult *r, int row,
			    int col)
{
	const char *s = db_text(r, row, col);

	snprintf(dst, size, "%s", s != NULL ? s : "");
}

/* Runs a command whose result is not needed. */
int store_watches_exec(PGconn *conn, const char *sql, int n,
		       const char *const *params)
{
	PGresult *r = db_exec(conn, sql, n, params);

	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

/* Runs an UPDATE / DELETE: 0 when it touched a row, 1 when none. */
int store_watches_exec_touch(PGconn *conn, const char *sql, int n,
			     const char *const *params)
{
	PGresult *r = db_exec(conn, sql, n, params);
	int rc;

	if (r == NULL)
		return -1;
	rc = atoi(PQcmdTuples(r)) > 0 ? 0 : 1;
	PQclear(r);
	return rc;
}

void store_watch_clear(struct store_watch *watch)
{
	size_t i;

	free(watch->repo);
	free(watch->repo_url);
	free(watch->web_url);
	free(watch->branch);
	free(watch->notify);
	for (i = 0; watch->testcase_names != NULL && i < watch->testcase_count;
	     i++)
		free(watch->testcase_names[i]);
	free(watch->testcase_names);
	free(watch->testcase_ids);
	free(watch->created_at);
	free(watch->last_poll_at);
	free(watch->last_error);
	memset(watch, 0, sizeof(*watch));
}

void store_watches_free(struct store_watch *watches, size_t count)
{
	size_t i;

	for (i = 0; watches != NULL && i < count; i++)
		store_watch_clear(&watches[i]);
	free(watches);
}

static int lookup_id(PGconn *conn, const char *sql, const char *name,
		     long long *out)
{
	const char *params[1] = {name};
	PGresult *r = db_exec(conn, sql, 1, params);
	int rc = 1;

	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		*out = db_int(r, 0, 0);
		rc = 0;
	}
	PQclear(r);
	return rc;
}

int store_watches_repo_id(PGconn *conn, const char *name, long long *out)
{
	return lookup_id(conn,
			 "SELECT id FROM repos"
			 " WHERE name = $1 AND deleted_at IS NULL",
			 name, out);
}

int store_watches_testcase_id(PGconn *conn, const char *name, long long *out)
{
	return lookup_id(conn,
			 "SELECT id FROM testcases"
			 " WHERE name = $1 AND deleted_at IS NULL",
			 name, out);
}

int store_watches_insert(PGconn *conn, const struct store_watch_new *in,
			 long long *id_out)
{
	char repo[24], interval[24], token[24], id[24], tc[24];
	const char *params[7] = {repo,
				 in->branch,
				 interval,
				 in->regressions_only ? "true" : "false",
				 in->paused ? "true" : "false",
				 in->notify,
				 in->token_id > 0 ? token : NULL};
	PGresult *r;
	size_t i;

	snprintf(repo, sizeof(repo), "%lld", in->repo_id);
	snprintf(interval, sizeof(interval), "%lld", in->interval_s);
	snprintf(token, sizeof(token), "%lld", in->token_id);
	if (db_begin(conn) < 0)
		return -1;
	r = db_exec(conn,
		    "INSERT INTO watches (repo_id, branch, interval_s,"
		    " regressions_only, paused, notify, created_by)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
		    7, params);
	if (r == NULL)
		goto fail;
	*id_out = db_int(r, 0, 0);
	PQclear(r);
	snprintf(id, sizeof(id), "%lld", *id_out);
	for (i = 0; i < in->testcase_count; i++) {
		const char *p[2] = {id, tc};

		snprintf(tc, sizeof(tc), "%lld", in->testcase_ids[i]);
		if (store_watches_exec(conn,
				       "INSERT INTO watch_testcases (watch_id,"
				       " testcase_id) VALUES ($1, $2)"
				       " ON CONFLICT DO NOTHING",
				       2, p) < 0)
			goto fail;
	}
	if (db_commit(conn) < 0)
		goto fail;
	return 0;
fail:
	db_rollback(conn);
	return -1;
}

#define CREATED_AT STORE_TIMESTAMP("w.created_at")
#define LAST_POLL_AT STORE_TIMESTAMP("w.last_poll_at")
/* The columns watch_from_row reads, ending in the FROM clause. */
#define WATCH_COLUMNS                                                         \
	"SELECT w.id, w.repo_id, r.name, r.url, w.branch, w.interval_s,"      \
	" w.regressions_only, w.paused, w.notify,"                            \
	" " CREATED_AT ", " LAST_POLL_AT ","                                  \
	" w.last_error, (" WATCH_TESTCASES "), r.web_url"                     \
	" FROM watches w JOIN repos r ON r.id = w.repo_id"
/* The watch's testcases as a JSON array of [id, name], by name. */
#define WATCH_TESTCASES                                                       \
	"SELECT json_agg(json_build_array(t.id, t.name) ORDER BY t.name)"     \
	" FROM watch_testcases wt JOIN testcases t"                           \
	" ON t.id = wt.testcase_id WHERE wt.watch_id = w.id"

/* Fills `out` from row `row` of a WATCH_COLUMNS result. */
static int watch_from_row(struct store_watch *out, const PGresult *r, int row)
{
	const char *list = db_text(r, row, 12);
	json_t *pairs = list != NULL ? json_loads(list, 0, NULL) : NULL;
	size_t n = json_array_size(pairs), i;
	int error = -1;

	memset(out, 0, sizeof(*out));
	out->id = db_int(r, row, 0);
	out->repo_id = db_int(r, row, 1);
	out->repo = store_watches_row_dup(r, row, 2);
	out->repo_url = store_watches_row_dup(r, row, 3);
	out->branch = store_watches_row_dup(r, row, 4);
	out->interval_s = db_int(r, row, 5);
	out->regressions_only = db_bool(r, row, 6);
	out->paused = db_bool(r, row, 7);
	out->notify = store_watches_row_dup(r, row, 8);
	out->created_at = store_watches_row_dup(r, row, 9);
	out->last_poll_at = store_watches_row_dup(r, row, 10);
	out->last_error = store_watches_row_dup(r, row, 11);
	out->web_url = store_watches_row_dup(r, row, 13);
	out->testcase_ids = calloc(n + 1, sizeof(*out->testcase_ids));
	out->testcase_names = calloc(n + 1, sizeof(*out->testcase_names));
	if (out->repo == NULL || out->branch == NULL || out->notify == NULL ||
	    out->testcase_ids == NULL || out->testcase_names == NULL)
		goto out;
	/* json_agg of [id, name] pairs, by name */
	for (i = 0; i < n; i++) {
		json_t *pair = json_array_get(pairs, i);
		const char *name = json_string_value(json_array_get(pair, 1));

		out->testcase_ids[i] =
		    (long long)json_integer_value(json_array_get(pair, 0));
		out->testcase_names[i] = strdup(name != NULL ? name : "");
		if (out->testcase_names[i] == NULL)
			goto out;
		out->testcase_count = i + 1;
	}
	error = 0;
out:
	json_decref(pairs);
	return error;
}

int store_watches_get(struct store_watch *out, PGconn *conn, long long id)
{
	char id_text[24];
	const char *params[1] = {id_text};
	PGresult *r;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(id_text, sizeof(id_text), "%lld", id);
	r = db_exec(conn, WATCH_COLUMNS " WHERE w.id = $1", 1, params);
	if (r == NULL)
		return -1;
	rc = PQntuples(r) == 1 ? watch_from_row(out, r, 0) : 1;
	PQclear(r);
	if (rc < 0)
		store_watch_clear(out);
	return rc;
}

int store_watches_list(struct store_watch **out, size_t *count, PGconn *conn)
{
	PGresult *r = db_exec(conn, WATCH_COLUMNS " ORDER BY w.id", 0, NULL);
	size_t n, i;

	*out = NULL;
	*count = 0;
	if (r == NULL)
		return -1;
	n = (size_t)PQntuples(r);
	*out = calloc(n + 1, sizeof(**out));
	if (*out == NULL) {
		PQclear(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		*count = i + 1;
		if (watch_from_row(&(*out)[i], r, (int)i) < 0) {
			PQclear(r);
			store_watches_free(*out, *count);
			*out = NULL;
			*count = 0;
			return -1;
		}
	}
	PQclear(r);
	return 0;
}

int store_watches_set_paused(PGconn *conn, long long id, bool paused)
{
	char id_text[24];
	const char *params[2] = {id_text, paused ? "true" : "false"};

	snprintf(id_text, sizeof(id_text), "%lld", id);
	return store_watches_exec_touch(
	    conn,
	    "UPDATE watches SET paused = $2, next_poll_at ="
	    " CASE WHEN $2 THEN next_poll_at ELSE now() END"
	    " WHERE id = $1",
	    2, params);
}

int store_watches_delete(PGconn *conn, long long id)
{
	char id_text[24];
	const char *params[1] = {id_text};

	snprintf(id_text, sizeof(id_text), "%lld", id);
	return store_watches_exec_touch(
	    conn, "DELETE FROM watches WHERE id = $1", 1, params);
}

int store_watches_poke_repo(PGconn *conn, const char *repo, size_t *count)
{
	long long repo_id;
	char id_text[24];
	const char *params[1] = {id_text};
	PGresult *r;
	int rc = store_watches_repo_id(conn, repo, &repo_id);

	if (rc != 0)
		return rc;
	snprintf(id_text, sizeof(id_text), "%lld", repo_id);
	r = db_exec(conn,
		    "UPDATE watches SET next_poll_at = now()"
		    " WHERE repo_id = $1 AND NOT paused",
		    1, params);
	if (r == NULL)
		return -1;
	*count = (size_t)atol(PQcmdTuples(r));
	PQclear(r);
	return 0;
}

int store_watches_claim_due(struct store_watch *out, PGconn *conn)
{
	PGresult *r;
	long long id;

	r = db_exec(conn,
		    "UPDATE watches SET next_poll_at = now()"
		    " + make_interval(secs => interval_s) WHERE id = ("
		    " SELECT id FROM watches WHERE NOT paused"
		    " AND next_poll_at <= now() ORDER BY next_poll_at"
		    " LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
		    0, NULL);
	if (r == NULL)
		return -1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return 1;
	}
	id = db_int(r, 0, 0);
	PQclear(r);
	return store_watches_get(out, conn, id);
}

int store_watches_polled(PGconn *conn, long long id, const char *error)
{
	char id_text[24];
	const char *params[2] = {id_text, error};

	snprintf(id_text, sizeof(id_text), "%lld", id);
	return store_watches_exec(conn,
				  "UPDATE watches SET last_poll_at = now(),"
				  " last_error = $2 WHERE id = $1",
				  2, params);
}
