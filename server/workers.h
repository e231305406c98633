/*
 * What the two files of the worker protocol share: workers.c (register,
 * heartbeat, upload) and workers_claim.c (claims, long-polled).  The
 * handlers themselves are declared in server.h.
 */
#ifndef STATBISECT_WORKERS_H
#define STATBISECT_WORKERS_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "http.h"
#include "store/store_tasks.h"

/* The longest "activity" a heartbeat may report. */
#define WORKERS_ACTIVITY_MAX 200

/*
 * The commits a task runs, in the order to run them: [{"index", "commit",
 * "runs", "purpose", "rebuild"}] (new reference).
 */
json_t *workers_plan_json(const struct store_plan *plan);

/*
 * Marks worker `worker_id` seen and checks that it belongs to the
 * request's token; its group into `group` (`size` bytes).  Returns false
 * with the answer (404 unknown_worker, or the database's failure) in
 * `res` otherwise.
 */
bool workers_load(struct http_response *res, char *group, size_t size,
		  PGconn *conn, const struct http_request *req,
		  long long worker_id);

#endif
