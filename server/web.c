/*
 * The web UI: server-rendered pages from web/templates, static files from
 * web/static, both in the share directory (--share-dir, or found from
 * where this program is: server_share_dir_default).  Pages
 * reach the data through the same service functions as the REST handlers
 * (jobs.c, tokens.c, workers_list_json, ...), so the UI and the API show
 * the same thing; every page answer carries a Content Security Policy
 * without inline script.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "patches.h"
#include "retry.h"
#include "server.h"
#include "tmpl.h"
#include "web.h"

#define WEB_MAX_TEMPLATES 64
#define WEB_MAX_FILE (1024 * 1024)

static void web_static(struct http_response *res, struct http_request *req);

const struct http_route web_routes[] = {
    {"GET", "/", ROLE_NONE, web_dashboard},
    {"GET", "/signin", ROLE_NONE, web_signin_page},
    {"POST", "/signin", ROLE_NONE, web_signin},
    {"POST", "/signout", ROLE_NONE, web_signout},
    {"GET", "/jobs/new", ROLE_NONE, web_job_new},
    {"POST", "/jobs/new", ROLE_NONE, web_job_submit},
    {"GET", "/jobs/new-patch", ROLE_NONE, web_patch_new},
    {"POST", "/jobs/new-patch", ROLE_NONE, web_patch_submit},
    {"GET", "/jobs/{}", ROLE_NONE, web_job_page},
    {"GET", "/jobs/{}/live", ROLE_NONE, web_job_live},
    {"GET", "/jobs/{}/report", ROLE_NONE, web_job_report},
    {"GET", "/jobs/{}/commits/{}/log", ROLE_NONE, web_commit_log},
    {"GET", "/jobs/{}/runs.csv", ROLE_NONE, web_job_runs_csv},
    {"GET", "/jobs/{}/runs.json", ROLE_NONE, web_job_runs_json},
    {"GET", "/jobs/{}/cancel", ROLE_NONE, web_job_cancel_page},
    {"POST", "/jobs/{}/cancel", ROLE_NONE, web_job_cancel},
    {"POST", "/jobs/{}/rerun", ROLE_NONE, web_job_rerun},
    {"POST", "/jobs/{}/commits/{}/retry", ROLE_NONE, retry_web},
    {"POST", "/jobs/{}/retest", ROLE_NONE, web_job_retest},
    {"GET", "/admin/repos", ROLE_NONE, web_admin_repos},
    {"POST", "/admin/repos", ROLE_NONE, web_admin_repos_create},
    {"GET", "/admin/testcases", ROLE_NONE, web_admin_testcases},
    {"POST", "/admin/testcases", ROLE_NONE, web_admin_testcases_create},
    {"GET", "/admin/repos/{}/edit", ROLE_NONE, web_admin_repo_edit},
    {"POST", "/admin/repos/{}/edit", ROLE_NONE, web_admin_repo_save},
    {"GET", "/admin/repos/{}/delete", ROLE_NONE, web_admin_repo_delete_page},
    {"POST", "/admin/repos/{}/delete", ROLE_NONE, web_admin_repo_delete},
    {"GET", "/admin/testcases/{}/edit", ROLE_NONE, web_admin_testcase_edit},
    {"POST", "/admin/testcases/{}/edit", ROLE_NONE, web_admin_testcase_save},
    {"GET", "/admin/testcases/{}/delete", ROLE_NONE,
     web_admin_testcase_delete_page},
    {"POST", "/admin/testcases/{}/delete", ROLE_NONE,
     web_admin_testcase_delete},
    {"GET", "/admin/tokens", ROLE_NONE, web_admin_tokens},
    {"POST", "/admin/tokens", ROLE_NONE, web_admin_tokens_create},
    {"GET", "/admin/tokens/{}/revoke", ROLE_NONE,
     web_admin_tokens_revoke_page},
    {"POST", "/admin/tokens/{}/revoke", ROLE_NONE, web_admin_tokens_revoke},
    {"GET", "/admin/workers", ROLE_NONE, web_admin_workers},
    {"GET", "/static/{}", ROLE_NONE, web_static},
    {NULL, NULL, ROLE_NONE, NULL},
};

struct web_template {
	char name[64];
	char *text;
};

static struct {
	pthread_once_t once;
	char *dir; /* <share dir>/web (server_config.share_dir) */
	struct web_template templates[WEB_MAX_TEMPLATES];
	size_t count;
} web = {PTHREAD_ONCE_INIT, NULL, {{{0}, NULL}}, 0};

/* Reads a whole small file; NULL (errno set) when it cannot. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t n;

	if (f == NULL)
		return NULL;
	text = malloc(WEB_MAX_FILE + 1);
	if (text == NULL)
		goto out;
	n = fread(text, 1, WEB_MAX_FILE + 1, f);
	if (ferror(f) || n > WEB_MAX_FILE) {
		free(text);
		text = NULL;
		errno = EFBIG;
		goto out;
	}
	text[n] = '\0';
	if (len != NULL)
		*len = n;
out:
	fclose(f);
	return text;
}

static void web_init(void)
{
	char path[PATH_MAX + 128];
	struct dirent *entry;
	DIR *d;

	web.dir = server_share_path("web");
	if (web.dir == NULL) {
		log_error("web: out of memory");
		return;
	}
	snprintf(path, sizeof(path), "%s/templates", web.dir);
	d = opendir(path);
	if (d == NULL) {
		log_error("web: cannot open the templates in %s", path);
		return;
	}
	while ((entry = readdir(d)) != NULL && web.count < WEB_MAX_TEMPLATES) {
		struct web_template *t = &web.templates[web.count];
		size_t len = strlen(entry->d_name);

		if (len < 6 || len - 5 >= sizeof(t->name) ||
		    entry->d_name[0] == '.' ||
		    strcmp(entry->d_name + len - 5, ".html") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/templates/%s", web.dir,
			 entry->d_name);
		t->text = read_file(path, NULL);
		if (t->text == NULL) {
			log_error("web: cannot read %s", path);
			continue;
		}
		memcpy(t->name, entry->d_name, len - 5);
		t->name[len - 5] = '\0';
		web.count++;
	}
	closedir(d);
}

static const char *find_template(void *data, const char *name)
{
	size_t i;

	(void)data;
	for (i = 0; i < web.count; i++) {
		if (strcmp(web.templates[i].name, name) == 0)
			return web.templates[i].text;
	}
	return NULL;
}

void web_security_headers(struct http_response *res)
{
	http_add_header(res, "Content-Security-Policy",
			"default-src 'none'; script-src 'self'; "
			"style-src 'self'; img-src 'self'; "
			"connect-src 'self'; form-action 'self'; "
			"frame-ancestors 'none'; base-uri 'none'");
	http_add_header(res, "X-Frame-Options", "DENY");
	http_add_header(res, "Referrer-Policy", "same-origin");
}

int web_render_fragment(char **out, const char *name, json_t *context)
{
	const char *text;
	char *err = NULL;
	size_t len;

	pthread_once(&web.once, web_init);
	*out = NULL;
	text = find_template(NULL, name);
	if (text == NULL) {
		log_error("web: no template '%s' in %s/templates", name,
			  web.dir);
		return -1;
	}
	if (tmpl_render(out, &len, text, context, find_template, NULL, &err) <
	    0) {
		log_error("web: template '%s': %s", name, err);
		free(err);
		return -1;
	}
	return 0;
}

/* The "session" value of every page: who, the CSRF token, navigation. */
static json_t *session_json(const struct web_session *s, const char *nav)
{
	static const struct {
		const char *key, *href, *label;
		enum http_role role;
	} entries[] = {
	    {"jobs", "/", "Jobs", ROLE_READ},
	    {"new", "/jobs/new", "New job", ROLE_SUBMIT},
	    {"watches", "/watches", "Watches", ROLE_READ},
	    {"repos", "/admin/repos", "Repositories", ROLE_ADMIN},
	    {"testcases", "/admin/testcases", "Testcases", ROLE_ADMIN},
	    {"tokens", "/admin/tokens", "Tokens", ROLE_ADMIN},
	    {"workers", "/admin/workers", "Workers", ROLE_ADMIN},
	};
	json_t *items = json_array();
	size_t i;

	for (i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		if (s->role < entries[i].role)
			continue;
		json_array_append_new(
		    items, json_pack("{s:s,s:s,s:b}", "href", entries[i].href,
				     "label", entries[i].label, "current",
				     nav != NULL &&
					 strcmp(nav, entries[i].key) == 0));
	}
	return json_pack("{s:s,s:s,s:s,s:b,s:b,s:o}", "name", s->name, "role",
			 http_role_name(s->role), "csrf", s->csrf,
			 "can_submit", s->role >= ROLE_SUBMIT, "is_admin",
			 s->role >= ROLE_ADMIN, "nav", items);
}

int web_render_text(char **out, const char *name, json_t *context,
		    const struct web_session *session, const char *nav)
{
	int rc;

	*out = NULL;
	if (context == NULL)
		return -1;
	if (session != NULL && session->valid)
		json_object_set_new(context, "session",
				    session_json(session, nav));
	rc = web_render_fragment(out, name, context);
	json_decref(context);
	return rc;
}

void web_page(struct http_response *res, unsigned status, char *text)
{
	if (text == NULL) {
		http_text(res, 500, "text/plain; charset=utf-8",
			  "The page cannot be shown: its template is "
			  "broken or missing (see the server log).\n");
		return;
	}
	free(res->body);
	res->status = status;
	res->body = text;
	res->body_len = strlen(text);
	res->content_type = "text/html; charset=utf-8";
	web_security_headers(res);
}

void web_render(struct http_response *res, unsigned status, const char *name,
		json_t *context, const struct web_session *session,
		const char *nav)
{
	char *text = NULL;

	if (context == NULL) {
		http_error(res, 500, "internal", "out of memory");
		return;
	}
	web_render_text(&text, name, context, session, nav);
	web_page(res, status, text);
}

void web_error_page(struct http_response *res, unsigned status,
		    const struct web_session *session, const char *message)
{
	web_render(res, status, "error",
		   json_pack("{s:s,s:s,s:I}", "title", "Error", "message",
			     message, "status", (json_int_t)status),
		   session, NULL);
}

void web_layer_error_page(struct http_response *res, unsigned status,
			  const char *message)
{
	web_error_page(res, status, NULL, message);
}

void web_redirect(struct http_response *res, const char *location)
{
	free(res->location);
	res->location = strdup(location);
	http_text(res, 303, "text/plain; charset=utf-8", "See Other\n");
}

void web_confirm_page(struct http_response *res,
		      const struct web_session *session, const char *nav,
		      const struct web_confirm *c)
{
	web_render(res, 200, "confirm",
		   json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "title",
			     c->question, "question", c->question, "action",
			     c->action, "explain", c->explain, "button",
			     c->button, "back", c->back, "keep", c->keep,
			     "csrf", session->csrf),
		   session, nav);
}

json_t *web_notify_list(const char *text)
{
	json_t *list = json_array();
	const char *p = text != NULL ? text : "";

	while (*p != '\0') {
		size_t n;

		while (*p == ',' || *p == ';' || isspace((unsigned char)*p))
			p++;
		n = strcspn(p, ",; \t\r\n");
		if (n > 0)
			json_array_append_new(list, json_stringn(p, n));
		p += n;
	}
	return list;
}

void web_age(char *buf, size_t size, const char *iso)
{
	struct tm tm;
	const char *end;
	long long age;

	memset(&tm, 0, sizeof(tm));
	end = iso != NULL ? strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	if (end == NULL || *end != '\0') {
		snprintf(buf, size, "?");
		return;
	}
	age = (long long)(time(NULL) - timegm(&tm));
	if (age < 0)
		age = 0;
	if (age < 60)
		snprintf(buf, size, "%lld s", age);
	else if (age < 3600)
		snprintf(buf, size, "%lld min", age / 60);
	else if (age < 2 * 86400)
		snprintf(buf, size, "%lld h", age / 3600);
	else
		snprintf(buf, size, "%lld d", age / 86400);
}

/* GET /static/{}: the CSS, the script and the icon. */
static void web_static(struct http_response *res, struct http_request *req)
{
	static const struct {
		const char *suffix, *type;
	} types[] = {
	    {".css", "text/css; charset=utf-8"},
	    {".js", "text/javascript; charset=utf-8"},
	    {".svg", "image/svg+xml"},
	};
	const char *name = req->params[0], *type = NULL;
	char path[PATH_MAX + 64];
	size_t i, t, n = strlen(name), len = 0;
	char *text;

	pthread_once(&web.once, web_init);
	for (i = 0; i < n; i++) {
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '-' ||
		      name[i] == '.'))
			break;
	}
	for (t = 0; i == n && t < sizeof(types) / sizeof(types[0]); t++) {
		size_t sl = strlen(types[t].suffix);

		if (n > sl && strcmp(name + n - sl, types[t].suffix) == 0)
			type = types[t].type;
	}
	if (type == NULL || name[0] == '.' || n > 64) {
		http_error(res, 404, "not_found", "no static file '%s'", name);
		return;
	}
	snprintf(path, sizeof(path), "%s/static/%s", web.dir, name);
	text = read_file(path, &len);
	if (text == NULL) {
		http_error(res, 404, "not_found", "no static file '%s'", name);
		return;
	}
	free(res->body);
	res->status = 200;
	res->body = text;
	res->body_len = len;
	res->content_type = type;
}
