#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_program = "statbisect";
static enum log_level log_threshold = LOG_INFO;

void log_init(const char *program, enum log_level level)
{
	log_program = program;
	log_threshold = level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	char line[4096];
	struct timespec now;
	struct tm tm;
	size_t len;
	va_list ap;

	if (level < log_threshold)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	len += (size_t)snprintf(line + len, sizeof(line) - len,
				".%03ldZ %s %s: ", now.tv_nsec / 1000000,
				names[level], log_program);
	va_start(ap, fmt);
	vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	va_end(ap);
	len = strlen(line);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/* One write keeps lines of concurrent threads whole. */
	if (write(STDERR_FILENO, line, len) < 0)
		return;
}
