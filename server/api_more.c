/* The REST API beyond the core contract: lists, runs, re-run, token
 * revocation, the OpenAPI document. */
#include "server.h"

const struct http_route api_more_routes[] = {
	{NULL, NULL, ROLE_NONE, NULL},
};
