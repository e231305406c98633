/* Webhooks and their deliveries in PostgreSQL; a delivery's retries back
 * off as the outbox's do. */
#include "store_webhooks.h"

#include <stdlib.h>
#include <string.h>

#include "../db.h"

/* The owner column of a webhook. */
static const char *owner_column(enum store_webhook_owner owner)
{
	return owner == STORE_WEBHOOK_JOB ? "job" : "testcase";
}

void store_webhook_list_clear(struct store_webhook_list *list)
{
	if (list == NULL)
		return;
	free(list->items);
	PQclear(list->held);
	memset(list, 0, sizeof(*list));
}

/* The rows (source, url, format, secret) of `r` into *out. */
static int list_fill(struct store_webhook_list *out, PGresult *r)
{
	size_t row;

	memset(out, 0, sizeof(*out));
	out->items = store_rows_alloc(&out->count, r, sizeof(*out->items));
	if (out->items == NULL)
		return STORE_FAILED;
	for (row = 0; row < out->count; row++) {
		out->items[row].source = db_text(r, (int)row, 0);
		out->items[row].url = db_text(r, (int)row, 1);
		out->items[row].format = db_text(r, (int)row, 2);
		out->items[row].secret = db_text(r, (int)row, 3);
	}
	out->held = r;
	return STORE_OK;
}

int store_webhooks_set(PGconn *conn, enum store_webhook_owner owner,
		       long long owner_id, const char *url, const char *format,
		       const char *secret)
{
	char id[STORE_INT_TEXT];
	const char *params[5] = {owner_column(owner),
				 store_int_text(id, owner_id), url, format,
				 secret};

	if (store_webhooks_remove(conn, owner, owner_id) < 0)
		return STORE_FAILED;
	return store_command(
	    conn,
	    "INSERT INTO webhooks (testcase_id, job_id, url, format,"
	    " secret) VALUES (CASE WHEN $1 = 'testcase'"
	    " THEN $2::bigint END, CASE WHEN $1 = 'job'"
	    " THEN $2::bigint END, $3, $4, $5)",
	    5, params);
}

int store_webhooks_remove(PGconn *conn, enum store_webhook_owner owner,
			  long long owner_id)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {owner_column(owner),
				 store_int_text(id, owner_id)};

	return store_command(conn,
			     "DELETE FROM webhooks WHERE CASE WHEN $1 = 'job'"
			     " THEN job_id ELSE testcase_id END = $2::bigint",
			     2, params);
}

int store_webhooks_get(struct store_webhook_list *out, PGconn *conn,
		       enum store_webhook_owner owner, long long owner_id)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {owner_column(owner),
				 store_int_text(id, owner_id)};

	return list_fill(out, db_exec(conn,
				      "SELECT $1::text, url, format, secret"
				      " FROM webhooks WHERE CASE WHEN $1 ="
				      " 'job' THEN job_id ELSE testcase_id"
				      " END = $2::bigint",
				      2, params));
}

int store_webhooks_due(struct store_webhook_list *out, PGconn *conn,
		       long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};

	return list_fill(
	    out,
	    db_exec(conn,
		    "SELECT w.source, w.url, w.format, w.secret FROM"
		    " (SELECT CASE WHEN h.job_id IS NULL THEN 'testcase'"
		    " ELSE 'job' END AS source, h.url, h.format, h.secret"
		    " FROM webhooks h JOIN jobs j ON j.id = $1"
		    " AND j.state IN ('done', 'failed')"
		    " AND (h.job_id = j.id OR h.testcase_id = j.testcase_id))"
		    " w WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d"
		    " WHERE d.job_id = $1 AND d.source = w.source)"
		    " ORDER BY w.source DESC",
		    1, params));
}

int store_webhooks_queue(PGconn *conn, long long job_id, const char *source,
			 const char *format, const char *url, const char *body,
			 const char *signature)
{
	char id[STORE_INT_TEXT];
	const char *params[6] = {
	    store_int_text(id, job_id), source, format, url, body, signature};

	return store_command(
	    conn,
	    "INSERT INTO webhook_deliveries (job_id, source, format,"
	    " url, body, signature) VALUES ($1, $2, $3, $4, $5, $6)",
	    6, params);
}

void store_webhook_delivery_clear(struct store_webhook_delivery *delivery)
{
	if (delivery == NULL)
		return;
	PQclear(delivery->held);
	memset(delivery, 0, sizeof(*delivery));
}

int store_webhooks_next(struct store_webhook_delivery *out, PGconn *conn)
{
	PGresult *r;
	int rc;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT id, job_id, attempts, format, url, body, signature"
		    " FROM webhook_deliveries WHERE delivered_at IS NULL"
		    " AND failed_at IS NULL AND next_attempt_at <= now()"
		    " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
		    0, NULL);
	rc = store_one_row(r);
	if (rc != STORE_OK)
		return rc;
	out->held = r;
	out->id = db_int(r, 0, 0);
	out->job_id = db_int(r, 0, 1);
	out->attempts = db_int(r, 0, 2);
	out->format = db_text(r, 0, 3);
	out->url = db_text(r, 0, 4);
	out->body = db_text(r, 0, 5);
	out->signature = db_text(r, 0, 6);
	return STORE_OK;
}

int store_webhooks_delivered(PGconn *conn, long long id, long status)
{
	char id_text[STORE_INT_TEXT], status_text[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id_text, id),
				 store_int_text(status_text, status)};

	return store_command(
	    conn,
	    "UPDATE webhook_deliveries SET delivered_at = now(),"
	    " last_attempt_at = now(), attempts = attempts + 1,"
	    " last_status = $2, last_error = NULL WHERE id = $1",
	    2, params);
}

int store_webhooks_failed(PGconn *conn, long long id, long status,
			  const char *error, unsigned retry_max_seconds,
			  unsigned tries_max, bool give_up)
{
	char id_text[STORE_INT_TEXT], status_text[STORE_INT_TEXT];
	char retry_max[STORE_INT_TEXT], tries[STORE_INT_TEXT];
	const char *params[6] = {
	    store_int_text(id_text, id),
	    status > 0 ? store_int_text(status_text, status) : NULL,
	    error,
	    store_int_text(retry_max, retry_max_seconds),
	    store_int_text(tries, tries_max),
	    give_up ? "true" : "false"};

	return store_command(
	    conn,
	    "UPDATE webhook_deliveries SET attempts = attempts + 1,"
	    " last_status = $2, last_error = $3,"
	    " last_attempt_at = now(),"
	    " next_attempt_at = now() + make_interval(secs =>"
	    " least($4::double precision, 5 * 2 ^"
	    " least(attempts, 20))),"
	    " failed_at = CASE WHEN $6::boolean OR attempts + 1 >="
	    " $5::integer THEN now() END WHERE id = $1",
	    6, params);
}

void store_webhook_shown_list_clear(struct store_webhook_shown_list *list)
{
	if (list == NULL)
		return;
	free(list->items);
	PQclear(list->held);
	memset(list, 0, sizeof(*list));
}

int store_webhooks_deliveries(struct store_webhook_shown_list *out,
			      PGconn *conn, long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;
	size_t row;

	memset(out, 0, sizeof(*out));
	r = db_exec(
	    conn,
	    "SELECT id, attempts, coalesce(last_status, 0), source, format,"
	    " url, CASE WHEN delivered_at IS NOT NULL THEN 'delivered'"
	    " WHEN failed_at IS NOT NULL THEN 'failed'"
	    " WHEN attempts > 0 THEN 'retrying' ELSE 'pending' END,"
	    " last_error, " STORE_TIMESTAMP("created_at") ", " STORE_TIMESTAMP(
		"delivered_at") ", CASE WHEN delivered_at IS NULL AND"
				" failed_at IS NULL THEN " STORE_TIMESTAMP(
				    "next_attempt_at") " END"
						       " FROM "
						       "webhook_deliveries"
						       " WHERE job_id = $1"
						       " ORDER BY id",
	    1, params);
	out->items = store_rows_alloc(&out->count, r, sizeof(*out->items));
	if (out->items == NULL)
		return STORE_FAILED;
	for (row = 0; row < out->count; row++) {
		struct store_webhook_shown *s = &out->items[row];
		int i = (int)row;

		s->id = db_int(r, i, 0);
		s->attempts = db_int(r, i, 1);
		s->last_status = (long)db_int(r, i, 2);
		s->source = db_text(r, i, 3);
		s->format = db_text(r, i, 4);
		s->url = db_text(r, i, 5);
		s->state = db_text(r, i, 6);
		s->last_error = db_text(r, i, 7);
		s->created_at = db_text(r, i, 8);
		s->delivered_at = db_text(r, i, 9);
		s->next_attempt_at = db_text(r, i, 10);
	}
	out->held = r;
	return STORE_OK;
}
