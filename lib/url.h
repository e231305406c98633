/*
 * URLs shown to people: a repository or SMTP URL with any password in it
 * masked, so that logs and API answers never reveal a secret.  Built on
 * libcurl's URL API (curl_url); pure apart from allocation.
 */
#ifndef STATBISECT_URL_H
#define STATBISECT_URL_H

#include <stddef.h>

/*
 * Sets *out to a malloc'd copy of `url` in which nothing of a password is
 * left; the caller frees it.
 *
 * - A URL libcurl parses (scheme://user:password@host...) keeps every
 *   byte but the password, which becomes "***": "https://u:pw@h/x" gives
 *   "https://u:***@h/x".  One without a password is copied unchanged.
 * - Anything else that looks as if it held user information ("user:" before
 *   an '@': a URL libcurl refuses, such as "https://u:p@w@host/x", or an
 *   scp-like "u:p@host:path") loses everything from the first ':' of
 *   that user information up to its last '@': "https://u:***@host/x".
 * - Local paths, "git@host:path" and other text without a "user:...@"
 *   shape are copied unchanged.
 *
 * Returns 0, -EINVAL when `url` or `out` is NULL, or -ENOMEM (then *out is
 * NULL).
 */
int url_redact(char **out, const char *url);

/*
 * Decodes the %XX escapes of `text` (NUL-terminated) in place, as a
 * request path or query value is decoded, except "%00": a NUL would cut
 * the text short and make "/jobs/1%00x" name job 1, so it stays as the
 * three characters "%00" and names nothing.  '+' is left alone, and so
 * is a '%' not followed by two hex digits.  Returns the new length.
 */
size_t url_unescape(char *text);

#endif
