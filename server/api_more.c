/* The REST API beyond the core contract: lists, runs, re-run, token
 * revocation, the OpenAPI document. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "server.h"
#include "tokens.h"
#include "url.h"

#define API_MORE_OPENAPI_MAX (1024 * 1024)

/* GET /api/v1/repos */
static void api_more_repos_list(struct http_response *res,
				struct http_request *req)
{
	json_t *repos;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT id, name, url, web_url,"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM repos ORDER BY name",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	repos = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		char *url = NULL;

		if (url_redact(&url, db_text(r, row, 2)) < 0) {
			json_decref(repos);
			PQclear(r);
			http_error(res, 500, "internal", "out of memory");
			return;
		}

		json_array_append_new(
		    repos, json_pack("{s:I,s:s,s:s?,s:s?,s:s}", "id",
				     (json_int_t)db_int(r, row, 0), "name",
				     db_text(r, row, 1), "url", url, "web_url",
				     db_text(r, row, 3), "created_at",
				     db_text(r, row, 4)));
		free(url);
	}
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "repos", repos));
}

/* A jsonb column parsed, or null. */
static json_t *jsonb_value(const PGresult *r, int row, int col)
{
	json_error_t e;
	json_t *v = json_loads(db_text(r, row, col), JSON_DECODE_ANY, &e);

	return v != NULL ? v : json_null();
}

/* GET /api/v1/testcases */
static void api_more_testcases_list(struct http_response *res,
				    struct http_request *req)
{
	json_t *testcases;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT id, name, build, run, kpi, higher_is_better,"
		    " min_change_pct, runs_min, runs_max, timeout_s, params,"
		    " monitors,"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM testcases ORDER BY name",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	testcases = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		json_array_append_new(
		    testcases,
		    json_pack("{s:I,s:s,s:s,s:s,s:s,s:b,s:f,s:I,s:I,s:I,"
			      "s:o,s:o,s:s}",
			      "id", (json_int_t)db_int(r, row, 0), "name",
			      db_text(r, row, 1), "build", db_text(r, row, 2),
			      "run", db_text(r, row, 3), "kpi",
			      db_text(r, row, 4), "higher_is_better",
			      db_bool(r, row, 5), "min_change_pct",
			      db_double(r, row, 6), "runs_min",
			      (json_int_t)db_int(r, row, 7), "runs_max",
			      (json_int_t)db_int(r, row, 8), "timeout_s",
			      (json_int_t)db_int(r, row, 9), "params",
			      jsonb_value(r, row, 10), "monitors",
			      jsonb_value(r, row, 11), "created_at",
			      db_text(r, row, 12)));
	}
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "testcases", testcases));
}

/* GET /api/v1/workers: each worker with the task it holds a live lease
 * on, if any. */
static void api_more_workers_list(struct http_response *res,
				  struct http_request *req)
{
	json_t *workers, *task;
	PGresult *r;
	int row;

	(void)req;
	r = db_exec(db_conn(),
		    "SELECT w.id, w.name, w.grp, w.machine,"
		    " to_char(w.registered_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " to_char(w.last_seen_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " t.id, t.job_id, t.commit_idx, c.sha,"
		    " to_char(t.lease_expires_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		    " FROM workers w LEFT JOIN LATERAL"
		    " (SELECT id, job_id, commit_idx, lease_expires_at"
		    " FROM tasks WHERE worker_id = w.id AND state = 'running'"
		    " AND lease_expires_at > now() ORDER BY id DESC LIMIT 1) t"
		    " ON true LEFT JOIN job_commits c"
		    " ON c.job_id = t.job_id AND c.idx = t.commit_idx"
		    " ORDER BY w.grp, w.name",
		    0, NULL);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	workers = json_array();
	for (row = 0; row < PQntuples(r); row++) {
		if (db_is_null(r, row, 6))
			task = json_null();
		else
			task = json_pack(
			    "{s:I,s:I,s:I,s:s,s:s}", "id",
			    (json_int_t)db_int(r, row, 6), "job",
			    (json_int_t)db_int(r, row, 7), "commit_index",
			    (json_int_t)db_int(r, row, 8), "commit",
			    db_text(r, row, 9), "lease_expires_at",
			    db_text(r, row, 10));
		json_array_append_new(
		    workers,
		    json_pack("{s:I,s:s,s:s,s:s?,s:s,s:s,s:o}", "id",
			      (json_int_t)db_int(r, row, 0), "name",
			      db_text(r, row, 1), "group", db_text(r, row, 2),
			      "machine", db_text(r, row, 3), "registered_at",
			      db_text(r, row, 4), "last_seen_at",
			      db_text(r, row, 5), "task", task));
	}
	PQclear(r);
	http_json(res, 200, json_pack("{s:o}", "workers", workers));
}

/* <dir of this program>/../web/openapi.yaml, malloc'd. */
static char *openapi_path(void)
{
	char exe[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return strdup("web/openapi.yaml");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash != NULL)
		*slash = '\0';
	if (asprintf(&path, "%s/../web/openapi.yaml", exe) < 0)
		return NULL;
	return path;
}

/* GET /api/v1/openapi.yaml */
static void api_more_openapi(struct http_response *res,
			     struct http_request *req)
{
	char *path = openapi_path(), *text = NULL;
	size_t len = 0;
	FILE *f = NULL;

	(void)req;
	if (path == NULL || (f = fopen(path, "r")) == NULL) {
		log_error("cannot open the OpenAPI document %s",
			  path != NULL ? path : "(no memory)");
		http_error(res, 500, "internal",
			   "the OpenAPI document is not installed beside the "
			   "server");
		goto out;
	}
	text = malloc(API_MORE_OPENAPI_MAX + 1);
	if (text == NULL) {
		http_error(res, 500, "internal", "out of memory");
		goto out;
	}
	len = fread(text, 1, API_MORE_OPENAPI_MAX + 1, f);
	if (ferror(f) || len > API_MORE_OPENAPI_MAX ||
	    memchr(text, '\0', len) != NULL) {
		log_error("cannot read the OpenAPI document %s", path);
		http_error(res, 500, "internal",
			   "the OpenAPI document cannot be read");
		goto out;
	}
	text[len] = '\0';
	http_text(res, 200, "application/yaml", text);
out:
	if (f != NULL)
		fclose(f);
	free(text);
	free(path);
}

const struct http_route api_more_routes[] = {
    {"GET", "/api/v1/jobs", ROLE_READ, api_jobs_list},
    {"GET", "/api/v1/jobs/{}/runs", ROLE_READ, api_jobs_runs},
    {"GET", "/api/v1/jobs/{}/runs.csv", ROLE_READ, api_jobs_runs_csv},
    {"POST", "/api/v1/jobs/{}/rerun", ROLE_SUBMIT, api_jobs_rerun},
    {"GET", "/api/v1/repos", ROLE_READ, api_more_repos_list},
    {"GET", "/api/v1/testcases", ROLE_READ, api_more_testcases_list},
    {"GET", "/api/v1/workers", ROLE_READ, api_more_workers_list},
    {"GET", "/api/v1/tokens", ROLE_ADMIN, tokens_api_list},
    {"DELETE", "/api/v1/tokens/{}", ROLE_ADMIN, tokens_api_revoke},
    {"GET", "/api/v1/openapi.yaml", ROLE_NONE, api_more_openapi},
    {NULL, NULL, ROLE_NONE, NULL},
};
