/*
 * statbisect-server: the REST API, the worker protocol, the scheduler (run
 * on each upload) and the mailer thread, over one PostgreSQL database.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "gitrepo.h"
#include "inbox.h"
#include "jobcache.h"
#include "listcache.h"
#include "log.h"
#include "mailer.h"
#include "notify.h"
#include "report.h"
#include "resolver.h"
#include "server.h"
#include "url.h"
#include "watcher.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: statbisect-server --db CONNINFO --listen HOST:PORT\n"
	    "           [--mail-dir DIR] [--smtp-url URL] [--data-dir DIR]\n"
	    "           [--share-dir DIR] [--sql-dir DIR] [--base-url URL]\n"
	    "           [--threads N] [--lease-seconds N]\n"
	    "           [--smtp-retry-max SECONDS] [--mail-from FROM]\n"
	    "           [--admin-token TOKEN] [--metrics-open]\n"
	    "           [--max-connections N] [--max-connections-per-ip N]\n"
	    "           [--connection-timeout SECONDS]\n"
	    "           [--inbox MAILDIR] [--inbox-timeout SECONDS]\n"
	    "           [--max-jobs-per-hour N] [--max-open-jobs N]\n"
	    "           [--machine-timeout SECONDS]\n"
	    "           [--webhook-retry-max SECONDS]\n"
	    "Each option is also the environment variable STATBISECT_ and\n"
	    "its name in capitals with '_' for '-' (--max-open-jobs:\n"
	    "STATBISECT_MAX_OPEN_JOBS; --metrics-open: "
	    "STATBISECT_METRICS_OPEN\n"
	    "set to 1); an option given wins over the environment.\n"
	    "STATBISECT_WEBHOOK_SECRET and STATBISECT_WEBHOOK_TOKEN (the\n"
	    "webhooks' signing key and bearer token) are read from the\n"
	    "environment only, so that ps never shows them.\n");
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : fallback;
}

/* STATBISECT_METRICS_OPEN: "1", "true" or "yes" open /metrics, "0",
 * "false", "no" or nothing keep it for tokens; -1 for anything else. */
static int metrics_open_from_env(bool *out)
{
	const char *v = env_or("STATBISECT_METRICS_OPEN", "0");

	*out = strcmp(v, "1") == 0 || strcmp(v, "true") == 0 ||
	       strcmp(v, "yes") == 0;
	if (*out || strcmp(v, "0") == 0 || strcmp(v, "false") == 0 ||
	    strcmp(v, "no") == 0)
		return 0;
	fprintf(stderr,
		"statbisect-server: STATBISECT_METRICS_OPEN takes 1 or 0, "
		"not '%s'\n",
		v);
	return -1;
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

/* What the command line and the environment ask of the server. */
struct options {
	const char *db, *listen, *base_url, *admin_token;
	char *sql_dir, *share_dir;
	const char *limits_given[3]; /* connections, per address, timeout */
	unsigned threads;
	const char *inbox;	     /* the Maildir of patch series, or NULL */
	const char *inbox_timeout;   /* seconds, as given */
	const char *machine_timeout; /* seconds, as given */
	unsigned inbox_timeout_s;
	const char *job_limits_given[2]; /* per hour, open at once */
};

static const struct option long_options[] = {
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
    {"inbox", required_argument, NULL, 'I'},
    {"inbox-timeout", required_argument, NULL, 'W'},
    {"max-jobs-per-hour", required_argument, NULL, 'J'},
    {"max-open-jobs", required_argument, NULL, 'O'},
    {"machine-timeout", required_argument, NULL, 'M'},
    {"share-dir", required_argument, NULL, 'S'},
    {"mail-from", required_argument, NULL, 'F'},
    {"admin-token", required_argument, NULL, 'A'},
    {"metrics-open", no_argument, NULL, 'o'},
    {"webhook-retry-max", required_argument, NULL, 'H'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The defaults, then the environment: what the options may override. */
static void options_defaults(struct options *opts)
{
	*opts = (struct options){0};
	opts->db = env_or("STATBISECT_DB", NULL);
	opts->listen = env_or("STATBISECT_LISTEN", "127.0.0.1:8080");
	opts->base_url = env_or("STATBISECT_BASE_URL", NULL);
	opts->admin_token = env_or("STATBISECT_ADMIN_TOKEN", NULL);
	opts->threads = (unsigned)atoi(env_or("STATBISECT_THREADS", "4"));
	opts->inbox = env_or("STATBISECT_INBOX", NULL);
	opts->inbox_timeout = env_or("STATBISECT_INBOX_TIMEOUT", NULL);
	if (env_or("STATBISECT_SQL_DIR", NULL) != NULL)
		opts->sql_dir = strdup(env_or("STATBISECT_SQL_DIR", NULL));
	if (env_or("STATBISECT_SHARE_DIR", NULL) != NULL)
		opts->share_dir = strdup(env_or("STATBISECT_SHARE_DIR", NULL));
	server_config.data_dir = env_or("STATBISECT_DATA_DIR", "var/data");
	server_config.mail_dir = env_or("STATBISECT_MAIL_DIR", "var/mail");
	server_config.smtp_url = env_or("STATBISECT_SMTP_URL", NULL);
	server_config.mail_from = env_or(
	    "STATBISECT_MAIL_FROM", "statbisect robot <statbisect@localhost>");
	server_config.lease_seconds =
	    (unsigned)atoi(env_or("STATBISECT_LEASE_SECONDS", "60"));
	opts->machine_timeout = env_or("STATBISECT_MACHINE_TIMEOUT", "120");
	server_config.smtp_retry_max =
	    (unsigned)atoi(env_or("STATBISECT_SMTP_RETRY_MAX", "3600"));
	server_config.webhook_retry_max =
	    (unsigned)atoi(env_or("STATBISECT_WEBHOOK_RETRY_MAX", "3600"));
	/* Secrets come from the environment only, never the command line,
	 * where ps shows them. */
	server_config.webhook_secret =
	    env_or("STATBISECT_WEBHOOK_SECRET", NULL);
	server_config.webhook_token = env_or("STATBISECT_WEBHOOK_TOKEN", NULL);
}

/* Takes one option; false for one not known. */
static bool option_take(struct options *opts, int opt, char *arg)
{
	switch (opt) {
	case 'd':
		opts->db = arg;
		break;
	case 'l':
		opts->listen = arg;
		break;
	case 'm':
		server_config.mail_dir = arg;
		break;
	case 's':
		server_config.smtp_url = arg;
		break;
	case 'D':
		server_config.data_dir = arg;
		break;
	case 'q':
		free(opts->sql_dir);
		opts->sql_dir = strdup(arg);
		break;
	case 'b':
		opts->base_url = arg;
		break;
	case 't':
		opts->threads = (unsigned)atoi(arg);
		break;
	case 'L':
		server_config.lease_seconds = (unsigned)atoi(arg);
		break;
	case 'R':
		server_config.smtp_retry_max = (unsigned)atoi(arg);
		break;
	case 'C':
		opts->limits_given[0] = arg;
		break;
	case 'P':
		opts->limits_given[1] = arg;
		break;
	case 'T':
		opts->limits_given[2] = arg;
		break;
	case 'I':
		opts->inbox = arg;
		break;
	case 'W':
		opts->inbox_timeout = arg;
		break;
	case 'J':
		opts->job_limits_given[0] = arg;
		break;
	case 'O':
		opts->job_limits_given[1] = arg;
		break;
	case 'M':
		opts->machine_timeout = arg;
		break;
	case 'S':
		free(opts->share_dir);
		opts->share_dir = strdup(arg);
		break;
	case 'F':
		server_config.mail_from = arg;
		break;
	case 'A':
		opts->admin_token = arg;
		break;
	case 'o':
		server_config.metrics_open = true;
		break;
	case 'H':
		server_config.webhook_retry_max = (unsigned)atoi(arg);
		break;
	default:
		return false;
	}
	return true;
}

/*
 * Reads the command line into `opts` and server_config.  Returns -1 to go
 * on, or the exit status: 0 after --help, 2 on a bad command line (the
 * usage said on stderr).
 */
static int options_parse(struct options *opts, int argc, char **argv)
{
	int opt;

	options_defaults(opts);
	if (metrics_open_from_env(&server_config.metrics_open) < 0)
		return 2;
	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) !=
	       -1) {
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (!option_take(opts, opt, optarg)) {
			usage(stderr);
			return 2;
		}
	}
	if (opts->db == NULL) {
		fprintf(stderr, "statbisect-server: --db or STATBISECT_DB is "
				"required\n");
		usage(stderr);
		return 2;
	}
	/* The job limits: the environment's, then the options'. */
	if (server_job_limits_from_env() < 0 ||
	    (opts->job_limits_given[0] != NULL &&
	     server_job_limit_option("--max-jobs-per-hour",
				     opts->job_limits_given[0]) < 0) ||
	    (opts->job_limits_given[1] != NULL &&
	     server_job_limit_option("--max-open-jobs",
				     opts->job_limits_given[1]) < 0))
		return 2;
	return -1;
}

/*
 * Splits --listen into *host (allocated) and *port, and checks the
 * numbers given; -1 (said on stderr) when one is out of range.
 */
static int options_check(const struct options *opts, char **host,
			 unsigned *port)
{
	char *colon;

	*host = strdup(opts->listen);
	colon = *host != NULL ? strrchr(*host, ':') : NULL;
	if (colon == NULL || atoi(colon + 1) <= 0 || atoi(colon + 1) > 65535 ||
	    opts->threads < 1 || opts->threads > 64 ||
	    server_config.lease_seconds < 2 ||
	    server_config.smtp_retry_max < 1 ||
	    server_config.smtp_retry_max > 86400 ||
	    server_config.webhook_retry_max < 1 ||
	    server_config.webhook_retry_max > 86400) {
		fprintf(stderr, "statbisect-server: --listen takes HOST:PORT, "
				"--threads 1-64, --lease-seconds >= 2, "
				"--smtp-retry-max and --webhook-retry-max "
				"1-86400\n");
		free(*host);
		*host = NULL;
		return -1;
	}
	*colon = '\0';
	*port = (unsigned)atoi(colon + 1);
	return 0;
}

/* A number of seconds given as `text` (NULL: `fallback`) into *out; -1
 * (said on stderr, naming `option`) when it is not 1 to 604800. */
static int seconds_option(unsigned *out, const char *text, unsigned fallback,
			  const char *option)
{
	char *end;
	long value;

	*out = fallback;
	if (text == NULL)
		return 0;
	errno = 0;
	value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < 1 ||
	    value > 604800) {
		fprintf(stderr,
			"statbisect-server: %s takes 1 to 604800 seconds, "
			"not '%s'\n",
			option, text);
		return -1;
	}
	*out = (unsigned)value;
	return 0;
}

/*
 * Fills in what follows from the options: the base URL (*url_out owns a
 * made one), the sender's plain address, the SQL directory, and the data
 * directories on disk.  -1 on a bad sender or no memory.
 */
static int config_complete(struct options *opts, const char *host,
			   unsigned port, char **url_out)
{
	char *repos = NULL;

	if (opts->base_url == NULL) {
		if (asprintf(url_out, "http://%s:%u", host, port) < 0)
			return -1;
		opts->base_url = *url_out;
	}
	server_config.base_url = opts->base_url;
	server_config.mail_from_address =
	    plain_address(server_config.mail_from);
	if (!report_address_is_valid(server_config.mail_from_address)) {
		fprintf(stderr,
			"statbisect-server: STATBISECT_MAIL_FROM '%s' "
			"has no plain address\n",
			server_config.mail_from);
		return -1;
	}
	if (opts->share_dir == NULL)
		opts->share_dir = server_share_dir_default();
	server_config.share_dir = opts->share_dir;
	if (opts->sql_dir == NULL && opts->share_dir != NULL &&
	    asprintf(&opts->sql_dir, "%s/sql", opts->share_dir) < 0)
		opts->sql_dir = NULL;
	if (opts->sql_dir == NULL || opts->share_dir == NULL)
		return -1;
	if (asprintf(&repos, "%s/repos", server_config.data_dir) < 0)
		return -1;
	mkdir(server_config.data_dir, 0755);
	mkdir(repos, 0755);
	free(repos);
	return 0;
}

/* Signals are taken by sigwait in main; every thread inherits the mask,
 * so none of them is interrupted. */
static void signals_block(sigset_t *signals)
{
	sigemptyset(signals);
	sigaddset(signals, SIGINT);
	sigaddset(signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, signals, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The threads of a running server, each NULL until started. */
struct services {
	struct http_server *http;
	struct http_route *routes;
	struct mailer *mailer;
	struct notify *tasks_queued; /* wakes waiting claims */
	struct notify *mail_queued;  /* wakes the mailer */
	struct notify *jobs_changed; /* forgets kept job answers */
};

/* A task was queued: the claims that wait for one try again. */
/* Listening again: a task queued meanwhile may wait for any claim. */
static void wake_claims(void *http)
{
	http_wake(http);
}

/* Claims poll by themselves meanwhile (workers_claim.c). */
static void claims_unheard(void *http)
{
	(void)http;
}

/* A task became claimable: its group's claims, and only theirs. */
static void wake_group(const char *group, void *http)
{
	http_wake_tag(http, group);
}

static const struct notify_handlers claims_listener = {
    .listening = wake_claims, .lost = claims_unheard, .note = wake_group};

/* Prepares the libraries and the database, then starts the HTTP server,
 * the mailer and the watcher; -1 (logged) when one cannot start. */
static int services_start(struct services *out, const struct options *opts,
			  const struct http_limits *limits, const char *host,
			  unsigned port)
{
	if (gitrepo_global_init() < 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("cannot initialise libgit2 or libcurl");
		return -1;
	}
	db_configure(opts->db);
	if (connect_and_migrate(opts->sql_dir) < 0) {
		log_error("cannot prepare the database (%s)", opts->sql_dir);
		return -1;
	}
	out->routes = server_routes();
	if (out->routes == NULL)
		return -1;
	out->http = http_start(host, port, opts->threads, limits, out->routes,
			       opts->admin_token);
	if (out->http == NULL)
		return -1;
	out->tasks_queued = notify_start_notes(STORE_CHANNEL_TASKS,
					       &claims_listener, out->http);
	if (out->tasks_queued == NULL)
		return -1;
	out->jobs_changed =
	    notify_start_notes(STORE_CHANNEL_JOBS, &listcache_listener, NULL);
	if (out->jobs_changed == NULL)
		return -1;
	out->mailer = mailer_start();
	if (out->mailer == NULL) {
		log_error("cannot start the mailer");
		return -1;
	}
	out->mail_queued =
	    notify_start(STORE_CHANNEL_OUTBOX, mailer_wake, out->mailer);
	if (out->mail_queued == NULL)
		return -1;
	if (opts->inbox != NULL &&
	    inbox_start(opts->inbox, opts->inbox_timeout_s) < 0)
		return -1;
	if (resolver_start() < 0)
		return -1;
	return watcher_start();
}

static void services_stop(struct services *services)
{
	notify_stop(services->tasks_queued);
	notify_stop(services->mail_queued);
	http_stop(services->http);
	notify_stop(services->jobs_changed);
	jobcache_clear();
	listcache_clear();
	free(services->routes);
	mailer_stop(services->mailer);
	inbox_stop();
	watcher_stop();
	resolver_stop();
	db_disconnect();
}

/* Says where the server listens and where reports go; the SMTP URL may
 * hold a password, so it is shown redacted. */
static void log_listening(const char *host, unsigned port)
{
	char *shown = NULL;

	if (server_config.smtp_url != NULL &&
	    url_redact(&shown, server_config.smtp_url) < 0)
		shown = NULL;
	log_info("listening on %s:%u (%s), reports %s", host, port,
		 server_config.base_url,
		 shown			  ? shown
		 : server_config.smtp_url ? "over SMTP"
					  : server_config.mail_dir);
	free(shown);
}

int main(int argc, char **argv)
{
	struct options opts;
	struct services services = {0};
	struct http_limits limits;
	char *host = NULL, *url = NULL;
	unsigned port = 0;
	sigset_t signals;
	int sig, status;

	status = options_parse(&opts, argc, argv);
	if (status >= 0)
		goto out_options;
	log_init("statbisect-server", LOG_INFO);
	status = 2;
	if (limits_configure(&limits, opts.limits_given) < 0 ||
	    seconds_option(&opts.inbox_timeout_s, opts.inbox_timeout,
			   INBOX_TIMEOUT_DEFAULT_S,
			   "--inbox-timeout (or STATBISECT_INBOX_TIMEOUT)") <
		0 ||
	    seconds_option(
		&server_config.machine_timeout_s, opts.machine_timeout, 120,
		"--machine-timeout (or STATBISECT_MACHINE_TIMEOUT)") < 0 ||
	    options_check(&opts, &host, &port) < 0)
		goto out_options;
	status = 1;
	if (config_complete(&opts, host, port, &url) < 0)
		goto out;
	signals_block(&signals);
	if (services_start(&services, &opts, &limits, host, port) < 0)
		goto out;
	log_listening(host, port);
	log_info("web files and migrations from %s", server_config.share_dir);
	sigwait(&signals, &sig);
	log_info("signal %d: stopping", sig);
	status = 0;
out:
	services_stop(&services);
	free((char *)server_config.mail_from_address);
	git_libgit2_shutdown();
	curl_global_cleanup();
out_options:
	free(host);
	free(url);
	free(opts.sql_dir);
	free(opts.share_dir);
	return status;
}
