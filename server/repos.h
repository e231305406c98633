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

/*
 * The repository `name` as GET /api/v1/repos/{name} shows it (a password
 * in its URL masked): a new object, or NULL with the error (404 when
 * there is none, or it was deleted) in `errors`.
 */
json_t *repos_get_json(struct field_errors *errors, const char *name);

/*
 * Changes repository `name` by `patch` (url and web_url, as POST
 * /api/v1/repos takes them; a null web_url clears it): what is not in
 * `patch` stays, the whole is checked with the rules and words of
 * repos_request_read, a new URL is mirrored first.  Fills *out and
 * returns 0, or -1 with the errors (404 unknown, 400 a bad field or a
 * changed name, 422 unreachable) in `errors`.
 */
int repos_update(struct store_repo *out, struct field_errors *errors,
		 const char *name, json_t *patch);

/*
 * Deletes repository `name` softly: it is gone from lists and new work,
 * finished jobs keep showing it.  0, or -1 with 404 (unknown) or 409
 * "in_use" (an open job, a watch or an inbox rule uses it) in `errors`.
 */
int repos_delete(struct field_errors *errors, const char *name);

/* Whether `url` is taken as a git URL or path: not empty, no leading '-'
 * (git would read an option), printable and at most 1024 bytes. */
bool repos_url_valid(const char *url);

/*
 * A URL `field` of `body` given back as GET shows it, its password masked
 * (url.h), is replaced by the stored one, `stored`, unchanged: a PATCH
 * that sends back what it read keeps the credentials.
 */
void repos_keep_masked_url(json_t *body, const char *field,
			   const char *stored);

/*
 * The checks of an update shared with testcases.c: a "name" in `patch`
 * other than `name` is refused with 400 (a name cannot change), and the
 * body to check is `current` with `patch`'s members laid over it (a new
 * object).
 */
json_t *repos_patched_body(struct field_errors *errors, const char *name,
			   json_t *current, json_t *patch);

/*
 * The soft delete of a repository or testcase `name` (`what` names the
 * kind in messages) by `delete_fn` in a transaction of its own; the
 * errors of repos_delete.
 */
int repos_soft_delete(struct field_errors *errors, const char *what,
		      const char *name,
		      int (*delete_fn)(PGconn *conn, const char *name));

/* The REST handlers: POST and GET /api/v1/repos, and GET, PATCH and
 * DELETE /api/v1/repos/{name}. */
void repos_api_create(struct http_response *res, struct http_request *req);
void repos_api_list(struct http_response *res, struct http_request *req);
void repos_api_get(struct http_response *res, struct http_request *req);
void repos_api_update(struct http_response *res, struct http_request *req);
void repos_api_delete(struct http_response *res, struct http_request *req);

#endif
