/* The web UI: server-rendered pages from web/ templates. */
#include "server.h"

const struct http_route web_routes[] = {
	{NULL, NULL, ROLE_NONE, NULL},
};
