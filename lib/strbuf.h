/*
 * A growable text buffer with the escapes that HTML and SVG output need.
 * An allocation failure is remembered and reported by strbuf_finish, so a
 * caller appends without checking each step.  Pure: no I/O.
 */
#ifndef STATBISECT_STRBUF_H
#define STATBISECT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *data; /* always NUL-terminated once anything was appended */
	size_t len;
	size_t cap;
	bool failed; /* an allocation failed: the content is incomplete */
};

#define STRBUF_INIT                                                           \
	{                                                                     \
		NULL, 0, 0, false                                             \
	}

void strbuf_appendn(struct strbuf *buf, const char *text, size_t len);
void strbuf_append(struct strbuf *buf, const char *text);
void strbuf_printf(struct strbuf *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Appends `len` bytes of `text` with & < > " ' replaced by character
 * references, so the result is safe in HTML text and in quoted attribute
 * values alike.
 */
void strbuf_html(struct strbuf *buf, const char *text, size_t len);

/*
 * Appends `len` bytes of `text` percent-encoded for a URL query value or
 * path segment: everything but A-Z a-z 0-9 - . _ ~ becomes %XX.
 */
void strbuf_url(struct strbuf *buf, const char *text, size_t len);

/*
 * Hands the text over: *out receives the malloc'd NUL-terminated text (an
 * empty string when nothing was appended) and *out_len its length.
 * Returns 0, or -1 when an allocation failed (nothing is handed over).
 * The buffer is empty afterwards either way.
 */
int strbuf_finish(char **out, size_t *out_len, struct strbuf *buf);

/* Frees the content; the buffer may be reused. */
void strbuf_clear(struct strbuf *buf);

#endif
