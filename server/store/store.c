#include "store.h"

#include <stdlib.h>

#include "../db.h"

int store_command(PGconn *conn, const char *sql, int count,
		  const char *const *params)
{
	PGresult *r = db_exec(conn, sql, count, params);

	if (r == NULL)
		return STORE_FAILED;
	PQclear(r);
	return STORE_OK;
}

int store_one_row(PGresult *r)
{
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	return STORE_OK;
}

void *store_rows_alloc(size_t *count, PGresult *r, size_t size)
{
	void *items;

	*count = 0;
	if (r == NULL)
		return NULL;
	items = calloc((size_t)PQntuples(r) + 1, size);
	if (items == NULL) {
		PQclear(r);
		return NULL;
	}
	*count = (size_t)PQntuples(r);
	return items;
}
