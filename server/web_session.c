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
#include "tokens.h"
#include "web.h"

/* Loads the session of the request's cookie: 0 (out->valid tells), -1
 * when the database is down. */
static int session_load(struct web_session *out,
			const struct http_request *req)
{
	struct token_session session;

	memset(out, 0, sizeof(*out));
	if (tokens_session_find(&session,
				http_cookie(req, WEB_SESSION_COOKIE)) < 0)
		return -1;
	out->role = session.role;
	memcpy(out->csrf, session.csrf, sizeof(out->csrf));
	out->token_id = session.token_id;
	memcpy(out->name, session.name, sizeof(out->name));
	out->valid = out->role != ROLE_NONE;
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

void web_signin(struct http_response *res, struct http_request *req)
{
	const char *token, *csrf, *next, *cookie;
	char session_id[TOKENS_WEB_SECRET_SIZE];
	char session_csrf[TOKENS_WEB_SECRET_SIZE], set_cookie[200];
	struct token_identity who;
	json_t *form = http_form_body(res, req);
	int error;

	if (form == NULL) {
		web_error_page(res, 400, NULL, BAD_FORM_MESSAGE);
		return;
	}
	token = json_string_value(json_object_get(form, "token"));
	csrf = json_string_value(json_object_get(form, "csrf"));
	next = safe_next(json_string_value(json_object_get(form, "next")));
	cookie = http_cookie(req, WEB_SIGNIN_COOKIE);
	if (csrf == NULL || !tokens_is_web_secret(cookie) ||
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
	if (tokens_identify(&who, token, getenv("STATBISECT_ADMIN_TOKEN")) <
	    0) {
		web_db_failed(res, NULL);
		goto out;
	}
	if (who.role == ROLE_NONE || who.role == ROLE_WORKER) {
		log_info("web: sign-in refused (unknown, revoked or worker "
			 "token)");
		signin_form(res, 401, next,
			    "This token is unknown, revoked, or a worker "
			    "token.");
		goto out;
	}
	error = tokens_session_open(session_id, session_csrf, &who,
				    WEB_SESSION_SECONDS);
	if (error == -2) {
		web_error_page(res, 500, NULL, "No randomness for a session.");
		goto out;
	}
	if (error < 0) {
		web_db_failed(res, NULL);
		goto out;
	}
	log_info("web: %s signed in as %s", who.name,
		 http_role_name(who.role));
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
	struct web_session session;

	if (!web_require_post(&session, NULL, res, req, ROLE_READ))
		return;
	if (tokens_session_close(http_cookie(req, WEB_SESSION_COOKIE)) < 0) {
		web_db_failed(res, &session);
		return;
	}
	web_redirect(res, "/signin");
	if (http_add_header(res, "Set-Cookie",
			    WEB_SESSION_COOKIE
			    "=; Path=/; Max-Age=0; "
			    "HttpOnly; SameSite=Strict") < 0)
		web_error_page(res, 500, NULL, "Cannot clear the cookie.");
}
