/* The server's configuration, set once by main() before any thread starts
 * and read-only afterwards; in a file of its own so that unit tests can
 * link the server's modules without its main(). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server.h"

struct server_config server_config;

/* `text` (a limit from `source`) into *out; -1 when it is no number from 0
 * to 1000000. */
static int job_limit(long long *out, const char *text, const char *source)
{
	char *end;
	long long value;

	errno = 0;
	value = strtoll(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < 0 ||
	    value > 1000000) {
		fprintf(stderr,
			"statbisect-server: %s takes a number from 0 (no "
			"limit) to 1000000, not '%s'\n",
			source, text);
		return -1;
	}
	*out = value;
	return 0;
}

int server_job_limits_from_env(void)
{
	const char *per_hour = getenv("STATBISECT_MAX_JOBS_PER_HOUR");
	const char *open = getenv("STATBISECT_MAX_OPEN_JOBS");

	server_config.max_jobs_per_hour = SERVER_MAX_JOBS_PER_HOUR_DEFAULT;
	server_config.max_open_jobs = SERVER_MAX_OPEN_JOBS_DEFAULT;
	if (per_hour != NULL && per_hour[0] != '\0' &&
	    job_limit(&server_config.max_jobs_per_hour, per_hour,
		      "STATBISECT_MAX_JOBS_PER_HOUR") < 0)
		return -1;
	if (open != NULL && open[0] != '\0' &&
	    job_limit(&server_config.max_open_jobs, open,
		      "STATBISECT_MAX_OPEN_JOBS") < 0)
		return -1;
	return 0;
}

int server_job_limit_option(const char *option, const char *text)
{
	return job_limit(strcmp(option, "--max-open-jobs") == 0
			     ? &server_config.max_open_jobs
			     : &server_config.max_jobs_per_hour,
			 text, option);
}

/* Whether `dir` holds web/templates and sql, the files the server reads. */
static bool share_dir_complete(const char *dir)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/web/templates", dir);
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "%s/sql", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *server_share_dir_default(void)
{
	static const char *const beside[] = {"/../share/statbisect", "/.."};
	char exe[PATH_MAX], *slash, *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL)
			*slash = '\0';
		for (i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
			if (asprintf(&dir, "%s%s", exe, beside[i]) < 0)
				return NULL;
			if (share_dir_complete(dir))
				return dir;
			free(dir);
		}
	}
	return strdup(".");
}

char *server_share_path(const char *relative)
{
	char *share = NULL, *path = NULL;
	const char *dir = server_config.share_dir;

	if (dir == NULL && (share = server_share_dir_default()) == NULL)
		return NULL;
	if (asprintf(&path, "%s/%s", dir != NULL ? dir : share, relative) < 0)
		path = NULL;
	free(share);
	return path;
}
