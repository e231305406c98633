/*
 * server/store: the only place in the server that writes SQL.  One module
 * per table family (store_tokens.c, store_repos.c, store_jobs.c, ...)
 * takes typed parameters and hands back C structs; resource files above
 * it (tokens.c, repos.c, jobs.c, ...) never see a query.  This header
 * holds what every store module shares.
 */
#ifndef STATBISECT_STORE_H
#define STATBISECT_STORE_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>

/*
 * What a store function returns: 0, or one of these negative codes.  A
 * function's contract says which of them it can return.
 */
enum store_status {
	STORE_OK = 0,
	STORE_FAILED = -1,    /* the database failed: db_last_failure() */
	STORE_NOT_FOUND = -2, /* no row has that key */
	STORE_EXISTS = -3,    /* the unique key is taken already */
	STORE_CONFLICT = -4,  /* the row's state refuses the change */
};

/*
 * SQL text of timestamp `column` as every answer shows it: ISO 8601 in
 * UTC to the second ("2026-12-03T08:21:03Z"), whatever the session's
 * TimeZone.  `column` is a string literal: STORE_TIMESTAMP("j.created_at").
 */
#define STORE_TIMESTAMP(column)                                               \
	"to_char(" column " AT TIME ZONE 'UTC',"                              \
	" 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* Room for the decimal text of any long long, with its sign and NUL. */
#define STORE_INT_TEXT 24

/* `value` as a $n parameter's text in `buf` (STORE_INT_TEXT bytes). */
static inline const char *store_int_text(char *buf, long long value)
{
	snprintf(buf, STORE_INT_TEXT, "%lld", value);
	return buf;
}

/* Runs `sql` with its `count` parameters, whose rows (if any) nobody
 * reads: STORE_OK or STORE_FAILED. */
int store_command(PGconn *conn, const char *sql, int count,
		  const char *const *params);

/*
 * The status of a command that looks for one row, whose result is `r`
 * (NULL: the command failed): STORE_OK when it has exactly one row (the
 * caller keeps `r`), STORE_NOT_FOUND otherwise (`r` is cleared), or
 * STORE_FAILED.
 */
int store_one_row(PGresult *r);

/*
 * Items for the rows of result `r` (NULL: the command failed):
 * PQntuples(r) + 1 zeroed items of `size` bytes (the caller fills them,
 * keeps `r` and free()s them), *count the number of rows.  NULL, with
 * `r` cleared, when `r` is NULL or memory ran out.
 */
void *store_rows_alloc(size_t *count, PGresult *r, size_t size);

#endif
