/* What the parts of statbisect-server share: its configuration and the
 * handlers that main.c puts in the route table. */
#ifndef STATBISECT_SERVER_H
#define STATBISECT_SERVER_H

#include <libpq-fe.h>

#include "http.h"

struct server_config {
	const char *data_dir;	       /* mirrors live in data_dir/repos */
	const char *base_url;	       /* how people reach this server */
	const char *mail_dir;	       /* Maildir for reports without SMTP */
	const char *smtp_url;	       /* smtp://host:port, or NULL */
	const char *mail_from;	       /* "statbisect robot <...>" */
	const char *mail_from_address; /* the plain address of mail_from */
	unsigned lease_seconds;	       /* a claimed task's lease */
	unsigned smtp_retry_max; /* longest wait between mail attempts, s */
};

extern struct server_config server_config;

/* api.c: the people's REST API. */

/*
 * The job as GET /api/v1/jobs/{id} answers it (new reference), or NULL when
 * there is no such job (*failed false) or the database failed (*failed
 * true).
 */
json_t *api_job_json(PGconn *conn, long long job_id, bool *failed);

/*
 * Validates a job request body (borrowed) as POST /api/v1/jobs takes it,
 * resolves its revisions, stores the job and its first tasks, and answers
 * 201 with the job, or the 4xx/5xx error, in `res`.
 */
void api_job_create(struct http_response *res, struct http_request *req,
		    json_t *body);

void api_healthz(struct http_response *res, struct http_request *req);
void api_tokens_create(struct http_response *res, struct http_request *req);
void api_repos_create(struct http_response *res, struct http_request *req);
void api_testcases_create(struct http_response *res, struct http_request *req);
void api_jobs_create(struct http_response *res, struct http_request *req);
void api_jobs_get(struct http_response *res, struct http_request *req);
void api_jobs_report(struct http_response *res, struct http_request *req);
void api_jobs_cancel(struct http_response *res, struct http_request *req);

/* api_more.c: the REST API beyond the core contract (lists, runs,
 * re-run, revocation, OpenAPI).  NULL-method terminated. */
extern const struct http_route api_more_routes[];

/* web.c: the web UI.  NULL-method terminated. */
extern const struct http_route web_routes[];

/* routes.c: every route the server answers, in match order: the core
 * contract routes, then api_more_routes, then web_routes.  Malloc'd,
 * NULL-method terminated; NULL when out of memory. */
struct http_route *server_routes(void);

/* queue.c: the worker protocol. */
void queue_register(struct http_response *res, struct http_request *req);
void queue_claim(struct http_response *res, struct http_request *req);
void queue_heartbeat(struct http_response *res, struct http_request *req);
void queue_result(struct http_response *res, struct http_request *req);

#endif
