/* The outbox in PostgreSQL: recipients as a jsonb list, the message as
 * text, attempts with an exponential back-off. */
#include "store_outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../db.h"
#include "store.h"

int store_outbox_insert(PGconn *conn, long long job_id,
			const char *const *recipients, size_t count,
			const char *subject, const char *message)
{
	char id[24], *list_text = NULL;
	const char *params[4] = {id, NULL, subject, message};
	json_t *list = json_array();
	PGresult *r;
	size_t i;

	for (i = 0; list != NULL && i < count; i++)
		json_array_append_new(list, json_string(recipients[i]));
	if (list != NULL)
		list_text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (list_text == NULL)
		return -1;
	snprintf(id, sizeof(id), "%lld", job_id);
	if (job_id <= 0)
		params[0] = NULL;
	params[1] = list_text;
	r = db_exec(conn,
		    "INSERT INTO outbox (job_id, recipients, subject, message)"
		    " VALUES ($1, $2, $3, $4)",
		    4, params);
	free(list_text);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

void store_outbox_item_clear(struct store_outbox_item *item)
{
	free(item->recipients);
	free(item->message);
	memset(item, 0, sizeof(*item));
}

int store_outbox_next(struct store_outbox_item *out, PGconn *conn)
{
	PGresult *r;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT id, recipients, message, attempts FROM outbox"
		    " WHERE sent_at IS NULL AND failed_at IS NULL"
		    " AND next_attempt_at <= now()"
		    " AND recipients <> '[]'::jsonb"
		    " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
		    0, NULL);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->id = db_int(r, 0, 0);
	out->recipients = strdup(db_text(r, 0, 1));
	out->message = strdup(db_text(r, 0, 2));
	out->attempts = db_int(r, 0, 3);
	PQclear(r);
	if (out->recipients == NULL || out->message == NULL) {
		store_outbox_item_clear(out);
		return -1;
	}
	return 0;
}

int store_outbox_sent(PGconn *conn, long long id)
{
	char id_text[24];
	const char *params[1] = {id_text};
	PGresult *r;

	snprintf(id_text, sizeof(id_text), "%lld", id);
	r = db_exec(conn,
		    "UPDATE outbox SET sent_at = now(),"
		    " last_attempt_at = now(),"
		    " attempts = attempts + 1, last_error = NULL"
		    " WHERE id = $1",
		    1, params);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

int store_outbox_failed(PGconn *conn, long long id, const char *error,
			unsigned retry_max_seconds, unsigned give_up_seconds)
{
	char id_text[24], retry_max[24], give_up[24];
	const char *params[4] = {id_text, error, retry_max, give_up};
	PGresult *r;

	snprintf(id_text, sizeof(id_text), "%lld", id);
	snprintf(retry_max, sizeof(retry_max), "%u", retry_max_seconds);
	snprintf(give_up, sizeof(give_up), "%u", give_up_seconds);
	r = db_exec(conn,
		    "UPDATE outbox SET attempts = attempts + 1,"
		    " last_error = $2, last_attempt_at = now(),"
		    " next_attempt_at = now() + make_interval(secs =>"
		    " least($3::double precision, 5 * 2 ^"
		    " least(attempts, 20))),"
		    " failed_at = CASE WHEN created_at < now() -"
		    " make_interval(secs => $4::double precision)"
		    " THEN now() END WHERE id = $1",
		    4, params);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}
