#include "patches.h"

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "gitrepo.h"
#include "jobs.h"
#include "log.h"
#include "mbox.h"
#include "mirror.h"
#include "patchapply.h"
#include "report.h"
#include "scheduler.h"
#include "server.h"
#include "store/store_jobs.h"
#include "store/store_patches.h"
#include "store/store_repos.h"
#include "strbuf.h"
#include "utf8.h"

/* Patches in one series, at most. */
#define PATCHES_MAX 100

bool patches_is_request(json_t *body)
{
	const char *kind = json_string_value(json_object_get(body, "kind"));

	return kind != NULL && strcmp(kind, "patch") == 0;
}

/* The request's fields, checked. */
struct patch_request {
	const char *repo, *testcase, *base, *mbox, *archive;
	json_t *notify;
	long long runs_min, runs_max;
};

static bool field_string(struct field_errors *errors, json_t *body,
			 const char *key, bool required, const char **out)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		if (required)
			fields_add(errors, key, 400, "missing_field",
				   "field '%s' is required", key);
		return !required;
	}
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' must be a string without NULs", key);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

static bool field_runs(struct field_errors *errors, json_t *body,
		       const char *key, long long max, long long *out)
{
	json_t *v = json_object_get(body, key);

	*out = 0;
	if (v == NULL || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 2 ||
	    json_integer_value(v) > max) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' must be an integer from 2 to %lld", key,
			   max);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

static bool request_parse(struct field_errors *errors, json_t *body,
			  struct patch_request *pr)
{
	size_t i;
	json_t *v;

	if (!field_string(errors, body, "repo", true, &pr->repo) ||
	    !field_string(errors, body, "testcase", true, &pr->testcase) ||
	    !field_string(errors, body, "base", true, &pr->base) ||
	    !field_string(errors, body, "mbox", true, &pr->mbox) ||
	    !field_string(errors, body, "archive", false, &pr->archive) ||
	    !field_runs(errors, body, "runs_min", 1000, &pr->runs_min) ||
	    !field_runs(errors, body, "runs_max", 10000, &pr->runs_max))
		return false;
	if (pr->runs_min > 0 && pr->runs_max > 0 &&
	    pr->runs_max < pr->runs_min) {
		fields_add(errors, "runs_max", 400, "invalid_field",
			   "'runs_max' must not be below 'runs_min'");
		return false;
	}
	if (pr->archive != NULL &&
	    ((strncmp(pr->archive, "https://", 8) != 0 &&
	      strncmp(pr->archive, "http://", 7) != 0) ||
	     strpbrk(pr->archive, " \t\r\n<>\"") != NULL ||
	     strlen(pr->archive) > 512)) {
		fields_add(errors, "archive", 400, "invalid_field",
			   "field 'archive' must be an http(s) URL prefix "
			   "such as https://lore.kernel.org/all/");
		return false;
	}
	pr->notify = json_object_get(body, "notify");
	if (pr->notify == NULL || json_is_null(pr->notify)) {
		pr->notify = NULL;
		return true;
	}
	if (!json_is_array(pr->notify) || json_array_size(pr->notify) > 50) {
		fields_add(errors, "notify", 400, "invalid_field",
			   "field 'notify' must be a list of at most 50 "
			   "addresses");
		return false;
	}
	json_array_foreach(pr->notify, i, v)
	{
		if (!report_address_is_valid(json_string_value(v))) {
			fields_add(errors, "notify", 400, "invalid_field",
				   "notify address %zu is not a plain "
				   "address (user@example.org)",
				   i + 1);
			return false;
		}
	}
	return true;
}

/* A series read from its mbox and made commits. */
struct series {
	struct mbox_series mbox;
	const struct mbox_message **patches;
	size_t count;
	char **messages; /* commit messages, one per patch */
	struct patchapply_patch *apply;
	char (*shas)[GITREPO_SHA_LEN + 1];
	/* the base commit */
	char base_sha[GITREPO_SHA_LEN + 1];
	char *base_subject, *base_author_name, *base_author_email;
};

static void series_free(struct series *s)
{
	size_t i;

	for (i = 0; s->messages != NULL && i < s->count; i++)
		free(s->messages[i]);
	free(s->messages);
	free(s->apply);
	free(s->shas);
	free(s->patches);
	free(s->base_subject);
	free(s->base_author_name);
	free(s->base_author_email);
	mbox_series_free(&s->mbox);
}

/* Reads the mbox into `s`: 422 when it holds no usable series. */
static bool series_read(struct field_errors *errors,
			const struct patch_request *pr, struct series *s)
{
	char *err = NULL;
	size_t i;

	if (mbox_parse(&s->mbox, pr->mbox, strlen(pr->mbox), &err) < 0 ||
	    mbox_series_patches(&s->patches, &s->count, NULL, &s->mbox, &err) <
		0) {
		fields_add(errors, "mbox", 422, "invalid_mbox", "%s",
			   err != NULL ? err : "out of memory");
		free(err);
		return false;
	}
	if (s->count > PATCHES_MAX) {
		fields_add(errors, "mbox", 422, "invalid_mbox",
			   "the series holds %zu patches; at most %d are "
			   "tested in one job",
			   s->count, PATCHES_MAX);
		return false;
	}
	s->messages = calloc(s->count, sizeof(*s->messages));
	s->apply = calloc(s->count, sizeof(*s->apply));
	s->shas = calloc(s->count, sizeof(*s->shas));
	if (s->messages == NULL || s->apply == NULL || s->shas == NULL)
		goto oom;
	for (i = 0; i < s->count; i++) {
		const struct mbox_message *m = s->patches[i];

		s->messages[i] = mbox_commit_message(m);
		if (s->messages[i] == NULL)
			goto oom;
		s->apply[i] = (struct patchapply_patch){
		    .diff = m->diff,
		    .diff_len = m->diff_len,
		    .message = s->messages[i],
		    .author_name = m->author_name,
		    .author_email = m->author_email,
		    .date = m->date,
		    .date_offset = m->date_offset,
		};
	}
	return true;
oom:
	fields_add(errors, "", 500, "internal", "out of memory");
	return false;
}

/* Copies the base commit's subject and author, made valid UTF-8. */
static int base_describe(struct series *s, git_repository *repo,
			 const git_oid *base)
{
	git_commit *commit = NULL;
	const git_signature *author;
	const char *summary;

	if (git_commit_lookup(&commit, repo, base) < 0)
		return -1;
	git_oid_tostr(s->base_sha, sizeof(s->base_sha), base);
	summary = git_commit_summary(commit);
	author = git_commit_author(commit);
	if (utf8_sanitize(&s->base_subject, summary ? summary : "",
			  summary ? strlen(summary) : 0) < 0 ||
	    utf8_sanitize(&s->base_author_name, author->name,
			  strlen(author->name)) < 0 ||
	    utf8_sanitize(&s->base_author_email, author->email,
			  strlen(author->email)) < 0) {
		git_commit_free(commit);
		return -1;
	}
	git_commit_free(commit);
	return 0;
}

/*
 * Applies every patch in turn onto the last one that applied, so that each
 * failing patch is found, not just the first; the failures go to *failures
 * as [{"patch": n, "subject", "reason"}].  The commits are written to an
 * in-memory object store that is dropped afterwards: the mirror stays as
 * its source has it.
 */
static int series_apply(json_t **failures, struct series *s,
			git_repository *repo, const git_oid *base)
{
	git_odb *odb = NULL;
	git_odb_backend *mempack = NULL;
	git_oid previous = *base, oid;
	size_t i, failed;
	int error = -1;

	*failures = json_array();
	if (git_repository_odb(&odb, repo) < 0 ||
	    git_mempack_new(&mempack) < 0 ||
	    git_odb_add_backend(odb, mempack, 1000) < 0) {
		if (mempack != NULL)
			mempack->free(mempack);
		goto out;
	}
	for (i = 0; i < s->count; i++) {
		char *err = NULL;

		if (patchapply_series(&oid, repo, &previous, &s->apply[i], 1,
				      &failed, &err) < 0) {
			json_array_append_new(
			    *failures,
			    json_pack("{s:I,s:s,s:s}", "patch",
				      (json_int_t)(i + 1), "subject",
				      s->patches[i]->subject, "reason",
				      err != NULL ? err : "unknown error"));
			free(err);
			continue;
		}
		git_oid_tostr(s->shas[i], sizeof(s->shas[i]), &oid);
		previous = oid;
	}
	error = 0;
out:
	git_odb_free(odb);
	return error;
}

/*
 * The refusal of a series some of whose patches do not apply, as the API
 * answers it: {"code": "patch_does_not_apply", "message": every failing
 * patch and why, "failures"}.  Added to `errors` too (its message cut as
 * fields_add cuts), and stored in *refusal (a new reference).
 */
static void refuse_failures(json_t **refusal, struct field_errors *errors,
			    json_t *failures, const char *base_sha)
{
	struct strbuf message = STRBUF_INIT;
	char *text = NULL;
	size_t i, len;
	json_t *f;

	json_array_foreach(failures, i, f)
	{
		strbuf_printf(
		    &message,
		    "%spatch %lld '%s' does not apply to base %.12s: %s",
		    i > 0 ? "; " : "",
		    (long long)json_integer_value(json_object_get(f, "patch")),
		    json_string_value(json_object_get(f, "subject")), base_sha,
		    json_string_value(json_object_get(f, "reason")));
	}
	if (strbuf_finish(&text, &len, &message) < 0) {
		fields_add(errors, "", 500, "internal", "out of memory");
		return;
	}
	fields_add(errors, "mbox", 422, "patch_does_not_apply", "%s", text);
	*refusal = json_pack("{s:s,s:s,s:O}", "code", "patch_does_not_apply",
			     "message", text, "failures", failures);
	free(text);
}

/* Resolves the base in the repository's mirror and applies the series;
 * false with the error in `errors` (and *refusal) otherwise. */
static bool series_commits(struct field_errors *errors, json_t **refusal,
			   const struct patch_request *pr,
			   const char *repo_url, struct series *s)
{
	git_repository *repo = NULL;
	json_t *failures = NULL;
	git_oid base;
	struct mirrorlock *held;
	char *err = NULL;
	bool ok = false;

	held = mirror_lock(pr->repo);
	if (mirror_fetch(&repo, pr->repo, repo_url, &err) < 0) {
		fields_add(errors, "repo", 503, "mirror_unavailable",
			   "repository '%s' cannot be read: %s", pr->repo,
			   err);
		goto out;
	}
	if (gitrepo_resolve(&base, repo, pr->base, pr->repo, &err) < 0) {
		fields_add(errors, "base", 422, "unknown_revision", "%s", err);
		goto out;
	}
	if (base_describe(s, repo, &base) < 0 ||
	    series_apply(&failures, s, repo, &base) < 0) {
		gitrepo_set_error(&err, "applying the series");
		fields_add(errors, "", 500, "internal", "%s", err);
		goto out;
	}
	if (json_array_size(failures) > 0) {
		refuse_failures(refusal, errors, failures, s->base_sha);
		goto out;
	}
	ok = true;
out:
	json_decref(failures);
	git_repository_free(repo);
	mirror_unlock(held);
	free(err);
	return ok;
}

/* The stored form of the series; storage for the links in `links`. */
static int store_form(struct store_patch *out, char **links,
		      const struct series *s, const struct patch_request *pr)
{
	size_t i;

	for (i = 0; i < s->count; i++) {
		const struct mbox_message *m = s->patches[i];
		json_t *recipients = json_array();
		size_t k;

		for (k = 0; k < m->to_count; k++)
			json_array_append_new(recipients,
					      json_string(m->to[k]));
		for (k = 0; k < m->cc_count; k++)
			json_array_append_new(recipients,
					      json_string(m->cc[k]));
		links[i] = NULL;
		if (pr->archive != NULL && m->message_id != NULL &&
		    asprintf(&links[i], "%s%s%s/", pr->archive,
			     pr->archive[strlen(pr->archive) - 1] == '/' ? ""
									 : "/",
			     m->message_id) < 0)
			links[i] = NULL;
		out[i] = (struct store_patch){
		    .sha = s->shas[i],
		    .message_id = m->message_id,
		    .in_reply_to = m->in_reply_to,
		    .subject = m->subject,
		    .title = m->title,
		    .author_name = m->author_name,
		    .author_email =
			m->author_email != NULL ? m->author_email : "",
		    .date = m->date,
		    .date_offset = m->date_offset,
		    .recipients = recipients,
		    .message = s->messages[i],
		    .diff = m->diff,
		    .diff_len = m->diff_len,
		    .link = links[i],
		};
	}
	return 0;
}

/* Counts the token's jobs against its limits (jobs_quota_check) inside
 * the storing transaction; false after rolling back, with the error in
 * `errors`. */
static bool within_quota(struct field_errors *errors, PGconn *conn,
			 long long token_id)
{
	int rc = jobs_quota_check(conn, token_id, errors);

	if (rc == 0)
		return true;
	db_rollback(conn);
	if (rc == JOBS_DB_FAILED)
		fields_db_failed(errors);
	return false;
}

/* What patches_submit runs inside the job's transaction. */
struct patches_within {
	int (*run)(PGconn *conn, long long job_id, void *arg);
	void *arg;
};

/* Stores the job and its first tasks; false with the error in `errors`. */
static bool store_job(struct field_errors *errors, PGconn *conn,
		      const struct store_patch_job *job,
		      const struct series *s, const struct patch_request *pr,
		      long long *job_id, const struct patches_within *within)
{
	struct store_patch *patches = calloc(s->count, sizeof(*patches));
	char **links = calloc(s->count, sizeof(*links));
	bool ok = false;
	size_t i;

	if (patches == NULL || links == NULL) {
		fields_add(errors, "", 500, "internal", "out of memory");
		goto out;
	}
	store_form(patches, links, s, pr);
	if (db_begin(conn) < 0) {
		fields_db_failed(errors);
		goto out;
	}
	if (!within_quota(errors, conn, job->token_id))
		goto out;
	/* Held against deletion until the job is stored. */
	if (store_repos_hold(conn, job->repo_id, job->testcase_id) ==
	    STORE_NOT_FOUND) {
		db_rollback(conn);
		fields_add(errors, "repo", 404, "unknown_repo",
			   "repository '%s' or testcase '%s' was deleted "
			   "meanwhile",
			   pr->repo, pr->testcase);
		goto out;
	}
	if (store_patches_insert_job(conn, job, patches, s->count, job_id) < 0)
		goto failed;
	if (store_jobs_lock(conn, *job_id, NULL) != STORE_OK ||
	    sched_advance(conn, *job_id, server_config.base_url) < 0 ||
	    (within->run != NULL &&
	     within->run(conn, *job_id, within->arg) < 0) ||
	    db_commit(conn) < 0)
		goto failed;
	ok = true;
	goto out;
failed:
	db_rollback(conn);
	fields_db_failed(errors);
out:
	for (i = 0; patches != NULL && links != NULL && i < s->count; i++) {
		json_decref(patches[i].recipients);
		free(links[i]);
	}
	free(patches);
	free(links);
	return ok;
}

int patches_submit(long long *job_id, json_t **refusal,
		   struct field_errors *errors, long long token_id,
		   json_t *body,
		   int (*within)(PGconn *conn, long long job_id, void *arg),
		   void *within_arg)
{
	const struct patches_within hook = {within, within_arg};
	struct patch_request pr = {0};
	struct store_patch_job job = {0};
	struct series s = {0};
	PGconn *conn = db_conn();
	char *repo_url = NULL;
	const char *which = NULL;
	bool found = false;
	int rc = -1;

	*job_id = 0;
	*refusal = NULL;
	if (!request_parse(errors, body, &pr) || !series_read(errors, &pr, &s))
		goto out;
	if (conn == NULL ||
	    store_patches_lookup(conn, pr.repo, pr.testcase, &job.repo_id,
				 &repo_url, &job.testcase_id, &found,
				 &which) < 0) {
		fields_db_failed(errors);
		goto out;
	}
	if (!found) {
		bool repo = strcmp(which, "repo") == 0;

		fields_add(errors, which, 404,
			   repo ? "unknown_repo" : "unknown_testcase",
			   "%s '%s' is not registered",
			   repo ? "repository" : "testcase",
			   repo ? pr.repo : pr.testcase);
		goto out;
	}
	if (!series_commits(errors, refusal, &pr, repo_url, &s))
		goto out;
	job.token_id = token_id;
	job.base_rev = pr.base;
	job.base_sha = s.base_sha;
	job.base_subject = s.base_subject;
	job.base_author_name = s.base_author_name;
	job.base_author_email = s.base_author_email;
	job.notify = pr.notify;
	job.runs_min = pr.runs_min;
	job.runs_max = pr.runs_max;
	if (!store_job(errors, conn, &job, &s, &pr, job_id, &hook))
		goto out;
	log_info("job %lld: patch series of %zu on %.12s (%s %s)", *job_id,
		 s.count, s.base_sha, pr.repo, pr.testcase);
	rc = 0;
out:
	free(repo_url);
	series_free(&s);
	return rc;
}

void patches_create(struct http_response *res, struct http_request *req,
		    json_t *body)
{
	struct field_errors errors;
	long long job_id;
	bool failed = false;
	json_t *answer, *list = NULL, *refusal;

	fields_init(&errors);
	if (patches_submit(&job_id, &refusal, &errors, req->token_id, body,
			   NULL, NULL) < 0) {
		if (refusal != NULL)
			http_json(res, 422,
				  json_pack("{s:o}", "error", refusal));
		else if (!fields_answer(res, &errors))
			http_error(res, 500, "internal", "out of memory");
		return;
	}
	answer = jobs_json(db_conn(), job_id, &failed);
	if (answer == NULL ||
	    store_patches_list_json(&list, db_conn(), job_id) < 0) {
		json_decref(answer);
		http_db_failed(res);
		return;
	}
	json_object_set_new(answer, "kind", json_string("patch"));
	json_object_set_new(answer, "patches", list);
	if (asprintf(&res->location, "/api/v1/jobs/%lld", job_id) < 0)
		res->location = NULL;
	http_json(res, 201, answer);
}

int patches_attach_series(PGconn *conn, json_t *task, long long job_id)
{
	json_t *series = NULL;

	if (store_patches_series_json(&series, conn, job_id) < 0)
		return -1;
	if (series != NULL)
		json_object_set_new(task, "series", series);
	return 0;
}

/* A copy of `text` on one line: control characters become spaces. */
static char *one_line(const char *text)
{
	char *copy = strdup(text != NULL ? text : ""), *p;

	for (p = copy; p != NULL && *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return copy;
}

/* "<id>" for a Message-ID that can go into a header as it is. */
static char *angle_id(const char *id)
{
	char *out = NULL;
	const char *p;

	if (id == NULL || strchr(id, '@') == NULL || strlen(id) > 250)
		return NULL;
	for (p = id; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
		    *p == '<' || *p == '>')
			return NULL;
	if (asprintf(&out, "<%s>", id) < 0)
		return NULL;
	return out;
}

int patches_reply_load(struct patches_reply *out, PGconn *conn,
		       long long job_id, size_t idx, const char *job_url)
{
	json_t *reply = NULL;
	const char *subject, *link;
	char *clean = NULL;
	int n = 0;

	memset(out, 0, sizeof(*out));
	if (store_patches_reply_json(&reply, conn, job_id, idx) < 0)
		return -1;
	if (reply == NULL)
		return 1;
	subject = json_string_value(json_object_get(reply, "subject"));
	link = json_string_value(json_object_get(reply, "link"));
	clean = one_line(subject);
	if (clean == NULL || asprintf(&out->subject, "Re: %s", clean) < 0)
		out->subject = NULL;
	out->in_reply_to =
	    angle_id(json_string_value(json_object_get(reply, "message_id")));
	/* asprintf leaves its pointer undefined when it fails */
	n += asprintf(&out->lines[0], "url: %s", job_url) < 0;
	n += asprintf(&out->lines[1], "base: %s %s",
		      json_string_value(json_object_get(reply, "repo_url")),
		      json_string_value(json_object_get(reply, "base"))) < 0;
	n += asprintf(&out->lines[2], "patch link: %s",
		      link != NULL ? link : job_url) < 0;
	n += asprintf(&out->lines[3], "patch subject: %s", clean) < 0;
	free(clean);
	out->line_count = 4;
	out->recipients = json_incref(json_object_get(reply, "recipients"));
	json_decref(reply);
	if (n > 0 || out->subject == NULL) {
		for (n = 0; n < 4; n++)
			out->lines[n] = NULL; /* may leak after a failure */
		patches_reply_clear(out);
		return -1;
	}
	for (n = 0; n < 4; n++) {
		char *line = one_line(out->lines[n]);

		free(out->lines[n]);
		out->lines[n] = line;
	}
	return 0;
}

void patches_reply_clear(struct patches_reply *reply)
{
	size_t i;

	free(reply->subject);
	free(reply->in_reply_to);
	for (i = 0; i < 4; i++)
		free(reply->lines[i]);
	json_decref(reply->recipients);
	memset(reply, 0, sizeof(*reply));
}
