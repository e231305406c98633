#include "utf8.h"

#include <errno.h>
#include <iconv.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/*
 * The UTF-8 sequence at the start of the `len` (> 0) bytes at `s`: how
 * many bytes it spans, and in *valid whether it is well formed by table
 * 3-7 of the Unicode standard (the second byte's range excludes overlong
 * forms, surrogates and code points above U+10FFFF).  An ill-formed
 * sequence spans its maximal subpart, the longest start of a well-formed
 * sequence it has, and at least one byte.
 */
static size_t sequence_span(const unsigned char *s, size_t len, bool *valid)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, i;

	*valid = false;
	if (s[0] < 0x80) {
		*valid = true;
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else {
		return 1;
	}
	for (i = 1; i < need; i++) {
		if (i == len || s[i] < lo || s[i] > hi)
			return i;
		lo = 0x80;
		hi = 0xbf;
	}
	*valid = true;
	return need;
}

size_t utf8_char_len(const char *s, size_t len)
{
	bool valid;
	size_t span = sequence_span((const unsigned char *)s, len, &valid);

	return valid ? span : 0;
}

/* Appends `len` bytes of `text` to `buf` as utf8_sanitize describes,
 * copying each run of valid text at once. */
static void append_sanitized(struct strbuf *buf, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t run = 0, i = 0, span;
	bool valid;

	while (i < len) {
		span = sequence_span(s + i, len - i, &valid);
		if (!valid || s[i] == '\0') {
			strbuf_appendn(buf, text + run, i - run);
			strbuf_append(buf, UTF8_REPLACEMENT);
			run = i + span;
		}
		i += span;
	}
	if (run < len)
		strbuf_appendn(buf, text + run, len - run);
}

int utf8_sanitize(char **out, const char *text, size_t len)
{
	struct strbuf buf = STRBUF_INIT;

	append_sanitized(&buf, text, len);
	return strbuf_finish(out, NULL, &buf);
}

/* The number that ends `name` after `prefix`, if that is all it holds. */
static bool number_after(const char *name, const char *prefix,
			 unsigned long *number)
{
	size_t n = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
		return false;
	errno = 0;
	*number = strtoul(name + n, &end, 10);
	return errno == 0 && *end == '\0';
}

/*
 * The iconv name of the single-byte character set that `declared` names,
 * written into `buf`, or NULL for any other.  Only these are converted:
 * each of their bytes is one character looked up in a table, so hostile
 * bytes cannot upset the conversion, whereas glibc's multibyte decoders
 * have crashed on crafted input before (CVE-2021-3326, CVE-2019-25013).
 * iconv is also given our own spelling, never the commit's.  cp1255 and
 * cp1258 are left out: glibc composes their combining marks.
 */
static const char *single_byte_charset(char *buf, size_t size,
				       const char *declared)
{
	/* latinN is part latin_parts[N - 1] of ISO 8859. */
	static const unsigned latin_parts[] = {1,  2,  3,  4,  9,
					       10, 13, 14, 15, 16};
	char name[32];
	size_t n = 0;
	unsigned long number;

	/* Upper-cased by hand: toupper() follows the locale. */
	for (; *declared != '\0'; declared++) {
		char c = *declared;

		if (c == '-' || c == '_')
			continue;
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ||
		    n + 1 == sizeof(name))
			return NULL;
		name[n++] = c;
	}
	name[n] = '\0';
	if (number_after(name, "ISO8859", &number) && number >= 1 &&
	    number <= 16 && number != 12)
		snprintf(buf, size, "ISO-8859-%lu", number);
	else if (number_after(name, "LATIN", &number) && number >= 1 &&
		 number <= 10)
		snprintf(buf, size, "ISO-8859-%u", latin_parts[number - 1]);
	else if ((number_after(name, "CP", &number) ||
		  number_after(name, "WINDOWS", &number)) &&
		 number >= 1250 && number <= 1257 && number != 1255)
		snprintf(buf, size, "CP%lu", number);
	else if (strcmp(name, "KOI8R") == 0 || strcmp(name, "KOI8U") == 0)
		snprintf(buf, size, "KOI8-%c", name[4]);
	else
		return NULL;
	return buf;
}

/* Appends `len` bytes of `text` decoded by `cd` to `buf`; a byte that is
 * no character of the set becomes U+FFFD and decoding goes on after it. */
static void append_converted(struct strbuf *buf, iconv_t cd, const char *text,
			     size_t len)
{
	char chunk[512], *in = (char *)text, *o;
	size_t in_left = len, out_left, rc;

	while (in_left > 0) {
		o = chunk;
		out_left = sizeof(chunk);
		rc = iconv(cd, &in, &in_left, &o, &out_left);
		strbuf_appendn(buf, chunk, sizeof(chunk) - out_left);
		if (rc != (size_t)-1 || errno == E2BIG || in_left == 0)
			continue;
		strbuf_append(buf, UTF8_REPLACEMENT);
		in++;
		in_left--;
	}
}

int utf8_from_encoding(char **out, const char *text, size_t len,
		       const char *encoding)
{
	struct strbuf converted = STRBUF_INIT, buf = STRBUF_INIT;
	char charset[16];
	iconv_t cd;

	if (encoding == NULL ||
	    single_byte_charset(charset, sizeof(charset), encoding) == NULL)
		return utf8_sanitize(out, text, len);
	cd = iconv_open("UTF-8", charset);
	if (cd == (iconv_t)-1)
		return utf8_sanitize(out, text, len);
	append_converted(&converted, cd, text, len);
	iconv_close(cd);
	/* Sanitised again for what the set maps to itself, NUL above all,
	 * so that the result keeps utf8_sanitize's promise. */
	if (converted.failed)
		buf.failed = true;
	else
		append_sanitized(&buf, converted.data, converted.len);
	strbuf_clear(&converted);
	return strbuf_finish(out, NULL, &buf);
}
