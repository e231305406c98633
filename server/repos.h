/*
 * The repositories resource: registering a repository (validated, then
 * mirrored once, mirror.h, so that a bad URL is refused at once) and
 * listing them.  The REST handlers here and the admin page (web_admin.c)
 * call the same functions.
 */
#ifndef STATBISECT_REPOS_H
#define STATBISECT_REPOS_H

#include <jansson.h>
#include <stddef.h>

#include "fields.h"
#include "http.h"
#include "store/store_repos.h"

/* A repository to register, as the client gave it (NULL: not given). */
struct repo_request {
	const char *name;
	const char *url;
	const char *web_url;
};

/* Reads a POST /api/v1/repos body into *out (borrowing from `body`) and
 * adds the error of each field that breaks the rules. */
void repos_request_read(struct repo_request *out, struct field_errors *errors,
			json_t *body);

/*
 * Registers a repository read by repos_request_read (which must have
 * found no error): refuses a taken name (409), mirrors the URL (422 when
 * it cannot), stores it and fills *out.  Returns 0, or -1 with the error
 * in `errors`.
 */
int repos_create(struct store_repo *out, struct field_errors *errors,
		 const struct repo_request *request);

/* A registered repository as POST /api/v1/repos answers it. */
json_t *repos_json(const struct store_repo *repo);

/* The repositories as GET /api/v1/repos lists them (passwords in URLs
 * masked): a new array, or NULL with the error in `errors`. */
json_t *repos_list_json(struct field_errors *errors);

/* The REST handlers: POST and GET /api/v1/repos. */
void repos_api_create(struct http_response *res, struct http_request *req);
void repos_api_list(struct http_response *res, struct http_request *req);

#endif
