#include "url.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* `url` with bytes [from, to) replaced by "***", malloc'd. */
static int splice_mask(char **out, const char *url, size_t from, size_t to)
{
	size_t len = strlen(url);
	char *text = malloc(len - (to - from) + 4);

	if (text == NULL)
		return -ENOMEM;
	memcpy(text, url, from);
	memcpy(text + from, "***", 3);
	memcpy(text + from + 3, url + to, len - to + 1);
	*out = text;
	return 0;
}

/*
 * Text libcurl does not parse: the user information, when `rest` (the part
 * after "scheme://", or the whole text) starts with "user:" before any
 * '@', runs to the last '@'; its password part is masked.
 */
static int redact_unparsed(char **out, const char *url, size_t rest)
{
	const char *start = url + rest;
	const char *colon = strchr(start, ':');
	const char *first_at = strchr(start, '@');
	const char *last_at = strrchr(start, '@');

	if (colon == NULL || first_at == NULL || colon > first_at ||
	    start[0] == '/' || start[0] == '.' || start[0] == '~') {
		*out = strdup(url);
		return *out != NULL ? 0 : -ENOMEM;
	}
	return splice_mask(out, url, (size_t)(colon + 1 - url),
			   (size_t)(last_at - url));
}

/*
 * A URL libcurl parsed: its user and password appear verbatim (libcurl
 * was not asked to decode them) right after "scheme://", so the mask goes
 * in place and every other byte stays as the user wrote it.
 */
static int redact_parsed(char **out, const char *url, const char *user,
			 const char *password)
{
	const char *authority = strstr(url, "://");
	size_t user_len = user != NULL ? strlen(user) : 0;
	size_t password_len = strlen(password);
	size_t from;

	if (authority == NULL)
		return -EINVAL;
	authority += 3;
	from = (size_t)(authority - url) + user_len + 1;
	if ((user_len > 0 && strncmp(authority, user, user_len) != 0) ||
	    authority[user_len] != ':' ||
	    strncmp(url + from, password, password_len) != 0 ||
	    url[from + password_len] != '@')
		return -EINVAL;
	return splice_mask(out, url, from, from + password_len);
}

int url_redact(char **out, const char *url)
{
	CURLU *handle = NULL;
	char *user = NULL, *password = NULL;
	const char *scheme_end;
	CURLUcode rc;
	int error;

	if (out == NULL)
		return -EINVAL;
	*out = NULL;
	if (url == NULL)
		return -EINVAL;
	scheme_end = strstr(url, "://");
	handle = curl_url();
	if (handle == NULL)
		return -ENOMEM;
	rc = curl_url_set(handle, CURLUPART_URL, url,
			  CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS);
	if (rc == CURLUE_OUT_OF_MEMORY) {
		error = -ENOMEM;
		goto out;
	}
	if (rc != CURLUE_OK || scheme_end == NULL) {
		error = redact_unparsed(
		    out, url,
		    scheme_end != NULL ? (size_t)(scheme_end + 3 - url) : 0);
		goto out;
	}
	rc = curl_url_get(handle, CURLUPART_PASSWORD, &password, 0);
	if (rc == CURLUE_NO_PASSWORD) {
		*out = strdup(url);
		error = *out != NULL ? 0 : -ENOMEM;
		goto out;
	}
	if (rc != CURLUE_OK) {
		error = rc == CURLUE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
		goto out;
	}
	rc = curl_url_get(handle, CURLUPART_USER, &user, 0);
	if (rc != CURLUE_OK && rc != CURLUE_NO_USER) {
		error = rc == CURLUE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
		goto out;
	}
	error = redact_parsed(out, url, user, password);
	if (error == -EINVAL)
		/* Not where it was expected: mask the whole user information
		 * rather than show any of it. */
		error =
		    redact_unparsed(out, url, (size_t)(scheme_end + 3 - url));
out:
	curl_free(user);
	curl_free(password);
	curl_url_cleanup(handle);
	return error;
}

size_t url_unescape(char *text)
{
	char *in = text, *out = text;
	int high, low;

	while (*in != '\0') {
		if (in[0] == '%' && (high = strbuf_hex_value(in[1])) >= 0 &&
		    (low = strbuf_hex_value(in[2])) >= 0 &&
		    (high | low) != 0) {
			*out++ = (char)(high * 16 + low);
			in += 3;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return (size_t)(out - text);
}
