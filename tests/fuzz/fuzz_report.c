/* What a report is made of that comes from outside: commit subjects and
 * authors, command text, notify addresses, message ids and header values
 * (lib/report.c, lib/report_build.c).  The input is split at NUL bytes
 * into the fields of one message. */
#include "fuzz.h"

#include "../../lib/report.h"
#include "../../lib/report_build.h"

/*
 * Aborts unless every line of the header section is one of the headers
 * report_message_render() writes or a folded continuation, every line
 * ending is CRLF, and lines fit in 998 octets: no field value can inject
 * a header or end the headers early.
 */
static void check_headers(const char *message)
{
	static const char *const names[] = {"Date: ",
					    "From: ",
					    "To: ",
					    "Cc: ",
					    "Subject: ",
					    "Message-ID: ",
					    "In-Reply-To: ",
					    "References: ",
					    "MIME-Version: ",
					    "Content-Type: ",
					    "Content-Transfer-Encoding: "};
	const char *line = message, *end;
	size_t i;

	while ((end = strstr(line, "\r\n")) != NULL && end != line) {
		if (memchr(line, '\n', (size_t)(end - line)) != NULL ||
		    memchr(line, '\r', (size_t)(end - line)) != NULL ||
		    end - line > 998)
			abort();
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strncmp(line, names[i], strlen(names[i])) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]) && line[0] != ' ' &&
		    line[0] != '\t')
			abort();
		line = end + 2;
	}
	if (end == NULL)
		abort(); /* the headers never ended */
}

static void check_render(const char *const *f)
{
	const char *to[2] = {f[3], "robot@example.org"};
	struct report_message msg = {.from = f[2],
				     .to = to,
				     .to_count = 2,
				     .date = "Thu, 3 Dec 2026 08:00:00 +0000",
				     .message_id = f[4],
				     .in_reply_to = f[5][0] ? f[5] : NULL,
				     .subject = f[0],
				     .body = f[1]};
	char *out = NULL;

	if (report_message_render(&out, &msg) == 0) {
		check_headers(out);
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), *out, buf[64];
	const char *f[6];
	double value;

	fuzz_fields(text, size, f, 6);
	check_render(f);
	free(report_clean_line(f[0], 200));
	free(report_clean_command(f[1]));
	out = NULL;
	if (report_subsystem(&out, f[0]) == 0)
		free(out);
	report_address_is_valid(f[3]);
	report_metric_is_absolute(f[0]);
	if (size >= sizeof(value)) {
		memcpy(&value, data, sizeof(value));
		report_format_value(buf, sizeof(buf), value);
	}
	free(text);
	return 0;
}
