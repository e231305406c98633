#include "jobs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "db.h"
#include "gitrepo.h"
#include "jobcache.h"
#include "log.h"
#include "mirror.h"
#include "report.h"
#include "resolver.h"
#include "scheduler.h"
#include "server.h"
#include "spread.h"
#include "store/store_repos.h"
#include "store/store_spread.h"
#include "validate.h"

/* A string field of `body` into *out (NULL when absent or null). */
static void json_text(const char **out, json_t *body, const char *key,
		      struct field_errors *errors)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		fields_add(errors, key, 400, "missing_field",
			   "field '%s' is required", key);
	} else if (!json_is_string(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' must be a string", key);
	} else if (strlen(json_string_value(v)) != json_string_length(v)) {
		fields_add(errors, key, 400, "invalid_field",
			   "field '%s' contains a NUL character", key);
	} else {
		*out = json_string_value(v);
	}
}

static void runs_error(struct field_errors *errors, const char *key,
		       long long most)
{
	fields_add(errors, key, 400, "invalid_field",
		   "field '%s' must be an integer from %lld to %lld", key,
		   (long long)JOBS_RUNS_LEAST, most);
}

/* An optional runs limit of `body` into *out (0 when absent or wrong). */
static void json_runs(long long *out, json_t *body, const char *key,
		      long long most, struct field_errors *errors)
{
	json_t *v = json_object_get(body, key);

	*out = 0;
	if (v == NULL || json_is_null(v))
		return;
	if (!json_is_integer(v) || json_integer_value(v) < JOBS_RUNS_LEAST ||
	    json_integer_value(v) > most) {
		runs_error(errors, key, most);
		return;
	}
	*out = json_integer_value(v);
}

/* A kind other than the three the API names would otherwise be taken
 * for a bisection (patches_is_request answers a patch before this). */
static void kind_check(json_t *body, struct field_errors *errors)
{
	json_t *kind = json_object_get(body, "kind");
	const char *name = json_string_value(kind);

	if (kind == NULL || json_is_null(kind) ||
	    (name != NULL &&
	     (strcmp(name, "bisect") == 0 || strcmp(name, "compare") == 0)))
		return;
	fields_add(errors, "kind", 400, "invalid_field",
		   "field 'kind' must be \"bisect\", \"compare\" or "
		   "\"patch\"");
}

void jobs_request_from_json(struct jobs_request *out, json_t *body,
			    struct field_errors *errors)
{
	memset(out, 0, sizeof(*out));
	kind_check(body, errors);
	json_text(&out->repo, body, "repo", errors);
	json_text(&out->testcase, body, "testcase", errors);
	if (compare_is_request(body)) {
		compare_request_from_json(out, body, errors);
	} else {
		json_text(&out->good, body, "good", errors);
		json_text(&out->bad, body, "bad", errors);
	}
	json_runs(&out->runs_min, body, "runs_min", JOBS_RUNS_MIN_MOST,
		  errors);
	json_runs(&out->runs_max, body, "runs_max", JOBS_RUNS_MAX_MOST,
		  errors);
	fields_json_string(errors, body, "group", false, &out->group);
	fields_json_int(errors, body, "machines", 1, SPREAD_MACHINES_MAX,
			&out->machines);
	out->notify = json_object_get(body, "notify");
	if (json_is_null(out->notify))
		out->notify = NULL;
	webhooks_request_read(&out->webhook, body, errors);
}

void jobs_request_check(const struct jobs_request *request,
			struct field_errors *errors)
{
	bool min_ok =
	    request->runs_min <= JOBS_RUNS_MIN_MOST &&
	    (request->runs_min == 0 || request->runs_min >= JOBS_RUNS_LEAST);
	bool max_ok =
	    request->runs_max <= JOBS_RUNS_MAX_MOST &&
	    (request->runs_max == 0 || request->runs_max >= JOBS_RUNS_LEAST);

	if (!min_ok)
		runs_error(errors, "runs_min", JOBS_RUNS_MIN_MOST);
	if (!max_ok)
		runs_error(errors, "runs_max", JOBS_RUNS_MAX_MOST);
	if (min_ok && max_ok && request->runs_min > 0 &&
	    request->runs_max > 0 && request->runs_max < request->runs_min)
		fields_add(errors, "runs_max", 400, "invalid_field",
			   "'runs_max' must not be below 'runs_min'");
	if (request->group != NULL && !validate_group(request->group))
		fields_add(errors, "group", 400, "invalid_field",
			   "'group' must be 1 to 64 bytes without control "
			   "characters, as a worker's group");
	if (request->machines > 1 && request->revision_count > 0)
		fields_add(errors, "machines", 400, "invalid_field",
			   "'machines' applies to bisections; a compare job "
			   "measures its revisions on one machine");
	validate_notify(errors, request->notify);
}

/* The repository and testcase a request names, as found. */
struct job_target {
	struct store_repo repo;
	struct store_testcase testcase;
	bool repo_found, testcase_found;
};

static void target_clear(struct job_target *target)
{
	store_repo_clear(&target->repo);
	store_testcase_clear(&target->testcase);
}

/* Looks up the repository and testcase by name: 404 when unknown. */
static int lookup(struct job_target *target, PGconn *conn,
		  const struct jobs_request *request,
		  struct field_errors *errors)
{
	int rc;

	if (request->repo != NULL) {
		rc = store_repos_find(&target->repo, conn, request->repo);
		if (rc == STORE_FAILED)
			return JOBS_DB_FAILED;
		target->repo_found = rc == STORE_OK;
	}
	if (request->testcase != NULL) {
		rc = store_testcases_find(&target->testcase, conn,
					  request->testcase);
		if (rc == STORE_FAILED)
			return JOBS_DB_FAILED;
		target->testcase_found = rc == STORE_OK;
	}
	if (request->repo != NULL && !target->repo_found) {
		fields_add(errors, "repo", 404, "unknown_repo",
			   "repository '%s' is not registered", request->repo);
		fields_set_value(errors, request->repo);
	}
	if (request->testcase != NULL && !target->testcase_found) {
		fields_add(errors, "testcase", 404, "unknown_testcase",
			   "testcase '%s' is not registered",
			   request->testcase);
		fields_set_value(errors, request->testcase);
	}
	return 0;
}

void jobs_runs_against_testcase(const struct jobs_request *request,
				const struct store_testcase_fields *testcase,
				struct field_errors *errors)
{
	if (request->runs_min > 0 && request->runs_max == 0 &&
	    request->runs_min > testcase->runs_max)
		fields_add(errors, "runs_min", 422, "runs_conflict",
			   "'runs_min' %lld is above the runs_max %lld of "
			   "testcase '%s'; give 'runs_max' too to raise it",
			   request->runs_min, testcase->runs_max,
			   testcase->name);
	if (request->runs_max > 0 && request->runs_min == 0 &&
	    request->runs_max < testcase->runs_min)
		fields_add(errors, "runs_max", 422, "runs_conflict",
			   "'runs_max' %lld is below the runs_min %lld of "
			   "testcase '%s'; give 'runs_min' too to lower it",
			   request->runs_max, testcase->runs_min,
			   testcase->name);
}

/* Resolves revision `rev` (the field `key`) into *out; an error if it
 * names no commit. */
static bool resolve(git_oid *out, git_repository *repo, const char *rev,
		    const char *key, const char *repo_name,
		    struct field_errors *errors)
{
	char *err = NULL;

	if (gitrepo_resolve(out, repo, rev, repo_name, &err) == 0)
		return true;
	fields_add(errors, key, 422, "unknown_revision", "%s", err);
	fields_set_value(errors, rev);
	free(err);
	return false;
}

/* A range too long to list while the request waits: its two ends, for
 * the resolver. */
struct long_range {
	bool found;
	char good[GITREPO_SHA_LEN + 1], bad[GITREPO_SHA_LEN + 1];
};

/*
 * Whether the range from `good` to `bad` is left to the resolver: `good`
 * is not within JOBS_SYNC_RANGE first-parent commits of `bad`, bad's
 * first-parent line is longer than that, and the two are not merely
 * swapped (`bad` near below `good`: refused at once as before).
 */
static bool too_long(git_repository *repo, const git_oid *good,
		     const git_oid *bad)
{
	return gitrepo_first_parent_within(repo, good, bad, JOBS_SYNC_RANGE) ==
		   2 &&
	       gitrepo_first_parent_within(repo, bad, good, JOBS_SYNC_RANGE) !=
		   1;
}

/*
 * Fetches the mirror and lists the candidates into *commits (NULL when
 * the revisions do not give a range), unless `good` is not within
 * JOBS_SYNC_RANGE first-parent steps of `bad`: then the range is left to
 * the resolver, its ends in *far (a job with a `within` hook is always
 * listed here: the robot's jobs are two commits apart).
 */
static void candidates(struct gitrepo_commit **commits, size_t *count,
		       struct long_range *far,
		       const struct jobs_request *request,
		       const char *repo_url, struct field_errors *errors)
{
	git_repository *repo = NULL;
	struct mirrorlock *held;
	git_oid good, bad;
	bool good_ok, bad_ok;
	char *err = NULL;

	*commits = NULL;
	*count = 0;
	held = mirror_lock(request->repo);
	if (mirror_fetch(&repo, request->repo, repo_url, &err) < 0) {
		fields_add(errors, "", 503, "mirror_unavailable",
			   "repository '%s' cannot be read: %s", request->repo,
			   err);
		goto out;
	}
	if (request->revision_count > 0) {
		compare_resolve(commits, count, repo, request, errors);
		goto out;
	}
	good_ok =
	    request->good != NULL &&
	    resolve(&good, repo, request->good, "good", request->repo, errors);
	bad_ok = request->bad != NULL && resolve(&bad, repo, request->bad,
						 "bad", request->repo, errors);
	if (good_ok && bad_ok && request->within == NULL &&
	    too_long(repo, &good, &bad)) {
		far->found = true;
		git_oid_tostr(far->good, sizeof(far->good), &good);
		git_oid_tostr(far->bad, sizeof(far->bad), &bad);
	} else if (good_ok && bad_ok &&
		   gitrepo_range(commits, count, repo, &good, &bad,
				 JOBS_RANGE_LIMIT, &err) < 0) {
		fields_add(errors, "bad", 422, "invalid_range", "%s", err);
		*commits = NULL;
		*count = 0;
	}
out:
	git_repository_free(repo);
	mirror_unlock(held);
	free(err);
}

/* The limit of a token: its own, else the server's; 0: none. */
static long long token_limit(long long own, long long server)
{
	return own >= 0 ? own : server;
}

int jobs_quota_check(PGconn *conn, long long token_id,
		     struct field_errors *errors)
{
	struct store_token_usage u;
	long long open, per_hour;
	int rc;

	if (token_id <= 0)
		return 0;
	rc = store_jobs_token_usage(&u, conn, token_id);
	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc != STORE_OK)
		return JOBS_DB_FAILED;
	open = token_limit(u.max_open_jobs, server_config.max_open_jobs);
	per_hour =
	    token_limit(u.max_jobs_per_hour, server_config.max_jobs_per_hour);
	if (open > 0 && u.open_jobs >= open) {
		fields_add(errors, "", 429, "too_many_jobs",
			   "this token has %lld jobs queued or running, its "
			   "limit; submit again when one has ended",
			   u.open_jobs);
		errors->retry_after_s = JOBS_OPEN_RETRY_AFTER_S;
		return JOBS_REFUSED;
	}
	if (per_hour > 0 && u.jobs_last_hour >= per_hour) {
		fields_add(errors, "", 429, "too_many_jobs",
			   "this token submitted %lld jobs in the last hour, "
			   "its limit; submit again in %lld seconds",
			   u.jobs_last_hour,
			   u.hour_frees_in_s > 0 ? u.hour_frees_in_s : 1);
		errors->retry_after_s =
		    u.hour_frees_in_s > 0 ? u.hour_frees_in_s : 1;
		return JOBS_REFUSED;
	}
	return 0;
}

/* A job that may use several machines at once (spreadjob.h). */
static int spread(PGconn *conn, long long job_id,
		  const struct jobs_request *request)
{
	if (request->machines <= 1)
		return 0;
	return store_spread_start(conn, job_id, request->machines) == STORE_OK
		   ? 0
		   : -1;
}

/* Stores the job with its candidates and queues its first tasks, in one
 * transaction that first counts the token's jobs against its limits and
 * holds the repository and testcase against deletion. */
static int store(long long *out_id, PGconn *conn,
		 const struct jobs_request *request,
		 const struct job_target *target, long long token_id,
		 const struct gitrepo_commit *commits, size_t count,
		 const struct long_range *far, struct field_errors *errors)
{
	struct store_job_new job = {0};
	char *notify = request->notify != NULL
			   ? json_dumps(request->notify, JSON_COMPACT)
			   : strdup("[]");
	int rc = JOBS_DB_FAILED;

	if (notify == NULL || db_begin(conn) < 0)
		goto out;
	rc = jobs_quota_check(conn, token_id, errors);
	if (rc != 0) {
		db_rollback(conn);
		goto out;
	}
	rc = JOBS_DB_FAILED;
	job.repo_id = target->repo.id;
	job.testcase_id = target->testcase.id;
	job.good_rev = request->good;
	job.bad_rev = request->bad;
	job.notify = notify;
	job.created_by = token_id;
	job.runs_min = request->runs_min;
	job.runs_max = request->runs_max;
	job.group = request->group;
	if (store_repos_hold(conn, job.repo_id, job.testcase_id) ==
	    STORE_NOT_FOUND) {
		db_rollback(conn);
		fields_add(errors, "repo", 404, "unknown_repo",
			   "repository '%s' or testcase '%s' was deleted "
			   "meanwhile",
			   request->repo, request->testcase);
		rc = JOBS_REFUSED;
		goto out;
	}
	if (far->found) {
		/* Never with `within`: such jobs are listed at once. */
		if (store_jobs_create_resolving(out_id, conn, &job, far->good,
						far->bad) < 0 ||
		    spread(conn, *out_id, request) < 0 ||
		    webhooks_save(conn, STORE_WEBHOOK_JOB, *out_id,
				  &request->webhook, false) < 0 ||
		    db_commit(conn) < 0) {
			db_rollback(conn);
			goto out;
		}
		resolver_wake();
		rc = 0;
		goto out;
	}
	if (store_jobs_create(out_id, conn, &job, commits, count) < 0 ||
	    spread(conn, *out_id, request) < 0 ||
	    webhooks_save(conn, STORE_WEBHOOK_JOB, *out_id, &request->webhook,
			  false) < 0 ||
	    (request->revision_count > 0 &&
	     compare_mark(conn, *out_id, request) < 0) ||
	    store_jobs_lock(conn, *out_id, NULL) != 0 ||
	    sched_advance(conn, *out_id, server_config.base_url) < 0 ||
	    (request->within != NULL &&
	     request->within(conn, *out_id, request->within_arg) < 0) ||
	    db_commit(conn) < 0) {
		db_rollback(conn);
		goto out;
	}
	rc = 0;
out:
	free(notify);
	return rc;
}

int jobs_create(long long *out_id, PGconn *conn,
		const struct jobs_request *request, long long token_id,
		struct field_errors *errors)
{
	struct job_target target = {0};
	struct gitrepo_commit *commits = NULL;
	struct long_range far = {0};
	size_t count = 0;
	int rc, quota;

	jobs_request_check(request, errors);
	rc = lookup(&target, conn, request, errors);
	if (rc < 0 && fields_ok(errors))
		goto out;
	if (rc == 0 && target.testcase_found)
		jobs_runs_against_testcase(request, &target.testcase.fields,
					   errors);
	/* A token past its limits is refused before the fetch, which costs
	 * the most; store() counts again under the lock. */
	quota = rc == 0 ? jobs_quota_check(conn, token_id, errors) : 0;
	if (quota == JOBS_DB_FAILED) {
		rc = quota;
		goto out;
	}
	if (rc == 0 && quota == 0 && target.repo_found)
		candidates(&commits, &count, &far, request, target.repo.url,
			   errors);
	rc = JOBS_REFUSED;
	if (!fields_ok(errors) || (commits == NULL && !far.found))
		goto out;
	rc = store(out_id, conn, request, &target, token_id, commits, count,
		   &far, errors);
	if (rc == 0 && far.found)
		log_info("job %lld: %s %s %.12s..%.12s, resolving in the "
			 "background",
			 *out_id, request->repo, request->testcase, far.good,
			 far.bad);
	else if (rc == 0)
		log_info("job %lld: %s %s %.12s..%.12s, %zu candidates",
			 *out_id, request->repo, request->testcase,
			 commits[0].sha, commits[count - 1].sha, count);
out:
	gitrepo_commits_free(commits, count);
	target_clear(&target);
	return rc;
}

static void no_job(struct field_errors *errors, long long job_id)
{
	fields_add(errors, "", 404, "not_found", "no job %lld", job_id);
}

/* Why jobs_json gave no job: the database failed, or there is none. */
static int no_answer(struct field_errors *errors, long long job_id,
		     bool failed)
{
	if (failed)
		return JOBS_DB_FAILED;
	no_job(errors, job_id);
	return JOBS_REFUSED;
}

int jobs_get(json_t **out, PGconn *conn, long long job_id,
	     struct field_errors *errors)
{
	bool failed;

	*out = jobs_json(conn, job_id, &failed);
	return *out != NULL ? 0 : no_answer(errors, job_id, failed);
}

int jobs_get_text(char **out, PGconn *conn, long long job_id,
		  struct field_errors *errors)
{
	struct jobcache_ticket ticket;
	struct jobs_clock clock;
	json_t *answer;
	bool failed;

	*out = jobcache_lookup(&ticket, job_id);
	if (*out != NULL)
		return 0;
	answer = jobs_json_clocked(conn, job_id, &failed, &clock);
	if (answer == NULL)
		return no_answer(errors, job_id, failed);
	*out = json_dumps(answer, HTTP_JSON_FLAGS);
	if (*out != NULL)
		jobcache_keep(&ticket, answer, *out, &clock);
	json_decref(answer);
	return 0;
}

int jobs_cancel(json_t **out, PGconn *conn, long long job_id,
		struct field_errors *errors)
{
	char state[16];
	int rc;

	*out = NULL;
	rc = store_jobs_cancel(state, conn, job_id);
	if (rc == STORE_FAILED)
		return JOBS_DB_FAILED;
	if (rc == STORE_NOT_FOUND) {
		no_job(errors, job_id);
		return JOBS_REFUSED;
	}
	if (rc == STORE_CONFLICT) {
		fields_add(errors, "", 409, "finished",
			   "job %lld is already %s", job_id, state);
		return JOBS_REFUSED;
	}
	log_info("job %lld cancelled", job_id);
	return jobs_get(out, conn, job_id, errors);
}

int jobs_rerun(long long *out_id, PGconn *conn, long long job_id,
	       long long token_id, struct field_errors *errors)
{
	struct store_job_rerun source;
	struct jobs_request request = {0};
	struct store_webhook_list hook = {0};
	json_error_t e;
	int rc;

	/* The re-run keeps the job's own webhook (webhooks.h). */
	if (store_webhooks_get(&hook, conn, STORE_WEBHOOK_JOB, job_id) < 0)
		return JOBS_DB_FAILED;
	if (hook.count > 0)
		request.webhook = (struct webhooks_request){
		    true, false, hook.items[0].url, hook.items[0].format,
		    hook.items[0].secret};
	rc = store_jobs_rerun_source(&source, conn, job_id);
	if (rc == STORE_FAILED || rc == STORE_NOT_FOUND) {
		store_webhook_list_clear(&hook);
		if (rc == STORE_NOT_FOUND)
			no_job(errors, job_id);
		return rc == STORE_FAILED ? JOBS_DB_FAILED : JOBS_REFUSED;
	}
	rc = compare_refuse_rerun(conn, job_id, errors);
	if (rc != 0) {
		store_webhook_list_clear(&hook);
		store_job_rerun_clear(&source);
		return rc;
	}
	request.repo = source.repo;
	request.testcase = source.testcase;
	request.good = source.good_sha;
	request.bad = source.bad_sha;
	request.group = source.group;
	request.notify = json_loads(source.notify, JSON_DECODE_ANY, &e);
	if (json_is_null(request.notify)) {
		json_decref(request.notify);
		request.notify = NULL;
	}
	log_info("job %lld: re-run requested", job_id);
	rc = jobs_create(out_id, conn, &request, token_id, errors);
	json_decref(request.notify);
	store_webhook_list_clear(&hook);
	store_job_rerun_clear(&source);
	return rc;
}

int jobs_report(char **out, PGconn *conn, long long job_id,
		struct field_errors *errors)
{
	int rc = store_jobs_report(out, conn, job_id);

	if (rc == STORE_FAILED)
		return JOBS_DB_FAILED;
	if (rc == STORE_NOT_FOUND) {
		no_job(errors, job_id);
		return JOBS_REFUSED;
	}
	if (*out == NULL) {
		fields_add(errors, "", 409, "not_ready",
			   "job %lld has no report yet: it is still running",
			   job_id);
		return JOBS_REFUSED;
	}
	return 0;
}
