/*
 * The HTTP layer of the server: libmicrohttpd glue, a small router with
 * "{}" path parameters, bearer-token authentication and role checks, and
 * response helpers.  Handlers see a complete request (body read in full) and
 * fill a response; they never touch libmicrohttpd themselves.
 */
#ifndef STATBISECT_HTTP_H
#define STATBISECT_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define HTTP_MAX_PARAMS 4
#define HTTP_MAX_BODY (16u * 1024 * 1024)
#define HTTP_MAX_EXTRA_HEADERS 8

enum http_role {
	ROLE_NONE = 0,
	ROLE_READ,
	ROLE_SUBMIT,
	ROLE_ADMIN,
	ROLE_WORKER, /* separate: reaches only the worker routes */
};

struct http_request {
	const char *method;
	const char *path;
	const char *params[HTTP_MAX_PARAMS]; /* the "{}" segments */
	char *body;
	size_t body_len;
	void *connection; /* struct MHD_Connection, for http_query() */
	enum http_role role;
	long long token_id;	    /* 0 for the bootstrap admin token */
	struct http_server *server; /* the server answering it */
	/* Since the handler first ran for this request (see http_wait). */
	unsigned long long waited_ms;
};

/* The longest tag of a held request (httpwait.h's HTTPWAIT_TAG_MAX). */
#define HTTP_WAIT_TAG_MAX 64

struct http_response {
	unsigned status;
	char *body; /* malloc'd */
	size_t body_len;
	const char *content_type;
	char *location; /* malloc'd, optional */
	/* Further headers, added with http_add_header; malloc'd pairs. */
	char *extra_headers[HTTP_MAX_EXTRA_HEADERS][2];
	size_t extra_header_count;
	unsigned wait_ms; /* http_wait */
	/* http_wait_tagged's tag (a worker group's name); "": none. */
	char wait_tag[HTTP_WAIT_TAG_MAX + 1];
};

typedef void (*http_handler)(struct http_response *res,
			     struct http_request *req);

struct http_route {
	const char *method;
	const char *pattern; /* "/api/v1/jobs/{}" */
	enum http_role role; /* least role needed; ROLE_NONE: public */
	http_handler handler;
};

struct http_server;

/*
 * How many requests of `method` were answered `status` on `route` (the
 * pattern of the route table, "/api/v1/jobs/{}"; NULL for a request
 * that matched no route, whose method is then "other" unless it is one
 * of the usual seven), since the server started.
 */
struct http_count {
	const char *method;
	const char *route;
	unsigned status;
	unsigned long long count;
};

/*
 * A copy of the server's request counts: *out (malloc'd, the caller
 * frees it; its strings are the route table's) holds *count entries in
 * the order they were first seen.  -1 when out of memory.
 */
int http_counts(struct http_server *server, struct http_count **out,
		size_t *count);

/* Defaults of struct http_limits (--max-connections and so on). */
#define HTTP_CONNECTIONS_MAX_DEFAULT 1000u
#define HTTP_CONNECTIONS_PER_ADDRESS_MAX_DEFAULT 64u
#define HTTP_CONNECTION_TIMEOUT_S_DEFAULT 30u
/* Seconds a 503 for too many connections asks the client to wait. */
#define HTTP_CONNECTIONS_RETRY_AFTER_S 5u

/*
 * What one server accepts.  A connection past `connections_max` in all or
 * past `connections_per_address_max` from one client address is answered
 * 503 "too_many_connections" with Retry-After on its first request and
 * closed; past a margin above the limits (a quarter more, and at least 8)
 * libmicrohttpd closes new connections at once, unanswered.  A connection
 * idle for `connection_timeout_s` (no byte received or sent: a slow client
 * trickling a request too) is closed.  The total is lowered to what the
 * process's descriptor limit (raised to its hard limit) leaves room for.
 */
struct http_limits {
	unsigned connections_max;
	unsigned connections_per_address_max;
	unsigned connection_timeout_s;
};

/*
 * Starts serving `routes` (terminated by a NULL method) on host:port with a
 * pool of `threads` threads, within `limits` (NULL: the defaults above).
 * `admin_token`, when not NULL, is accepted as an admin bearer token.
 * Returns NULL (logged) when it cannot listen.
 */
struct http_server *http_start(const char *host, unsigned port,
			       unsigned threads,
			       const struct http_limits *limits,
			       const struct http_route *routes,
			       const char *admin_token);
void http_stop(struct http_server *server);

/*
 * The route of `routes` (NULL-method terminated, in match order) for
 * `method` and `path`: its "{}" segments go to params[] (HTTP_MAX_PARAMS
 * entries), pointing into `buf`, which receives a copy of the path (`size`
 * bytes; a longer path matches nothing).  NULL when no route answers;
 * then *path_known tells whether a route of another method has the path
 * (405) or none has (404).
 */
const struct http_route *http_route_find(const struct http_route *routes,
					 const char *method, const char *path,
					 char *buf, size_t size,
					 const char **params,
					 bool *path_known);

/*
 * How a browser is told of an error the HTTP layer finds before any
 * handler runs (no route, a method the path does not take, a body too
 * large): for a path outside /api/ and /healthz, `page` answers it (the
 * web UI's error page); the API, and every path while none is set, gets
 * the JSON error.  Set once before http_start.
 */
typedef void (*http_page_error)(struct http_response *res, unsigned status,
				const char *message);
void http_set_page_error(http_page_error page);

/* A query-string argument of the request, or NULL. */
const char *http_query(const struct http_request *req, const char *name);

/* A request header, or NULL. */
const char *http_header(const struct http_request *req, const char *name);

/* The value of the cookie `name` the request carries, or NULL. */
const char *http_cookie(const struct http_request *req, const char *name);

/*
 * Parses an application/x-www-form-urlencoded request body into a JSON
 * object of strings ("+" is a space, %XX a byte; a repeated name keeps its
 * last value).  Answers 400 in `res` and returns NULL when the body is not
 * such a form, is not UTF-8, or holds a NUL.
 */
json_t *http_form_body(struct http_response *res,
		       const struct http_request *req);

/*
 * Lets the answer the handler fills wait: the HTTP layer holds the request
 * (its connection, no thread) for up to `ms` milliseconds, or until
 * http_wake(), drops the answer and calls the handler again with the same
 * request, whose `waited_ms` tells how long it has waited in all.  When
 * it cannot hold it (too many held already: half the connection limit;
 * the server stopping), the answer goes out as it is.  For long polls.
 */
void http_wait(struct http_response *res, unsigned ms);

/* http_wait, held until http_wake_tag() names `tag` (cut to
 * HTTP_WAIT_TAG_MAX bytes) or the time is up. */
void http_wait_tagged(struct http_response *res, unsigned ms, const char *tag);

/* Ends the holds of every request held by http_wait now. */
void http_wake(struct http_server *server);

/* Ends the holds of the requests held with tag `tag`, and of those held
 * with none. */
void http_wake_tag(struct http_server *server, const char *tag);

/* How many held requests a wake ended early since the server started,
 * and how many are held now (into *held). */
unsigned long long http_woken(struct http_server *server, unsigned *held);

/* How every JSON answer is written. */
#define HTTP_JSON_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII)

/* Responses.  http_json takes ownership of `value` (json_decref). */
void http_json(struct http_response *res, unsigned status, json_t *value);

/* A JSON answer already written with HTTP_JSON_FLAGS; takes ownership of
 * `text` (malloc'd, NULL: out of memory). */
void http_json_text(struct http_response *res, unsigned status, char *text);
void http_text(struct http_response *res, unsigned status,
	       const char *content_type, const char *text);
void http_error(struct http_response *res, unsigned status, const char *code,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Adds the header "name: value" (both copied) to the response, sent
 * whatever its status.  Returns 0, or -1 when a control character or (in
 * the name) ':' or a space would make it unsafe, when
 * HTTP_MAX_EXTRA_HEADERS are set already, or when out of memory.
 */
int http_add_header(struct http_response *res, const char *name,
		    const char *value);

/*
 * Frees what `res` holds (body, location, headers) and empties it; for
 * the answer of a handler that another handler calls, which no one
 * sends.  The struct itself is the caller's.
 */
void http_response_clear(struct http_response *res);

/*
 * Parses the request body as a JSON object.  On failure answers 400 in
 * `res` and returns NULL.
 */
json_t *http_json_body(struct http_response *res,
		       const struct http_request *req);

/*
 * Answers a failed database call: 503 "unavailable" when trying again may
 * help (db_state_transient of this thread's last failure), else 500
 * "internal" with the SQLSTATE.
 */
void http_db_failed(struct http_response *res);

/*
 * Parses the path parameter `text` as id_parse (lib/id.h) does.  When it is no
 * id, answers 404 in `res` with the error `code` and "no <noun> '<text>'",
 * as for an id that names nothing (none could), and returns false.
 */
bool http_path_id(struct http_response *res, const char *text,
		  const char *code, const char *noun, long long *out);

/* "read", "submit", "admin", "worker" or "none". */
const char *http_role_name(enum http_role role);

/* The role a stored name stands for (the inverse of http_role_name);
 * ROLE_NONE for any other name. */
enum http_role http_role_from_name(const char *name);

#endif
