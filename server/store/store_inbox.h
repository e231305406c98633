/*
 * The SQL of the Maildir inbox of patch series (issue 13, sql/050):
 * the rules that say which series become jobs, and every message read.
 * Each function runs on the caller's connection (and, where it writes,
 * in the caller's transaction when one is open); it returns 0 or a
 * negative enum store_status as its contract says.
 */
#ifndef STATBISECT_STORE_INBOX_H
#define STATBISECT_STORE_INBOX_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

/* A message as it arrived, to be kept. */
struct store_inbox_new {
	const char *message_id, *in_reply_to; /* in_reply_to may be NULL */
	const char *subject, *author;	      /* author may be NULL */
	const char *recipients;		      /* plain addresses, one a line */
	const char *raw;
	int number, total;
	bool is_patch;
};

/*
 * Keeps the message: 'waiting' when it is a patch or cover letter,
 * 'ignored' otherwise.  *added is false when a message of that Message-ID
 * was kept before (nothing changes).  STORE_FAILED on a database error.
 */
int store_inbox_add(bool *added, PGconn *conn,
		    const struct store_inbox_new *message);

/* A waiting message, as the series are found from them. */
struct store_inbox_row {
	long long id;
	const char *message_id, *in_reply_to, *subject, *author, *recipients;
	int number, total;
	double age_s; /* since it was read */
};

struct store_inbox_rows {
	PGresult *result;
	struct store_inbox_row *rows;
	size_t count;
};

/* Every waiting message, oldest first.  Clear with
 * store_inbox_rows_clear (also after a failure). */
int store_inbox_waiting(struct store_inbox_rows *out, PGconn *conn);
void store_inbox_rows_clear(struct store_inbox_rows *rows);

/* The message `id` as it came, malloc'd into *out; STORE_NOT_FOUND. */
int store_inbox_raw(char **out, PGconn *conn, long long id);

/*
 * Ends the wait of messages `ids`: state `state` ("taken", "refused",
 * "expired"), with the rule and job (0: none) and `note` (NULL: none).
 */
int store_inbox_settle(PGconn *conn, const long long *ids, size_t count,
		       const char *state, long long rule_id, long long job_id,
		       const char *note);

/* A rule, as stored; strings belong to the result. */
struct store_inbox_rule {
	long long id;
	const char *name, *tag, *list, *repo, *testcase, *base;
	const char *archive; /* NULL: none */
	const char *notify;  /* a JSON list of addresses */
	const char *created_at;
};

struct store_inbox_rules {
	PGresult *result;
	struct store_inbox_rule *rules;
	size_t count;
};

/* Every rule, in the order they were made (the first that fits a series
 * takes it).  Clear with store_inbox_rules_clear. */
int store_inbox_rules_list(struct store_inbox_rules *out, PGconn *conn);
void store_inbox_rules_clear(struct store_inbox_rules *rules);

/*
 * Adds a rule `rule` (its id and created_at are made here), for the
 * repository and testcase of the given ids; *id receives its id.
 * STORE_EXISTS when the name is taken.
 */
int store_inbox_rule_add(long long *id, PGconn *conn,
			 const struct store_inbox_rule *rule,
			 long long repo_id, long long testcase_id);

/* Deletes rule `id`: STORE_NOT_FOUND when there is none. */
int store_inbox_rule_delete(PGconn *conn, long long id);

/*
 * The newest `limit` messages read, newest first, as GET /api/v1/inbox
 * shows them: [{"id", "message_id", "subject", "state", "received_at",
 * "rule", "job", "note"}] into *out (a new reference).
 */
int store_inbox_list_json(json_t **out, PGconn *conn, long long limit);

/*
 * The inbox's lock among servers sharing the database: *got true when
 * this connection holds it now (a session lock, let go by
 * store_inbox_unlock or when the connection ends).
 */
int store_inbox_lock(bool *got, PGconn *conn);
int store_inbox_unlock(PGconn *conn);

#endif
