#include "store_tokens.h"

#include <stdlib.h>
#include <string.h>

#include "../db.h"

/* How a secret is stored and looked up: its hex SHA-256. */
#define TOKEN_HASH(param)                                                     \
	"encode(sha256(convert_to(" param ", 'UTF8')), 'hex')"

/* The columns of a token, in the order token_fill reads them. */
#define TOKEN_COLUMNS                                                         \
	"id, name, role, " STORE_TIMESTAMP(                                   \
	    "created_at") ", " STORE_TIMESTAMP("revoked_at") ", "             \
							     "coalesce(max_"  \
							     "jobs_per_hour," \
							     " -1), "         \
							     "coalesce(max_"  \
							     "open_jobs, -1)"

static void token_fill(struct store_token *out, const PGresult *r, int row)
{
	out->id = db_int(r, row, 0);
	out->name = db_text(r, row, 1);
	out->role = db_text(r, row, 2);
	out->created_at = db_text(r, row, 3);
	out->revoked_at = db_text(r, row, 4);
	out->max_jobs_per_hour = db_int(r, row, 5);
	out->max_open_jobs = db_int(r, row, 6);
}

/* Takes the one-row result `r` (or none) into *out. */
static int token_take(struct store_token *out, PGresult *r)
{
	int error = store_one_row(r);

	if (error == STORE_OK) {
		token_fill(out, r, 0);
		out->held = r;
	}
	return error;
}

void store_token_clear(struct store_token *token)
{
	if (token == NULL)
		return;
	PQclear(token->held);
	memset(token, 0, sizeof(*token));
}

void store_token_list_clear(struct store_token_list *list)
{
	if (list == NULL)
		return;
	free(list->items);
	PQclear(list->held);
	memset(list, 0, sizeof(*list));
}

int store_tokens_create(struct store_token *out, PGconn *conn,
			const char *name, const char *role, const char *secret)
{
	return store_tokens_create_limited(out, conn, name, role, secret, -1,
					   -1);
}

int store_tokens_create_limited(struct store_token *out, PGconn *conn,
				const char *name, const char *role,
				const char *secret,
				long long max_jobs_per_hour,
				long long max_open_jobs)
{
	char per_hour[STORE_INT_TEXT], open[STORE_INT_TEXT];
	const char *params[5] = {
	    name, role, secret,
	    max_jobs_per_hour >= 0
		? store_int_text(per_hour, max_jobs_per_hour)
		: NULL,
	    max_open_jobs >= 0 ? store_int_text(open, max_open_jobs) : NULL};

	memset(out, 0, sizeof(*out));
	return token_take(out,
			  db_exec(conn,
				  "INSERT INTO tokens (name, role, token_hash,"
				  " max_jobs_per_hour, max_open_jobs)"
				  " VALUES ($1, $2, " TOKEN_HASH(
				      "$3") ", $4, $5)"
					    " RETURNING " TOKEN_COLUMNS,
				  5, params));
}

int store_tokens_list(struct store_token_list *out, PGconn *conn)
{
	PGresult *r;
	size_t row;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn, "SELECT " TOKEN_COLUMNS " FROM tokens ORDER BY id",
		    0, NULL);
	out->items = store_rows_alloc(&out->count, r, sizeof(*out->items));
	if (out->items == NULL)
		return STORE_FAILED;
	for (row = 0; row < out->count; row++)
		token_fill(&out->items[row], r, (int)row);
	out->held = r;
	return STORE_OK;
}

int store_tokens_revoke(struct store_token *out, PGconn *conn, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r;
	int error;

	memset(out, 0, sizeof(*out));
	error = token_take(out, db_exec(conn,
					"UPDATE tokens SET revoked_at = now()"
					" WHERE id = $1 AND revoked_at IS NULL"
					" RETURNING " TOKEN_COLUMNS,
					1, params));
	if (error != STORE_NOT_FOUND)
		return error;
	r = db_exec(conn, "SELECT 1 FROM tokens WHERE id = $1", 1, params);
	if (r == NULL)
		return STORE_FAILED;
	error = PQntuples(r) == 0 ? STORE_NOT_FOUND : STORE_CONFLICT;
	PQclear(r);
	return error;
}

int store_tokens_find(struct store_token *out, PGconn *conn,
		      const char *secret)
{
	const char *params[1] = {secret};

	memset(out, 0, sizeof(*out));
	return token_take(
	    out, db_exec_prepared(conn,
				  "SELECT " TOKEN_COLUMNS " FROM tokens"
				  " WHERE token_hash = " TOKEN_HASH(
				      "$1") " AND revoked_at IS NULL",
				  1, params));
}

void store_session_clear(struct store_session *session)
{
	if (session == NULL)
		return;
	PQclear(session->held);
	memset(session, 0, sizeof(*session));
}

int store_sessions_create(PGconn *conn, const char *secret, long long token_id,
			  const char *role, const char *csrf, int seconds)
{
	char token_text[STORE_INT_TEXT], seconds_text[STORE_INT_TEXT];
	const char *params[5] = {
	    secret, token_id > 0 ? store_int_text(token_text, token_id) : NULL,
	    role, csrf, store_int_text(seconds_text, seconds)};
	PGresult *r;

	r = db_exec(conn,
		    "WITH gone AS (DELETE FROM sessions"
		    " WHERE expires_at < now())"
		    " INSERT INTO sessions (session_hash, token_id, role,"
		    " csrf_token, expires_at) VALUES (" TOKEN_HASH(
			"$1") ","
			      " $2, $3, $4, now() + $5::integer * interval '1 "
			      "second')",
		    5, params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_sessions_find(struct store_session *out, PGconn *conn,
			const char *secret)
{
	const char *params[1] = {secret};
	PGresult *r;
	int error;

	memset(out, 0, sizeof(*out));
	r = db_exec(
	    conn,
	    "SELECT s.role, s.csrf_token, s.token_id,"
	    " coalesce(t.name, 'bootstrap admin'),"
	    " extract(epoch FROM s.expires_at - now())::float8"
	    " FROM sessions s LEFT JOIN tokens t ON t.id = s.token_id"
	    " WHERE s.session_hash = " TOKEN_HASH(
		"$1") " AND s.expires_at > now()"
		      " AND (s.token_id IS NULL OR t.revoked_at IS NULL)",
	    1, params);
	error = store_one_row(r);
	if (error < 0)
		return error;
	out->role = db_text(r, 0, 0);
	out->csrf = db_text(r, 0, 1);
	out->token_id = db_is_null(r, 0, 2) ? 0 : db_int(r, 0, 2);
	out->name = db_text(r, 0, 3);
	out->expires_in = db_double(r, 0, 4);
	out->held = r;
	return STORE_OK;
}

int store_sessions_delete(PGconn *conn, const char *secret)
{
	const char *params[1] = {secret};
	PGresult *r;

	r = db_exec(
	    conn,
	    "DELETE FROM sessions WHERE session_hash = " TOKEN_HASH("$1"), 1,
	    params);
	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}
