#include "client.h"
#include "curlbody.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct client {
	CURL *curl;
	char *base_url;
	struct curl_slist *headers;
	const volatile sig_atomic_t *cancel;
};

/* Replies above this size are refused; they are small JSON objects. */
#define CLIENT_MAX_REPLY (4u * 1024 * 1024)

struct client *client_new(const char *base_url, const char *token)
{
	struct client *c = calloc(1, sizeof(*c));
	char *auth = NULL;

	if (c == NULL)
		return NULL;
	c->curl = curl_easy_init();
	c->base_url = strdup(base_url);
	if (asprintf(&auth, "Authorization: Bearer %s", token) < 0)
		auth = NULL;
	if (c->curl == NULL || c->base_url == NULL || auth == NULL) {
		free(auth);
		client_free(c);
		return NULL;
	}
	/* Trailing slashes would double in the paths. */
	while (c->base_url[0] != '\0' &&
	       c->base_url[strlen(c->base_url) - 1] == '/')
		c->base_url[strlen(c->base_url) - 1] = '\0';
	c->headers = curl_slist_append(NULL, auth);
	c->headers =
	    curl_slist_append(c->headers, "Content-Type: application/json");
	free(auth);
	return c;
}

void client_free(struct client *c)
{
	if (c == NULL)
		return;
	curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	free(c->base_url);
	free(c);
}

void client_set_cancel(struct client *c, const volatile sig_atomic_t *flag)
{
	c->cancel = flag;
}

/* libcurl's progress callback, at least once a second: non-zero stops
 * the transfer. */
static int cancel_check(void *arg, curl_off_t dltotal, curl_off_t dlnow,
			curl_off_t ultotal, curl_off_t ulnow)
{
	const struct client *c = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return c->cancel != NULL && *c->cancel;
}

int client_post(struct client *c, const char *path, json_t *body, long *status,
		json_t **reply, char **err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curlbody b = CURLBODY_INIT(CLIENT_MAX_REPLY);
	char *url = NULL, *text;
	CURLcode rc;

	*reply = NULL;
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : strdup("{}");
	if (text == NULL || asprintf(&url, "%s%s", c->base_url, path) < 0) {
		free(text);
		*err = strdup("out of memory");
		return -1;
	}
	curl_easy_reset(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, curlbody_write);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, 120L);
	if (c->cancel != NULL) {
		curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION,
				 cancel_check);
		curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, c);
		curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	}
	rc = curl_easy_perform(c->curl);
	free(url);
	free(text);
	if (rc != CURLE_OK) {
		if (asprintf(err, "%s",
			     errbuf[0] ? errbuf : curl_easy_strerror(rc)) < 0)
			*err = NULL;
		curlbody_clear(&b);
		return -1;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
	if (b.data != NULL)
		*reply = json_loadb(b.data, b.len, 0, NULL);
	curlbody_clear(&b);
	return 0;
}

const char *client_error_message(json_t *reply)
{
	const char *m = json_string_value(
	    json_object_get(json_object_get(reply, "error"), "message"));

	return m != NULL ? m : "no error message";
}
