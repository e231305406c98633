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
	if (url_read && (out->url[0] == '\0' || out->url[0] == '-' ||
			 !validate_text(out->url, REPOS_URL_MAX, false)))
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

json_t *repos_list_json(struct field_errors *errors)
{
	struct store_repo_list list;
	json_t *repos;
	size_t i;

	if (store_repos_list(&list, db_conn()) < 0) {
		fields_db_failed(errors);
		return NULL;
	}
	repos = json_array();
	for (i = 0; i < list.count; i++) {
		const struct store_repo *repo = &list.items[i];
		char *url = NULL;

		if (url_redact(&url, repo->url) < 0) {
			json_decref(repos);
			store_repo_list_clear(&list);
			fields_add(errors, "", 500, "internal",
				   "out of memory");
			return NULL;
		}
		json_array_append_new(
		    repos, json_pack("{s:I,s:s,s:s?,s:s?,s:s}", "id",
				     (json_int_t)repo->id, "name", repo->name,
				     "url", url, "web_url", repo->web_url,
				     "created_at", repo->created_at));
		free(url);
	}
	store_repo_list_clear(&list);
	return repos;
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
