/*
 * Read keys on the web side: the pages of one job that a report's links
 * open for people without an account (docs/web-ui.md, "Report links").
 */
#include <jansson.h>
#include <string.h>

#include "db.h"
#include "id.h"
#include "store/store_reports.h"
#include "web.h"

/* Longer text is no key: the keys made are 64 hex digits. */
#define WEB_KEY_MAX 128

bool web_require_job_reader(struct web_session *out, struct http_response *res,
			    struct http_request *req, bool page)
{
	const char *key = http_query(req, "key");
	long long job_id;
	PGconn *conn;
	int opens;

	if (key == NULL)
		return web_require(out, res, req, ROLE_READ, page);
	memset(out, 0, sizeof(*out));
	if (id_parse(&job_id, req->params[0]) < 0 ||
	    strlen(key) > WEB_KEY_MAX) {
		web_error_page(res, 404, out, "There is no such job.");
		return false;
	}
	conn = db_conn();
	opens = conn != NULL ? store_reports_key_opens(conn, job_id, key) : -1;
	if (opens < 0) {
		web_db_failed(res, out);
		return false;
	}
	if (opens == 0) {
		web_error_page(res, 403, out,
			       "This link does not open the job: its key was "
			       "revoked or is another job's.  Sign in to see "
			       "the job.");
		return false;
	}
	req->role = ROLE_READ;
	return true;
}

void web_key_query(json_t *ctx, struct http_request *req)
{
	const char *key = http_query(req, "key");

	if (ctx != NULL && key != NULL)
		json_object_set_new(ctx, "key_query",
				    json_sprintf("?key=%s", key));
}
