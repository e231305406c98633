/*
 * The rules the resources share for what a client may name and write:
 * names of repositories and testcases, free text, metric names, lists of
 * addresses.  Pure: each says yes or no (the last adds the API's error).
 */
#ifndef STATBISECT_VALIDATE_H
#define STATBISECT_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fields.h"

/* A name: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -. */
bool validate_name(const char *s);

/*
 * At most `max_len` bytes of text without control characters (a tab is
 * fine; a line end only when `newlines`).
 */
bool validate_text(const char *s, size_t max_len, bool newlines);

/* The longest machine group name, in bytes. */
#define VALIDATE_GROUP_MAX 64

/*
 * A machine group, as a worker registers with it and a testcase or job
 * names it: 1 to 64 bytes of UTF-8 without control characters.
 */
bool validate_group(const char *s);

/* A metric name: 1 to 255 bytes, no space, control or non-ASCII byte. */
bool validate_metric_name(const char *s);

/*
 * A list of report recipients, when given (not NULL or null): at most 50
 * plain addresses (local@domain; an embedded NUL counts as not plain).
 * Otherwise adds the API's error of field "notify": one for the list, or
 * one for each bad entry with the entry as its value (fields_set_value);
 * and returns false.
 */
bool validate_notify(struct field_errors *errors, json_t *notify);

#endif
