/*
 * Sign-in for the web UI: a token typed once becomes a session cookie
 * (HttpOnly, SameSite=Strict), stored hashed in the sessions table with
 * the role and the CSRF token that every form of the session carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "secret.h"
#include "server.h"
#include "web.h"

/* 64 lower-case hex digits: the shape of every secret the web sets. */
static bool is_secret(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != 64)
		return false;
	for (i = 0; i < 64; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

/* The role a stored name gives on the web pages: a worker token's is
 * none, since workers never sign in. */
static enum http_role role_from_name(const char *name)
{
	enum http_role role = http_role_from_name(name);

	return role == ROLE_WORKER ? ROLE_NONE : role;
}

/* Loads the session of the request's cookie: 0 (out->valid tells), -1
 * when the database is down. */
static int session_load(struct web_session *out,
			const struct http_request *req)
{
	const char *cookie = http_cookie(req, WEB_SESSION_COOKIE);
	const char *params[1] = {cookie};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	if (!is_secret(cookie))
		return 0;
	r = db_exec(db_conn(),
		    "SELECT s.role, s.csrf_token, s.token_id,"
		    " coalesce(t.name, 'bootstrap admin')"
		    " FROM sessions s LEFT JOIN tokens t ON t.id = s.token_id"
		    " WHERE s.session_hash = encode(sha256(convert_to($1,"
		    " 'UTF8')), 'hex') AND s.expires_at > now()"
		    " AND (s.token_id IS NULL OR t.revoked_at IS NULL)",
		    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		out->role = role_from_name(db_text(r, 0, 0));
		snprintf(out->csrf, sizeof(out->csrf), "%s", db_text(r, 0, 1));
		out->token_id = db_is_null(r, 0, 2) ? 0 : db_int(r, 0, 2);
		snprintf(out->name, sizeof(out->name), "%s", db_text(r, 0, 3));
		out->valid = out->role != ROLE_NONE;
	}
	PQclear(r);
	return 0;
}

/* "/signin?next=<the request's path>" for a redirect. */
static void redirect_to_signin(struct http_response *res,
			       const struct http_request *req)
{
	static const char hex[] = "0123456789ABCDEF";
	char next[1200] = "/signin?next=";
	size_t n = strlen(next);
	const char *p;

	for (p = req->path; *p != '\0' && n + 4 < sizeof(next); p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '/' || c == '-' ||
		    c == '.' || c == '_') {
			next[n++] = (char)c;
		} else {
			next[n++] = '%';
			next[n++] = hex[c >> 4];
			next[n++] = hex[c & 15];
		}
	}
	next[n] = '\0';
	web_redirect(res, next);
}

void web_db_failed(struct http_response *res,
		   const struct web_session *session)
{
	if (db_state_transient(db_last_failure()))
		web_error_page(res, 503, session,
			       "The database is unavailable; try again.");
	else
		web_error_page(res, 500, session,
			       "The database refused the request; the server "
			       "log has the details.");
}

bool web_require(struct web_session *out, struct http_response *res,
		 struct http_request *req, enum http_role need, bool page)
{
	if (session_load(out, req) < 0) {
		web_db_failed(res, NULL);
		return false;
	}
	if (!out->valid) {
		if (page && strcmp(req->method, "GET") == 0) {
			redirect_to_signin(res, req);
		} else {
			web_error_page(res, 401, NULL,
				       "Sign in first: this needs a session.");
		}
		return false;
	}
	if (out->role < need) {
		char message[128];

		snprintf(message, sizeof(message),
			 "This needs the %s role; you signed in as %s.",
			 http_role_name(need), http_role_name(out->role));
		web_error_page(res, 403, out, message);
		return false;
	}
	req->role = out->role;
	req->token_id = out->token_id;
	return true;
}

/* What a browser is shown for a form body that cannot be read. */
#define BAD_FORM_MESSAGE                                                      \
	"This form could not be read: a form is sent as "                     \
	"application/x-www-form-urlencoded UTF-8 text, as this site's "       \
	"own pages send it. Go back, reload the page and send it again."

/*
 * Parses the form body of a POST and checks its "csrf" field against the
 * session's.  The fields (new reference), or NULL after answering.
 */
static json_t *checked_form(struct http_response *res,
			    const struct http_request *req,
			    const struct web_session *session)
{
	json_t *form = http_form_body(res, req);
	const char *csrf;

	if (form == NULL) {
		/* A page for the browser, not the API's JSON error. */
		web_error_page(res, 400, session, BAD_FORM_MESSAGE);
		return NULL;
	}
	csrf = json_string_value(json_object_get(form, "csrf"));
	if (csrf == NULL || session == NULL || !session->valid ||
	    !secret_equal(csrf, session->csrf)) {
		json_decref(form);
		web_error_page(res, 403, session,
			       "This form is stale or was not sent from "
			       "this site (its CSRF token does not match). "
			       "Reload the page and try again.");
		return NULL;
	}
	return form;
}

bool web_require_post(struct web_session *out, json_t **form,
		      struct http_response *res, struct http_request *req,
		      enum http_role need)
{
	json_t *fields;

	if (!web_require(out, res, req, need, false))
		return false;
	fields = checked_form(res, req, out);
	if (fields == NULL)
		return false;
	if (form != NULL)
		*form = fields;
	else
		json_decref(fields);
	return true;
}

/* A local path to go to after signing in: "/" unless `next` is one. */
static const char *safe_next(const char *next)
{
	if (next == NULL || next[0] != '/' || next[1] == '/' ||
	    strpbrk(next, "\\\r\n\t ") != NULL || strlen(next) > 1000 ||
	    strncmp(next, "/signin", 7) == 0)
		return "/";
	return next;
}

/* Renders the sign-in form with a fresh pre-session CSRF cookie. */
static void signin_form(struct http_response *res, unsigned status,
			const char *next, const char *error)
{
	char secret[65], cookie[160];

	if (secret_hex(secret, 32) < 0) {
		web_error_page(res, 500, NULL, "No randomness for a form.");
		return;
	}
	web_render(res, status, "signin",
		   json_pack("{s:s,s:s,s:s,s:s?}", "title", "Sign in", "csrf",
			     secret, "next", safe_next(next), "error", error),
		   NULL, NULL);
	/* The sign-in form has no session yet: its CSRF token is checked
	 * against this cookie (double submit), which another site can
	 * neither read nor set. */
	snprintf(cookie, sizeof(cookie),
		 WEB_SIGNIN_COOKIE "=%s; Path=/signin; Max-Age=3600; "
				   "HttpOnly; SameSite=Strict%s",
		 secret,
		 strncmp(server_config.base_url, "https:", 6) == 0 ? "; Secure"
								   : "");
	if (http_add_header(res, "Set-Cookie", cookie) < 0)
		web_error_page(res, 500, NULL, "Cannot set a cookie.");
}

void web_signin_page(struct http_response *res, struct http_request *req)
{
	signin_form(res, 200, http_query(req, "next"), NULL);
}

/* The role and id of `token`: 0, or -1 when the database is down. */
static int token_lookup(const char *token, enum http_role *role,
			long long *token_id, char *name, size_t name_size)
{
	const char *admin = getenv("STATBISECT_ADMIN_TOKEN");
	const char *params[1] = {token};
	PGresult *r;

	*role = ROLE_NONE;
	*token_id = 0;
	if (token[0] == '\0' || strlen(token) > 256)
		return 0;
	if (admin != NULL && admin[0] != '\0' && secret_equal(token, admin)) {
		*role = ROLE_ADMIN;
		snprintf(name, name_size, "bootstrap admin");
		return 0;
	}
	r = db_exec(db_conn(),
		    "SELECT id, role, name FROM tokens"
		    " WHERE token_hash = encode(sha256(convert_to($1, "
		    "'UTF8')), 'hex') AND revoked_at IS NULL",
		    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		*token_id = db_int(r, 0, 0);
		*role = role_from_name(db_text(r, 0, 1));
		snprintf(name, name_size, "%s", db_text(r, 0, 2));
	}
	PQclear(r);
	return 0;
}

void web_signin(struct http_response *res, struct http_request *req)
{
	const char *token, *csrf, *next, *cookie, *params[5];
	char session_id[65], session_csrf[65], token_id_text[24], ttl[24];
	char name[129], set_cookie[200];
	enum http_role role;
	long long token_id;
	json_t *form = http_form_body(res, req);
	PGresult *r;

	if (form == NULL) {
		web_error_page(res, 400, NULL, BAD_FORM_MESSAGE);
		return;
	}
	token = json_string_value(json_object_get(form, "token"));
	csrf = json_string_value(json_object_get(form, "csrf"));
	next = safe_next(json_string_value(json_object_get(form, "next")));
	cookie = http_cookie(req, WEB_SIGNIN_COOKIE);
	if (csrf == NULL || !is_secret(cookie) ||
	    !secret_equal(csrf, cookie)) {
		web_error_page(res, 403, NULL,
			       "This sign-in form is stale or was not sent "
			       "from this site. Open the sign-in page again.");
		goto out;
	}
	if (token == NULL)
		token = "";
	while (*token == ' ')
		token++;
	if (token_lookup(token, &role, &token_id, name, sizeof(name)) < 0) {
		web_db_failed(res, NULL);
		goto out;
	}
	if (role == ROLE_NONE) {
		log_info("web: sign-in refused (unknown, revoked or worker "
			 "token)");
		signin_form(res, 401, next,
			    "This token is unknown, revoked, or a worker "
			    "token.");
		goto out;
	}
	if (secret_hex(session_id, 32) < 0 ||
	    secret_hex(session_csrf, 32) < 0) {
		web_error_page(res, 500, NULL, "No randomness for a session.");
		goto out;
	}
	snprintf(token_id_text, sizeof(token_id_text), "%lld", token_id);
	params[0] = session_id;
	params[1] = token_id > 0 ? token_id_text : NULL;
	params[2] = http_role_name(role);
	params[3] = session_csrf;
	snprintf(ttl, sizeof(ttl), "%d", WEB_SESSION_SECONDS);
	params[4] = ttl;
	r = db_exec(db_conn(),
		    "WITH gone AS (DELETE FROM sessions"
		    " WHERE expires_at < now())"
		    " INSERT INTO sessions (session_hash, token_id, role,"
		    " csrf_token, expires_at) VALUES (encode(sha256("
		    "convert_to($1, 'UTF8')), 'hex'), $2, $3, $4,"
		    " now() + $5::integer * interval '1 second')",
		    5, params);
	if (r == NULL) {
		web_db_failed(res, NULL);
		goto out;
	}
	PQclear(r);
	log_info("web: %s signed in as %s", name, http_role_name(role));
	snprintf(set_cookie, sizeof(set_cookie),
		 WEB_SESSION_COOKIE "=%s; Path=/; Max-Age=%d; HttpOnly; "
				    "SameSite=Strict%s",
		 session_id, WEB_SESSION_SECONDS,
		 strncmp(server_config.base_url, "https:", 6) == 0 ? "; Secure"
								   : "");
	web_redirect(res, next);
	if (http_add_header(res, "Set-Cookie", set_cookie) < 0 ||
	    http_add_header(res, "Set-Cookie",
			    WEB_SIGNIN_COOKIE "=; Path=/signin; Max-Age=0; "
					      "HttpOnly; SameSite=Strict") < 0)
		web_error_page(res, 500, NULL, "Cannot set a cookie.");
out:
	json_decref(form);
}

void web_signout(struct http_response *res, struct http_request *req)
{
	const char *params[1] = {http_cookie(req, WEB_SESSION_COOKIE)};
	struct web_session session;
	PGresult *r;

	if (!web_require_post(&session, NULL, res, req, ROLE_READ))
		return;
	r = db_exec(db_conn(),
		    "DELETE FROM sessions WHERE session_hash ="
		    " encode(sha256(convert_to($1, 'UTF8')), 'hex')",
		    1, params);
	if (r == NULL) {
		web_db_failed(res, &session);
		return;
	}
	PQclear(r);
	web_redirect(res, "/signin");
	if (http_add_header(res, "Set-Cookie",
			    WEB_SESSION_COOKIE
			    "=; Path=/; Max-Age=0; "
			    "HttpOnly; SameSite=Strict") < 0)
		web_error_page(res, 500, NULL, "Cannot clear the cookie.");
}
