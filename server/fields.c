#include "fields.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db.h"

/* Copies `src` into `dst` (of `size` bytes), cut before a UTF-8
 * continuation byte so that the copy stays valid text. */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void fields_init(struct field_errors *errors)
{
	memset(errors, 0, sizeof(*errors));
}

void fields_add(struct field_errors *errors, const char *field,
		unsigned status, const char *code, const char *fmt, ...)
{
	struct field_error *e;
	char message[FIELDS_MESSAGE_MAX * 2];
	va_list ap;

	if (errors->count == FIELDS_MAX) {
		errors->dropped++;
		return;
	}
	e = &errors->items[errors->count++];
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	copy_cut(e->field, sizeof(e->field), field != NULL ? field : "");
	copy_cut(e->code, sizeof(e->code), code);
	copy_cut(e->message, sizeof(e->message), message);
	e->status = status;
}

void fields_set_value(struct field_errors *errors, const char *value)
{
	if (errors->count == 0 || errors->dropped > 0 || value == NULL)
		return;
	copy_cut(errors->items[errors->count - 1].value,
		 sizeof(errors->items[0].value), value);
}

bool fields_ok(const struct field_errors *errors)
{
	return errors->count == 0 && errors->dropped == 0;
}

const struct field_error *fields_find(const struct field_errors *errors,
				      const char *field)
{
	size_t i;

	for (i = 0; i < errors->count; i++)
		if (strcmp(errors->items[i].field, field) == 0)
			return &errors->items[i];
	return NULL;
}

bool fields_answer(struct http_response *res,
		   const struct field_errors *errors)
{
	const struct field_error *e;

	if (errors->count == 0)
		return false;
	e = &errors->items[0];
	http_json(res, e->status,
		  json_pack("{s:{s:s,s:s,s:s*}}", "error", "code", e->code,
			    "message", e->message, "field",
			    e->field[0] != '\0' ? e->field : NULL));
	if (errors->retry_after_s > 0) {
		char seconds[24];

		snprintf(seconds, sizeof(seconds), "%lld",
			 errors->retry_after_s);
		http_add_header(res, "Retry-After", seconds);
	}
	return true;
}

void fields_db_failed(struct field_errors *errors)
{
	const char *state = db_last_failure();

	if (db_state_transient(state))
		fields_add(errors, "", 503, "unavailable",
			   "the database is unavailable; try again");
	else
		fields_add(errors, "", 500, "internal",
			   "the database refused the request (SQLSTATE %s); "
			   "the server log has the details",
			   state);
}

bool fields_json_string(struct field_errors *errors, json_t *body,
			const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		if (!required)
			return true;
		fields_add(errors, key, 400, "missing_field",
			   "field '%s' is required", key);
		return false;
	}
	if (!json_is_string(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' must be a string", key);
		return false;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' contains a NUL character", key);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

bool fields_json_int(struct field_errors *errors, json_t *body,
		     const char *key, long long min, long long max,
		     long long *out)
{
	json_t *v = json_object_get(body, key);

	if (v == NULL || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' must be an integer from %lld to %lld",
			   key, min, max);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}
