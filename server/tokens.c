#include "tokens.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "id.h"
#include "log.h"
#include "secret.h"
#include "tokencache.h"
#include "validate.h"

/* The longest bearer secret looked up at all. */
#define TOKENS_SECRET_MAX 256

int tokens_identify(struct token_identity *out, const char *secret,
		    const char *admin_token)
{
	struct tokencache_ticket ticket;
	struct store_token token;
	int error;

	memset(out, 0, sizeof(*out));
	if (secret == NULL || secret[0] == '\0' ||
	    strlen(secret) > TOKENS_SECRET_MAX)
		return 0;
	if (admin_token != NULL && admin_token[0] != '\0' &&
	    secret_equal(secret, admin_token)) {
		out->role = ROLE_ADMIN;
		snprintf(out->name, sizeof(out->name), "bootstrap admin");
		return 0;
	}
	if (tokencache_lookup(&ticket, out, secret))
		return 0;
	error = store_tokens_find(&token, db_conn(), secret);
	if (error == STORE_NOT_FOUND)
		return 0;
	if (error < 0)
		return -1;
	out->role = http_role_from_name(token.role);
	out->token_id = token.id;
	snprintf(out->name, sizeof(out->name), "%s", token.name);
	store_token_clear(&token);
	tokencache_keep(&ticket, out);
	return 0;
}

void tokens_request_read(struct token_request *out,
			 struct field_errors *errors, json_t *body)
{
	fields_json_string(errors, body, "name", true, &out->name);
	fields_json_string(errors, body, "role", true, &out->role);
	out->max_jobs_per_hour = -1;
	out->max_open_jobs = -1;
	fields_json_int(errors, body, "max_jobs_per_hour", 0,
			TOKENS_JOB_LIMIT_MAX, &out->max_jobs_per_hour);
	fields_json_int(errors, body, "max_open_jobs", 0, TOKENS_JOB_LIMIT_MAX,
			&out->max_open_jobs);
}

/* A token's limit as JSON: null for the server's. */
static json_t *limit_json(long long limit)
{
	return limit >= 0 ? json_integer((json_int_t)limit) : json_null();
}

static void tokens_validate(struct field_errors *errors,
			    const struct token_request *request)
{
	const char *role = request->role;

	if (request->name != NULL &&
	    (!validate_text(request->name, TOKENS_NAME_MAX, false) ||
	     request->name[0] == '\0'))
		fields_add(errors, "name", 400, "invalid_field",
			   "'name' must be 1 to 128 printable characters");
	if (role != NULL && strcmp(role, "admin") != 0 &&
	    strcmp(role, "submit") != 0 && strcmp(role, "read") != 0 &&
	    strcmp(role, "worker") != 0)
		fields_add(
		    errors, "role", 400, "invalid_field",
		    "'role' must be one of admin, submit, read, worker");
}

int tokens_create(struct store_token *out, char *secret,
		  struct field_errors *errors,
		  const struct token_request *request)
{
	memset(out, 0, sizeof(*out));
	tokens_validate(errors, request);
	if (!fields_ok(errors))
		return -1;
	memcpy(secret, "sb_", 3);
	if (secret_hex(secret + 3, (TOKENS_SECRET_SIZE - 4) / 2) < 0) {
		fields_add(errors, "", 500, "internal",
			   "no randomness for a token");
		return -1;
	}
	if (store_tokens_create_limited(
		out, db_conn(), request->name, request->role, secret,
		request->max_jobs_per_hour, request->max_open_jobs) < 0) {
		fields_db_failed(errors);
		return -1;
	}
	return 0;
}

json_t *tokens_json(const struct store_token *token)
{
	return json_pack("{s:I,s:s,s:s,s:s,s:s?,s:o,s:o}", "id",
			 (json_int_t)token->id, "name", token->name, "role",
			 token->role, "created_at", token->created_at,
			 "revoked_at", token->revoked_at, "max_jobs_per_hour",
			 limit_json(token->max_jobs_per_hour), "max_open_jobs",
			 limit_json(token->max_open_jobs));
}

json_t *tokens_created_json(const struct store_token *token,
			    const char *secret)
{
	return json_pack("{s:I,s:s,s:s,s:s,s:o,s:o}", "id",
			 (json_int_t)token->id, "name", token->name, "role",
			 token->role, "token", secret, "max_jobs_per_hour",
			 limit_json(token->max_jobs_per_hour), "max_open_jobs",
			 limit_json(token->max_open_jobs));
}

json_t *tokens_list_json(struct field_errors *errors)
{
	struct store_token_list list;
	json_t *tokens;
	size_t i;

	if (store_tokens_list(&list, db_conn()) < 0) {
		fields_db_failed(errors);
		return NULL;
	}
	tokens = json_array();
	for (i = 0; i < list.count; i++)
		json_array_append_new(tokens, tokens_json(&list.items[i]));
	store_token_list_clear(&list);
	return tokens;
}

int tokens_revoke(struct store_token *out, struct field_errors *errors,
		  const char *id_text)
{
	long long id;

	memset(out, 0, sizeof(*out));
	if (id_parse(&id, id_text) < 0) {
		fields_add(errors, "", 404, "not_found", "no token '%s'",
			   id_text);
		return -1;
	}
	switch (store_tokens_revoke(out, db_conn(), id)) {
	case STORE_OK:
		log_info("token %lld ('%s') revoked", id, out->name);
		return 0;
	case STORE_NOT_FOUND:
		fields_add(errors, "", 404, "not_found", "no token %lld", id);
		return -1;
	case STORE_CONFLICT:
		fields_add(errors, "", 409, "revoked",
			   "token %lld is already revoked", id);
		return -1;
	default:
		fields_db_failed(errors);
		return -1;
	}
}

bool tokens_is_web_secret(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != TOKENS_WEB_SECRET_SIZE - 1)
		return false;
	for (i = 0; i < TOKENS_WEB_SECRET_SIZE - 1; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

int tokens_session_find(struct token_session *out, const char *secret)
{
	struct tokencache_ticket ticket;
	struct store_session session;
	enum http_role role;
	int error;

	memset(out, 0, sizeof(*out));
	if (!tokens_is_web_secret(secret))
		return 0;
	if (tokencache_session_lookup(&ticket, out, secret))
		return 0;
	error = store_sessions_find(&session, db_conn(), secret);
	if (error == STORE_NOT_FOUND)
		return 0;
	if (error < 0)
		return -1;
	role = http_role_from_name(session.role);
	out->role = role == ROLE_WORKER ? ROLE_NONE : role;
	out->token_id = session.token_id;
	snprintf(out->csrf, sizeof(out->csrf), "%s", session.csrf);
	snprintf(out->name, sizeof(out->name), "%s", session.name);
	if (out->role != ROLE_NONE)
		tokencache_session_keep(&ticket, out, session.expires_in);
	store_session_clear(&session);
	return 0;
}

int tokens_session_open(char *secret, char *csrf,
			const struct token_identity *who, int seconds)
{
	if (secret_hex(secret, (TOKENS_WEB_SECRET_SIZE - 1) / 2) < 0 ||
	    secret_hex(csrf, (TOKENS_WEB_SECRET_SIZE - 1) / 2) < 0)
		return -2;
	if (store_sessions_create(db_conn(), secret, who->token_id,
				  http_role_name(who->role), csrf,
				  seconds) < 0)
		return -1;
	return 0;
}

int tokens_session_close(const char *secret)
{
	return store_sessions_delete(db_conn(), secret) < 0 ? -1 : 0;
}

void tokens_api_create(struct http_response *res, struct http_request *req)
{
	char secret[TOKENS_SECRET_SIZE];
	struct token_request request = {0};
	struct field_errors errors;
	struct store_token token;
	json_t *body = http_json_body(res, req);

	if (body == NULL)
		return;
	fields_init(&errors);
	tokens_request_read(&request, &errors, body);
	if (tokens_create(&token, secret, &errors, &request) < 0)
		fields_answer(res, &errors);
	else
		http_json(res, 201, tokens_created_json(&token, secret));
	store_token_clear(&token);
	json_decref(body);
}

void tokens_api_list(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	json_t *tokens;

	(void)req;
	fields_init(&errors);
	tokens = tokens_list_json(&errors);
	if (tokens == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 200, json_pack("{s:o}", "tokens", tokens));
}

void tokens_api_revoke(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	struct store_token token;

	fields_init(&errors);
	if (tokens_revoke(&token, &errors, req->params[0]) < 0)
		fields_answer(res, &errors);
	else
		http_json(res, 200, tokens_json(&token));
	store_token_clear(&token);
}
