/*
 * The answers handlers fill in (server/http.h): bodies, JSON errors,
 * extra headers, and the readers of a request's JSON body and path id.
 * No libmicrohttpd here: http.c sends what these fill in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "http.h"
#include "id.h"
#include "utf8.h"

static void set_body(struct http_response *res, unsigned status,
		     const char *content_type, char *body, size_t len)
{
	free(res->body);
	res->status = status;
	res->content_type = content_type;
	res->body = body;
	res->body_len = len;
}

void http_json(struct http_response *res, unsigned status, json_t *value)
{
	char *text = json_dumps(value, HTTP_JSON_FLAGS);

	json_decref(value);
	http_json_text(res, status, text);
}

void http_json_text(struct http_response *res, unsigned status, char *text)
{
	if (text == NULL) {
		http_text(res, 500, "application/json",
			  "{\"error\":{\"code\":\"internal\","
			  "\"message\":\"cannot encode response\"}}");
		return;
	}
	set_body(res, status, "application/json", text, strlen(text));
}

void http_text(struct http_response *res, unsigned status,
	       const char *content_type, const char *text)
{
	char *copy = strdup(text);

	set_body(res, status, content_type, copy,
		 copy != NULL ? strlen(copy) : 0);
}

void http_error(struct http_response *res, unsigned status, const char *code,
		const char *fmt, ...)
{
	char message[1024], *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	/* A message may quote what the client sent, which need not be
	 * UTF-8 (a query value), and JSON cannot hold other bytes. */
	if (utf8_sanitize(&text, message, strlen(message)) < 0) {
		http_json_text(res, 500, NULL);
		return;
	}
	http_json(res, status,
		  json_pack("{s:{s:s,s:s}}", "error", "code", code, "message",
			    text));
	free(text);
}

static bool header_text_ok(const char *s, bool is_name)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f ||
		    (is_name && (c == ':' || c == ' ')))
			return false;
	}
	return true;
}

int http_add_header(struct http_response *res, const char *name,
		    const char *value)
{
	char *n, *v;

	if (res->extra_header_count == HTTP_MAX_EXTRA_HEADERS ||
	    name[0] == '\0' || !header_text_ok(name, true) ||
	    !header_text_ok(value, false))
		return -1;
	n = strdup(name);
	v = strdup(value);
	if (n == NULL || v == NULL) {
		free(n);
		free(v);
		return -1;
	}
	res->extra_headers[res->extra_header_count][0] = n;
	res->extra_headers[res->extra_header_count][1] = v;
	res->extra_header_count++;
	return 0;
}

static void extra_headers_free(struct http_response *res)
{
	size_t i;

	for (i = 0; i < res->extra_header_count; i++) {
		free(res->extra_headers[i][0]);
		free(res->extra_headers[i][1]);
	}
	res->extra_header_count = 0;
}

void http_response_clear(struct http_response *res)
{
	free(res->body);
	free(res->location);
	extra_headers_free(res);
	memset(res, 0, sizeof(*res));
}

void http_db_failed(struct http_response *res)
{
	const char *state = db_last_failure();

	if (db_state_transient(state))
		http_error(res, 503, "unavailable",
			   "the database is unavailable; try again");
	else
		http_error(res, 500, "internal",
			   "the database refused the request (SQLSTATE %s); "
			   "the server log has the details",
			   state);
}

bool http_path_id(struct http_response *res, const char *text,
		  const char *code, const char *noun, long long *out)
{
	if (id_parse(out, text) == 0)
		return true;
	http_error(res, 404, code, "no %s '%s'", noun, text);
	return false;
}

json_t *http_json_body(struct http_response *res,
		       const struct http_request *req)
{
	json_error_t error;
	json_t *value;

	if (req->body_len == 0) {
		http_error(res, 400, "invalid_json",
			   "the request needs a JSON object body");
		return NULL;
	}
	value = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES,
			   &error);
	if (value == NULL) {
		http_error(res, 400, "invalid_json",
			   "invalid JSON at line %d column %d: %s", error.line,
			   error.column, error.text);
		return NULL;
	}
	if (!json_is_object(value)) {
		json_decref(value);
		http_error(res, 400, "invalid_json",
			   "the body must be a JSON object");
		return NULL;
	}
	return value;
}
