/*
 * Secrets: API tokens, session ids and CSRF tokens made from the kernel's
 * random bytes, and compared without leaking where they differ.
 */
#ifndef STATBISECT_SECRET_H
#define STATBISECT_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/* The most random bytes secret_hex makes at once. */
#define SECRET_BYTES_MAX 64

/*
 * Fills `out` (at least 2 * bytes + 1 chars) with `bytes` random bytes
 * from getrandom(2) as lower-case hex, NUL-terminated.  Returns 0,
 * -EINVAL when bytes is 0 or above SECRET_BYTES_MAX, or -EIO when the
 * kernel gave no randomness (then `out` is an empty string).
 */
int secret_hex(char *out, size_t bytes);

/*
 * Whether the NUL-terminated strings `a` and `b` are equal, in a time
 * that depends on their lengths only, never on where they differ; so a
 * caller comparing a guess with a token leaks no prefix of the token.
 * NULL equals nothing, not even NULL.
 */
bool secret_equal(const char *a, const char *b);

#endif
