/* The form bodies of browser posts (application/x-www-form-urlencoded),
 * read into JSON objects: http_form_body of http.h. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "strbuf.h"

/* Decodes text[0, len) of a form in place of `out` (len + 1 bytes);
 * returns the decoded length, or -1 for a bad %XX or a NUL. */
static long form_decode(char *out, const char *text, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		if (text[i] == '+') {
			out[n++] = ' ';
		} else if (text[i] == '%') {
			int hi =
			    i + 2 < len ? strbuf_hex_value(text[i + 1]) : -1;
			int lo =
			    i + 2 < len ? strbuf_hex_value(text[i + 2]) : -1;

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -1;
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (text[i] == '\0') {
			return -1;
		} else {
			out[n++] = text[i];
		}
	}
	out[n] = '\0';
	return (long)n;
}

json_t *http_form_body(struct http_response *res,
		       const struct http_request *req)
{
	json_t *form = json_object();
	char *buf = malloc(req->body_len + 1);
	size_t pos = 0;

	if (form == NULL || buf == NULL)
		goto bad;
	while (pos < req->body_len) {
		const char *pair = req->body + pos, *eq, *amp;
		size_t len;
		long name_len, value_len;
		json_t *value;
		char *name;

		amp = memchr(pair, '&', req->body_len - pos);
		len = amp != NULL ? (size_t)(amp - pair) : req->body_len - pos;
		pos += len + 1;
		if (len == 0)
			continue;
		eq = memchr(pair, '=', len);
		if (eq == NULL)
			eq = pair + len;
		name_len = form_decode(buf, pair, (size_t)(eq - pair));
		if (name_len <= 0)
			goto bad;
		name = strdup(buf);
		if (eq < pair + len)
			value_len = form_decode(buf, eq + 1,
						(size_t)(pair + len - eq - 1));
		else
			value_len = form_decode(buf, "", 0);
		value = value_len >= 0 ? json_stringn(buf, (size_t)value_len)
				       : NULL;
		if (name == NULL || value == NULL) {
			free(name);
			json_decref(value);
			goto bad;
		}
		value_len = json_object_set_new(form, name, value);
		free(name);
		if (value_len < 0)
			goto bad;
	}
	free(buf);
	return form;
bad:
	free(buf);
	json_decref(form);
	http_error(res, 400, "invalid_form",
		   "the body must be an application/x-www-form-urlencoded "
		   "form of UTF-8 text");
	return NULL;
}
