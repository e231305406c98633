/*
 * Field errors: what validation of a request found wrong, one entry per
 * field, so that the REST API can answer with the first and a web form can
 * show every one next to its own input, in the form's words.
 *
 * Validators of a resource (jobs.c, tokens.c, ...) fill a struct
 * field_errors instead of answering; the REST adapter calls
 * fields_answer(), the web adapter walks the list.
 */
#ifndef STATBISECT_FIELDS_H
#define STATBISECT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include "http.h"

#define FIELDS_MAX 16
/* As long as http_error's message, so the API's answer is not cut sooner. */
#define FIELDS_MESSAGE_MAX 1024
#define FIELDS_VALUE_MAX 256

struct field_error {
	char field[64];	 /* the API's name for it: "runs_max", "notify" */
	char code[32];	 /* the API's error code: "invalid_field" */
	unsigned status; /* the HTTP status the API answers it with */
	char message[FIELDS_MESSAGE_MAX]; /* as the API words it */
	char value[FIELDS_VALUE_MAX];	  /* the value at fault, for a form to
					     quote ("" when none was set) */
};

struct field_errors {
	struct field_error items[FIELDS_MAX];
	size_t count;
	size_t dropped; /* errors past FIELDS_MAX, counted only */
	/* Seconds after which the request may succeed (a limit that lapses);
	 * 0: none.  fields_answer sends it as Retry-After. */
	long long retry_after_s;
};

/* An empty list. */
void fields_init(struct field_errors *errors);

/*
 * Adds an error of `field` (may be "" for the request as a whole).  Names
 * and messages too long for the entry are cut at a UTF-8 boundary; past
 * FIELDS_MAX errors only `dropped` grows.
 */
void fields_add(struct field_errors *errors, const char *field,
		unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * Sets the value at fault of the error added last (one entry of a list,
 * say), cut as names are; nothing when that error was dropped or none
 * was added.
 */
void fields_set_value(struct field_errors *errors, const char *value);

/* True when nothing was added. */
bool fields_ok(const struct field_errors *errors);

/* The first error of `field`, or NULL. */
const struct field_error *fields_find(const struct field_errors *errors,
				      const char *field);

/*
 * Answers the first error in `res` as http_error does (its status, code
 * and message, and "field" when it names one), with
 * Retry-After when retry_after_s is set.  Returns false, and answers nothing,
 * when the list is empty.
 */
bool fields_answer(struct http_response *res,
		   const struct field_errors *errors);

/*
 * Adds the error of a failed database call for the request as a whole
 * (field ""), as http_db_failed answers it: 503 "unavailable" when trying
 * again may help (db_state_transient of this thread's last failure), else
 * 500 "internal" with the SQLSTATE.
 */
void fields_db_failed(struct field_errors *errors);

/*
 * Readers of a JSON request body's fields, as every resource words them.
 * fields_json_string: *out is the string `key` of `body` (borrowed), or
 * NULL when absent or null; adds 400 "missing_field" when it is absent
 * and `required`, 400 "invalid_field" when it is no string or holds a NUL
 * (*out NULL).  fields_json_int: *out is the integer `key` in [min, max],
 * left as it was when absent or null; adds 400 "invalid_field" for
 * anything else.  Both return true when they added no error.
 */
bool fields_json_string(struct field_errors *errors, json_t *body,
			const char *key, bool required, const char **out);
bool fields_json_int(struct field_errors *errors, json_t *body,
		     const char *key, long long min, long long max,
		     long long *out);

#endif
