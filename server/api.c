/* The people's REST API: the health check.  Tokens, repositories,
 * testcases and jobs have their own files (tokens.c, repos.c,
 * testcases.c, api_jobs.c). */
#include "server.h"

void api_healthz(struct http_response *res, struct http_request *req)
{
	(void)req;
	http_json(res, 200, json_pack("{s:s}", "status", "ok"));
}
