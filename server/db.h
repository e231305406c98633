/*
 * PostgreSQL access for the server: one connection per thread (libpq
 * connections must not be shared between threads), opened on first use and
 * reopened after the server drops it.  All SQL goes through $n parameters.
 */
#ifndef STATBISECT_DB_H
#define STATBISECT_DB_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "strbuf.h"

/* Sets the connection string for every thread; call once at start. */
void db_configure(const char *conninfo);

/* This thread's connection, or NULL (logged) when the database is down. */
PGconn *db_conn(void);

/* Closes this thread's connection (at thread exit). */
void db_disconnect(void);

/*
 * Runs `sql` with text parameters (NULL entries are SQL NULL).  Returns the
 * result, which the caller PQclear()s, or NULL after logging the error when
 * the command failed; *sqlstate, when not NULL, receives the SQLSTATE of a
 * failure (static storage of this thread) or NULL.
 */
PGresult *db_exec(PGconn *conn, const char *sql, int nparams,
		  const char *const *params);
PGresult *db_exec_state(PGconn *conn, const char *sql, int nparams,
			const char *const *params, const char **sqlstate);

/*
 * db_exec() of a statement the caller runs often, prepared once per
 * session of this thread's connection (db_conn()) so that PostgreSQL
 * plans it once rather than at each run (issue 14: planning was half of
 * a claim's time in the database).  `sql` must be a string literal, or
 * text as lasting that never changes: it is known by its address.  On
 * another connection, or past 32 such statements, it is db_exec().
 */
PGresult *db_exec_prepared(PGconn *conn, const char *sql, int nparams,
			   const char *const *params);

/*
 * The SQLSTATE of this thread's last failed command or connection (static
 * storage; "" when the server gave none or the last command succeeded).
 */
const char *db_last_failure(void);

/*
 * Whether a failure with SQLSTATE `state` may pass if the client tries
 * again: the database unreachable, shutting down, short of resources, or
 * a transaction that lost a serialization race or a deadlock; also no
 * SQLSTATE at all (the connection broke).  Anything else is a fault of
 * the query or its data.
 */
bool db_state_transient(const char *state);

/*
 * COPY ... FROM STDIN in text format, for writing many rows at once:
 * db_copy_start runs `sql` (a COPY command) and returns 0 or -1 (logged);
 * the caller appends rows to a strbuf with db_copy_field and
 * db_copy_row_end, hands it to db_copy_put whenever it has grown (the
 * buffer is sent and emptied), and ends with db_copy_finish, which sends
 * what is left, ends the copy (aborting it when `ok` is false) and
 * returns 0 or -1.  Every started copy must be finished.  It runs inside
 * whatever transaction the caller holds.
 */
int db_copy_start(PGconn *conn, const char *sql);
/* Appends `text` (NULL: SQL NULL) as the next field of the row in `buf`,
 * escaping backslash, tab, newline and carriage return as COPY wants. */
void db_copy_field(struct strbuf *buf, const char *text);
void db_copy_row_end(struct strbuf *buf);
int db_copy_put(PGconn *conn, struct strbuf *buf);
int db_copy_finish(PGconn *conn, struct strbuf *buf, bool ok);

/* BEGIN / COMMIT / ROLLBACK; begin and commit return 0 or -1. */
int db_begin(PGconn *conn);
int db_commit(PGconn *conn);
void db_rollback(PGconn *conn);

/*
 * Applies the migrations in `sql_dir` (NNN_name.sql, in name order) that
 * schema_migrations does not list, each in its own transaction, under an
 * advisory lock so that servers starting together do not race.
 */
int db_migrate(PGconn *conn, const char *sql_dir);

/* Field helpers on a result row. */
const char *db_text(const PGresult *res, int row, int col); /* NULL if null */
long long db_int(const PGresult *res, int row, int col);
double db_double(const PGresult *res, int row, int col);
bool db_bool(const PGresult *res, int row, int col);
bool db_is_null(const PGresult *res, int row, int col);

#endif
