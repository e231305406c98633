/*
 * cli/: statbisect, the command-line client of the REST API, for people
 * and CI (docs/ARCHITECTURE.md).
 *
 * The command-line client's HTTP side: requests to the statbisect server's
 * REST API over libcurl with a bearer token, replies read in full.
 */
#ifndef STATBISECT_REMOTE_H
#define STATBISECT_REMOTE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct remote;

/* A completed exchange: any HTTP status. */
struct remote_reply {
	long status;
	char *body; /* malloc'd, NUL-terminated */
	size_t len;
	json_t *json; /* the body parsed, when the server sent JSON */
};

/*
 * Makes a client of the server at `server_url` (http:// or https://)
 * sending `token`; both are copied.  Returns 0 with the client in *out, or
 * -1 with a malloc'd message in *err when the URL or token is unusable.
 */
int remote_new(struct remote **out, const char *server_url, const char *token,
	       char **err);
void remote_free(struct remote *remote);

/*
 * Sends `method` `path` (e.g. "/api/v1/jobs/3") with `body` (borrowed;
 * NULL sends no body) as JSON.  Returns 0 when the server answered, whatever
 * the status, with the reply in *out (remote_reply_clear it); -1 with a
 * malloc'd message in *err when it could not be reached or the reply was
 * cut off.
 */
int remote_call(struct remote *remote, const char *method, const char *path,
		json_t *body, struct remote_reply *out, char **err);

void remote_reply_clear(struct remote_reply *reply);

/*
 * What to tell the user about a reply that is not a success: the server's
 * "error.message" when it sent the JSON error, else the status and the
 * start of the body.  Malloc'd; NULL when out of memory.
 */
char *remote_error_message(const struct remote_reply *reply);

/* The server URL without trailing slashes, as the client uses it. */
const char *remote_server_url(const struct remote *remote);

#endif
