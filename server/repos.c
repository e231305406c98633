#include "repos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "gitrepo.h"
#include "mirror.h"
#include "url.h"
#include "validate.h"

#define REPOS_URL_MAX 1024

bool repos_url_valid(const char *url)
{
	return url[0] != '\0' && url[0] != '-' &&
	       validate_text(url, REPOS_URL_MAX, false);
}

void repos_request_read(struct repo_request *out, struct field_errors *errors,
			json_t *body)
{
	bool name_read, url_read, web_url_read;

	name_read = fields_json_string(errors, body, "name", true, &out->name);
	url_read = fields_json_string(errors, body, "url", true, &out->url);
	web_url_read =
	    fields_json_string(errors, body, "web_url", false, &out->web_url);
	if (name_read && !validate_name(out->name))
		fields_add(errors, "name", 400, "invalid_field",
			   "'name' must be 1 to 64 of A-Z a-z 0-9 . _ -");
	if (url_read && !repos_url_valid(out->url))
		fields_add(errors, "url", 400, "invalid_field",
			   "'url' must be a git URL or path");
	if (web_url_read && out->web_url != NULL &&
	    (!validate_text(out->web_url, REPOS_URL_MAX, false) ||
	     strstr(out->web_url, "{sha}") == NULL))
		fields_add(
		    errors, "web_url", 400, "invalid_field",
		    "'web_url' must be a link template containing {sha}");
}

/* Mirrors `request`'s URL once: 0, or -1 with a 422 in `errors`. */
static int repos_mirror_first(struct field_errors *errors,
			      const struct repo_request *request)
{
	git_repository *repo = NULL;
	struct mirrorlock *held;
	char path[4096], *err = NULL;
	int error = 0;

	mirror_path(path, sizeof(path), request->name);
	held = mirror_lock(request->name);
	if (gitrepo_mirror(&repo, path, request->url, &err) < 0) {
		fields_add(errors, "url", 422, "unreachable_repo",
			   "cannot mirror '%s': %s", request->url, err);
		error = -1;
	}
	git_repository_free(repo);
	mirror_unlock(held);
	free(err);
	return error;
}

int repos_create(struct store_repo *out, struct field_errors *errors,
		 const struct repo_request *request)
{
	struct store_repo taken;
	int error;

	memset(out, 0, sizeof(*out));
	/* Refuse duplicates before fetching anything. */
	error = store_repos_find(&taken, db_conn(), request->name);
	store_repo_clear(&taken);
	if (error == STORE_OK) {
		fields_add(errors, "name", 409, "exists",
			   "repository '%s' exists", request->name);
		return -1;
	}
	if (error != STORE_NOT_FOUND) {
		fields_db_failed(errors);
		return -1;
	}
	if (repos_mirror_first(errors, request) < 0)
		return -1;
	error = store_repos_create(out, db_conn(), request->name, request->url,
				   request->web_url);
	if (error == STORE_EXISTS) {
		fields_add(errors, "name", 409, "exists",
			   "repository '%s' exists", request->name);
		return -1;
	}
	if (error < 0) {
		fields_db_failed(errors);
		return -1;
	}
	return 0;
}

json_t *repos_json(const struct store_repo *repo)
{
	return json_pack("{s:I,s:s,s:s,s:o}", "id", (json_int_t)repo->id,
			 "name", repo->name, "url", repo->url, "web_url",
			 repo->web_url != NULL ? json_string(repo->web_url)
					       : json_null());
}

/* A repository as the lists and GET show it, its URL's password masked;
 * NULL when out of memory. */
static json_t *repo_shown_json(const struct store_repo *repo)
{
	char *url = NULL;
	json_t *shown;

	if (url_redact(&url, repo->url) < 0)
		return NULL;
	shown =
	    json_pack("{s:I,s:s,s:s?,s:s?,s:s}", "id", (json_int_t)repo->id,
		      "name", repo->name, "url", url, "web_url", repo->web_url,
		      "created_at", repo->created_at);
	free(url);
	return shown;
}

json_t *repos_list_json(struct field_errors *errors)
{
	struct store_repo_list list;
	json_t *repos, *repo;
	size_t i;

	if (store_repos_list(&list, db_conn()) < 0) {
		fields_db_failed(errors);
		return NULL;
	}
	repos = json_array();
	for (i = 0; i < list.count; i++) {
		repo = repo_shown_json(&list.items[i]);
		if (repo == NULL) {
			json_decref(repos);
			store_repo_list_clear(&list);
			fields_add(errors, "", 500, "internal",
				   "out of memory");
			return NULL;
		}
		json_array_append_new(repos, repo);
	}
	store_repo_list_clear(&list);
	return repos;
}

/* The live repository `name` into *out: 0, or -1 with 404 or the
 * database's error in `errors`. */
static int repo_find(struct store_repo *out, struct field_errors *errors,
		     const char *name)
{
	int error = store_repos_find(out, db_conn(), name);

	if (error == STORE_NOT_FOUND)
		fields_add(errors, "", 404, "not_found",
			   "repository '%s' is not registered", name);
	else if (error < 0)
		fields_db_failed(errors);
	return error == STORE_OK ? 0 : -1;
}

json_t *repos_get_json(struct field_errors *errors, const char *name)
{
	struct store_repo repo;
	json_t *shown = NULL;

	if (repo_find(&repo, errors, name) < 0)
		return NULL;
	shown = repo_shown_json(&repo);
	if (shown == NULL)
		fields_add(errors, "", 500, "internal", "out of memory");
	store_repo_clear(&repo);
	return shown;
}

json_t *repos_patched_body(struct field_errors *errors, const char *name,
			   json_t *current, json_t *patch)
{
	json_t *given = json_object_get(patch, "name"), *body;

	if (!json_is_object(patch)) {
		fields_add(errors, "", 400, "invalid_json",
			   "the body must be a JSON object");
		return NULL;
	}
	if (given != NULL && (!json_is_string(given) ||
			      strcmp(json_string_value(given), name) != 0)) {
		fields_add(errors, "name", 400, "invalid_field",
			   "'name' cannot be changed; register a new one "
			   "and delete this one instead");
		return NULL;
	}
	body = json_deep_copy(current);
	if (body == NULL || json_object_update(body, patch) < 0) {
		json_decref(body);
		fields_add(errors, "", 500, "internal", "out of memory");
		return NULL;
	}
	return body;
}

void repos_keep_masked_url(json_t *body, const char *field, const char *stored)
{
	const char *url = json_string_value(json_object_get(body, field));
	char *masked = NULL;

	if (url != NULL && stored != NULL &&
	    url_redact(&masked, stored) == 0 && strcmp(url, masked) == 0)
		json_object_set_new(body, field, json_string(stored));
	free(masked);
}

int repos_update(struct store_repo *out, struct field_errors *errors,
		 const char *name, json_t *patch)
{
	struct store_repo current = {0};
	struct repo_request request = {0};
	json_t *now, *body = NULL;
	int error, rc = -1;

	memset(out, 0, sizeof(*out));
	if (repo_find(&current, errors, name) < 0)
		return -1;
	now = json_pack("{s:s,s:s,s:s?}", "name", current.name, "url",
			current.url, "web_url", current.web_url);
	body = repos_patched_body(errors, current.name, now, patch);
	json_decref(now);
	if (body == NULL)
		goto out;
	repos_keep_masked_url(body, "url", current.url);
	repos_request_read(&request, errors, body);
	if (!fields_ok(errors))
		goto out;
	/* A new URL must be fetched once, as a new repository's is. */
	if (strcmp(request.url, current.url) != 0 &&
	    repos_mirror_first(errors, &request) < 0)
		goto out;
	error = store_repos_update(out, db_conn(), current.name, request.url,
				   request.web_url);
	if (error == STORE_NOT_FOUND)
		fields_add(errors, "", 404, "not_found",
			   "repository '%s' is not registered", name);
	else if (error < 0)
		fields_db_failed(errors);
	else
		rc = 0;
out:
	json_decref(body);
	store_repo_clear(&current);
	return rc;
}

int repos_soft_delete(struct field_errors *errors, const char *what,
		      const char *name,
		      int (*delete_fn)(PGconn *conn, const char *name))
{
	PGconn *conn = db_conn();
	int error = STORE_FAILED;

	if (conn != NULL && db_begin(conn) == 0) {
		error = delete_fn(conn, name);
		if (error == STORE_OK && db_commit(conn) < 0)
			error = STORE_FAILED;
		if (error != STORE_OK)
			db_rollback(conn);
	}
	if (error == STORE_NOT_FOUND)
		fields_add(errors, "", 404, "not_found",
			   "%s '%s' is not registered", what, name);
	else if (error == STORE_CONFLICT)
		fields_add(errors, "", 409, "in_use",
			   "%s '%s' is used by an open job, a watch or an "
			   "inbox rule; wait for the jobs to end, or delete "
			   "the watch or rule first",
			   what, name);
	else if (error < 0)
		fields_db_failed(errors);
	return error == STORE_OK ? 0 : -1;
}

int repos_delete(struct field_errors *errors, const char *name)
{
	return repos_soft_delete(errors, "repository", name,
				 store_repos_delete);
}

void repos_api_create(struct http_response *res, struct http_request *req)
{
	struct repo_request request = {0};
	struct field_errors errors;
	struct store_repo repo = {0};
	json_t *body = http_json_body(res, req);

	if (body == NULL)
		return;
	fields_init(&errors);
	repos_request_read(&request, &errors, body);
	if (!fields_ok(&errors) || repos_create(&repo, &errors, &request) < 0)
		fields_answer(res, &errors);
	else
		http_json(res, 201, repos_json(&repo));
	store_repo_clear(&repo);
	json_decref(body);
}

void repos_api_list(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	json_t *repos;

	(void)req;
	fields_init(&errors);
	repos = repos_list_json(&errors);
	if (repos == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 200, json_pack("{s:o}", "repos", repos));
}

void repos_api_get(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	json_t *repo;

	fields_init(&errors);
	repo = repos_get_json(&errors, req->params[0]);
	if (repo == NULL)
		fields_answer(res, &errors);
	else
		http_json(res, 200, repo);
}

void repos_api_update(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	struct store_repo repo = {0};
	json_t *body = http_json_body(res, req);

	if (body == NULL)
		return;
	fields_init(&errors);
	if (repos_update(&repo, &errors, req->params[0], body) < 0)
		fields_answer(res, &errors);
	else
		http_json(res, 200, repos_json(&repo));
	store_repo_clear(&repo);
	json_decref(body);
}

void repos_api_delete(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;

	fields_init(&errors);
	if (repos_delete(&errors, req->params[0]) < 0)
		fields_answer(res, &errors);
	else
		http_json(res, 200,
			  json_pack("{s:s,s:b}", "name", req->params[0],
				    "deleted", true));
}
