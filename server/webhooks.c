#include "webhooks.h"

#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "log.h"
#include "server.h"
#include "url.h"
#include "validate.h"
#include "webhook.h"

static void bad(struct field_errors *errors, const char *field,
		const char *message)
{
	fields_add(errors, field, 400, "invalid_field", "%s", message);
}

/* A string member `key` of `hook` into *out (NULL when absent or null);
 * false, with an error, when it is there and not a string. */
static bool member_text(const char **out, json_t *hook, const char *key,
			const char *field, struct field_errors *errors)
{
	json_t *v = json_object_get(hook, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return true;
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		fields_add(errors, field, 400, "invalid_field",
			   "the %s must be a string",
			   strcmp(key, "url") == 0	? "webhook URL"
			   : strcmp(key, "format") == 0 ? "webhook format"
							: "webhook secret");
		return false;
	}
	*out = json_string_value(v);
	return true;
}

void webhooks_request_read(struct webhooks_request *out, json_t *body,
			   struct field_errors *errors)
{
	json_t *hook = json_object_get(body, "webhook");
	bool url_ok, format_ok, secret_ok;
	const char *key;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (hook == NULL)
		return;
	out->given = true;
	if (json_is_null(hook)) {
		out->remove = true;
		return;
	}
	if (!json_is_object(hook)) {
		bad(errors, "webhook",
		    "'webhook' must be null or an object with 'url' and "
		    "optionally 'format' and 'secret'");
		return;
	}
	json_object_foreach(hook, key, v)
	{
		if (strcmp(key, "url") != 0 && strcmp(key, "format") != 0 &&
		    strcmp(key, "secret") != 0) {
			bad(errors, "webhook",
			    "'webhook' takes only 'url', 'format' and "
			    "'secret'");
			break;
		}
	}
	url_ok = member_text(&out->url, hook, "url", "webhook.url", errors);
	format_ok = member_text(&out->format, hook, "format", "webhook.format",
				errors);
	secret_ok = member_text(&out->secret, hook, "secret", "webhook.secret",
				errors);
	webhooks_request_check(out, url_ok, format_ok, secret_ok, errors);
}

void webhooks_request_check(struct webhooks_request *request, bool url,
			    bool format, bool secret,
			    struct field_errors *errors)
{
	enum webhook_format parsed;
	char *cause = NULL;

	if (url && request->url == NULL)
		fields_add(errors, "webhook.url", 400, "missing_field",
			   "the webhook needs a URL");
	else if (url && webhook_url_check(request->url, &cause) < 0)
		fields_add(errors, "webhook.url", 400, "invalid_field", "%s",
			   cause != NULL ? cause : "out of memory");
	free(cause);
	if (format && request->format == NULL)
		request->format = "statbisect";
	else if (format && webhook_format_parse(&parsed, request->format) < 0)
		bad(errors, "webhook.format",
		    "the webhook format must be 'statbisect' or "
		    "'github-status'");
	if (secret && request->secret != NULL &&
	    (request->secret[0] == '\0' ||
	     !validate_text(request->secret, WEBHOOK_SECRET_MAX, false)))
		bad(errors, "webhook.secret",
		    "the webhook secret must be 1 to 512 bytes without "
		    "control characters");
}

int webhooks_save(PGconn *conn, enum store_webhook_owner owner,
		  long long owner_id, const struct webhooks_request *request,
		  bool keep_secret)
{
	struct store_webhook_list current = {0};
	const char *secret = request->secret, *url = request->url;
	char *masked = NULL;
	int rc;

	if (!request->given)
		return 0;
	if (request->remove)
		return store_webhooks_remove(conn, owner, owner_id) < 0 ? -1
									: 0;
	if (keep_secret) {
		if (store_webhooks_get(&current, conn, owner, owner_id) < 0)
			return -1;
		if (current.count > 0 && secret == NULL)
			secret = current.items[0].secret;
		/* The URL given back as GET shows it, its password masked,
		 * is the stored one. */
		if (current.count > 0 &&
		    url_redact(&masked, current.items[0].url) == 0 &&
		    strcmp(url, masked) == 0)
			url = current.items[0].url;
	}
	rc = store_webhooks_set(conn, owner, owner_id, url, request->format,
				secret);
	free(masked);
	store_webhook_list_clear(&current);
	return rc < 0 ? -1 : 0;
}

/* `url` with any password masked, as a new JSON string. */
static json_t *redacted(const char *url)
{
	char *shown = NULL;
	json_t *out;

	if (url_redact(&shown, url) < 0)
		return json_string("***");
	out = json_string(shown);
	free(shown);
	return out;
}

json_t *webhooks_json(PGconn *conn, enum store_webhook_owner owner,
		      long long owner_id)
{
	struct store_webhook_list list;
	json_t *out;

	if (store_webhooks_get(&list, conn, owner, owner_id) < 0)
		return NULL;
	out = list.count == 0
		  ? json_null()
		  : json_pack("{s:o,s:s,s:b}", "url",
			      redacted(list.items[0].url), "format",
			      list.items[0].format, "secret_set",
			      list.items[0].secret != NULL);
	store_webhook_list_clear(&list);
	return out;
}

/* Queues the POST of `hook` with the body of `job`. */
static int queue_one(PGconn *conn, long long job_id,
		     const struct store_webhook *hook, json_t *job,
		     const char *base_url)
{
	const char *secret =
	    hook->secret != NULL ? hook->secret : server_config.webhook_secret;
	const char *bad_sha = json_string_value(json_object_get(job, "bad"));
	char signature[WEBHOOK_SIGNATURE_SIZE];
	enum webhook_format format;
	char *body = NULL, *url = NULL;
	int rc = -1;

	if (webhook_format_parse(&format, hook->format) < 0 ||
	    webhook_body(&body, format, job, base_url) < 0 ||
	    (url = webhook_url_expand(hook->url,
				      bad_sha != NULL ? bad_sha : "")) == NULL)
		goto out;
	if (secret != NULL && secret[0] != '\0' &&
	    webhook_sign(signature, secret, body, strlen(body)) < 0) {
		log_error("job %lld: cannot sign the webhook's body", job_id);
		goto out;
	}
	rc = store_webhooks_queue(
		 conn, job_id, hook->source, hook->format, url, body,
		 secret != NULL && secret[0] != '\0' ? signature : NULL) < 0
		 ? -1
		 : 0;
out:
	free(body);
	free(url);
	return rc;
}

int webhooks_job_ended(PGconn *conn, long long job_id, const char *base_url)
{
	struct store_webhook_list due;
	json_t *job = NULL;
	bool failed = false;
	size_t i;
	int rc = 0;

	if (store_webhooks_due(&due, conn, job_id) < 0)
		return -1;
	if (due.count > 0) {
		job = jobs_json(conn, job_id, &failed);
		/* A job that cannot be shown posts nothing, but still ends;
		 * a database error fails the transaction anyway. */
		if (job == NULL && !failed)
			log_error("job %lld: cannot make its webhooks' bodies",
				  job_id);
		rc = job == NULL && failed ? -1 : 0;
	}
	for (i = 0; job != NULL && rc == 0 && i < due.count; i++) {
		rc = queue_one(conn, job_id, &due.items[i], job, base_url);
		if (rc == 0)
			log_info("job %lld: %s webhook queued", job_id,
				 due.items[i].source);
	}
	json_decref(job);
	store_webhook_list_clear(&due);
	return rc;
}

static json_t *text_or_null(const char *text)
{
	return text != NULL ? json_string(text) : json_null();
}

json_t *webhooks_deliveries_json(PGconn *conn, long long job_id)
{
	struct store_webhook_shown_list list;
	json_t *out = json_array();
	size_t i;

	if (store_webhooks_deliveries(&list, conn, job_id) < 0)
		return out;
	for (i = 0; out != NULL && i < list.count; i++) {
		const struct store_webhook_shown *s = &list.items[i];
		json_t *d = json_pack(
		    "{s:I,s:s,s:s,s:o,s:s,s:I,s:o,s:o,s:s,s:o,s:o}", "id",
		    (json_int_t)s->id, "source", s->source, "format",
		    s->format, "url", redacted(s->url), "state", s->state,
		    "attempts", (json_int_t)s->attempts, "last_status",
		    s->last_status > 0 ? json_integer(s->last_status)
				       : json_null(),
		    "last_error", text_or_null(s->last_error), "created_at",
		    s->created_at, "delivered_at",
		    text_or_null(s->delivered_at), "next_attempt_at",
		    text_or_null(s->next_attempt_at));

		json_array_append_new(out, d);
	}
	store_webhook_shown_list_clear(&list);
	return out;
}

/* The sentence of one delivery `d` (as webhooks_deliveries_json shows
 * it) on the job page. */
static json_t *page_line(json_t *d)
{
	const char *state = json_string_value(json_object_get(d, "state"));
	const char *error =
	    json_string_value(json_object_get(d, "last_error"));
	json_int_t tries = json_integer_value(json_object_get(d, "attempts"));
	char line[1024];
	int n = snprintf(line, sizeof(line), "Webhook (%s): ",
			 json_string_value(json_object_get(d, "source")));

	if (n < 0 || state == NULL)
		return json_null();
	if (strcmp(state, "delivered") == 0)
		snprintf(
		    line + n, sizeof(line) - (size_t)n,
		    "delivered (HTTP %lld) at %s",
		    (long long)json_integer_value(
			json_object_get(d, "last_status")),
		    json_string_value(json_object_get(d, "delivered_at")));
	else if (strcmp(state, "failed") == 0 ||
		 strcmp(state, "retrying") == 0)
		snprintf(line + n, sizeof(line) - (size_t)n,
			 "%s after %lld %s: %s",
			 strcmp(state, "failed") == 0 ? "failed" : "retrying",
			 (long long)tries, tries == 1 ? "try" : "tries",
			 error != NULL ? error : "no answer");
	else
		snprintf(line + n, sizeof(line) - (size_t)n, "pending");
	return json_string(line);
}

json_t *webhooks_page_lines(json_t *job)
{
	json_t *lines = json_array(), *d;
	size_t i;

	json_array_foreach(json_object_get(job, "webhooks"), i, d)
	    json_array_append_new(lines, page_line(d));
	return lines;
}
