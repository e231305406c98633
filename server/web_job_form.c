/*
 * The submit form of the web UI: a new job from the form's fields, every
 * error shown at once next to its field, in the form's words, with what
 * the person typed kept.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "jobs.h"
#include "server.h"
#include "spread.h"
#include "strbuf.h"
#include "web.h"

/* The fields of the submit form, in page order. */
static const char *const form_fields[] = {
    "repo",	"testcase",    "good",		 "bad",
    "notify",	"runs_min",    "runs_max",	 "group",
    "machines", "webhook_url", "webhook_format", NULL};

/*
 * Renders the submit form with `values` (the entered values) and `errors`
 * (field -> message), both borrowed.
 */
static void render_form(struct http_response *res, unsigned status,
			const struct web_session *session, json_t *values,
			json_t *errors, const char *general)
{
	const char *repo = json_string_value(json_object_get(values, "repo"));
	const char *testcase =
	    json_string_value(json_object_get(values, "testcase"));

	web_render(res, status, "job_new",
		   json_pack("{s:s,s:O,s:O,s:o,s:o,s:s?,s:s}", "title",
			     "New job", "values", values, "errors", errors,
			     "repos", web_jobs_names(false, repo), "testcases",
			     web_jobs_names(true, testcase), "general_error",
			     general, "csrf", session->csrf),
		   session, "new");
}

void web_job_new(struct http_response *res, struct http_request *req)
{
	struct web_session session;
	json_t *values, *errors;
	size_t i;

	if (!web_require(&session, res, req, ROLE_SUBMIT, true))
		return;
	values = json_object();
	errors = json_object();
	/* Links may preselect fields: /jobs/new?repo=x&good=..&bad=.. */
	for (i = 0; form_fields[i] != NULL; i++) {
		const char *v = http_query(req, form_fields[i]);

		if (v != NULL && strlen(v) <= 1024)
			json_object_set_new(values, form_fields[i],
					    json_string(v));
	}
	render_form(res, 200, &session, values, errors, NULL);
	json_decref(values);
	json_decref(errors);
}

/* Trims spaces at both ends of the form value `key` (in place). */
static const char *form_text(json_t *form, const char *key)
{
	json_t *v = json_object_get(form, key);
	const char *text = json_string_value(v);
	size_t start = 0, end;

	if (text == NULL) {
		json_object_set_new(form, key, json_string(""));
		return "";
	}
	end = strlen(text);
	while (start < end && isspace((unsigned char)text[start]))
		start++;
	while (end > start && isspace((unsigned char)text[end - 1]))
		end--;
	if (start > 0 || end < strlen(text)) {
		json_object_set_new(form, key,
				    json_stringn(text + start, end - start));
		text = json_string_value(json_object_get(form, key));
	}
	return text;
}

/* A required field's text, or NULL (with an error) when it is empty. */
static const char *form_required(json_t *form, const char *key,
				 struct field_errors *errors)
{
	const char *text = form_text(form, key);

	if (text[0] != '\0')
		return text;
	fields_add(errors, key, 400, "missing_field", "field '%s' is required",
		   key);
	return NULL;
}

/* The most runs field `key` may ask for. */
static long long runs_most(const char *key)
{
	return strcmp(key, "runs_min") == 0 ? JOBS_RUNS_MIN_MOST
					    : JOBS_RUNS_MAX_MOST;
}

/* An optional whole number from `least` to `most` (the runs limits, the
 * machines at once), or 0 (with an error unless the field is empty). */
static long long form_number(json_t *form, const char *key, long long least,
			     long long most, struct field_errors *errors)
{
	const char *text = form_text(form, key);
	size_t n = strlen(text);
	long long value;

	if (n == 0)
		return 0;
	value = n <= 6 && strspn(text, "0123456789") == n ? atoll(text) : -1;
	if (value >= least && value <= most)
		return value;
	fields_add(errors, key, 400, "invalid_field",
		   "field '%s' must be an integer from %lld to %lld", key,
		   least, most);
	fields_set_value(errors, text);
	return 0;
}

/* "'a'", "'a' and 'b'", "'a', 'b' and 'c'": the values of every
 * invalid_email error, quoted. */
static void quote_addresses(struct strbuf *b, const struct field_errors *all,
			    size_t *count)
{
	size_t i, total = 0, done = 0;

	for (i = 0; i < all->count; i++)
		total += strcmp(all->items[i].code, "invalid_email") == 0;
	for (i = 0; i < all->count; i++) {
		if (strcmp(all->items[i].code, "invalid_email") != 0)
			continue;
		if (done > 0)
			strbuf_append(b, done + 1 == total ? " and " : ", ");
		strbuf_printf(b, "'%s'", all->items[i].value);
		done++;
	}
	*count = total;
}

/* The words of the form for error `e` of the list `all`, into `b`.
 * `form` holds the values that were sent. */
static void form_words(struct strbuf *b, const struct field_error *e,
		       const struct field_errors *all, json_t *form)
{
	const char *repo = json_string_value(json_object_get(form, "repo"));
	size_t count;

	if (strcmp(e->code, "missing_field") == 0) {
		strbuf_append(b, "This is required.");
	} else if (strcmp(e->code, "unknown_repo") == 0) {
		strbuf_printf(b, "Repository '%s' is not registered.",
			      e->value);
	} else if (strcmp(e->code, "unknown_testcase") == 0) {
		strbuf_printf(b, "Testcase '%s' is not registered.", e->value);
	} else if (strcmp(e->code, "unknown_revision") == 0) {
		strbuf_printf(b, "%s '%s' names no commit in repository '%s'.",
			      strcmp(e->field, "good") == 0 ? "Good revision"
							    : "Bad revision",
			      e->value, repo != NULL ? repo : "");
	} else if (strcmp(e->code, "invalid_email") == 0) {
		quote_addresses(b, all, &count);
		strbuf_append(b, count == 1 ? " is not an email address"
					    : " are not email addresses");
		strbuf_append(b, ": write each as name@example.org, separated "
				 "by commas.");
	} else if (strcmp(e->field, "notify") == 0) {
		strbuf_printf(b, "Give at most %d addresses.",
			      JOBS_NOTIFY_MOST);
	} else if (strcmp(e->code, "runs_conflict") == 0) {
		/* It names the testcase's bound, which the form does not. */
		strbuf_append(b, e->message);
	} else if (strncmp(e->field, "runs_", 5) == 0 && e->value[0] != '\0') {
		strbuf_printf(b,
			      "'%s' is not a whole number from %d to %lld: "
			      "give one, or leave it empty for the "
			      "testcase's default.",
			      e->value, JOBS_RUNS_LEAST, runs_most(e->field));
	} else if (strcmp(e->field, "runs_max") == 0) {
		strbuf_append(b, "The most runs cannot be below the fewest.");
	} else if (strcmp(e->field, "machines") == 0) {
		strbuf_printf(b,
			      "'%s' is not a whole number from 1 to %d: give "
			      "one, or leave it empty for one machine.",
			      e->value, SPREAD_MACHINES_MAX);
	} else {
		/* The range's own words name good and bad. */
		strbuf_append(b, e->message);
	}
}

/*
 * The errors as the form shows them: field -> message in the form's
 * words, the first of each field, into *fields (new reference), and the
 * errors of the request as a whole into `general` (cleared if none).
 */
static json_t *form_errors(const struct field_errors *errors, json_t *form,
			   struct strbuf *general)
{
	json_t *fields = json_object();
	size_t i;

	for (i = 0; i < errors->count; i++) {
		const struct field_error *e = &errors->items[i];
		struct strbuf b = STRBUF_INIT;
		char *text, name[sizeof(e->field)], *dot;

		if (e->field[0] == '\0') {
			strbuf_printf(general, "%s%s",
				      general->len > 0 ? " " : "", e->message);
			continue;
		}
		/* The API's "webhook.url" is the form's "webhook_url". */
		snprintf(name, sizeof(name), "%s", e->field);
		while ((dot = strchr(name, '.')) != NULL)
			*dot = '_';
		if (json_object_get(fields, name) != NULL)
			continue;
		form_words(&b, e, errors, form);
		if (strbuf_finish(&text, NULL, &b) == 0) {
			json_object_set_new(fields, name, json_string(text));
			free(text);
		}
	}
	return fields;
}

/* Reads the form into *request (pointing into `form`), adding an error
 * for each required field left empty and each runs limit that is no
 * number in the limits; *notify receives the addresses (new
 * reference). */
static void form_request(struct jobs_request *request, json_t **notify,
			 json_t *form, struct field_errors *errors)
{
	memset(request, 0, sizeof(*request));
	request->repo = form_required(form, "repo", errors);
	request->testcase = form_required(form, "testcase", errors);
	request->good = form_required(form, "good", errors);
	request->bad = form_required(form, "bad", errors);
	request->runs_min = form_number(form, "runs_min", JOBS_RUNS_LEAST,
					runs_most("runs_min"), errors);
	request->runs_max = form_number(form, "runs_max", JOBS_RUNS_LEAST,
					runs_most("runs_max"), errors);
	/* Empty: the testcase's group. */
	request->group = form_text(form, "group");
	if (request->group[0] == '\0')
		request->group = NULL;
	request->machines =
	    form_number(form, "machines", 1, SPREAD_MACHINES_MAX, errors);
	*notify = web_notify_list(form_text(form, "notify"));
	request->notify = *notify;
	/* A webhook when its URL is given (webhooks.h). */
	request->webhook.url = form_text(form, "webhook_url");
	if (request->webhook.url != NULL && request->webhook.url[0] != '\0') {
		request->webhook.given = true;
		request->webhook.format = form_text(form, "webhook_format");
		request->webhook.secret = form_text(form, "webhook_secret");
		if (request->webhook.secret[0] == '\0')
			request->webhook.secret = NULL;
		if (request->webhook.format[0] == '\0')
			request->webhook.format = NULL;
		webhooks_request_check(&request->webhook, true, true, true,
				       errors);
	}
}

/* Shows the form again with what was sent and every error. */
static void form_refused(struct http_response *res,
			 const struct web_session *session, json_t *form,
			 const struct field_errors *errors)
{
	struct strbuf general = STRBUF_INIT;
	json_t *values = json_object(), *fields;
	char *general_text = NULL;
	size_t i;

	for (i = 0; form_fields[i] != NULL; i++)
		json_object_set(values, form_fields[i],
				json_object_get(form, form_fields[i]));
	json_object_set_new(
	    values, "webhook_github",
	    json_boolean(strcmp(form_text(form, "webhook_format"),
				"github-status") == 0));
	fields = form_errors(errors, form, &general);
	if (strbuf_finish(&general_text, NULL, &general) < 0 ||
	    general_text[0] == '\0') {
		free(general_text);
		general_text = NULL;
	}
	render_form(res,
		    errors->count > 0 && errors->items[0].status >= 400
			? errors->items[0].status
			: 400,
		    session, values, fields, general_text);
	if (errors->retry_after_s > 0) {
		char seconds[24];

		snprintf(seconds, sizeof(seconds), "%lld",
			 errors->retry_after_s);
		http_add_header(res, "Retry-After", seconds);
	}
	free(general_text);
	json_decref(fields);
	json_decref(values);
}

void web_job_submit(struct http_response *res, struct http_request *req)
{
	struct jobs_request request;
	struct web_session session;
	struct field_errors errors;
	json_t *form, *notify = NULL;
	PGconn *conn = db_conn();
	char location[64];
	long long job_id;
	int rc;

	if (!web_require_post(&session, &form, res, req, ROLE_SUBMIT))
		return;
	fields_init(&errors);
	form_request(&request, &notify, form, &errors);
	rc = conn != NULL
		 ? jobs_create(&job_id, conn, &request, req->token_id, &errors)
		 : JOBS_DB_FAILED;
	if (rc == 0) {
		snprintf(location, sizeof(location), "/jobs/%lld", job_id);
		web_redirect(res, location);
	} else if (rc == JOBS_DB_FAILED) {
		web_db_failed(res, &session);
	} else {
		form_refused(res, &session, form, &errors);
	}
	json_decref(notify);
	json_decref(form);
}
