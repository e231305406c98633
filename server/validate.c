#include "validate.h"

#include <ctype.h>
#include <string.h>

#include "report.h"
#include "utf8.h"

#define VALIDATE_NAME_MAX 64
#define VALIDATE_METRIC_MAX 255
#define VALIDATE_NOTIFY_MAX 50

bool validate_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > VALIDATE_NAME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return false;
	}
	return s[0] != '.' && s[0] != '-';
}

bool validate_text(const char *s, size_t max_len, bool newlines)
{
	size_t n = strlen(s), i;

	if (n > max_len)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0x7f || (c < 0x20 && c != '\t' &&
				  !(newlines && (c == '\n' || c == '\r'))))
			return false;
	}
	return true;
}

bool validate_group(const char *s)
{
	size_t n = strlen(s), i, len;

	if (n == 0 || n > VALIDATE_GROUP_MAX)
		return false;
	/* Text as PostgreSQL stores it: well-formed UTF-8 (a query
	 * parameter is not checked by a JSON parser). */
	for (i = 0; i < n; i += len) {
		len = utf8_char_len(s + i, n - i);
		if (len == 0 || (unsigned char)s[i] < 0x20 ||
		    (unsigned char)s[i] == 0x7f)
			return false;
	}
	return true;
}

bool validate_metric_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > VALIDATE_METRIC_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return false;
	}
	return true;
}

bool validate_notify(struct field_errors *errors, json_t *notify)
{
	size_t i, before = errors->count + errors->dropped;
	json_t *v;

	if (notify == NULL || json_is_null(notify))
		return true;
	if (!json_is_array(notify) ||
	    json_array_size(notify) > VALIDATE_NOTIFY_MAX) {
		fields_add(errors, "notify", 400, "invalid_field",
			   "'notify' must be a list of at most %d addresses",
			   VALIDATE_NOTIFY_MAX);
		return false;
	}
	json_array_foreach(notify, i, v)
	{
		if (json_is_string(v) &&
		    strlen(json_string_value(v)) == json_string_length(v) &&
		    report_address_is_valid(json_string_value(v)))
			continue;
		fields_add(errors, "notify", 400, "invalid_email",
			   "'notify' entry %zu is not a plain email address "
			   "(local@domain)",
			   i);
		fields_set_value(
		    errors, json_is_string(v) ? json_string_value(v) : "");
	}
	return errors->count + errors->dropped == before;
}
