#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for `extra` more bytes and the NUL. */
static bool grow(struct strbuf *buf, size_t extra)
{
	size_t want, cap;
	char *data;

	if (buf->failed)
		return false;
	if (extra > ((size_t)-1) / 2 - buf->len) {
		buf->failed = true;
		return false;
	}
	want = buf->len + extra + 1;
	if (want <= buf->cap)
		return true;
	cap = buf->cap != 0 ? buf->cap : 256;
	while (cap < want)
		cap *= 2;
	data = realloc(buf->data, cap);
	if (data == NULL) {
		buf->failed = true;
		return false;
	}
	buf->data = data;
	buf->cap = cap;
	return true;
}

void strbuf_appendn(struct strbuf *buf, const char *text, size_t len)
{
	if (!grow(buf, len))
		return;
	memcpy(buf->data + buf->len, text, len);
	buf->len += len;
	buf->data[buf->len] = '\0';
}

void strbuf_append(struct strbuf *buf, const char *text)
{
	strbuf_appendn(buf, text, strlen(text));
}

void strbuf_printf(struct strbuf *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf->failed = true;
		return;
	}
	if (!grow(buf, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf->len += (size_t)n;
}

void strbuf_html(struct strbuf *buf, const char *text, size_t len)
{
	size_t i, start = 0;

	for (i = 0; i < len; i++) {
		const char *ref;

		switch (text[i]) {
		case '&':
			ref = "&amp;";
			break;
		case '<':
			ref = "&lt;";
			break;
		case '>':
			ref = "&gt;";
			break;
		case '"':
			ref = "&quot;";
			break;
		case '\'':
			ref = "&#39;";
			break;
		default:
			continue;
		}
		strbuf_appendn(buf, text + start, i - start);
		strbuf_append(buf, ref);
		start = i + 1;
	}
	strbuf_appendn(buf, text + start, len - start);
}

void strbuf_url(struct strbuf *buf, const char *text, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		char esc[3];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			strbuf_appendn(buf, (const char *)&text[i], 1);
			continue;
		}
		esc[0] = '%';
		esc[1] = hex[c >> 4];
		esc[2] = hex[c & 15];
		strbuf_appendn(buf, esc, 3);
	}
}

int strbuf_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void strbuf_hex(struct strbuf *buf, const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bytes = data;
	char pair[2];
	size_t i;

	for (i = 0; i < len; i++) {
		pair[0] = digits[bytes[i] >> 4];
		pair[1] = digits[bytes[i] & 15];
		strbuf_appendn(buf, pair, 2);
	}
}

void strbuf_base64(struct strbuf *buf, const void *data, size_t len)
{
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *bytes = data;
	char quad[4];
	size_t i;

	for (i = 0; i < len; i += 3) {
		unsigned long v = (unsigned long)bytes[i] << 16;

		if (i + 1 < len)
			v |= (unsigned long)bytes[i + 1] << 8;
		if (i + 2 < len)
			v |= bytes[i + 2];
		quad[0] = digits[(v >> 18) & 63];
		quad[1] = digits[(v >> 12) & 63];
		quad[2] = i + 1 < len ? digits[(v >> 6) & 63] : '=';
		quad[3] = i + 2 < len ? digits[v & 63] : '=';
		strbuf_appendn(buf, quad, 4);
	}
}

void strbuf_shell_quote(struct strbuf *buf, const char *text)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				   "@%+=:,./_-~";
	size_t len = strlen(text), i, start = 0;

	if (len > 0 && strspn(text, safe) == len) {
		strbuf_appendn(buf, text, len);
		return;
	}
	strbuf_append(buf, "'");
	for (i = 0; i < len; i++) {
		if (text[i] != '\'')
			continue;
		strbuf_appendn(buf, text + start, i - start);
		strbuf_append(buf, "'\\''");
		start = i + 1;
	}
	strbuf_appendn(buf, text + start, len - start);
	strbuf_append(buf, "'");
}

int strbuf_crlf(struct strbuf *buf, const char *text, size_t len,
		size_t line_max)
{
	size_t start = 0, end;

	while (start < len) {
		for (end = start; end < len; end++)
			if (text[end] == '\r' || text[end] == '\n')
				break;
		if (end - start > line_max)
			return -1;
		strbuf_appendn(buf, text + start, end - start);
		strbuf_append(buf, "\r\n");
		if (end + 1 < len && text[end] == '\r' &&
		    text[end + 1] == '\n')
			end++;
		start = end + 1;
	}
	return 0;
}

void strbuf_lf(struct strbuf *buf, const char *text, size_t len)
{
	size_t i, start = 0;

	for (i = 0; i + 1 < len; i++) {
		if (text[i] != '\r' || text[i + 1] != '\n')
			continue;
		strbuf_appendn(buf, text + start, i - start);
		start = i + 1;
	}
	strbuf_appendn(buf, text + start, len - start);
}

bool strbuf_failed(const struct strbuf *buf)
{
	return buf->failed;
}

int strbuf_finish(char **out, size_t *out_len, struct strbuf *buf)
{
	*out = NULL;
	if (out_len != NULL)
		*out_len = 0;
	if (!buf->failed && buf->data == NULL)
		grow(buf, 0);
	if (buf->failed) {
		strbuf_clear(buf);
		return -1;
	}
	buf->data[buf->len] = '\0';
	*out = buf->data;
	if (out_len != NULL)
		*out_len = buf->len;
	buf->data = NULL;
	buf->len = buf->cap = 0;
	return 0;
}

void strbuf_clear(struct strbuf *buf)
{
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
	buf->failed = false;
}
