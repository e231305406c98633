/* The route table of statbisect-server. */
#include <stdlib.h>

#include "commitlog.h"
#include "compare.h"
#include "inbox.h"
#include "metrics.h"
#include "rechecks.h"
#include "reportjob.h"
#include "repos.h"
#include "retry.h"
#include "server.h"
#include "testcases.h"
#include "tokens.h"
#include "watches.h"
#include "web.h"

/* The core contract routes; the route tables of other files follow. */
static const struct http_route core_routes[] = {
    {"GET", "/healthz", ROLE_NONE, api_healthz},
    {"GET", "/metrics", ROLE_READ, metrics_get},
    {"POST", "/api/v1/tokens", ROLE_ADMIN, tokens_api_create},
    {"POST", "/api/v1/repos", ROLE_ADMIN, repos_api_create},
    {"POST", "/api/v1/testcases", ROLE_ADMIN, testcases_api_create},
    {"POST", "/api/v1/jobs", ROLE_SUBMIT, api_jobs_create},
    {"GET", "/api/v1/jobs/{}", ROLE_READ, api_jobs_get},
    {"DELETE", "/api/v1/jobs/{}", ROLE_SUBMIT, api_jobs_cancel},
    {"GET", "/api/v1/jobs/{}/report", ROLE_READ, api_jobs_report},
    {"POST", "/api/v1/jobs/{}/retest", ROLE_SUBMIT, compare_api_retest},
    {"POST", "/api/v1/jobs/{}/recheck", ROLE_SUBMIT, rechecks_api_create},
    {"PUT", "/api/v1/testcases/{}/recheck", ROLE_ADMIN, rechecks_api_schedule},
    {"DELETE", "/api/v1/jobs/{}/keys", ROLE_SUBMIT, reportjob_keys_revoke},
    {"GET", "/api/v1/jobs/{}/commits/{}/log", ROLE_READ, commitlog_get},
    {"POST", "/api/v1/jobs/{}/commits/{}/retry", ROLE_SUBMIT, retry_api},
    {"POST", "/api/v1/workers", ROLE_WORKER, workers_register},
    {"POST", "/api/v1/workers/{}/claim", ROLE_WORKER, workers_claim},
    {"POST", "/api/v1/tasks/{}/heartbeat", ROLE_WORKER, workers_heartbeat},
    {"POST", "/api/v1/tasks/{}/result", ROLE_WORKER, workers_result},
    {NULL, NULL, ROLE_NONE, NULL},
};

struct http_route *server_routes(void)
{
	const struct http_route *tables[] = {
	    core_routes,	api_more_routes, watches_routes,
	    web_watches_routes, inbox_routes,	 web_routes};
	struct http_route *all;
	size_t n = 0, t, i;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (i = 0; tables[t][i].method != NULL; i++)
			n++;
	/* The web UI's paths get its error page from the HTTP layer too. */
	http_set_page_error(web_layer_error_page);
	all = calloc(n + 1, sizeof(*all));
	if (all == NULL)
		return NULL;
	n = 0;
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (i = 0; tables[t][i].method != NULL; i++)
			all[n++] = tables[t][i];
	/* --metrics-open: the figures for anyone (a scraper without a
	 * token on a trusted network). */
	for (i = 0; i < n; i++)
		if (all[i].handler == metrics_get &&
		    server_config.metrics_open)
			all[i].role = ROLE_NONE;
	return all;
}
