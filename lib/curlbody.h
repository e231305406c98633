/*
 * The body of an HTTP reply collected by libcurl, up to a limit: the
 * worker's and the command line's client share it.
 */
#ifndef STATBISECT_CURLBODY_H
#define STATBISECT_CURLBODY_H

#include <stdbool.h>
#include <stddef.h>

struct curlbody {
	char *data;	/* malloc'd, NUL-terminated once anything came */
	size_t len;	/* bytes in data, without the NUL */
	size_t max;	/* the most bytes taken; more stops the transfer */
	bool too_large; /* the reply was longer than max */
};

#define CURLBODY_INIT(max_bytes)                                              \
	{                                                                     \
		NULL, 0, (max_bytes), false                                   \
	}

/*
 * A CURLOPT_WRITEFUNCTION: appends the `size` * `nmemb` bytes at `ptr` to
 * the struct curlbody `arg` (CURLOPT_WRITEDATA).  Returns the bytes taken,
 * or 0, which makes libcurl stop with CURLE_WRITE_ERROR, when the body
 * would pass `max` (too_large is set then) or memory ran out.
 */
size_t curlbody_write(char *ptr, size_t size, size_t nmemb, void *arg);

/* Frees the data; the body may be reused (with the same max). */
void curlbody_clear(struct curlbody *body);

#endif
