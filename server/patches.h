/*
 * Patch jobs (issue 13): a patch series posted as mail (an mbox, as
 * `git format-patch` writes it) tested on a base revision.  The server
 * applies the series with libgit2 onto the base in memory, refusing it
 * with the failing patches named, and stores one candidate commit per
 * patch; the engine then bisects inside the series.  Workers make the same
 * commits from the series their task carries (lib/patchapply.h), so each
 * patched tree has its own SHA and the build cache stays correct.  The
 * report is a reply in the patch's thread.
 */
#ifndef STATBISECT_PATCHES_H
#define STATBISECT_PATCHES_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "fields.h"
#include "http.h"

/* True when a job request body asks for a patch job ("kind": "patch"). */
bool patches_is_request(json_t *body);

/*
 * Creates a patch job from a request body (borrowed): {"kind": "patch",
 * "repo", "testcase", "base", "mbox", "notify"?, "runs_min"?, "runs_max"?,
 * "archive"?: URL prefix of the list archive, the patch link being it
 * followed by the Message-ID and "/"}.  Answers 201 with the job, 400/404
 * for a bad request, 422 for an mbox that is no series, an unknown base or
 * patches that do not apply (error.failures lists each).
 */
void patches_create(struct http_response *res, struct http_request *req,
		    json_t *body);

/*
 * The service behind patches_create and the form: checks the request
 * `body` (borrowed), applies the series and stores the job of `token_id`
 * (0: none), its id in *job_id.  Returns 0, or -1 with the error in
 * `errors` (the field at fault, the status and code the API answers);
 * when patches do not apply, *refusal is also the API's whole error
 * object with "failures" (a new reference; NULL otherwise).  `within`
 * (NULL: nothing) runs inside the transaction that stores the job, as
 * jobs_request.within does: the inbox marks the series' messages taken
 * so, and a negative return stores no job.
 */
int patches_submit(long long *job_id, json_t **refusal,
		   struct field_errors *errors, long long token_id,
		   json_t *body,
		   int (*within)(PGconn *conn, long long job_id, void *arg),
		   void *within_arg);

/*
 * Adds "series" to a task a worker claims when its job is a patch job
 * (store_patches_series_json).  0, or -1 on a database error.
 */
int patches_attach_series(PGconn *conn, json_t *task, long long job_id);

/* What makes a report on a patch job a reply in the patch's thread. */
struct patches_reply {
	char *subject;	   /* "Re: <the patch email's subject>" */
	char *in_reply_to; /* "<message-id>", or NULL when it had none */
	char *lines[4];	   /* url:, base:, patch link:, patch subject: */
	size_t line_count;
	json_t *recipients; /* To and Cc of the patch email */
};

/*
 * Loads the reply for a report on candidate `idx` of job `job_id` (its
 * page is `job_url`).  Returns 0, 1 when the job is not a patch job
 * (*out empty), -1 on a database error.  Clear with patches_reply_clear.
 */
int patches_reply_load(struct patches_reply *out, PGconn *conn,
		       long long job_id, size_t idx, const char *job_url);
void patches_reply_clear(struct patches_reply *reply);

/* web_patches.c: the form, GET and POST /jobs/new-patch. */
void web_patch_new(struct http_response *res, struct http_request *req);
void web_patch_submit(struct http_response *res, struct http_request *req);

#endif
