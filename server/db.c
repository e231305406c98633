#include "db.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char *db_conninfo;
static _Thread_local PGconn *db_thread_conn;
/* The same connection under a key whose destructor closes it when its
 * thread ends (HTTP pool threads end when the daemon stops). */
static pthread_key_t db_conn_key;
static pthread_once_t db_conn_key_once = PTHREAD_ONCE_INIT;
/* The SQLSTATE of this thread's last failure ("" for none known). */
static _Thread_local char db_last_state[6];
/* The statements this thread's connection has prepared
 * (db_exec_prepared), by the address of their text; the n-th is named
 * "sb_n".  Forgotten when the session is: a reset opens a new one. */
#define DB_PREPARED_MAX 32
static _Thread_local const char *db_prepared[DB_PREPARED_MAX];
static _Thread_local size_t db_prepared_count;

static void remember_failure(const char *state)
{
	snprintf(db_last_state, sizeof(db_last_state), "%s",
		 state != NULL ? state : "");
}

const char *db_last_failure(void)
{
	return db_last_state;
}

bool db_state_transient(const char *state)
{
	static const char *const classes[] = {
	    "08", /* connection exception */
	    "40", /* transaction rollback: serialization, deadlock */
	    "53", /* insufficient resources */
	    "57", /* operator intervention: shutdown, crash recovery */
	};
	size_t i;

	/* No SQLSTATE: the connection broke before the server answered. */
	if (state == NULL || strlen(state) != 5)
		return true;
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strncmp(state, classes[i], 2) == 0)
			return true;
	}
	return false;
}

void db_configure(const char *conninfo)
{
	db_conninfo = conninfo;
}

/*
 * The session settings every connection needs, again after a reset (which
 * opens a new session): times in UTC everywhere, so that the API never
 * depends on where the database runs, and text in UTF-8 both ways, which
 * is what statbisect stores and serves (commit text is made UTF-8 where it
 * enters), whatever PGCLIENTENCODING says.
 */
static void session_setup(PGconn *conn)
{
	PQclear(PQexec(conn, "SET TIME ZONE 'UTC'"));
	if (PQsetClientEncoding(conn, "UTF8") != 0)
		log_error("database: cannot set the client encoding: %s",
			  PQerrorMessage(conn));
}

static void close_at_thread_exit(void *conn)
{
	PQfinish(conn);
}

static void make_conn_key(void)
{
	pthread_key_create(&db_conn_key, close_at_thread_exit);
}

/* Makes `conn` this thread's connection, closed when the thread ends. */
static void keep(PGconn *conn)
{
	db_prepared_count = 0;
	pthread_once(&db_conn_key_once, make_conn_key);
	db_thread_conn = conn;
	pthread_setspecific(db_conn_key, conn);
}

PGconn *db_conn(void)
{
	if (db_thread_conn != NULL &&
	    PQstatus(db_thread_conn) == CONNECTION_OK)
		return db_thread_conn;
	if (db_thread_conn != NULL) {
		PQreset(db_thread_conn);
		db_prepared_count = 0;
		if (PQstatus(db_thread_conn) == CONNECTION_OK) {
			session_setup(db_thread_conn);
			return db_thread_conn;
		}
		PQfinish(db_thread_conn);
		keep(NULL);
	}
	keep(PQconnectdb(db_conninfo));
	if (PQstatus(db_thread_conn) != CONNECTION_OK) {
		remember_failure("08006"); /* connection failure */
		log_error("database connection failed: %s",
			  PQerrorMessage(db_thread_conn));
		PQfinish(db_thread_conn);
		keep(NULL);
		return NULL;
	}
	session_setup(db_thread_conn);
	return db_thread_conn;
}

void db_disconnect(void)
{
	PQfinish(db_thread_conn);
	keep(NULL);
}

/* `res` when it is a result, else NULL after noting and logging the
 * failure of `sql`. */
static PGresult *checked(PGresult *res, const char *sql, const char **sqlstate)
{
	ExecStatusType status = PQresultStatus(res);

	if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
		return res;
	{
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		remember_failure(state);
		if (sqlstate != NULL)
			*sqlstate = db_last_state;
		/* A unique violation is an expected answer, not a fault. */
		if (state == NULL || strcmp(state, "23505") != 0)
			log_error("query failed: %s (%.80s)",
				  PQresultErrorMessage(res), sql);
	}
	PQclear(res);
	return NULL;
}

PGresult *db_exec_state(PGconn *conn, const char *sql, int nparams,
			const char *const *params, const char **sqlstate)
{
	if (sqlstate != NULL)
		*sqlstate = NULL;
	if (conn == NULL) {
		remember_failure("08003"); /* connection does not exist */
		return NULL;
	}
	remember_failure(NULL);
	return checked(
	    PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0), sql,
	    sqlstate);
}

/* The index under which this thread's connection has `sql` prepared,
 * preparing it first if need be; -1 when it cannot be. */
static int prepared_index(PGconn *conn, const char *sql, int nparams)
{
	char name[16];
	PGresult *res;
	size_t i;

	for (i = 0; i < db_prepared_count; i++) {
		if (db_prepared[i] == sql)
			return (int)i;
	}
	if (db_prepared_count == DB_PREPARED_MAX)
		return -1;
	snprintf(name, sizeof(name), "sb_%zu", db_prepared_count);
	res = PQprepare(conn, name, sql, nparams, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		PQclear(res);
		return -1;
	}
	PQclear(res);
	db_prepared[db_prepared_count] = sql;
	return (int)db_prepared_count++;
}

PGresult *db_exec_prepared(PGconn *conn, const char *sql, int nparams,
			   const char *const *params)
{
	char name[16];
	int i;

	if (conn == NULL || conn != db_thread_conn)
		return db_exec(conn, sql, nparams, params);
	i = prepared_index(conn, sql, nparams);
	if (i < 0)
		return db_exec(conn, sql, nparams, params);
	remember_failure(NULL);
	snprintf(name, sizeof(name), "sb_%d", i);
	return checked(
	    PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0), sql,
	    NULL);
}

PGresult *db_exec(PGconn *conn, const char *sql, int nparams,
		  const char *const *params)
{
	return db_exec_state(conn, sql, nparams, params, NULL);
}

static int db_simple(PGconn *conn, const char *sql)
{
	PGresult *res = db_exec(conn, sql, 0, NULL);

	if (res == NULL)
		return -1;
	PQclear(res);
	return 0;
}

int db_copy_start(PGconn *conn, const char *sql)
{
	PGresult *res;

	if (conn == NULL) {
		remember_failure("08003");
		return -1;
	}
	remember_failure(NULL);
	res = PQexec(conn, sql);
	if (PQresultStatus(res) == PGRES_COPY_IN) {
		PQclear(res);
		return 0;
	}
	remember_failure(PQresultErrorField(res, PG_DIAG_SQLSTATE));
	log_error("copy failed: %s (%.80s)", PQresultErrorMessage(res), sql);
	PQclear(res);
	return -1;
}

void db_copy_field(struct strbuf *buf, const char *text)
{
	const char *run = text;

	/* Each field ends with a tab; db_copy_row_end turns the row's last
	 * into the newline. */
	if (text == NULL) {
		strbuf_appendn(buf, "\\N\t", 3);
		return;
	}
	for (; *text != '\0'; text++) {
		const char *escape = *text == '\\'   ? "\\\\"
				     : *text == '\t' ? "\\t"
				     : *text == '\n' ? "\\n"
				     : *text == '\r' ? "\\r"
						     : NULL;

		if (escape == NULL)
			continue;
		strbuf_appendn(buf, run, (size_t)(text - run));
		strbuf_appendn(buf, escape, 2);
		run = text + 1;
	}
	strbuf_appendn(buf, run, (size_t)(text - run));
	strbuf_appendn(buf, "\t", 1);
}

void db_copy_row_end(struct strbuf *buf)
{
	if (buf->len > 0 && !buf->failed)
		buf->data[buf->len - 1] = '\n';
}

int db_copy_put(PGconn *conn, struct strbuf *buf)
{
	int rc = 0;

	if (buf->failed) {
		log_error("copy failed: out of memory");
		rc = -1;
	} else if (buf->len > 0 &&
		   PQputCopyData(conn, buf->data, (int)buf->len) != 1) {
		log_error("copy failed: %s", PQerrorMessage(conn));
		rc = -1;
	}
	buf->len = 0;
	if (buf->data != NULL)
		buf->data[0] = '\0';
	return rc;
}

int db_copy_finish(PGconn *conn, struct strbuf *buf, bool ok)
{
	PGresult *res;
	int rc = 0;

	if (ok && db_copy_put(conn, buf) < 0)
		ok = false;
	if (PQputCopyEnd(conn, ok ? NULL : "abandoned by the server") != 1) {
		log_error("copy failed: %s", PQerrorMessage(conn));
		rc = -1;
	}
	/* The copy's own result, then the NULL that ends the command. */
	while ((res = PQgetResult(conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			if (ok)
				log_error("copy failed: %s",
					  PQresultErrorMessage(res));
			remember_failure(
			    PQresultErrorField(res, PG_DIAG_SQLSTATE));
			rc = -1;
		}
		PQclear(res);
	}
	strbuf_clear(buf);
	return ok ? rc : -1;
}

int db_begin(PGconn *conn)
{
	return db_simple(conn, "BEGIN");
}

int db_commit(PGconn *conn)
{
	return db_simple(conn, "COMMIT");
}

void db_rollback(PGconn *conn)
{
	PQclear(PQexec(conn, "ROLLBACK"));
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long size;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		text = malloc((size_t)size + 1);
		if (text != NULL &&
		    fread(text, 1, (size_t)size, f) != (size_t)size) {
			free(text);
			text = NULL;
		} else if (text != NULL) {
			text[size] = '\0';
		}
	}
	fclose(f);
	return text;
}

static int is_migration(const struct dirent *entry)
{
	size_t len = strlen(entry->d_name);

	return len > 4 && strcmp(entry->d_name + len - 4, ".sql") == 0 &&
	       entry->d_name[0] >= '0' && entry->d_name[0] <= '9';
}

static int apply_one(PGconn *conn, const char *sql_dir, const char *name)
{
	const char *params[1] = {name};
	PGresult *res;
	char path[4096];
	char *sql;
	int error = -1;

	res =
	    db_exec(conn, "SELECT 1 FROM schema_migrations WHERE version = $1",
		    1, params);
	if (res == NULL)
		return -1;
	if (PQntuples(res) > 0) {
		PQclear(res);
		return 0;
	}
	PQclear(res);
	snprintf(path, sizeof(path), "%s/%s", sql_dir, name);
	sql = read_file(path);
	if (sql == NULL) {
		log_error("cannot read migration %s", path);
		return -1;
	}
	if (db_begin(conn) < 0)
		goto out;
	/* PQexec, not PQexecParams: a migration holds many statements. */
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_error("migration %s failed: %s", name,
			  PQresultErrorMessage(res));
		PQclear(res);
		db_rollback(conn);
		goto out;
	}
	PQclear(res);
	res = db_exec(conn,
		      "INSERT INTO schema_migrations (version) VALUES ($1)", 1,
		      params);
	if (res == NULL) {
		db_rollback(conn);
		goto out;
	}
	PQclear(res);
	if (db_commit(conn) < 0)
		goto out;
	log_info("applied migration %s", name);
	error = 0;
out:
	free(sql);
	return error;
}

int db_migrate(PGconn *conn, const char *sql_dir)
{
	struct dirent **entries = NULL;
	int n, i, error = -1;

	if (db_simple(conn, "SELECT pg_advisory_lock(421337)") < 0)
		return -1;
	/* Quietly: no NOTICE that the table exists on every start. */
	if (db_simple(conn, "SET client_min_messages TO warning") < 0 ||
	    db_simple(conn,
		      "CREATE TABLE IF NOT EXISTS schema_migrations ("
		      " version text PRIMARY KEY,"
		      " applied_at timestamptz NOT NULL DEFAULT now())") < 0 ||
	    db_simple(conn, "RESET client_min_messages") < 0)
		goto out;
	n = scandir(sql_dir, &entries, is_migration, alphasort);
	if (n < 0) {
		log_error("cannot list migrations in %s", sql_dir);
		goto out;
	}
	error = 0;
	for (i = 0; i < n; i++) {
		if (error == 0 &&
		    apply_one(conn, sql_dir, entries[i]->d_name) < 0)
			error = -1;
		free(entries[i]);
	}
	free(entries);
out:
	db_simple(conn, "SELECT pg_advisory_unlock(421337)");
	return error;
}

const char *db_text(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

long long db_int(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col)
		   ? 0
		   : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

double db_double(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col)
		   ? 0.0
		   : strtod(PQgetvalue(res, row, col), NULL);
}

bool db_bool(const PGresult *res, int row, int col)
{
	return !PQgetisnull(res, row, col) &&
	       PQgetvalue(res, row, col)[0] == 't';
}

bool db_is_null(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) != 0;
}
