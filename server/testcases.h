/*
 * The testcases resource: registering a testcase (how to build and run a
 * benchmark, the metric that decides, how many runs) and listing them.
 * The REST handlers here and the admin page (web_admin.c) call the same
 * functions.
 */
#ifndef STATBISECT_TESTCASES_H
#define STATBISECT_TESTCASES_H

#include <jansson.h>

#include "fields.h"
#include "http.h"
#include "store/store_repos.h"
#include "webhooks.h"

/* A testcase to register: the fields, with the defaults for what the
 * client left out, and the JSON texts they point to (owned). */
struct testcase_request {
	struct store_testcase_fields fields;
	char *params_text, *monitors_text, *notify_text;
	struct webhooks_request webhook; /* webhooks.h */
};

/*
 * Reads a POST /api/v1/testcases body into *out (borrowing from `body`)
 * and adds the error of each field that breaks the rules, in the order
 * the API has always checked them (it answers the first).  Release *out
 * with testcases_request_clear whatever was found.
 */
void testcases_request_read(struct testcase_request *out,
			    struct field_errors *errors, json_t *body);
void testcases_request_clear(struct testcase_request *request);

/*
 * Stores a testcase read by testcases_request_read (which must have found
 * no error) and fills *out.  Returns 0, or -1 with the error (409 for a
 * taken name, or the database's) in `errors`.
 */
int testcases_create(struct store_testcase *out, struct field_errors *errors,
		     const struct testcase_request *request);

/* A registered testcase as POST /api/v1/testcases answers it. */
json_t *testcases_json(const struct store_testcase *testcase);

/* testcases_json with the testcase's "webhook" (webhooks_json); NULL,
 * with the error in `errors`, when the database failed. */
json_t *testcases_json_full(const struct store_testcase *testcase,
			    struct field_errors *errors);

/* The testcases as GET /api/v1/testcases lists them: a new array, or
 * NULL with the error in `errors`. */
json_t *testcases_list_json(struct field_errors *errors);

/* The testcase `name` as GET /api/v1/testcases/{name} shows it: a new
 * object, or NULL with the error (404: none, or deleted) in `errors`. */
json_t *testcases_get_json(struct field_errors *errors, const char *name);

/*
 * Changes testcase `name` by `patch`, any member of the POST body but
 * the name: what `patch` leaves out stays, a null member goes back to
 * its default, and the whole is checked by testcases_request_read (the
 * create's rules and words).  Fills *out and returns 0, or -1 with the
 * errors (404 unknown, 400 a bad field or a changed name) in `errors`.
 */
int testcases_update(struct store_testcase *out, struct field_errors *errors,
		     const char *name, json_t *patch);

/* Deletes testcase `name` softly, as repos_delete does a repository. */
int testcases_delete(struct field_errors *errors, const char *name);

/* The REST handlers: POST and GET /api/v1/testcases, and GET, PATCH and
 * DELETE /api/v1/testcases/{name}. */
void testcases_api_create(struct http_response *res, struct http_request *req);
void testcases_api_list(struct http_response *res, struct http_request *req);
void testcases_api_get(struct http_response *res, struct http_request *req);
void testcases_api_update(struct http_response *res, struct http_request *req);
void testcases_api_delete(struct http_response *res, struct http_request *req);

#endif
