/*
 * Tokens and web sessions: the tokens table (API tokens, stored as the
 * hex SHA-256 of the secret) and the sessions table (a signed-in person's
 * cookie, stored the same way).  The secrets themselves are never stored;
 * every lookup hashes what the client sent.
 */
#ifndef STATBISECT_STORE_TOKENS_H
#define STATBISECT_STORE_TOKENS_H

#include <libpq-fe.h>
#include <stddef.h>

#include "store.h"

/*
 * One token, without its hash.  The text points into `held`, which the
 * struct owns (store_token_clear frees it); in the items of a
 * store_token_list `held` is NULL and the list holds the text.
 */
struct store_token {
	long long id;
	const char *name;
	const char *role;	/* admin, submit, read or worker */
	const char *created_at; /* STORE_TIMESTAMP text */
	const char *revoked_at; /* NULL while the token is live */
	/* Its limits on job submissions (sql/045); -1: the server's. */
	long long max_jobs_per_hour, max_open_jobs;
	PGresult *held;
};

struct store_token_list {
	struct store_token *items;
	size_t count;
	PGresult *held;
};

/* Frees what `token` holds and empties it; NULL is a no-op. */
void store_token_clear(struct store_token *token);
void store_token_list_clear(struct store_token_list *list);

/*
 * Stores a new token `name` of `role` for the secret `secret`.  Fills
 * *out; 0 or STORE_FAILED (a role the table refuses fails too).
 */
int store_tokens_create(struct store_token *out, PGconn *conn,
			const char *name, const char *role,
			const char *secret);

/* As store_tokens_create, with the token's limits on job submissions
 * (-1: the server's, stored as NULL; 0: none). */
int store_tokens_create_limited(struct store_token *out, PGconn *conn,
				const char *name, const char *role,
				const char *secret,
				long long max_jobs_per_hour,
				long long max_open_jobs);

/* Every token, revoked ones too, by id.  0 or STORE_FAILED. */
int store_tokens_list(struct store_token_list *out, PGconn *conn);

/*
 * Revokes token `id` now and fills *out with it.  0, STORE_NOT_FOUND,
 * STORE_CONFLICT (revoked already) or STORE_FAILED.
 */
int store_tokens_revoke(struct store_token *out, PGconn *conn, long long id);

/*
 * The live (not revoked) token whose secret is `secret`.  0,
 * STORE_NOT_FOUND or STORE_FAILED.
 */
int store_tokens_find(struct store_token *out, PGconn *conn,
		      const char *secret);

/*
 * A live web session: who opened it (the token's id, 0 for the bootstrap
 * admin token, and its name), the role it gives and its CSRF token.
 * Text as in struct store_token.
 */
struct store_session {
	long long token_id;
	const char *role;
	const char *csrf;
	const char *name;  /* "bootstrap admin" without a token */
	double expires_in; /* seconds from now */
	PGresult *held;
};

void store_session_clear(struct store_session *session);

/*
 * Opens a session for the cookie secret `secret` that lasts `seconds`,
 * for token `token_id` (0: the bootstrap admin token) with `role` and
 * `csrf`; sessions past their end are deleted on the way.  0 or
 * STORE_FAILED.
 */
int store_sessions_create(PGconn *conn, const char *secret, long long token_id,
			  const char *role, const char *csrf, int seconds);

/*
 * The session of the cookie secret `secret`, unless it has ended or its
 * token was revoked.  0, STORE_NOT_FOUND or STORE_FAILED.
 */
int store_sessions_find(struct store_session *out, PGconn *conn,
			const char *secret);

/* Ends the session of `secret` (none is fine).  0 or STORE_FAILED. */
int store_sessions_delete(PGconn *conn, const char *secret);

#endif
