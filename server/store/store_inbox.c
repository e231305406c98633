#include "store_inbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"
#include "store.h"

/* The key of the inbox's advisory lock: any fixed number of our own. */
#define INBOX_LOCK_KEY "7405611330"

/* A command whose rows are not wanted; STORE_OK or STORE_FAILED. */
int store_inbox_add(bool *added, PGconn *conn, const struct store_inbox_new *m)
{
	char number[STORE_INT_TEXT], total[STORE_INT_TEXT];
	const char *params[9] = {m->message_id,
				 m->in_reply_to,
				 m->subject,
				 store_int_text(number, m->number),
				 store_int_text(total, m->total),
				 m->is_patch ? "t" : "f",
				 m->author,
				 m->recipients,
				 m->raw};
	PGresult *r;

	*added = false;
	r = db_exec(conn,
		    "INSERT INTO inbox_messages (message_id, in_reply_to,"
		    " subject, number, total, is_patch, author, recipients,"
		    " raw, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
		    " CASE WHEN $6::boolean THEN 'waiting' ELSE 'ignored'"
		    " END) ON CONFLICT (message_id) DO NOTHING",
		    9, params);
	if (r == NULL)
		return STORE_FAILED;
	*added = strcmp(PQcmdTuples(r), "1") == 0;
	PQclear(r);
	return STORE_OK;
}

void store_inbox_rows_clear(struct store_inbox_rows *rows)
{
	PQclear(rows->result);
	free(rows->rows);
	memset(rows, 0, sizeof(*rows));
}

int store_inbox_waiting(struct store_inbox_rows *out, PGconn *conn)
{
	PGresult *r;
	size_t i;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT id, message_id, in_reply_to, subject, author,"
		    " recipients, number, total,"
		    " extract(epoch FROM now() - received_at)"
		    " FROM inbox_messages WHERE state = 'waiting' ORDER BY id",
		    0, NULL);
	out->rows = store_rows_alloc(&out->count, r, sizeof(*out->rows));
	if (out->rows == NULL)
		return STORE_FAILED;
	out->result = r;
	for (i = 0; i < out->count; i++) {
		struct store_inbox_row *row = &out->rows[i];

		row->id = db_int(r, (int)i, 0);
		row->message_id = db_text(r, (int)i, 1);
		row->in_reply_to = db_text(r, (int)i, 2);
		row->subject = db_text(r, (int)i, 3);
		row->author = db_text(r, (int)i, 4);
		row->recipients = db_text(r, (int)i, 5);
		row->number = (int)db_int(r, (int)i, 6);
		row->total = (int)db_int(r, (int)i, 7);
		row->age_s = db_double(r, (int)i, 8);
	}
	return STORE_OK;
}

int store_inbox_raw(char **out, PGconn *conn, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r = db_exec(
	    conn, "SELECT raw FROM inbox_messages WHERE id = $1", 1, params);
	int status = store_one_row(r);

	*out = NULL;
	if (status != STORE_OK)
		return status;
	*out = strdup(db_text(r, 0, 0));
	PQclear(r);
	return *out != NULL ? STORE_OK : STORE_FAILED;
}

int store_inbox_settle(PGconn *conn, const long long *ids, size_t count,
		       const char *state, long long rule_id, long long job_id,
		       const char *note)
{
	char rule[STORE_INT_TEXT], job[STORE_INT_TEXT], *list;
	const char *params[5] = {
	    NULL, state, rule_id > 0 ? store_int_text(rule, rule_id) : NULL,
	    job_id > 0 ? store_int_text(job, job_id) : NULL, note};
	size_t i, used = 0;
	int status;

	/* The ids as an array literal: "{1,2,3}". */
	list = malloc(count * STORE_INT_TEXT + 3);
	if (list == NULL)
		return STORE_FAILED;
	list[used++] = '{';
	for (i = 0; i < count; i++)
		used += (size_t)sprintf(list + used, "%s%lld", i ? "," : "",
					ids[i]);
	list[used++] = '}';
	list[used] = '\0';
	params[0] = list;
	status =
	    store_command(conn,
			  "UPDATE inbox_messages SET state = $2, rule_id = $3,"
			  " job_id = $4, note = $5"
			  " WHERE id = ANY($1::bigint[])",
			  5, params);
	free(list);
	return status;
}

void store_inbox_rules_clear(struct store_inbox_rules *rules)
{
	PQclear(rules->result);
	free(rules->rules);
	memset(rules, 0, sizeof(*rules));
}

int store_inbox_rules_list(struct store_inbox_rules *out, PGconn *conn)
{
	PGresult *r;
	size_t i;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT i.id, i.name, i.tag, i.list, r.name, t.name,"
		    " i.base, i.archive, i.notify::text, " STORE_TIMESTAMP(
			"i.created_at") " FROM inbox_rules i"
					" JOIN repos r ON r.id = i.repo_id"
					" JOIN testcases t ON t.id = "
					"i.testcase_id ORDER BY i.id",
		    0, NULL);
	out->rules = store_rows_alloc(&out->count, r, sizeof(*out->rules));
	if (out->rules == NULL)
		return STORE_FAILED;
	out->result = r;
	for (i = 0; i < out->count; i++) {
		struct store_inbox_rule *rule = &out->rules[i];

		rule->id = db_int(r, (int)i, 0);
		rule->name = db_text(r, (int)i, 1);
		rule->tag = db_text(r, (int)i, 2);
		rule->list = db_text(r, (int)i, 3);
		rule->repo = db_text(r, (int)i, 4);
		rule->testcase = db_text(r, (int)i, 5);
		rule->base = db_text(r, (int)i, 6);
		rule->archive = db_text(r, (int)i, 7);
		rule->notify = db_text(r, (int)i, 8);
		rule->created_at = db_text(r, (int)i, 9);
	}
	return STORE_OK;
}

int store_inbox_rule_add(long long *id, PGconn *conn,
			 const struct store_inbox_rule *rule,
			 long long repo_id, long long testcase_id)
{
	char repo[STORE_INT_TEXT], testcase[STORE_INT_TEXT];
	const char *params[8] = {rule->name,
				 rule->tag,
				 rule->list,
				 store_int_text(repo, repo_id),
				 store_int_text(testcase, testcase_id),
				 rule->base,
				 rule->archive,
				 rule->notify};
	const char *state = NULL;
	PGresult *r;

	r = db_exec_state(conn,
			  "INSERT INTO inbox_rules (name, tag, list, repo_id,"
			  " testcase_id, base, archive, notify)"
			  " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)"
			  " RETURNING id",
			  8, params, &state);
	if (r == NULL)
		return state != NULL && strcmp(state, "23505") == 0
			   ? STORE_EXISTS
			   : STORE_FAILED;
	*id = db_int(r, 0, 0);
	PQclear(r);
	return STORE_OK;
}

int store_inbox_rule_delete(PGconn *conn, long long id)
{
	char id_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id_text, id)};
	PGresult *r =
	    db_exec(conn, "DELETE FROM inbox_rules WHERE id = $1", 1, params);
	bool gone;

	if (r == NULL)
		return STORE_FAILED;
	gone = strcmp(PQcmdTuples(r), "1") == 0;
	PQclear(r);
	return gone ? STORE_OK : STORE_NOT_FOUND;
}

int store_inbox_list_json(json_t **out, PGconn *conn, long long limit)
{
	char limit_text[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(limit_text, limit)};
	json_error_t error;
	PGresult *r;

	*out = NULL;
	r = db_exec(
	    conn,
	    "SELECT coalesce(json_agg(json_build_object('id', m.id,"
	    " 'message_id', m.message_id, 'subject', m.subject,"
	    " 'state', m.state, 'received_at', " STORE_TIMESTAMP(
		"m.received_at") ", 'rule', i.name, 'job', m.job_id,"
				 " 'note', m.note) ORDER BY m.id DESC),"
				 " '[]') FROM (SELECT * FROM inbox_messages"
				 " ORDER BY id DESC LIMIT $1) m"
				 " LEFT JOIN inbox_rules i ON i.id = "
				 "m.rule_id",
	    1, params);
	if (r == NULL)
		return STORE_FAILED;
	*out = json_loads(db_text(r, 0, 0), 0, &error);
	PQclear(r);
	return *out != NULL ? STORE_OK : STORE_FAILED;
}

int store_inbox_lock(bool *got, PGconn *conn)
{
	PGresult *r = db_exec(
	    conn, "SELECT pg_try_advisory_lock(" INBOX_LOCK_KEY ")", 0, NULL);

	*got = false;
	if (r == NULL)
		return STORE_FAILED;
	*got = db_bool(r, 0, 0);
	PQclear(r);
	return STORE_OK;
}

int store_inbox_unlock(PGconn *conn)
{
	return store_command(
	    conn, "SELECT pg_advisory_unlock(" INBOX_LOCK_KEY ")", 0, NULL);
}
