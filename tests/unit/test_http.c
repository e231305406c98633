/*
 * server/http.c: the router (which route a method and path reach, with
 * their "{}" segments; 404 against 405), the roles a bearer token needs,
 * and the parsing of a urlencoded form.  The roles are checked over real
 * HTTP against a server this test starts (libcurl as the client).
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../server/db.h"
#include "../../server/http.h"

/* Answers with the route's name and its path parameters. */
static void echo(struct http_response *res, struct http_request *req)
{
	json_t *params = json_array();
	size_t i;

	for (i = 0; i < HTTP_MAX_PARAMS && req->params[i] != NULL; i++)
		json_array_append_new(params, json_string(req->params[i]));
	http_json(res, 200,
		  json_pack("{s:s,s:o,s:s}", "method", req->method, "params",
			    params, "role", http_role_name(req->role)));
}

static const struct http_route routes[] = {
    {"GET", "/healthz", ROLE_NONE, echo},
    {"GET", "/api/v1/jobs", ROLE_READ, echo},
    {"POST", "/api/v1/jobs", ROLE_SUBMIT, echo},
    {"GET", "/api/v1/jobs/{}", ROLE_READ, echo},
    {"DELETE", "/api/v1/jobs/{}", ROLE_SUBMIT, echo},
    {"GET", "/api/v1/jobs/{}/commits/{}/log", ROLE_READ, echo},
    {"POST", "/api/v1/tokens", ROLE_ADMIN, echo},
    {"POST", "/api/v1/workers/{}/claim", ROLE_WORKER, echo},
    {"GET", "/static/{}", ROLE_NONE, echo},
    {NULL, NULL, ROLE_NONE, NULL},
};

static const struct http_route *find(const char *method, const char *path,
				     const char **params, bool *known)
{
	static char buf[1024];

	return http_route_find(routes, method, path, buf, sizeof(buf), params,
			       known);
}

static void test_http__a_route_is_found_with_its_segments(void **state)
{
	const char *params[HTTP_MAX_PARAMS];
	const struct http_route *route;
	bool known;

	(void)state;
	route =
	    find("GET", "/api/v1/jobs/42/commits/abc123/log", params, &known);
	assert_non_null(route);
	assert_string_equal(route->pattern, "/api/v1/jobs/{}/commits/{}/log");
	assert_string_equal(params[0], "42");
	assert_string_equal(params[1], "abc123");
	assert_null(params[2]);
	route = find("DELETE", "/api/v1/jobs/7", params, &known);
	assert_non_null(route);
	assert_string_equal(route->method, "DELETE");
	assert_string_equal(params[0], "7");
	route = find("GET", "/api/v1/jobs", params, &known);
	assert_string_equal(route->pattern, "/api/v1/jobs");
	assert_null(params[0]);
}

static void test_http__another_method_is_405_no_path_is_404(void **state)
{
	const char *params[HTTP_MAX_PARAMS];
	bool known;

	(void)state;
	assert_null(find("PUT", "/api/v1/jobs", params, &known));
	assert_true(known);
	assert_null(find("POST", "/api/v1/jobs/3", params, &known));
	assert_true(known);
	assert_null(find("GET", "/api/v1/nothing", params, &known));
	assert_false(known);
	/* A segment is never empty, never spans a slash, and the whole
	 * path must match. */
	assert_null(find("GET", "/api/v1/jobs/", params, &known));
	assert_false(known);
	assert_null(find("GET", "/api/v1/jobs/1/2", params, &known));
	assert_false(known);
	assert_null(
	    find("GET", "/api/v1/jobs/1/commits//log", params, &known));
	assert_null(find("GET", "/healthz/", params, &known));
	assert_null(find("GET", "/healthzz", params, &known));
	assert_null(find("GET", "", params, &known));
	assert_false(known);
}

static void test_http__a_path_too_long_matches_nothing(void **state)
{
	const char *params[HTTP_MAX_PARAMS];
	char path[2048];
	bool known;

	(void)state;
	memset(path, 'a', sizeof(path) - 1);
	memcpy(path, "/static/", 8);
	path[sizeof(path) - 1] = '\0';
	assert_null(find("GET", path, params, &known));
	assert_false(known);
	path[1000] = '\0';
	assert_non_null(find("GET", path, params, &known));
	assert_int_equal(strlen(params[0]), 1000 - 8);
}

/* Parses `body` as a form: the object, or NULL with the 400 in *res. */
static json_t *form(struct http_response *res, const char *body, size_t len)
{
	struct http_request req;

	memset(&req, 0, sizeof(req));
	memset(res, 0, sizeof(*res));
	req.body = (char *)body;
	req.body_len = len;
	return http_form_body(res, &req);
}

static void test_http__a_form_is_decoded(void **state)
{
	struct http_response res;
	json_t *f;
	const char body[] = "name=web+token&role=read&note=a%26b%3Dc%25"
			    "&empty=&bare&name2=%C3%A9&&role=admin";

	(void)state;
	f = form(&res, body, sizeof(body) - 1);
	assert_non_null(f);
	assert_string_equal(json_string_value(json_object_get(f, "name")),
			    "web token");
	/* A repeated name keeps its last value. */
	assert_string_equal(json_string_value(json_object_get(f, "role")),
			    "admin");
	assert_string_equal(json_string_value(json_object_get(f, "note")),
			    "a&b=c%");
	assert_string_equal(json_string_value(json_object_get(f, "empty")),
			    "");
	assert_string_equal(json_string_value(json_object_get(f, "bare")), "");
	assert_string_equal(json_string_value(json_object_get(f, "name2")),
			    "\xc3\xa9");
	assert_int_equal(json_object_size(f), 6);
	assert_null(res.body);
	json_decref(f);
	f = form(&res, "", 0);
	assert_int_equal(json_object_size(f), 0);
	json_decref(f);
}

static void assert_form_refused(const char *body, size_t len)
{
	struct http_response res;

	print_message("%.*s\n", (int)len, body);
	assert_null(form(&res, body, len));
	assert_int_equal(res.status, 400);
	assert_non_null(strstr(res.body, "\"invalid_form\""));
	http_response_clear(&res);
}

static void test_http__a_bad_form_is_400(void **state)
{
	(void)state;
	assert_form_refused("a=%zz", 5);
	assert_form_refused("a=%4", 4);
	assert_form_refused("a=%00", 5);
	assert_form_refused("a=b\0c", 5);
	assert_form_refused("=value", 6);
	assert_form_refused("a=%ff%fe", 8); /* not UTF-8 */
}

/* A server with `routes` on a free port, the bootstrap admin "boot". */
static struct http_server *server;
static unsigned port;

static int server_setup(void **state)
{
	unsigned tries;

	(void)state;
	/* No database: a token other than the bootstrap one cannot be
	 * looked up. */
	db_configure("host=/nonexistent-statbisect-test dbname=none");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (tries = 0; server == NULL && tries < 20; tries++) {
		port =
		    20000 + (unsigned)((getpid() * 7 + tries * 131) % 30000);
		server =
		    http_start("127.0.0.1", port, 2, NULL, routes, "boot");
	}
	return server != NULL ? 0 : -1;
}

static int server_teardown(void **state)
{
	(void)state;
	http_stop(server);
	db_disconnect();
	curl_global_cleanup();
	return 0;
}

static size_t collect(char *data, size_t size, size_t n, void *out)
{
	size_t have = strlen(out), len = size * n;

	if (have + len >= 4096)
		len = 4096 - have - 1;
	memcpy((char *)out + have, data, len);
	((char *)out)[have + len] = '\0';
	return size * n;
}

/* `method` `path` with `token` (NULL: none): the status, body in `out`. */
static long call(const char *method, const char *path, const char *token,
		 char *out)
{
	char url[256], auth[256];
	struct curl_slist *headers = NULL;
	CURL *curl = curl_easy_init();
	long status = 0;

	out[0] = '\0';
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "POST") == 0)
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{}");
	if (token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
			 token);
		headers = curl_slist_append(headers, auth);
		curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	}
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return status;
}

static void test_http__roles_over_http(void **state)
{
	char body[4096];

	(void)state;
	assert_int_equal(call("GET", "/healthz", NULL, body), 200);
	assert_string_equal(body, "{\"method\":\"GET\",\"params\":[],"
				  "\"role\":\"none\"}");
	assert_int_equal(call("GET", "/api/v1/jobs/5", NULL, body), 401);
	assert_non_null(strstr(body, "\"unauthorized\""));
	assert_int_equal(call("GET", "/api/v1/jobs/5", "boot", body), 200);
	assert_string_equal(body, "{\"method\":\"GET\",\"params\":[\"5\"],"
				  "\"role\":\"admin\"}");
	/* Admin can do all that submit and read can, but not a worker's. */
	assert_int_equal(call("POST", "/api/v1/tokens", "boot", body), 200);
	assert_int_equal(call("POST", "/api/v1/workers/1/claim", "boot", body),
			 403);
	assert_string_equal(body,
			    "{\"error\":{\"code\":\"forbidden\",\"message\":"
			    "\"this needs the worker role; the token has "
			    "admin\"}}");
	assert_int_equal(call("PUT", "/api/v1/jobs", "boot", body), 405);
	assert_string_equal(body,
			    "{\"error\":{\"code\":\"method_not_allowed\","
			    "\"message\":\"PUT is not allowed on "
			    "/api/v1/jobs\"}}");
	assert_int_equal(call("GET", "/nothing", NULL, body), 404);
	assert_string_equal(body, "{\"error\":{\"code\":\"not_found\","
				  "\"message\":\"no route GET /nothing\"}}");
	/* Another token must be looked up: the database is down. */
	assert_int_equal(call("GET", "/api/v1/jobs", "other", body), 503);
	assert_non_null(strstr(body, "\"unavailable\""));
	/* Not a bearer token at all: no one. */
	assert_int_equal(call("GET", "/api/v1/jobs", "", body), 401);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http__a_route_is_found_with_its_segments),
	    cmocka_unit_test(test_http__another_method_is_405_no_path_is_404),
	    cmocka_unit_test(test_http__a_path_too_long_matches_nothing),
	    cmocka_unit_test(test_http__a_form_is_decoded),
	    cmocka_unit_test(test_http__a_bad_form_is_400),
	    cmocka_unit_test_setup_teardown(test_http__roles_over_http,
					    server_setup, server_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
