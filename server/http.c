#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connlimit.h"
#include "db.h"
#include "httpwait.h"
#include "id.h"
#include "jobcache.h"
#include "listcache.h"
#include "log.h"
#include "reqcount.h"
#include "tokens.h"
#include "url.h"
#include "utf8.h"

struct http_server {
	struct MHD_Daemon *daemon;
	const struct http_route *routes;
	const char *admin_token;
	struct connlimit *connections;
	struct reqcount *counts; /* http_counts */
	struct httpwait *waits;
};

/* Per-request state kept by libmicrohttpd between calls. */
struct request_ctx {
	char *body;
	size_t len, cap; /* cap: bytes body has room for */
	bool too_large;
	/* When the handler first ran, and its hold while waiting. */
	unsigned long long first_ms;
	struct httpwait_entry wait;
};

const char *http_role_name(enum http_role role)
{
	static const char *const names[] = {"none", "read", "submit", "admin",
					    "worker"};

	return names[role];
}

void http_wait(struct http_response *res, unsigned ms)
{
	res->wait_ms = ms;
}

_Static_assert(HTTP_WAIT_TAG_MAX == HTTPWAIT_TAG_MAX,
	       "a held request's tag fits its entry");

void http_wait_tagged(struct http_response *res, unsigned ms, const char *tag)
{
	res->wait_ms = ms;
	snprintf(res->wait_tag, sizeof(res->wait_tag), "%s", tag);
}

void http_wake(struct http_server *server)
{
	if (server != NULL)
		httpwait_wake(server->waits);
}

void http_wake_tag(struct http_server *server, const char *tag)
{
	if (server != NULL)
		httpwait_wake_tag(server->waits, tag);
}

unsigned long long http_woken(struct http_server *server, unsigned *held)
{
	*held = 0;
	return server != NULL ? httpwait_woken(server->waits, held) : 0;
}

const char *http_query(const struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->connection,
					   MHD_GET_ARGUMENT_KIND, name);
}

const char *http_header(const struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND,
					   name);
}

const char *http_cookie(const struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->connection, MHD_COOKIE_KIND,
					   name);
}

/* Matches `path` against `pattern`, filling the "{}" parameters in place
 * of a copy of the path that `buf` holds. */
static bool route_match(const char *pattern, const char *path, char *buf,
			size_t size, const char **params)
{
	size_t nparams = 0;
	const char *p = pattern;
	char *s;

	if (strlen(path) >= size)
		return false;
	strcpy(buf, path);
	s = buf;
	while (*p != '\0' && *s != '\0') {
		if (p[0] == '{' && p[1] == '}') {
			char *end = strchr(s, '/');

			if (end == s || nparams == HTTP_MAX_PARAMS)
				return false;
			params[nparams++] = s;
			p += 2;
			if (end == NULL) {
				s += strlen(s);
			} else {
				if (*p != '/')
					return false;
				*end = '\0';
				s = end + 1;
				p++;
			}
			continue;
		}
		if (*p != *s)
			return false;
		p++;
		s++;
	}
	return *p == '\0' && *s == '\0';
}

enum http_role http_role_from_name(const char *name)
{
	if (strcmp(name, "admin") == 0)
		return ROLE_ADMIN;
	if (strcmp(name, "submit") == 0)
		return ROLE_SUBMIT;
	if (strcmp(name, "read") == 0)
		return ROLE_READ;
	if (strcmp(name, "worker") == 0)
		return ROLE_WORKER;
	return ROLE_NONE;
}

/* -1: the database is down; 0: done (role may be ROLE_NONE). */
static int authenticate(struct http_server *server, struct http_request *req,
			const char *header)
{
	struct token_identity who;

	req->role = ROLE_NONE;
	if (header == NULL || strncmp(header, "Bearer ", 7) != 0)
		return 0;
	if (tokens_identify(&who, header + 7, server->admin_token) < 0)
		return -1;
	req->role = who.role;
	req->token_id = who.token_id;
	return 0;
}

static bool role_allows(enum http_role have, enum http_role need)
{
	if (need == ROLE_NONE)
		return true;
	if (need == ROLE_WORKER || have == ROLE_WORKER)
		return have == need;
	return have >= need;
}

const struct http_route *http_route_find(const struct http_route *routes,
					 const char *method, const char *path,
					 char *buf, size_t size,
					 const char **params, bool *path_known)
{
	const struct http_route *route;

	*path_known = false;
	for (route = routes; route->method != NULL; route++) {
		memset(params, 0, HTTP_MAX_PARAMS * sizeof(*params));
		if (!route_match(route->pattern, path, buf, size, params))
			continue;
		*path_known = true;
		if (strcmp(route->method, method) == 0)
			return route;
	}
	return NULL;
}

/* The web UI's error page, for browsers (http_set_page_error). */
static http_page_error page_error;

void http_set_page_error(http_page_error page)
{
	page_error = page;
}

/* Answers an error the HTTP layer found: a page for a browser's path,
 * else the API's JSON error (http_error). */
static void layer_error(struct http_response *res, const char *path,
			unsigned status, const char *code, const char *fmt,
			...) __attribute__((format(printf, 5, 6)));

static void layer_error(struct http_response *res, const char *path,
			unsigned status, const char *code, const char *fmt,
			...)
{
	char message[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (page_error != NULL && strncmp(path, "/api/", 5) != 0 &&
	    strcmp(path, "/api") != 0 && strcmp(path, "/healthz") != 0 &&
	    strcmp(path, "/metrics") != 0)
		page_error(res, status, message);
	else
		http_error(res, status, code, "%s", message);
}

/*
 * After a request that may have written, what the job cache must forget
 * for its client to read the write at once, before the notification of
 * it has come back (jobcache.h): the job a route of a job names, or
 * every job.  A worker's requests forget nothing here (their route
 * names a task, not a job): an upload or a heartbeat with an activity
 * forgets its own job after its commit (workers.c), so that a client of
 * this server reads it at once, and their notifications tell every
 * other server.
 */
static void forget_written(const struct http_route *route,
			   const struct http_request *req)
{
	static const char job_routes[] = "/api/v1/jobs/{}";
	long long job_id;

	if (strcmp(req->method, "GET") == 0 ||
	    strcmp(req->method, "HEAD") == 0 || route->role == ROLE_WORKER)
		return;
	if (strncmp(route->pattern, job_routes, sizeof(job_routes) - 1) == 0 &&
	    id_parse(&job_id, req->params[0]) == 0)
		jobcache_forget(job_id);
	else
		jobcache_forget_all();
	/* Whichever job it wrote may have moved between the lists. */
	listcache_forget_all();
}

/* Whether the (percent-decoded) path is UTF-8 text: the ids and names
 * of its segments go to PostgreSQL and into JSON, which refuse other
 * bytes. */
static bool path_is_utf8(const char *path)
{
	size_t n;

	for (; *path != '\0'; path += n) {
		n = utf8_char_len(path, 4);
		if (n == 0)
			return false;
	}
	return true;
}

/* Answers the request in `res`; returns its route, or NULL when none
 * matched. */
static const struct http_route *dispatch(struct http_server *server,
					 struct http_response *res,
					 struct http_request *req,
					 const char *auth)
{
	char buf[1024];
	const struct http_route *route;
	bool path_known;

	if (!path_is_utf8(req->path)) {
		layer_error(res, req->path, 400, "bad_path",
			    "the path is not UTF-8 text");
		return NULL;
	}
	route = http_route_find(server->routes, req->method, req->path, buf,
				sizeof(buf), req->params, &path_known);
	if (route == NULL) {
		if (path_known)
			layer_error(res, req->path, 405, "method_not_allowed",
				    "%s is not allowed on %s", req->method,
				    req->path);
		else
			layer_error(res, req->path, 404, "not_found",
				    "no route %s %s", req->method, req->path);
		return NULL;
	}
	if (route->role != ROLE_NONE) {
		if (authenticate(server, req, auth) < 0) {
			http_error(res, 503, "unavailable",
				   "the database is unavailable");
			return route;
		}
		if (req->role == ROLE_NONE && auth != NULL &&
		    strncmp(auth, "Bearer ", 7) == 0) {
			http_error(res, 401, "unauthorized",
				   "token refused: it is unknown or revoked");
			return route;
		}
		if (req->role == ROLE_NONE) {
			http_error(res, 401, "unauthorized",
				   "a valid 'Authorization: Bearer TOKEN' "
				   "header is required");
			return route;
		}
		if (!role_allows(req->role, route->role)) {
			http_error(res, 403, "forbidden",
				   "this needs the %s role; the token has %s",
				   http_role_name(route->role),
				   http_role_name(req->role));
			return route;
		}
	}
	route->handler(res, req);
	forget_written(route, req);
	return route;
}

/* The method as a label: the route's, or for a request that matched no
 * route one of the usual methods or "other", so that no client can make
 * the counts grow without bound. */
static const char *count_method(const struct http_route *route,
				const char *method)
{
	static const char *const usual[] = {"GET",    "HEAD",  "POST",	 "PUT",
					    "DELETE", "PATCH", "OPTIONS"};
	size_t i;

	if (route != NULL)
		return route->method;
	for (i = 0; i < sizeof(usual) / sizeof(usual[0]); i++)
		if (strcmp(method, usual[i]) == 0)
			return usual[i];
	return "other";
}

int http_counts(struct http_server *server, struct http_count **out,
		size_t *count)
{
	return reqcount_snapshot(server->counts, out, count);
}

static enum MHD_Result send_response(struct MHD_Connection *connection,
				     struct http_response *res)
{
	struct MHD_Response *response;
	enum MHD_Result ret;
	size_t i;

	response = MHD_create_response_from_buffer(res->body_len, res->body,
						   MHD_RESPMEM_MUST_FREE);
	if (response == NULL) {
		http_response_clear(res);
		return MHD_NO;
	}
	res->body = NULL;
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				res->content_type != NULL ? res->content_type
							  : "text/plain");
	MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL,
				"no-store");
	if (res->location != NULL)
		MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION,
					res->location);
	for (i = 0; i < res->extra_header_count; i++)
		MHD_add_response_header(response, res->extra_headers[i][0],
					res->extra_headers[i][1]);
	ret = MHD_queue_response(connection, res->status, response);
	MHD_destroy_response(response);
	http_response_clear(res); /* its body is the response's now */
	return ret;
}

/* The answer past the connection limits; the connection is then closed. */
static enum MHD_Result send_too_many(struct MHD_Connection *connection)
{
	struct http_response res = {0};
	char seconds[16];

	http_error(&res, 503, "too_many_connections",
		   "too many connections from this address or in all; "
		   "close idle connections and try again in %u seconds",
		   HTTP_CONNECTIONS_RETRY_AFTER_S);
	snprintf(seconds, sizeof(seconds), "%u",
		 HTTP_CONNECTIONS_RETRY_AFTER_S);
	http_add_header(&res, "Retry-After", seconds);
	http_add_header(&res, "Connection", "close");
	return send_response(connection, &res);
}

/*
 * Whether the request waits for "100 Continue" (Expect: 100-continue)
 * before sending a body larger than the server takes: it is answered 413
 * at once and sends nothing.  A client that sends its body without
 * waiting is answered once it has sent it (read and dropped), since one
 * that is still sending would not read an early answer.
 */
static bool declared_too_large(struct MHD_Connection *connection)
{
	const char *length = MHD_lookup_connection_value(
	    connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *expect = MHD_lookup_connection_value(
	    connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
	unsigned long long value;
	char *end;

	if (length == NULL || expect == NULL ||
	    strcasecmp(expect, "100-continue") != 0)
		return false;
	errno = 0;
	value = strtoull(length, &end, 10);
	return end != length && (errno == ERANGE || value > HTTP_MAX_BODY);
}

static void too_large(struct http_response *res, const char *path)
{
	layer_error(res, path, 413, "too_large",
		    "the request body is larger than %u bytes, more than "
		    "this server takes",
		    HTTP_MAX_BODY);
}

static enum MHD_Result send_too_large(struct MHD_Connection *connection,
				      const char *path)
{
	struct http_response res = {0};

	too_large(&res, path);
	http_add_header(&res, "Connection", "close");
	return send_response(connection, &res);
}

/* The path and query values decoded, but "%00" kept (lib/url.h). */
static size_t unescape(void *cls, struct MHD_Connection *connection,
		       char *text)
{
	(void)cls;
	(void)connection;
	return url_unescape(text);
}

/* Makes room for `need` bytes of body, doubling, so that a body that
 * comes in many pieces is not copied again for each one. */
static int grow_body(struct request_ctx *ctx, size_t need)
{
	size_t cap = ctx->cap != 0 ? ctx->cap : 4096;
	char *grown;

	if (need <= ctx->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if ((grown = realloc(ctx->body, cap)) == NULL)
		return -1;
	ctx->body = grown;
	ctx->cap = cap;
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *server = cls;
	struct request_ctx *ctx = *con_cls;
	struct http_response res = {0};
	struct http_request req = {0};
	const struct http_route *route = NULL;
	char buf[1024];
	bool path_known;

	(void)version;
	if (ctx == NULL) {
		if (connlimit_connection_over(connection))
			return send_too_many(connection);
		if (declared_too_large(connection))
			return send_too_large(connection, url);
		ctx = calloc(1, sizeof(*ctx));
		if (ctx == NULL)
			return MHD_NO;
		*con_cls = ctx;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (ctx->len + *upload_data_size > HTTP_MAX_BODY) {
			ctx->too_large = true;
		} else if (!ctx->too_large) {
			if (grow_body(ctx, ctx->len + *upload_data_size + 1) <
			    0)
				return MHD_NO;
			memcpy(ctx->body + ctx->len, upload_data,
			       *upload_data_size);
			ctx->len += *upload_data_size;
			ctx->body[ctx->len] = '\0';
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	req.method = method;
	req.path = url;
	req.body = ctx->body;
	req.body_len = ctx->len;
	req.connection = connection;
	req.server = server;
	if (ctx->first_ms == 0)
		ctx->first_ms = httpwait_now_ms();
	req.waited_ms = httpwait_now_ms() - ctx->first_ms;
	if (ctx->too_large) {
		too_large(&res, url);
		route = http_route_find(server->routes, method, url, buf,
					sizeof(buf), req.params, &path_known);
	} else {
		route = dispatch(server, &res, &req,
				 MHD_lookup_connection_value(connection,
							     MHD_HEADER_KIND,
							     "Authorization"));
	}
	if (res.body == NULL)
		http_error(&res, 500, "internal", "no response");
	/* The handler runs again when the hold ends; without one, its
	 * answer goes out now (and is counted once, when it does). */
	if (res.wait_ms > 0 &&
	    httpwait_hold(server->waits, &ctx->wait, connection, res.wait_ms,
			  res.wait_tag)) {
		http_response_clear(&res);
		return MHD_YES;
	}
	reqcount_add(server->counts, count_method(route, method),
		     route != NULL ? route->pattern : NULL, res.status);
	return send_response(connection, &res);
}

static void on_completed(void *cls, struct MHD_Connection *connection,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct http_server *server = cls;
	struct request_ctx *ctx = *con_cls;

	(void)connection;
	(void)toe;
	if (ctx != NULL) {
		httpwait_forget(server->waits, &ctx->wait);
		free(ctx->body);
		free(ctx);
		*con_cls = NULL;
	}
}

struct http_server *http_start(const char *host, unsigned port,
			       unsigned threads,
			       const struct http_limits *limits,
			       const struct http_route *routes,
			       const char *admin_token)
{
	struct http_limits set = {HTTP_CONNECTIONS_MAX_DEFAULT,
				  HTTP_CONNECTIONS_PER_ADDRESS_MAX_DEFAULT,
				  HTTP_CONNECTION_TIMEOUT_S_DEFAULT};
	struct http_server *server = calloc(1, sizeof(*server));
	struct sockaddr_in addr;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			 MHD_ALLOW_SUSPEND_RESUME;

	if (server == NULL)
		return NULL;
	if (limits != NULL)
		set = *limits;
	set.connections_max = connlimit_fit_descriptors(set.connections_max);
	if (set.connections_per_address_max > set.connections_max)
		set.connections_per_address_max = set.connections_max;
	server->routes = routes;
	server->admin_token = admin_token;
	server->counts = reqcount_new();
	if (server->counts == NULL) {
		free(server);
		return NULL;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		log_error("cannot listen on '%s': not an IPv4 address", host);
		reqcount_free(server->counts);
		free(server);
		return NULL;
	}
	/* Held requests take at most half the connections. */
	if (connlimit_new(&server->connections, set.connections_max,
			  set.connections_per_address_max) < 0 ||
	    httpwait_start(&server->waits, set.connections_max / 2 + 1) < 0) {
		connlimit_free(server->connections);
		reqcount_free(server->counts);
		free(server);
		return NULL;
	}
	/* select() cannot watch descriptors past FD_SETSIZE (1024). */
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES
		     ? MHD_USE_EPOLL
		     : MHD_USE_POLL;
	server->daemon = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, server, MHD_OPTION_SOCK_ADDR,
	    &addr, MHD_OPTION_THREAD_POOL_SIZE, threads,
	    MHD_OPTION_CONNECTION_TIMEOUT, set.connection_timeout_s,
	    MHD_OPTION_CONNECTION_LIMIT,
	    set.connections_max + set.connections_max / 4 + 8,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    set.connections_per_address_max +
		set.connections_per_address_max / 4 + 8,
	    MHD_OPTION_NOTIFY_CONNECTION, connlimit_notify,
	    server->connections, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, server, MHD_OPTION_END);
	if (server->daemon == NULL) {
		log_error("cannot listen on %s:%u", host, port);
		httpwait_stop(server->waits);
		httpwait_free(server->waits);
		connlimit_free(server->connections);
		reqcount_free(server->counts);
		free(server);
		return NULL;
	}
	return server;
}

void http_stop(struct http_server *server)
{
	if (server == NULL)
		return;
	httpwait_stop(server->waits);
	MHD_stop_daemon(server->daemon);
	httpwait_free(server->waits);
	connlimit_free(server->connections);
	reqcount_free(server->counts);
	free(server);
}
