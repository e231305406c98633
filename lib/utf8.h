/*
 * Text from outside made valid UTF-8.  Commit subjects and author names are
 * whatever bytes the commit holds: git stores them as given, with an
 * optional `encoding` header naming their character set.  PostgreSQL
 * refuses invalid UTF-8 in a text column and jansson refuses it in a JSON
 * string, so such text is made valid once, where it enters statbisect.
 * Pure: no I/O, no global state.
 */
#ifndef STATBISECT_UTF8_H
#define STATBISECT_UTF8_H

#include <stddef.h>

/*
 * The length (1 to 4) of the well-formed UTF-8 character that starts the
 * `len` (> 0) bytes at `s`, or 0 when they start with an ill-formed
 * sequence (overlong, surrogate, above U+10FFFF, cut short, a stray
 * byte).  A NUL is a character of length 1.  No byte after a NUL is read,
 * so for a NUL-terminated string `len` may be 4.
 */
size_t utf8_char_len(const char *s, size_t len);

/*
 * A copy of the `len` bytes at `text` (which may hold NULs and need not be
 * NUL-terminated) in which every ill-formed UTF-8 sequence, an overlong
 * form, a surrogate, a code point above U+10FFFF, a sequence cut short, a
 * stray continuation byte, becomes U+FFFD, one per maximal ill-formed
 * subpart as the Unicode standard recommends.  A NUL byte becomes U+FFFD
 * too: neither a C string nor a PostgreSQL text value can hold it.  Valid
 * UTF-8 is copied unchanged.  On success *out is a malloc'd NUL-terminated
 * string the caller frees; returns 0, or -1 (*out NULL) when memory runs
 * out.
 */
int utf8_sanitize(char **out, const char *text, size_t len);

/*
 * Like utf8_sanitize, for text written in the character set `encoding`
 * names, as a commit's encoding header does (NULL: none, so UTF-8).  The
 * single-byte sets git users declare (ISO-8859-n, latinN, cp125n or
 * windows-125n, KOI8-R, KOI8-U; any case, with or without '-' and '_')
 * are converted to UTF-8, a byte the set leaves undefined becoming
 * U+FFFD.  Text in any other set, multibyte ones included, is read as
 * UTF-8 and sanitised.  Same ownership and return values as
 * utf8_sanitize.
 */
int utf8_from_encoding(char **out, const char *text, size_t len,
		       const char *encoding);

#endif
