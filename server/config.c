/* The server's configuration, set once by main() before any thread starts
 * and read-only afterwards; in a file of its own so that unit tests can
 * link the server's modules without its main(). */
#include "server.h"

struct server_config server_config;
