#include "mbox.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "strbuf.h"
#include "utf8.h"

/* One header of a message, unfolded; `value` is raw bytes. */
struct mbox_header {
	char name[32];
	struct strbuf value;
};

#define MBOX_HEADERS_MAX 64

static void set_err(char **err, const char *fmt, const char *arg)
{
	if (err != NULL && asprintf(err, fmt, arg) < 0)
		*err = NULL;
}

/* The end of the line starting at `p` (its '\n' or `end`). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl != NULL ? nl : end;
}

/* Length of the line without its "\r". */
static size_t line_len(const char *p, const char *eol)
{
	size_t n = (size_t)(eol - p);

	return n > 0 && p[n - 1] == '\r' ? n - 1 : n;
}

static const char *next_line(const char *eol, const char *end)
{
	return eol < end ? eol + 1 : end;
}

static bool starts_with(const char *p, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(p, prefix, n) == 0;
}

/* Does the line look like "Name: value"? */
static bool header_like(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < 64; i++) {
		if (p[i] == ':')
			return i > 0;
		if (p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
			return false;
	}
	return false;
}

/* An mbox separator: "From <something> ..." followed by a header. */
static bool separator_at(const char *p, const char *end)
{
	const char *eol = line_end(p, end), *next;

	if (!starts_with(p, (size_t)(eol - p), "From ") || eol >= end)
		return false;
	next = eol + 1;
	return header_like(next, line_len(next, line_end(next, end)));
}

static int base64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Appends the base64 text's bytes; anything else in it is skipped. */
static void base64_decode(struct strbuf *out, const char *p, size_t len)
{
	unsigned long bits = 0;
	int count = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		int v = base64_value((unsigned char)p[i]);
		char byte;

		if (v < 0)
			continue;
		bits = (bits << 6) | (unsigned long)v;
		count += 6;
		if (count >= 8) {
			count -= 8;
			byte = (char)((bits >> count) & 0xff);
			strbuf_appendn(out, &byte, 1);
		}
	}
}

/* Appends quoted-printable text decoded; `header` reads '_' as a space
 * (RFC 2047's Q encoding). */
static void qp_decode(struct strbuf *out, const char *p, size_t len,
		      bool header)
{
	size_t i;

	for (i = 0; i < len; i++) {
		char c = p[i];

		if (c == '=' && i + 2 < len + 0 &&
		    strbuf_hex_value(p[i + 1]) >= 0 &&
		    strbuf_hex_value(p[i + 2]) >= 0) {
			c = (char)(strbuf_hex_value(p[i + 1]) * 16 +
				   strbuf_hex_value(p[i + 2]));
			i += 2;
		} else if (c == '=' && !header &&
			   (i + 1 == len || p[i + 1] == '\n' ||
			    p[i + 1] == '\r')) {
			/* a soft line break */
			while (i + 1 < len && p[i + 1] != '\n')
				i++;
			i++;
			continue;
		} else if (c == '_' && header) {
			c = ' ';
		}
		strbuf_appendn(out, &c, 1);
	}
}

/*
 * Decodes one encoded word "=?charset?Q?text?=" at `p` (len bytes left)
 * into UTF-8 appended to `out`; returns the bytes it spans, or 0 when `p`
 * holds none.
 */
static size_t encoded_word(struct strbuf *out, const char *p, size_t len)
{
	const char *charset, *encoding, *text, *stop;
	char charset_name[40];
	struct strbuf raw = STRBUF_INIT;
	char *bytes = NULL, *utf8 = NULL;
	size_t raw_len = 0, span;

	if (len < 8 || p[0] != '=' || p[1] != '?')
		return 0;
	charset = p + 2;
	encoding = memchr(charset, '?', len - 2);
	if (encoding == NULL || encoding + 3 >= p + len ||
	    encoding[2] != '?' || encoding - charset >= 40)
		return 0;
	text = encoding + 3;
	stop = text;
	while (stop + 1 < p + len && !(stop[0] == '?' && stop[1] == '='))
		stop++;
	if (stop + 1 >= p + len)
		return 0;
	memcpy(charset_name, charset, (size_t)(encoding - charset));
	charset_name[encoding - charset] = '\0';
	/* RFC 2231 language suffix: "UTF-8*en" */
	charset_name[strcspn(charset_name, "*")] = '\0';
	if (encoding[1] == 'B' || encoding[1] == 'b')
		base64_decode(&raw, text, (size_t)(stop - text));
	else if (encoding[1] == 'Q' || encoding[1] == 'q')
		qp_decode(&raw, text, (size_t)(stop - text), true);
	else
		return 0;
	span = (size_t)(stop + 2 - p);
	if (strbuf_finish(&bytes, &raw_len, &raw) == 0 &&
	    utf8_from_encoding(&utf8, bytes, raw_len, charset_name) == 0)
		strbuf_append(out, utf8);
	else
		out->failed = true;
	free(bytes);
	free(utf8);
	return span;
}

/* A header value made text: encoded words decoded, the rest sanitised,
 * outer white space trimmed.  NULL when memory runs out. */
static char *header_text(const char *value, size_t len)
{
	struct strbuf out = STRBUF_INIT;
	char *joined = NULL, *text = NULL;
	size_t i = 0, joined_len, span, start, end;
	bool after_word = false;

	while (i < len) {
		struct strbuf word = STRBUF_INIT;
		size_t ws = i;

		while (ws < len && (value[ws] == ' ' || value[ws] == '\t'))
			ws++;
		span =
		    ws < len ? encoded_word(&word, value + ws, len - ws) : 0;
		if (span > 0) {
			/* white space between two encoded words is dropped */
			if (!after_word && ws > i)
				strbuf_appendn(&out, value + i, ws - i);
			strbuf_appendn(&out,
				       word.data != NULL ? word.data : "",
				       word.len);
			out.failed |= word.failed;
			strbuf_clear(&word);
			i = ws + span;
			after_word = true;
			continue;
		}
		if (ws > i) {
			strbuf_appendn(&out, value + i, ws - i);
			i = ws;
			after_word = false;
			continue;
		}
		strbuf_appendn(&out, value + i, 1);
		i++;
		after_word = false;
	}
	if (strbuf_finish(&joined, &joined_len, &out) < 0)
		return NULL;
	for (start = 0;
	     start < joined_len && isspace((unsigned char)joined[start]);
	     start++)
		;
	for (end = joined_len;
	     end > start && isspace((unsigned char)joined[end - 1]); end--)
		;
	if (utf8_sanitize(&text, joined + start, end - start) < 0)
		text = NULL;
	free(joined);
	return text;
}

/* The header `name` among `headers`, or NULL. */
static const struct strbuf *find_header(const struct mbox_header *headers,
					size_t count, const char *name)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (strcasecmp(headers[i].name, name) == 0)
			return &headers[i].value;
	return NULL;
}

static char *header_value(const struct mbox_header *headers, size_t count,
			  const char *name)
{
	const struct strbuf *value = find_header(headers, count, name);

	if (value == NULL)
		return NULL;
	return header_text(value->data != NULL ? value->data : "", value->len);
}

/* The first "<...>" of a header (or the whole value), brackets removed. */
static char *message_id_of(const char *value)
{
	const char *open, *close;
	char *id;

	if (value == NULL)
		return NULL;
	open = strchr(value, '<');
	close = open != NULL ? strchr(open, '>') : NULL;
	if (open != NULL && close != NULL && close > open + 1)
		return strndup(open + 1, (size_t)(close - open - 1));
	if (value[0] == '\0' || strpbrk(value, " \t<>") != NULL)
		return NULL;
	id = strdup(value);
	return id;
}

/*
 * Splits one address "Name <user@host>", "user@host (Name)" or
 * "\"Last, First\" <user@host>" into its name (may be empty) and address
 * (NULL when it holds no '@').
 */
static void address_split(const char *text, size_t len, char **name,
			  char **email)
{
	const char *open = memchr(text, '<', len), *close;
	size_t start = 0, end;

	*name = NULL;
	*email = NULL;
	close = open != NULL ? memchr(open, '>', len - (size_t)(open - text))
			     : NULL;
	if (open != NULL && close != NULL) {
		if (memchr(open, '@', (size_t)(close - open)) != NULL)
			*email = strndup(open + 1, (size_t)(close - open - 1));
		end = (size_t)(open - text);
	} else {
		const char *paren = memchr(text, '(', len);
		size_t at_end = paren != NULL ? (size_t)(paren - text) : len;

		while (start < at_end && isspace((unsigned char)text[start]))
			start++;
		end = at_end;
		while (end > start && isspace((unsigned char)text[end - 1]))
			end--;
		if (memchr(text + start, '@', end - start) != NULL &&
		    memchr(text + start, ' ', end - start) == NULL)
			*email = strndup(text + start, end - start);
		if (paren != NULL) {
			start = (size_t)(paren - text) + 1;
			end = len;
			while (end > start && text[end - 1] != ')')
				end--;
			if (end > start)
				end--;
		} else {
			end = start;
		}
	}
	while (start < end && isspace((unsigned char)text[start]))
		start++;
	while (end > start && isspace((unsigned char)text[end - 1]))
		end--;
	if (end - start >= 2 && text[start] == '"' && text[end - 1] == '"') {
		start++;
		end--;
	}
	*name = strndup(text + start, end - start);
}

/* Appends the addresses of a list "a, B <b@x>, \"C, D\" <c@x>". */
static int address_list(char ***list, size_t *count, const char *value)
{
	size_t i, start = 0, len;
	bool quoted = false;
	int depth = 0;

	if (value == NULL)
		return 0;
	len = strlen(value);
	for (i = 0; i <= len; i++) {
		char c = i < len ? value[i] : ',';
		char *name, *email, **grown;

		if (c == '"')
			quoted = !quoted;
		else if (!quoted && (c == '<' || c == '('))
			depth++;
		else if (!quoted && (c == '>' || c == ')') && depth > 0)
			depth--;
		if (c != ',' || (i < len && (quoted || depth > 0)))
			continue;
		address_split(value + start, i - start, &name, &email);
		free(name);
		start = i + 1;
		if (email == NULL)
			continue;
		grown = realloc(*list, (*count + 1) * sizeof(**list));
		if (grown == NULL) {
			free(email);
			return -1;
		}
		*list = grown;
		(*list)[(*count)++] = email;
	}
	return 0;
}

/* RFC 5322 date "Thu, 3 Dec 2026 10:00:00 +0100" (the day name and the
 * seconds optional); false when it is not one. */
static bool parse_date(const char *text, int64_t *when, int *offset)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	char month[4] = "", sign = '+';
	int day, year, hour, minute, second = 0, zone = 0, n = 0;
	struct tm tm = {0};
	const char *comma, *found;

	if (text == NULL)
		return false;
	comma = strchr(text, ',');
	if (comma != NULL)
		text = comma + 1;
	if (sscanf(text, " %d %3s %d %d:%d%n", &day, month, &year, &hour,
		   &minute, &n) != 5)
		return false;
	text += n;
	if (*text == ':' && sscanf(text, ":%d%n", &second, &n) == 1)
		text += n;
	if (sscanf(text, " %c%4d", &sign, &zone) != 2 ||
	    (sign != '+' && sign != '-'))
		zone = 0;
	found = strstr(months, month);
	if (strlen(month) != 3 || found == NULL || (found - months) % 3 != 0 ||
	    day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 ||
	    year < 1970 || year > 9999)
		return false;
	tm.tm_year = year - 1900;
	tm.tm_mon = (int)((found - months) / 3);
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = minute;
	tm.tm_sec = second;
	*offset = (zone / 100 * 60 + zone % 100) * (sign == '-' ? -1 : 1);
	*when = (int64_t)timegm(&tm) - (int64_t)*offset * 60;
	return true;
}

/* Reads "[PATCH v2 net 3/4] " prefixes off the subject into `message`. */
static void parse_subject(struct mbox_message *message)
{
	const char *s = message->subject, *close;

	while (*s == '[' && (close = strchr(s, ']')) != NULL) {
		char prefix[256];
		size_t len = (size_t)(close - s - 1);
		char *token, *save = NULL;

		if (len >= sizeof(prefix))
			len = sizeof(prefix) - 1;
		memcpy(prefix, s + 1, len);
		prefix[len] = '\0';
		for (token = strtok_r(prefix, " \t", &save); token != NULL;
		     token = strtok_r(NULL, " \t", &save)) {
			int number, total, n = 0;

			if (strncasecmp(token, "PATCH", 5) == 0 ||
			    strncasecmp(token, "RFC", 3) == 0) {
				if (!message->is_patch)
					message->number = message->total = 1;
				message->is_patch = true;
			} else if (sscanf(token, "%d/%d%n", &number, &total,
					  &n) == 2 &&
				   token[n] == '\0' && message->is_patch) {
				message->number = number;
				message->total = total;
			}
		}
		s = close + 1;
		while (*s == ' ' || *s == '\t')
			s++;
	}
	message->title = strdup(s);
}

static void headers_free(struct mbox_header *headers, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		strbuf_clear(&headers[i].value);
}

/* Reads the header block at *p, leaving *p after its blank line.
 * Headers beyond MBOX_HEADERS_MAX are skipped. */
static size_t read_headers(struct mbox_header *headers, const char **p,
			   const char *end)
{
	size_t count = 0;
	bool skipping = false;

	while (*p < end) {
		const char *eol = line_end(*p, end), *colon;
		size_t len = line_len(*p, eol), name_len;

		if (len == 0) {
			*p = next_line(eol, end);
			break;
		}
		if ((**p == ' ' || **p == '\t') && count > 0) {
			if (!skipping)
				strbuf_appendn(&headers[count - 1].value, *p,
					       len);
		} else if (header_like(*p, len)) {
			colon = memchr(*p, ':', len);
			name_len = (size_t)(colon - *p);
			skipping = count == MBOX_HEADERS_MAX ||
				   name_len >= sizeof(headers[0].name);
			if (!skipping) {
				struct mbox_header *h = &headers[count++];

				memcpy(h->name, *p, name_len);
				h->name[name_len] = '\0';
				h->value = (struct strbuf)STRBUF_INIT;
				strbuf_appendn(&h->value, colon + 1,
					       len - name_len - 1);
			}
		} else {
			/* not a header: the body starts without a blank line
			 */
			break;
		}
		*p = next_line(eol, end);
	}
	return count;
}

/* The charset parameter of a Content-Type value, or "" (UTF-8). */
static void content_charset(char *out, size_t size, const char *type)
{
	const char *found = type != NULL ? strcasestr(type, "charset=") : NULL;
	size_t n;

	out[0] = '\0';
	if (found == NULL)
		return;
	found += 8;
	if (*found == '"')
		found++;
	n = strcspn(found, "\"; \t");
	if (n >= size)
		return;
	memcpy(out, found, n);
	out[n] = '\0';
}

/* Text of the body lines [start, stop) in the body's charset, trailing
 * blank lines removed. */
static char *body_text(const char *start, const char *stop,
		       const char *charset)
{
	char *text = NULL;

	while (stop > start && (stop[-1] == '\n' || stop[-1] == '\r' ||
				stop[-1] == ' ' || stop[-1] == '\t'))
		stop--;
	while (start < stop && (*start == '\n' || *start == '\r'))
		start++;
	if (utf8_from_encoding(&text, start, (size_t)(stop - start),
			       charset[0] != '\0' ? charset : NULL) < 0)
		return NULL;
	return text;
}

/* Applies a "From: " line at the top of the body (git send-email's, for
 * a patch whose author is not its sender). */
static int body_from(struct mbox_message *message, const char *p, size_t len)
{
	char *value = header_text(p + 5, len - 5), *name, *email;

	if (value == NULL)
		return -1;
	address_split(value, strlen(value), &name, &email);
	free(value);
	if (email == NULL) {
		free(name);
		return 0;
	}
	free(message->author_name);
	free(message->author_email);
	message->author_name = name;
	message->author_email = email;
	return 0;
}

/*
 * Splits the decoded body into the commit message, the diff and the
 * base-commit line, as git am does.
 */
static int parse_body(struct mbox_message *message, const char *body,
		      size_t len, const char *charset)
{
	const char *end = body + len, *p = body, *message_end = NULL;
	const char *diff = NULL, *diff_end = NULL;
	bool top = true;

	while (p < end) {
		const char *eol = line_end(p, end);
		size_t n = line_len(p, eol);

		if (top && starts_with(p, n, "From: ")) {
			if (body_from(message, p, n) < 0)
				return -1;
			body = next_line(eol, end);
		} else if (top && (starts_with(p, n, "Date: ") ||
				   starts_with(p, n, "Subject: "))) {
			body = next_line(eol, end);
		} else if (n > 0) {
			top = false;
		}
		if (diff == NULL && starts_with(p, n, "diff --git ")) {
			diff = p;
			diff_end = end;
		} else if (diff != NULL && n == 3 &&
			   memcmp(p, "-- ", 3) == 0) {
			diff_end = p;
		} else if (diff != NULL && diff_end != end &&
			   (starts_with(p, n, "diff --git ") ||
			    starts_with(p, n, "@@ "))) {
			diff_end = end; /* that "-- " was a removed line */
		}
		if (message_end == NULL &&
		    ((n == 3 && memcmp(p, "---", 3) == 0) ||
		     starts_with(p, n, "diff --git ") ||
		     starts_with(p, n, "Index: ")))
			message_end = p;
		if (starts_with(p, n, "base-commit: ") && n >= 13 + 40 &&
		    message->base_commit == NULL) {
			message->base_commit = strndup(p + 13, 40);
			if (diff != NULL && diff_end == end)
				diff_end = p;
		}
		p = next_line(eol, end);
	}
	message->body =
	    body_text(body, message_end != NULL ? message_end : end, charset);
	if (message->body == NULL)
		return -1;
	if (diff != NULL) {
		message->diff_len = (size_t)(diff_end - diff);
		message->diff = malloc(message->diff_len + 1);
		if (message->diff == NULL)
			return -1;
		memcpy(message->diff, diff, message->diff_len);
		message->diff[message->diff_len] = '\0';
	}
	return 0;
}

/* Decodes the body as its Content-Transfer-Encoding says. */
static void decode_body(struct strbuf *out, const char *body, size_t len,
			const char *encoding)
{
	if (encoding != NULL && strcasecmp(encoding, "quoted-printable") == 0)
		qp_decode(out, body, len, false);
	else if (encoding != NULL && strcasecmp(encoding, "base64") == 0)
		base64_decode(out, body, len);
	else
		strbuf_appendn(out, body, len);
}

static int parse_addresses(struct mbox_message *message,
			   const struct mbox_header *headers, size_t count)
{
	char *from = header_value(headers, count, "From");
	char *to = header_value(headers, count, "To");
	char *cc = header_value(headers, count, "Cc");
	int error = -1;

	if (from != NULL)
		address_split(from, strlen(from), &message->author_name,
			      &message->author_email);
	if (message->author_name == NULL &&
	    (message->author_name = strdup("")) == NULL)
		goto out;
	if (message->author_name[0] == '\0' && message->author_email != NULL) {
		free(message->author_name);
		message->author_name =
		    strndup(message->author_email,
			    strcspn(message->author_email, "@"));
	}
	if (address_list(&message->to, &message->to_count, to) < 0 ||
	    address_list(&message->cc, &message->cc_count, cc) < 0)
		goto out;
	error = 0;
out:
	free(from);
	free(to);
	free(cc);
	return error;
}

/* Parses the message in [p, end) into `message`. */
static int parse_message(struct mbox_message *message, const char *p,
			 const char *end)
{
	struct mbox_header headers[MBOX_HEADERS_MAX];
	struct strbuf body = STRBUF_INIT;
	char charset[40], *value, *decoded = NULL, *encoding;
	size_t count, decoded_len = 0;
	int error = -1;

	count = read_headers(headers, &p, end);
	value = header_value(headers, count, "Message-ID");
	message->message_id = message_id_of(value);
	free(value);
	value = header_value(headers, count, "In-Reply-To");
	message->in_reply_to = message_id_of(value);
	free(value);
	message->references = header_value(headers, count, "References");
	message->subject = header_value(headers, count, "Subject");
	if (message->subject == NULL &&
	    (message->subject = strdup("")) == NULL)
		goto out;
	parse_subject(message);
	value = header_value(headers, count, "Date");
	if (!parse_date(value, &message->date, &message->date_offset))
		message->date = message->date_offset = 0;
	free(value);
	if (message->title == NULL ||
	    parse_addresses(message, headers, count) < 0)
		goto out;
	value = header_value(headers, count, "Content-Type");
	content_charset(charset, sizeof(charset), value);
	free(value);
	encoding = header_value(headers, count, "Content-Transfer-Encoding");
	decode_body(&body, p, (size_t)(end - p), encoding);
	free(encoding);
	if (strbuf_finish(&decoded, &decoded_len, &body) < 0 ||
	    parse_body(message, decoded, decoded_len, charset) < 0)
		goto out;
	error = 0;
out:
	free(decoded);
	headers_free(headers, count);
	return error;
}

static void message_free(struct mbox_message *message)
{
	size_t i;

	free(message->message_id);
	free(message->in_reply_to);
	free(message->references);
	free(message->subject);
	free(message->title);
	free(message->author_name);
	free(message->author_email);
	for (i = 0; i < message->to_count; i++)
		free(message->to[i]);
	free(message->to);
	for (i = 0; i < message->cc_count; i++)
		free(message->cc[i]);
	free(message->cc);
	free(message->body);
	free(message->diff);
	free(message->base_commit);
}

void mbox_series_free(struct mbox_series *series)
{
	size_t i;

	if (series == NULL)
		return;
	for (i = 0; i < series->count; i++)
		message_free(&series->messages[i]);
	free(series->messages);
	series->messages = NULL;
	series->count = 0;
}

/* The starts of the messages of the mbox, in *starts[0 .. count). */
static int split_messages(const char ***starts, size_t *count,
			  const char *text, const char *end, char **err)
{
	const char *p = text;
	const char **list = NULL;
	size_t n = 0;
	bool previous_blank = true;

	while (p < end) {
		const char *eol = line_end(p, end);

		if (p == text || (previous_blank && separator_at(p, end))) {
			const char **grown;

			if (n == MBOX_MESSAGES_MAX) {
				free(list);
				set_err(err,
					"the mbox holds more than %s "
					"messages",
					"500");
				return -1;
			}
			grown = realloc(list, (n + 1) * sizeof(*list));
			if (grown == NULL) {
				free(list);
				set_err(err, "%s", "out of memory");
				return -1;
			}
			list = grown;
			list[n++] = p;
		}
		previous_blank = line_len(p, eol) == 0;
		p = next_line(eol, end);
	}
	*starts = list;
	*count = n;
	return 0;
}

int mbox_parse(struct mbox_series *out, const char *text, size_t len,
	       char **err)
{
	const char *end = text + len, **starts = NULL;
	size_t count = 0, i;

	out->messages = NULL;
	out->count = 0;
	if (err != NULL)
		*err = NULL;
	if (split_messages(&starts, &count, text, end, err) < 0)
		return -1;
	if (count == 0) {
		set_err(err, "%s", "the mbox is empty");
		goto fail;
	}
	out->messages = calloc(count, sizeof(*out->messages));
	if (out->messages == NULL) {
		set_err(err, "%s", "out of memory");
		goto fail;
	}
	for (i = 0; i < count; i++) {
		const char *p = starts[i];
		const char *stop = i + 1 < count ? starts[i + 1] : end;

		if (separator_at(p, end))
			p = next_line(line_end(p, end), end);
		out->count++;
		if (!header_like(p, line_len(p, line_end(p, stop)))) {
			set_err(
			    err, "%s",
			    "the text is not an mbox: a message must start "
			    "with mail headers (git format-patch writes "
			    "them)");
			goto fail;
		}
		if (parse_message(&out->messages[i], p, stop) < 0) {
			set_err(err, "%s", "out of memory");
			goto fail;
		}
	}
	free(starts);
	return 0;
fail:
	free(starts);
	mbox_series_free(out);
	return -1;
}

/* "[PATCH 3/4] foo" for messages: the subject, cut to a sane length. */
static int series_error(char **err, const char *what,
			const struct mbox_message *message)
{
	if (err != NULL &&
	    asprintf(err, "%s: '%.200s'", what, message->subject) < 0)
		*err = NULL;
	return -1;
}

int mbox_series_patches(const struct mbox_message ***out, size_t *count,
			const struct mbox_message **cover,
			const struct mbox_series *series, char **err)
{
	const struct mbox_message **list = NULL;
	size_t i, total = 0, patches = 0;
	bool numbered = false;

	*out = NULL;
	*count = 0;
	if (cover != NULL)
		*cover = NULL;
	for (i = 0; i < series->count; i++) {
		const struct mbox_message *m = &series->messages[i];

		if (m->is_patch && m->number == 0 && m->total > 0) {
			if (cover != NULL)
				*cover = m;
			continue;
		}
		if (!m->is_patch && m->diff == NULL)
			continue; /* a reply or note in the thread */
		if (m->total > 1)
			numbered = true;
		if (total == 0)
			total = (size_t)(m->total > 0 ? m->total : 1);
		if ((size_t)(m->total > 0 ? m->total : 1) != total)
			return series_error(err,
					    "the patches disagree on how many "
					    "the series holds",
					    m);
		if (m->number < 1 || (size_t)m->number > total)
			return series_error(
			    err, "a patch is numbered outside its series", m);
		if (m->diff == NULL)
			return series_error(err, "a patch holds no diff", m);
		patches++;
	}
	if (patches == 0) {
		set_err(err, "%s", "the mbox holds no patch");
		return -1;
	}
	if (!numbered && patches > 1)
		total = patches;
	list = calloc(total, sizeof(*list));
	if (list == NULL) {
		set_err(err, "%s", "out of memory");
		return -1;
	}
	for (i = 0, patches = 0; i < series->count; i++) {
		const struct mbox_message *m = &series->messages[i];
		size_t slot;

		if ((m->is_patch && m->number == 0 && m->total > 0) ||
		    (!m->is_patch && m->diff == NULL))
			continue;
		slot = numbered ? (size_t)m->number - 1 : patches;
		if (list[slot] != NULL) {
			free(list);
			return series_error(err, "a patch number is repeated",
					    m);
		}
		list[slot] = m;
		patches++;
	}
	for (i = 0; i < total; i++) {
		if (list[i] == NULL) {
			char what[128];

			snprintf(what, sizeof(what),
				 "patch %zu/%zu is missing from the series",
				 i + 1, total);
			free(list);
			set_err(err, "%s", what);
			return -1;
		}
	}
	*out = list;
	*count = total;
	return 0;
}

char *mbox_commit_message(const struct mbox_message *message)
{
	char *text = NULL;

	if (message->body != NULL && message->body[0] != '\0') {
		if (asprintf(&text, "%s\n\n%s\n", message->title,
			     message->body) < 0)
			return NULL;
	} else if (asprintf(&text, "%s\n", message->title) < 0) {
		return NULL;
	}
	return text;
}
