#include "remote.h"
#include "curlbody.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replies above this size are refused. */
#define REMOTE_MAX_REPLY (64u * 1024 * 1024)
#define REMOTE_CONNECT_TIMEOUT_S 20L
/* Submitting fetches the repository on the server first: be patient. */
#define REMOTE_TIMEOUT_S 900L

struct remote {
	CURL *curl;
	char *server_url;
	struct curl_slist *headers;
};

/* A bearer token is printable ASCII without spaces; anything else would
 * break the header (or smuggle another one in). */
static bool token_ok(const char *token)
{
	size_t i, n = strlen(token);

	if (n == 0 || n > 256)
		return false;
	for (i = 0; i < n; i++) {
		if (token[i] <= ' ' || token[i] >= 0x7f)
			return false;
	}
	return true;
}

static bool url_ok(const char *url)
{
	size_t i;

	if (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0)
		return false;
	for (i = 0; url[i] != '\0'; i++) {
		if (url[i] <= ' ' || url[i] >= 0x7f)
			return false;
	}
	return true;
}

int remote_new(struct remote **out, const char *server_url, const char *token,
	       char **err)
{
	struct remote *remote = NULL;
	char *auth = NULL;
	size_t len;

	*out = NULL;
	*err = NULL;
	if (!url_ok(server_url)) {
		if (asprintf(err,
			     "the server URL must start with http:// or "
			     "https:// and hold no spaces: '%s'",
			     server_url) < 0)
			*err = NULL;
		return -1;
	}
	if (!token_ok(token)) {
		*err = strdup("the token must be 1 to 256 printable "
			      "characters without spaces");
		return -1;
	}
	remote = calloc(1, sizeof(*remote));
	if (remote == NULL)
		goto oom;
	remote->curl = curl_easy_init();
	remote->server_url = strdup(server_url);
	if (asprintf(&auth, "Authorization: Bearer %s", token) < 0)
		auth = NULL;
	if (remote->curl == NULL || remote->server_url == NULL || auth == NULL)
		goto oom;
	len = strlen(remote->server_url);
	while (len > 0 && remote->server_url[len - 1] == '/')
		remote->server_url[--len] = '\0';
	remote->headers = curl_slist_append(NULL, auth);
	if (remote->headers == NULL)
		goto oom;
	free(auth);
	*out = remote;
	return 0;
oom:
	free(auth);
	remote_free(remote);
	*err = strdup("out of memory");
	return -1;
}

void remote_free(struct remote *remote)
{
	if (remote == NULL)
		return;
	curl_easy_cleanup(remote->curl);
	curl_slist_free_all(remote->headers);
	free(remote->server_url);
	free(remote);
}

const char *remote_server_url(const struct remote *remote)
{
	return remote->server_url;
}

void remote_reply_clear(struct remote_reply *reply)
{
	if (reply == NULL)
		return;
	free(reply->body);
	json_decref(reply->json);
	memset(reply, 0, sizeof(*reply));
}

int remote_call(struct remote *remote, const char *method, const char *path,
		json_t *body, struct remote_reply *out, char **err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curlbody buf = CURLBODY_INIT(REMOTE_MAX_REPLY);
	struct curl_slist *headers = remote->headers, *with_type = NULL;
	char *url = NULL, *text = NULL;
	const char *content_type = NULL;
	CURL *curl = remote->curl;
	CURLcode rc;
	int error = -1;

	memset(out, 0, sizeof(*out));
	*err = NULL;
	if (asprintf(&url, "%s%s", remote->server_url, path) < 0) {
		url = NULL;
		goto oom;
	}
	curl_easy_reset(curl);
	if (body != NULL) {
		text = json_dumps(body, JSON_COMPACT);
		/* A private copy of the list: the shared one must not grow. */
		with_type = curl_slist_append(NULL, remote->headers->data);
		if (with_type != NULL)
			with_type = curl_slist_append(
			    with_type, "Content-Type: application/json");
		if (text == NULL || with_type == NULL)
			goto oom;
		headers = with_type;
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, text);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
				 (long)strlen(text));
	} else if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
	}
	if (strcmp(method, "GET") != 0)
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curlbody_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT,
			 REMOTE_CONNECT_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, REMOTE_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "statbisect-cli/1");
	/* Never follow a redirect: the token would go along. */
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS,
			 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		if (buf.too_large) {
			if (asprintf(err,
				     "the reply of %s is larger than %u bytes",
				     url, REMOTE_MAX_REPLY) < 0)
				*err = NULL;
		} else if (asprintf(err, "cannot reach %s: %s",
				    remote->server_url,
				    errbuf[0] != '\0'
					? errbuf
					: curl_easy_strerror(rc)) < 0) {
			*err = NULL;
		}
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
	curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type);
	out->body = buf.data != NULL ? buf.data : strdup("");
	buf.data = NULL;
	if (out->body == NULL)
		goto oom;
	out->len = buf.len;
	if (content_type != NULL && strstr(content_type, "json") != NULL) {
		json_error_t parse_error;

		out->json = json_loadb(out->body, out->len, 0, &parse_error);
	}
	error = 0;
	goto out;
oom:
	free(*err);
	*err = strdup("out of memory");
out:
	if (error < 0)
		remote_reply_clear(out);
	curl_slist_free_all(with_type);
	curlbody_clear(&buf);
	free(text);
	free(url);
	return error;
}

/* A copy of `text` with control characters made harmless for a
 * terminal, at most `max` bytes of it. */
static char *printable(const char *text, size_t max)
{
	size_t n = strnlen(text, max), i;
	char *copy = malloc(n + 1);

	if (copy == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		copy[i] = c == '\n' || c == '\r' || c == '\t' ? ' '
			  : c < 0x20 || c == 0x7f	      ? '?'
							      : (char)c;
	}
	copy[n] = '\0';
	while (n > 0 && copy[n - 1] == ' ')
		copy[--n] = '\0';
	return copy;
}

char *remote_error_message(const struct remote_reply *reply)
{
	json_t *error = json_object_get(reply->json, "error");
	const char *message =
	    json_string_value(json_object_get(error, "message"));
	char *clean, *out = NULL;

	if (message != NULL)
		return printable(message, 2048);
	clean = printable(reply->body != NULL ? reply->body : "", 200);
	if (clean == NULL)
		return NULL;
	if (asprintf(&out, "the server answered HTTP %ld%s%s", reply->status,
		     clean[0] != '\0' ? ": " : "", clean) < 0)
		out = NULL;
	free(clean);
	return out;
}
