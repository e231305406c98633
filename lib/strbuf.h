/*
 * The one growable text buffer of statbisect, with the encodings its
 * output needs (as libgit2's git_str): HTML and URL escapes, hex, base64,
 * shell quoting and line ends.  An allocation failure is remembered and
 * reported by strbuf_finish, so a caller appends without checking each
 * step.  Pure: no I/O.
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

/* Appends the `len` bytes at `data` as lower-case hex digits. */
void strbuf_hex(struct strbuf *buf, const void *data, size_t len);

/* The value of the hex digit `c` (either case), or -1 for any other
 * character: what decoders of %XX and =XX escapes read digits with. */
int strbuf_hex_value(int c);

/*
 * Appends the `len` bytes at `data` in base64 (RFC 4648, with '='
 * padding, no line breaks).
 */
void strbuf_base64(struct strbuf *buf, const void *data, size_t len);

/*
 * Appends `text` as one word of a POSIX shell: as it is when it is not
 * empty and made of letters, digits and @%+=:,./_-~ only, else in single
 * quotes, each ' written as '\''.
 */
void strbuf_shell_quote(struct strbuf *buf, const char *text);

/*
 * Appends the `len` bytes of `text` with every line end (LF, CRLF or a
 * lone CR) written as CRLF, and one CRLF after a last line that had none.
 * Returns 0, or -1 when a line (without its end) is longer than
 * `line_max` bytes: what came before it is appended, the rest is not.
 */
int strbuf_crlf(struct strbuf *buf, const char *text, size_t len,
		size_t line_max);

/*
 * Appends the `len` bytes of `text` with every CRLF written as LF.
 */
void strbuf_lf(struct strbuf *buf, const char *text, size_t len);

/* True when an allocation failed since the buffer was last cleared. */
bool strbuf_failed(const struct strbuf *buf);

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
