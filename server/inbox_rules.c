/* The REST API of the patch-series inbox (issue 13): its rules, and the
 * messages it read with what became of them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "db.h"
#include "fields.h"
#include "inbox.h"
#include "report.h"
#include "server.h"
#include "store/store.h"
#include "store/store_inbox.h"
#include "store/store_patches.h"

#define RULE_NOTIFY_MAX 50
#define RULE_TEXT_MAX 255

/* True when `text` is 1 to RULE_TEXT_MAX bytes without controls or
 * blanks (a tag word, a branch name). */
static bool plain_word(const char *text)
{
	size_t i, n = strlen(text);

	if (n == 0 || n > RULE_TEXT_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)text[i] <= ' ' || text[i] == 0x7f ||
		    text[i] == '[' || text[i] == ']')
			return false;
	return true;
}

static bool valid_name(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 64 || !isalnum((unsigned char)name[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '.' &&
		    name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

static bool valid_archive(const char *url)
{
	return (strncmp(url, "https://", 8) == 0 ||
		strncmp(url, "http://", 7) == 0) &&
	       strlen(url) <= 512 && strpbrk(url, " \t\r\n<>\"") == NULL;
}

/* Checks the notify list (absent: none) into *out as JSON text. */
static void rule_notify(struct field_errors *errors, json_t *notify,
			char **out)
{
	size_t i;
	json_t *v;

	*out = NULL;
	if (notify == NULL || json_is_null(notify)) {
		*out = strdup("[]");
		return;
	}
	if (!json_is_array(notify) ||
	    json_array_size(notify) > RULE_NOTIFY_MAX) {
		fields_add(errors, "notify", 400, "invalid_field",
			   "field 'notify' must be a list of at most %d "
			   "addresses",
			   RULE_NOTIFY_MAX);
		return;
	}
	json_array_foreach(notify, i, v)
	{
		if (!report_address_is_valid(json_string_value(v))) {
			fields_add(errors, "notify", 400, "invalid_email",
				   "'notify' entry %zu is not a plain email "
				   "address (local@domain)",
				   i + 1);
			return;
		}
	}
	*out = json_dumps(notify, JSON_COMPACT);
}

/* Reads and checks a rule from `body`; every error goes to `errors`. */
static void rule_from_json(struct store_inbox_rule *rule, char **notify,
			   const char **repo, const char **testcase,
			   json_t *body, struct field_errors *errors)
{
	memset(rule, 0, sizeof(*rule));
	fields_json_string(errors, body, "name", true, &rule->name);
	fields_json_string(errors, body, "tag", false, &rule->tag);
	fields_json_string(errors, body, "list", false, &rule->list);
	fields_json_string(errors, body, "repo", true, repo);
	fields_json_string(errors, body, "testcase", true, testcase);
	fields_json_string(errors, body, "base", true, &rule->base);
	fields_json_string(errors, body, "archive", false, &rule->archive);
	if (rule->name != NULL && !valid_name(rule->name))
		fields_add(errors, "name", 400, "invalid_field",
			   "a rule's name is 1 to 64 letters, digits, '.', "
			   "'_' or '-', starting with a letter or digit");
	if (rule->tag == NULL)
		rule->tag = "";
	else if (rule->tag[0] != '\0' && !plain_word(rule->tag))
		fields_add(errors, "tag", 400, "invalid_field",
			   "'tag' is one word of the subject's PATCH tag, "
			   "such as net-next");
	if (rule->list == NULL)
		rule->list = "";
	else if (rule->list[0] != '\0' && !report_address_is_valid(rule->list))
		fields_add(errors, "list", 400, "invalid_email",
			   "'list' is the plain address the series is sent "
			   "to (netdev@vger.kernel.org)");
	if (rule->base != NULL && !plain_word(rule->base))
		fields_add(errors, "base", 400, "invalid_field",
			   "'base' is a revision: a branch, tag or SHA");
	if (rule->archive != NULL && !valid_archive(rule->archive))
		fields_add(errors, "archive", 400, "invalid_field",
			   "field 'archive' must be an http(s) URL prefix "
			   "such as https://lore.kernel.org/all/");
	rule_notify(errors, json_object_get(body, "notify"), notify);
}

static json_t *rule_json(const struct store_inbox_rule *r)
{
	return json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s?,s:o,s:s}", "id",
			 (json_int_t)r->id, "name", r->name, "tag", r->tag,
			 "list", r->list, "repo", r->repo, "testcase",
			 r->testcase, "base", r->base, "archive", r->archive,
			 "notify", json_loads(r->notify, 0, NULL),
			 "created_at", r->created_at);
}

/* The rule of id `id` as the API shows it, or NULL. */
static json_t *rule_get(PGconn *conn, long long id, bool *failed)
{
	struct store_inbox_rules rules;
	json_t *out = NULL;
	size_t i;

	*failed = store_inbox_rules_list(&rules, conn) < 0;
	for (i = 0; !*failed && i < rules.count; i++)
		if (rules.rules[i].id == id)
			out = rule_json(&rules.rules[i]);
	store_inbox_rules_clear(&rules);
	return out;
}

/* Stores the checked rule; 0, or -1 with the error in `errors`. */
static int rule_store(long long *id, PGconn *conn,
		      const struct store_inbox_rule *rule, const char *repo,
		      const char *testcase, struct field_errors *errors)
{
	long long repo_id = 0, testcase_id = 0;
	const char *which = NULL;
	char *url = NULL;
	bool found = false;
	int rc;

	if (store_patches_lookup(conn, repo, testcase, &repo_id, &url,
				 &testcase_id, &found, &which) < 0) {
		fields_db_failed(errors);
		return -1;
	}
	free(url);
	if (!found) {
		bool is_repo = strcmp(which, "repo") == 0;

		fields_add(errors, which, 404,
			   is_repo ? "unknown_repo" : "unknown_testcase",
			   "%s '%s' is not registered",
			   is_repo ? "repository" : "testcase",
			   is_repo ? repo : testcase);
		return -1;
	}
	rc = store_inbox_rule_add(id, conn, rule, repo_id, testcase_id);
	if (rc == STORE_EXISTS)
		fields_add(errors, "name", 409, "exists",
			   "an inbox rule named '%s' exists already",
			   rule->name);
	else if (rc < 0)
		fields_db_failed(errors);
	return rc < 0 ? -1 : 0;
}

static void api_rule_create(struct http_response *res,
			    struct http_request *req)
{
	json_t *body = http_json_body(res, req), *out;
	struct store_inbox_rule rule;
	struct field_errors errors;
	const char *repo = NULL, *testcase = NULL;
	char *notify = NULL;
	long long id = 0;
	bool failed = false;
	PGconn *conn = db_conn();

	if (body == NULL)
		return;
	fields_init(&errors);
	rule_from_json(&rule, &notify, &repo, &testcase, body, &errors);
	rule.notify = notify;
	if (!fields_ok(&errors) || conn == NULL ||
	    rule_store(&id, conn, &rule, repo, testcase, &errors) < 0) {
		if (!fields_answer(res, &errors))
			http_db_failed(res);
		goto out;
	}
	out = rule_get(conn, id, &failed);
	if (out == NULL) {
		http_db_failed(res);
		goto out;
	}
	http_json(res, 201, out);
out:
	free(notify);
	json_decref(body);
}

static void api_rules_list(struct http_response *res, struct http_request *req)
{
	struct store_inbox_rules rules;
	PGconn *conn = db_conn();
	json_t *list;
	size_t i;

	(void)req;
	if (conn == NULL || store_inbox_rules_list(&rules, conn) < 0) {
		http_db_failed(res);
		return;
	}
	list = json_array();
	for (i = 0; i < rules.count; i++)
		json_array_append_new(list, rule_json(&rules.rules[i]));
	store_inbox_rules_clear(&rules);
	http_json(res, 200, json_pack("{s:o}", "rules", list));
}

static void api_rule_delete(struct http_response *res,
			    struct http_request *req)
{
	PGconn *conn = db_conn();
	long long id;
	int rc;

	if (!http_path_id(res, req->params[0], "not_found", "inbox rule", &id))
		return;
	rc = conn == NULL ? STORE_FAILED : store_inbox_rule_delete(conn, id);
	if (rc == STORE_NOT_FOUND)
		http_error(res, 404, "not_found", "no inbox rule '%s'",
			   req->params[0]);
	else if (rc < 0)
		http_db_failed(res);
	else
		http_json(res, 200,
			  json_pack("{s:I}", "deleted", (json_int_t)id));
}

/* GET /api/v1/inbox?limit=N: the newest messages read (100 unless
 * said, at most 1000). */
static void api_messages(struct http_response *res, struct http_request *req)
{
	const char *text = http_query(req, "limit");
	PGconn *conn = db_conn();
	long long limit = 100;
	json_t *list;
	char *end;

	if (text != NULL) {
		limit = strtoll(text, &end, 10);
		if (end == text || *end != '\0' || limit < 1 || limit > 1000) {
			http_error(res, 400, "invalid_query",
				   "'limit' must be an integer from 1 to "
				   "1000");
			return;
		}
	}
	if (conn == NULL || store_inbox_list_json(&list, conn, limit) < 0) {
		http_db_failed(res);
		return;
	}
	http_json(res, 200, json_pack("{s:o}", "messages", list));
}

const struct http_route inbox_routes[] = {
    {"GET", "/api/v1/inbox", ROLE_READ, api_messages},
    {"GET", "/api/v1/inbox/rules", ROLE_READ, api_rules_list},
    {"POST", "/api/v1/inbox/rules", ROLE_ADMIN, api_rule_create},
    {"DELETE", "/api/v1/inbox/rules/{}", ROLE_ADMIN, api_rule_delete},
    {NULL, NULL, ROLE_NONE, NULL},
};
