/*
 * The watch resource (issue 12, robot mode): validation of a watch into a
 * struct field_errors, the service functions the REST API, the web pages
 * and the CLI share, and the REST handlers of /api/v1/watches and of the
 * push hook POST /api/v1/repos/{name}/push.  The SQL is in
 * store/store_watches.h, the background loop in watcher.h.
 */
#ifndef STATBISECT_WATCHES_H
#define STATBISECT_WATCHES_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "fields.h"
#include "http.h"
#include "store/store_watches.h"

#define WATCHES_TESTCASES_MAX 16
#define WATCHES_NOTIFY_MAX 50
#define WATCHES_BRANCH_MAX 200
#define WATCHES_INTERVAL_DEFAULT 300
#define WATCHES_INTERVAL_MIN 10
#define WATCHES_INTERVAL_MAX 604800

/*
 * Whether `branch` can name watched branches: 1 to WATCHES_BRANCH_MAX
 * bytes of a git branch name (no space, control, "..", "@{", ~ ^ : \,
 * not starting with "-" or "/", not ending with "/" or ".lock"), where
 * * ? [ ] make it a glob.
 */
bool watches_branch_valid(const char *branch);

/*
 * Validates a watch body as POST /api/v1/watches takes it ({"repo",
 * "branch", "testcases": [names], "interval_s"?, "regressions_only"?,
 * "paused"?, "notify"?}), adding every problem to `errors`, and stores
 * it.  On success *id_out is the new watch.  Returns 0 (stored), 1 (the
 * errors say why not) or -1 (database failure).
 */
int watches_create(struct field_errors *errors, long long *id_out,
		   PGconn *conn, json_t *body, long long token_id);

/* The watch as the API shows it (new reference), or NULL. */
json_t *watches_json(const struct store_watch *watch);

/* A head as the API shows it (new reference), or NULL. */
json_t *watches_head_json(const struct store_head *head);

/*
 * The history of watch `watch` (of testcase `testcase_id`, 0: all) as CSV
 * text, a header line and one line per measured head; malloc'd, or NULL
 * when out of memory.
 */
char *watches_history_csv(const struct store_head *heads, size_t count);

/* The REST routes of watches and the push hook.  NULL-method
 * terminated. */
extern const struct http_route watches_routes[];

/* web_watches.c: the web pages of watches.  NULL-method terminated. */
extern const struct http_route web_watches_routes[];

#endif
