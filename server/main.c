/*
 * statbisect-server: the REST API, the worker protocol, the scheduler (run
 * on each upload) and the mailer thread, over one PostgreSQL database.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "gitrepo.h"
#include "log.h"
#include "mailer.h"
#include "report.h"
#include "server.h"
#include "url.h"
#include "watcher.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: statbisect-server --db CONNINFO --listen HOST:PORT\n"
	    "           [--mail-dir DIR] [--smtp-url URL] [--data-dir DIR]\n"
	    "           [--sql-dir DIR] [--base-url URL] [--threads N]\n"
	    "           [--lease-seconds N] [--smtp-retry-max SECONDS]\n"
	    "           [--max-connections N] [--max-connections-per-ip N]\n"
	    "           [--connection-timeout SECONDS]\n"
	    "           [--max-jobs-per-hour N] [--max-open-jobs N]\n"
	    "environment: STATBISECT_DB, STATBISECT_LISTEN,"
	    " STATBISECT_SMTP_URL,\n"
	    "  STATBISECT_MAIL_FROM, STATBISECT_ADMIN_TOKEN,"
	    " STATBISECT_BASE_URL,\n"
	    "  STATBISECT_SMTP_RETRY_MAX, STATBISECT_MAX_CONNECTIONS,\n"
	    "  STATBISECT_MAX_CONNECTIONS_PER_IP,"
	    " STATBISECT_CONNECTION_TIMEOUT,\n"
	    "  STATBISECT_MAX_JOBS_PER_HOUR, STATBISECT_MAX_OPEN_JOBS\n");
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : fallback;
}

/* The sql/ directory beside the bin/ directory holding this program. */
static char *default_sql_dir(void)
{
	char exe[PATH_MAX], *slash, *dir = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return strdup("sql");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash != NULL)
		*slash = '\0';
	if (asprintf(&dir, "%s/../sql", exe) < 0)
		return NULL;
	return dir;
}

static char *plain_address(const char *from)
{
	const char *lt = strchr(from, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt != NULL && gt != NULL)
		return strndup(lt + 1, (size_t)(gt - lt - 1));
	return strdup(from);
}

/*
 * Parses a connection limit (1-1000000) from `text`, or from the
 * environment variable `name` when `text` is NULL and it is set; leaves
 * *out alone when neither is given.  -1 on a bad number (said on stderr).
 */
static int limit_option(unsigned *out, const char *text, const char *name,
			const char *option)
{
	char *end;
	long value;

	if (text == NULL && (text = env_or(name, NULL)) == NULL)
		return 0;
	errno = 0;
	value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < 1 ||
	    value > 1000000) {
		fprintf(stderr,
			"statbisect-server: %s (or %s) takes a number from 1 "
			"to 1000000, not '%s'\n",
			option, name, text);
		return -1;
	}
	*out = (unsigned)value;
	return 0;
}

/* The connection limits from the options given (NULL: not given) and the
 * environment; -1 when one is not a number in range. */
static int limits_configure(struct http_limits *limits,
			    const char *const given[3])
{
	*limits =
	    (struct http_limits){HTTP_CONNECTIONS_MAX_DEFAULT,
				 HTTP_CONNECTIONS_PER_ADDRESS_MAX_DEFAULT,
				 HTTP_CONNECTION_TIMEOUT_S_DEFAULT};
	if (limit_option(&limits->connections_max, given[0],
			 "STATBISECT_MAX_CONNECTIONS",
			 "--max-connections") < 0 ||
	    limit_option(&limits->connections_per_address_max, given[1],
			 "STATBISECT_MAX_CONNECTIONS_PER_IP",
			 "--max-connections-per-ip") < 0 ||
	    limit_option(&limits->connection_timeout_s, given[2],
			 "STATBISECT_CONNECTION_TIMEOUT",
			 "--connection-timeout") < 0)
		return -1;
	return 0;
}

static int connect_and_migrate(const char *sql_dir)
{
	int attempt;

	for (attempt = 0; attempt < 30; attempt++) {
		PGconn *conn = db_conn();

		if (conn != NULL)
			return db_migrate(conn, sql_dir);
		sleep(1);
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"listen", required_argument, NULL, 'l'},
	    {"mail-dir", required_argument, NULL, 'm'},
	    {"smtp-url", required_argument, NULL, 's'},
	    {"data-dir", required_argument, NULL, 'D'},
	    {"sql-dir", required_argument, NULL, 'q'},
	    {"base-url", required_argument, NULL, 'b'},
	    {"threads", required_argument, NULL, 't'},
	    {"lease-seconds", required_argument, NULL, 'L'},
	    {"smtp-retry-max", required_argument, NULL, 'R'},
	    {"max-connections", required_argument, NULL, 'C'},
	    {"max-connections-per-ip", required_argument, NULL, 'P'},
	    {"connection-timeout", required_argument, NULL, 'T'},
	    {"max-jobs-per-hour", required_argument, NULL, 'J'},
	    {"max-open-jobs", required_argument, NULL, 'O'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *db = env_or("STATBISECT_DB", NULL);
	const char *listen = env_or("STATBISECT_LISTEN", "127.0.0.1:8080");
	const char *base_url = env_or("STATBISECT_BASE_URL", NULL);
	char *sql_dir = NULL, *host = NULL, *url = NULL, *repos = NULL;
	struct http_server *http = NULL;
	struct http_route *routes = NULL;
	struct mailer *mailer = NULL;
	const char *limits_given[3] = {NULL, NULL, NULL};
	struct http_limits limits;
	unsigned threads = 4, port;
	sigset_t signals;
	int opt, sig, status = 1;
	char *colon;

	server_config.data_dir = "var/data";
	server_config.mail_dir = "var/mail";
	server_config.smtp_url = env_or("STATBISECT_SMTP_URL", NULL);
	server_config.mail_from = env_or(
	    "STATBISECT_MAIL_FROM", "statbisect robot <statbisect@localhost>");
	server_config.lease_seconds = 60;
	server_config.smtp_retry_max =
	    (unsigned)atoi(env_or("STATBISECT_SMTP_RETRY_MAX", "3600"));
	if (server_job_limits_from_env() < 0)
		return 2;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			db = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'm':
			server_config.mail_dir = optarg;
			break;
		case 's':
			server_config.smtp_url = optarg;
			break;
		case 'D':
			server_config.data_dir = optarg;
			break;
		case 'q':
			sql_dir = strdup(optarg);
			break;
		case 'b':
			base_url = optarg;
			break;
		case 't':
			threads = (unsigned)atoi(optarg);
			break;
		case 'L':
			server_config.lease_seconds = (unsigned)atoi(optarg);
			break;
		case 'R':
			server_config.smtp_retry_max = (unsigned)atoi(optarg);
			break;
		case 'C':
			limits_given[0] = optarg;
			break;
		case 'P':
			limits_given[1] = optarg;
			break;
		case 'T':
			limits_given[2] = optarg;
			break;
		case 'J':
		case 'O':
			if (server_job_limit_option(opt == 'J'
							? "--max-jobs-per-hour"
							: "--max-open-jobs",
						    optarg) < 0)
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	log_init("statbisect-server", LOG_INFO);
	if (db == NULL) {
		fprintf(stderr, "statbisect-server: --db or STATBISECT_DB is "
				"required\n");
		usage(stderr);
		return 2;
	}
	if (limits_configure(&limits, limits_given) < 0)
		return 2;
	host = strdup(listen);
	colon = host != NULL ? strrchr(host, ':') : NULL;
	if (colon == NULL || atoi(colon + 1) <= 0 || atoi(colon + 1) > 65535 ||
	    threads < 1 || threads > 64 || server_config.lease_seconds < 2 ||
	    server_config.smtp_retry_max < 1 ||
	    server_config.smtp_retry_max > 86400) {
		fprintf(stderr, "statbisect-server: --listen takes HOST:PORT, "
				"--threads 1-64, --lease-seconds >= 2, "
				"--smtp-retry-max 1-86400\n");
		free(host);
		return 2;
	}
	*colon = '\0';
	port = (unsigned)atoi(colon + 1);
	if (base_url == NULL) {
		if (asprintf(&url, "http://%s:%u", host, port) < 0)
			goto out;
		base_url = url;
	}
	server_config.base_url = base_url;
	server_config.mail_from_address =
	    plain_address(server_config.mail_from);
	if (!report_address_is_valid(server_config.mail_from_address)) {
		fprintf(stderr,
			"statbisect-server: STATBISECT_MAIL_FROM '%s' "
			"has no plain address\n",
			server_config.mail_from);
		goto out;
	}
	if (sql_dir == NULL)
		sql_dir = default_sql_dir();
	if (asprintf(&repos, "%s/repos", server_config.data_dir) < 0)
		goto out;
	mkdir(server_config.data_dir, 0755);
	mkdir(repos, 0755);

	/* Signals are taken by sigwait below; every thread inherits the
	 * mask, so none of them is interrupted. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (gitrepo_global_init() < 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("cannot initialise libgit2 or libcurl");
		goto out;
	}
	db_configure(db);
	if (connect_and_migrate(sql_dir) < 0) {
		log_error("cannot prepare the database (%s)", sql_dir);
		goto out;
	}
	routes = server_routes();
	if (routes == NULL)
		goto out;
	http = http_start(host, port, threads, &limits, routes,
			  env_or("STATBISECT_ADMIN_TOKEN", NULL));
	if (http == NULL)
		goto out;
	mailer = mailer_start();
	if (mailer == NULL) {
		log_error("cannot start the mailer");
		goto out;
	}
	if (watcher_start() < 0)
		goto out;
	{
		/* The SMTP URL may hold a password: not in the log. */
		char *shown = NULL;

		if (server_config.smtp_url != NULL &&
		    url_redact(&shown, server_config.smtp_url) < 0)
			shown = NULL;

		log_info("listening on %s:%u (%s), reports %s", host, port,
			 base_url,
			 shown			  ? shown
			 : server_config.smtp_url ? "over SMTP"
						  : server_config.mail_dir);
		free(shown);
	}
	sigwait(&signals, &sig);
	log_info("signal %d: stopping", sig);
	status = 0;
out:
	http_stop(http);
	free(routes);
	mailer_stop(mailer);
	watcher_stop();
	db_disconnect();
	free(host);
	free(url);
	free(repos);
	free(sql_dir);
	free((char *)server_config.mail_from_address);
	git_libgit2_shutdown();
	curl_global_cleanup();
	return status;
}
