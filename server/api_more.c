/* The REST API beyond the core contract: its route table (the lists, runs,
 * re-run and revocation, and the workers list, whose handlers live with
 * their resources) and the OpenAPI document. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "repos.h"
#include "server.h"
#include "testcases.h"
#include "tokens.h"

#define API_MORE_OPENAPI_MAX (1024 * 1024)

/* GET /api/v1/openapi.yaml */
static void api_more_openapi(struct http_response *res,
			     struct http_request *req)
{
	char *path = server_share_path("web/openapi.yaml"), *text = NULL;
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
    {"GET", "/api/v1/repos", ROLE_READ, repos_api_list},
    {"GET", "/api/v1/testcases", ROLE_READ, testcases_api_list},
    {"GET", "/api/v1/repos/{}", ROLE_READ, repos_api_get},
    {"PATCH", "/api/v1/repos/{}", ROLE_ADMIN, repos_api_update},
    {"DELETE", "/api/v1/repos/{}", ROLE_ADMIN, repos_api_delete},
    {"GET", "/api/v1/testcases/{}", ROLE_READ, testcases_api_get},
    {"PATCH", "/api/v1/testcases/{}", ROLE_ADMIN, testcases_api_update},
    {"DELETE", "/api/v1/testcases/{}", ROLE_ADMIN, testcases_api_delete},
    {"GET", "/api/v1/workers", ROLE_READ, workers_list},
    {"GET", "/api/v1/tokens", ROLE_ADMIN, tokens_api_list},
    {"DELETE", "/api/v1/tokens/{}", ROLE_ADMIN, tokens_api_revoke},
    {"GET", "/api/v1/openapi.yaml", ROLE_NONE, api_more_openapi},
    {NULL, NULL, ROLE_NONE, NULL},
};
