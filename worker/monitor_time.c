/* The time monitor: GNU time's -v report as time.* metrics. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "monitor_private.h"

/* "Maximum resident set size (kbytes)" -> "maximum_resident_set_size". */
static void time_label(char *out, size_t size, const char *label, size_t len)
{
	size_t n = 0, depth = 0;
	bool gap = false;

	for (size_t i = 0; i < len && n + 2 < size; i++) {
		unsigned char c = (unsigned char)label[i];

		if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (depth > 0)
				depth--;
		} else if (depth == 0 && isalnum(c) && c < 0x80) {
			if (gap && n > 0)
				out[n++] = '_';
			gap = false;
			out[n++] = (char)tolower(c);
		} else if (depth == 0) {
			gap = true;
		}
	}
	out[n] = '\0';
}

/* "h:mm:ss" or "m:ss.ss" as seconds. */
static bool parse_clock(const char *s, size_t len, double *out)
{
	double total = 0, part;
	size_t start = 0, fields = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ':')
			continue;
		if (!monitor_parse_number(s + start, i - start, &part) ||
		    part < 0)
			return false;
		total = total * 60 + part;
		fields++;
		start = i + 1;
	}
	if (fields < 2 || fields > 3)
		return false;
	*out = total;
	return true;
}

static int time_line(struct metrics *into, const char *line, size_t len)
{
	char label[128], name[160];
	const char *sep = NULL, *value, *end = line + len;
	size_t depth = 0;
	bool percent = false;
	double number;

	while (line < end && (*line == ' ' || *line == '\t'))
		line++;
	for (const char *p = line; p + 1 < end; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth > 0)
			depth--;
		else if (depth == 0 && p[0] == ':' && p[1] == ' ') {
			sep = p;
			break;
		}
	}
	if (sep == NULL)
		return 0;
	time_label(label, sizeof(label), line, (size_t)(sep - line));
	if (label[0] == '\0' || strcmp(label, "command_being_timed") == 0 ||
	    strcmp(label, "exit_status") == 0)
		return 0;
	for (value = sep + 2; value < end && (*value == ' ' || *value == '\t');
	     value++)
		;
	while (end > value &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end > value && end[-1] == '%') {
		percent = true;
		end--;
	}
	if (memchr(value, ':', (size_t)(end - value)) != NULL) {
		if (!parse_clock(value, (size_t)(end - value), &number))
			return 0;
	} else if (!monitor_parse_number(value, (size_t)(end - value),
					 &number)) {
		return 0;
	}
	snprintf(name, sizeof(name), "time.%s%s", label, percent ? "%" : "");
	return monitor_add_new(into, name, number);
}

int monitor_parse_time(struct metrics *into, const char *text, size_t len)
{
	size_t pos = 0, line_len;
	const char *line, *newline;
	int error;

	if (into == NULL || (text == NULL && len > 0))
		return -EINVAL;
	while (pos < len) {
		line = text + pos;
		newline = memchr(line, '\n', len - pos);
		line_len = newline ? (size_t)(newline - line) : len - pos;
		pos += line_len + (newline ? 1 : 0);
		if ((error = time_line(into, line, line_len)) < 0)
			return error;
	}
	return 0;
}
