/* server/: statbisect-server, HTTP over resources over store/ over db.c
 * (docs/ARCHITECTURE.md).  What the parts of statbisect-server share: its
 * configuration and the handlers that main.c puts in the route table. */
#ifndef STATBISECT_SERVER_H
#define STATBISECT_SERVER_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "http.h"

struct server_config {
	const char *share_dir;	       /* holds web/ and sql/ */
	bool metrics_open;	       /* GET /metrics without a token */
	const char *data_dir;	       /* mirrors live in data_dir/repos */
	const char *base_url;	       /* how people reach this server */
	const char *mail_dir;	       /* Maildir for reports without SMTP */
	const char *smtp_url;	       /* smtp://host:port, or NULL */
	const char *mail_from;	       /* "statbisect robot <...>" */
	const char *mail_from_address; /* the plain address of mail_from */
	unsigned lease_seconds;	       /* a claimed task's lease */
	unsigned machine_timeout_s;    /* unseen this long, a worker is gone */
	unsigned smtp_retry_max; /* longest wait between mail attempts, s */
	/* Webhooks (webhooks.h): the longest wait between attempts, s; the
	 * secret that signs the bodies of webhooks without their own
	 * (STATBISECT_WEBHOOK_SECRET), and the bearer token sent with
	 * github-status ones (STATBISECT_WEBHOOK_TOKEN); NULL: none. */
	unsigned webhook_retry_max;
	const char *webhook_secret, *webhook_token;
	/* Job submissions a token may make per hour, and jobs it may have
	 * open at once, unless the token says otherwise; 0: no limit. */
	long long max_jobs_per_hour, max_open_jobs;
};

extern struct server_config server_config;

/* The defaults of server_config's job limits. */
#define SERVER_MAX_JOBS_PER_HOUR_DEFAULT 1000
#define SERVER_MAX_OPEN_JOBS_DEFAULT 100

/*
 * config.c: sets the job limits from STATBISECT_MAX_JOBS_PER_HOUR and
 * STATBISECT_MAX_OPEN_JOBS, or their defaults.  -1 (said on stderr) when
 * one is not a number from 0 to 1000000.
 */
int server_job_limits_from_env(void);

/*
 * config.c: where web/ and sql/ are when --share-dir does not say: the
 * installed layout's share/statbisect beside the program's bin/
 * directory, else the directory above bin/ (a build tree), else ".".
 * Malloc'd; NULL when out of memory.
 */
char *server_share_dir_default(void);

/* "<share dir>/<relative>" (server_config.share_dir, or the default
 * above while it is not set), malloc'd; NULL when out of memory. */
char *server_share_path(const char *relative);

/* The option `option` ("--max-jobs-per-hour" or "--max-open-jobs") with
 * `text` into server_config; -1 (said on stderr) as above. */
int server_job_limit_option(const char *option, const char *text);

/* api.c: the health check; tokens.c, repos.c and testcases.c hold their
 * own REST handlers. */

void api_healthz(struct http_response *res, struct http_request *req);

/* api_jobs.c: the REST API of jobs. */
void api_jobs_create(struct http_response *res, struct http_request *req);
void api_jobs_get(struct http_response *res, struct http_request *req);
void api_jobs_report(struct http_response *res, struct http_request *req);
void api_jobs_cancel(struct http_response *res, struct http_request *req);
void api_jobs_rerun(struct http_response *res, struct http_request *req);
void api_jobs_list(struct http_response *res, struct http_request *req);
void api_jobs_runs(struct http_response *res, struct http_request *req);
void api_jobs_runs_csv(struct http_response *res, struct http_request *req);

/* api_more.c: the REST API beyond the core contract (lists, runs,
 * re-run, revocation, OpenAPI; the jobs' handlers are in api_jobs.c).
 * NULL-method terminated. */
extern const struct http_route api_more_routes[];

/* web.c: the web UI.  NULL-method terminated. */
extern const struct http_route web_routes[];

/* routes.c: every route the server answers, in match order: the core
 * contract routes, then api_more_routes, then web_routes.  Malloc'd,
 * NULL-method terminated; NULL when out of memory. */
struct http_route *server_routes(void);

/* workers.c: the worker protocol. */
void workers_register(struct http_response *res, struct http_request *req);
/* GET /api/v1/workers (role read): each worker with the task it holds a
 * live lease on, if any. */
void workers_list(struct http_response *res, struct http_request *req);
/*
 * Every registered worker with its task, as GET /api/v1/workers answers
 * it ({"workers": [...]}), in *out (a new reference); -1 when the
 * database cannot be read.  The REST route and the workers page share it.
 */
int workers_list_json(json_t **out);
void workers_claim(struct http_response *res, struct http_request *req);
void workers_heartbeat(struct http_response *res, struct http_request *req);
void workers_result(struct http_response *res, struct http_request *req);

#endif
