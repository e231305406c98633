/* The worker's HTTP client for the server's worker protocol (libcurl,
 * JSON bodies, bearer token).  One client per thread. */
#ifndef STATBISECT_CLIENT_H
#define STATBISECT_CLIENT_H

#include <jansson.h>
#include <signal.h>

struct client;

/* A client for the server at `base_url` with `token`; NULL on failure. */
struct client *client_new(const char *base_url, const char *token);
void client_free(struct client *c);

/*
 * POSTs `body` (borrowed; NULL sends "{}") to `path`.  On a completed
 * exchange returns 0 with the HTTP status in *status and the parsed reply
 * (or NULL when it is not JSON) in *reply, which the caller json_decref()s.
 * Returns -1 with a malloc'd message in *err when the server could not be
 * reached.
 */
int client_post(struct client *c, const char *path, json_t *body, long *status,
		json_t **reply, char **err);

/*
 * While `*flag` (NULL: none) is set, requests of `c` stop at once and fail:
 * for long requests a stop should not wait for.  The flag stays the
 * caller's.
 */
void client_set_cancel(struct client *c, const volatile sig_atomic_t *flag);

/* The "error.message" of a JSON error reply, or a fallback text. */
const char *client_error_message(json_t *reply);

#endif
