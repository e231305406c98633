/*
 * The tokens resource: API tokens (make, list, revoke), who a bearer
 * secret names, and the web sessions a token opens.  Validation fills a
 * struct field_errors; the REST handlers here and the admin and sign-in
 * pages (web_admin.c, web_session.c) are thin callers of the same
 * functions.
 */
#ifndef STATBISECT_TOKENS_H
#define STATBISECT_TOKENS_H

#include <jansson.h>

#include "fields.h"
#include "http.h"
#include "store/store_tokens.h"

/* An API token's secret: "sb_" and 48 hex digits, and the NUL. */
#define TOKENS_SECRET_SIZE (3 + 48 + 1)
/* A web secret (session id, CSRF token): 64 hex digits, and the NUL. */
#define TOKENS_WEB_SECRET_SIZE 65
#define TOKENS_NAME_MAX 128

/* The largest per-token job limit (max_jobs_per_hour, max_open_jobs). */
#define TOKENS_JOB_LIMIT_MAX 1000000

/* A token to make, as the client gave it (NULL: not given). */
struct token_request {
	const char *name;
	const char *role;
	/* Limits on job submissions (sql/045); -1: the server's, 0: none. */
	long long max_jobs_per_hour, max_open_jobs;
};

/* Whom a secret names. */
struct token_identity {
	enum http_role role; /* ROLE_NONE: unknown or revoked */
	long long token_id;  /* 0: the bootstrap admin token */
	char name[TOKENS_NAME_MAX + 1];
};

/*
 * Whom the bearer `secret` names: the bootstrap `admin_token` (may be
 * NULL or "" for none) or a live stored token.  An empty or overlong
 * secret names no one.  Returns 0 (out->role tells), or -1 when the
 * database failed.
 */
int tokens_identify(struct token_identity *out, const char *secret,
		    const char *admin_token);

/* Reads a POST /api/v1/tokens body into *out (borrowing from `body`). */
void tokens_request_read(struct token_request *out,
			 struct field_errors *errors, json_t *body);

/*
 * Validates `request` and stores the token: *out and its `secret`
 * (TOKENS_SECRET_SIZE bytes), shown once.  Returns 0, or -1 with the
 * errors (of each field, or the database's) in `errors`.
 */
int tokens_create(struct store_token *out, char *secret,
		  struct field_errors *errors,
		  const struct token_request *request);

/* The tokens as GET /api/v1/tokens lists them (never their hashes): a
 * new array, or NULL with the error in `errors`. */
json_t *tokens_list_json(struct field_errors *errors);

/*
 * Revokes the token of id text `id_text` (a path parameter).  Returns 0
 * with *out, or -1 with the error: 404 for no such token, 409 when it was
 * revoked already, or the database's.
 */
int tokens_revoke(struct store_token *out, struct field_errors *errors,
		  const char *id_text);

/* A token as the API shows it. */
json_t *tokens_json(const struct store_token *token);

/* A made token as POST /api/v1/tokens answers it, with its secret. */
json_t *tokens_created_json(const struct store_token *token,
			    const char *secret);

/* A live web session. */
struct token_session {
	enum http_role role; /* never ROLE_WORKER: workers do not sign in */
	long long token_id;
	char csrf[TOKENS_WEB_SECRET_SIZE];
	char name[TOKENS_NAME_MAX + 1];
};

/*
 * The session of the cookie `secret`.  Returns 0 with out->role
 * ROLE_NONE when there is none (a secret of the wrong shape, ended,
 * revoked token), or -1 when the database failed.
 */
int tokens_session_find(struct token_session *out, const char *secret);

/*
 * Opens a session for `who` and fills the cookie's secret `secret` and
 * its CSRF token `csrf` (TOKENS_WEB_SECRET_SIZE bytes each).  Returns 0,
 * -1 when the database failed, -2 without randomness.
 */
int tokens_session_open(char *secret, char *csrf,
			const struct token_identity *who, int seconds);

/* Ends the session of `secret`.  0, or -1 when the database failed. */
int tokens_session_close(const char *secret);

/* True when `s` has the shape of a web secret: 64 lower-case hex. */
bool tokens_is_web_secret(const char *s);

/* The REST handlers: POST and GET /api/v1/tokens, DELETE
 * /api/v1/tokens/{}. */
void tokens_api_create(struct http_response *res, struct http_request *req);
void tokens_api_list(struct http_response *res, struct http_request *req);
void tokens_api_revoke(struct http_response *res, struct http_request *req);

#endif
