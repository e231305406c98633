/* The delivery of webhooks: one POST with libcurl per due row, from the
 * mailer thread (mailer.c). */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "server.h"
#include "strbuf.h"
#include "utf8.h"
#include "webhooks.h"

/* The most of a receiver's answer kept for last_error. */
#define WEBHOOKS_ANSWER_KEPT 200

/* Keeps the start of the answer and drops the rest, so that a long
 * answer does not fail the transfer. */
static size_t keep_start(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct strbuf *kept = arg;
	size_t n = size * nmemb;

	if (kept->len < WEBHOOKS_ANSWER_KEPT)
		strbuf_appendn(kept, ptr,
			       n < WEBHOOKS_ANSWER_KEPT - kept->len
				   ? n
				   : WEBHOOKS_ANSWER_KEPT - kept->len);
	return n;
}

static int abort_on_stop(void *arg, curl_off_t dltotal, curl_off_t dlnow,
			 curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return atomic_load((atomic_bool *)arg) ? 1 : 0;
}

/* The request's headers; NULL when memory ran out. */
static struct curl_slist *headers_of(const struct store_webhook_delivery *d)
{
	const char *token = server_config.webhook_token;
	char delivery[64], signature[128], authorization[1024];
	const char *lines[8] = {"Content-Type: application/json",
				"User-Agent: statbisect",
				"X-Statbisect-Event: job.finished", delivery};
	struct curl_slist *h = NULL, *added;
	size_t n = 4, i;

	snprintf(delivery, sizeof(delivery), "X-Statbisect-Delivery: %lld",
		 d->id);
	if (d->signature != NULL) {
		snprintf(signature, sizeof(signature),
			 "X-Statbisect-Signature-256: %s", d->signature);
		lines[n++] = signature;
	}
	/* GitHub's commit status API wants a token; only that format gets
	 * the server's (one that could end the header line is never sent). */
	if (strcmp(d->format, "github-status") == 0 && token != NULL &&
	    token[0] != '\0' && strpbrk(token, "\r\n") == NULL) {
		snprintf(authorization, sizeof(authorization),
			 "Authorization: Bearer %s", token);
		lines[n++] = authorization;
		lines[n++] = "Accept: application/vnd.github+json";
	}
	for (i = 0; i < n; i++) {
		added = curl_slist_append(h, lines[i]);
		if (added == NULL) {
			curl_slist_free_all(h);
			return NULL;
		}
		h = added;
	}
	return h;
}

/*
 * POSTs delivery `d`.  *status is the receiver's HTTP status (0: none
 * came); returns 0 on a 2xx, else -1 with *err a malloc'd reason.
 */
static int post(const struct store_webhook_delivery *d, atomic_bool *stop,
		long *status, char **err)
{
	struct strbuf answer = STRBUF_INIT;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = headers_of(d);
	CURL *curl = curl_easy_init();
	CURLcode rc = CURLE_OUT_OF_MEMORY;

	*status = 0;
	*err = NULL;
	if (curl != NULL && headers != NULL) {
		curl_easy_setopt(curl, CURLOPT_URL, d->url);
		curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, d->body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)strlen(d->body));
		curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep_start);
		curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
		curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
		curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
		curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION,
				 abort_on_stop);
		curl_easy_setopt(curl, CURLOPT_XFERINFODATA, stop);
		rc = curl_easy_perform(curl);
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	}
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	if (rc == CURLE_OK && *status >= 200 && *status < 300) {
		strbuf_clear(&answer);
		return 0;
	}
	if (rc != CURLE_OK) {
		if (asprintf(err, "%s",
			     errbuf[0] ? errbuf : curl_easy_strerror(rc)) < 0)
			*err = NULL;
	} else if (asprintf(err, "HTTP %ld: %.*s", *status, (int)answer.len,
			    answer.data != NULL ? answer.data : "") < 0) {
		*err = NULL;
	}
	strbuf_clear(&answer);
	/* The receiver's words may be any bytes; the table takes UTF-8. */
	if (*err != NULL) {
		char *clean = NULL;

		if (utf8_sanitize(&clean, *err, strlen(*err)) == 0) {
			for (char *c = clean; *c != '\0'; c++)
				if ((unsigned char)*c < ' ')
					*c = ' ';
			free(*err);
			*err = clean;
		}
	}
	return -1;
}

int webhooks_deliver_one(PGconn *conn, atomic_bool *stop)
{
	struct store_webhook_delivery d;
	char *err = NULL;
	long status = 0;
	int rc;
	bool give_up;

	if (db_begin(conn) < 0)
		return -1;
	rc = store_webhooks_next(&d, conn);
	if (rc != STORE_OK) {
		db_rollback(conn);
		return rc == STORE_NOT_FOUND ? 0 : -1;
	}
	if (post(&d, stop, &status, &err) == 0) {
		rc = store_webhooks_delivered(conn, d.id, status);
		log_info("job %lld: webhook %lld delivered (HTTP %ld)",
			 d.job_id, d.id, status);
	} else {
		/* A refusal that a retry cannot change is final. */
		give_up = status >= 400 && status < 500 && status != 408 &&
			  status != 429;
		rc = store_webhooks_failed(
		    conn, d.id, status, err != NULL ? err : "delivery failed",
		    server_config.webhook_retry_max, WEBHOOKS_TRIES_MAX,
		    give_up);
		log_warn("job %lld: webhook %lld not delivered: %s", d.job_id,
			 d.id, err != NULL ? err : "delivery failed");
	}
	free(err);
	store_webhook_delivery_clear(&d);
	if (rc < 0) {
		db_rollback(conn);
		return -1;
	}
	return db_commit(conn) < 0 ? -1 : 1;
}
