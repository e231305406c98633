/*
 * The worker protocol: register, claim a task under a lease (in
 * workers_claim.c), heartbeat, upload runs.  Validation and answers here;
 * the tasks, leases and runs are in the store (store/store_tasks.h).  A
 * claim binds the task to the worker's token under a new random lease: a
 * heartbeat or upload counts only with both, so a late one (whose lease
 * lapsed and was claimed again) and one from another worker change
 * nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "commitlog.h"
#include "db.h"
#include "id.h"
#include "jobcache.h"
#include "log.h"
#include "scheduler.h"
#include "server.h"
#include "store/store_tasks.h"
#include "validate.h"
#include "workers.h"

/* The longest wall time a run may report: 30 days, well past the longest
 * testcase time limit (7 days) and its grace. */
#define WORKERS_WALL_S_MAX 2592000

static bool short_text(json_t *v, size_t max_len)
{
	const char *s;
	size_t i;

	if (!json_is_string(v) || json_string_length(v) > max_len)
		return false;
	s = json_string_value(v);
	for (i = 0; s[i] != '\0'; i++) {
		if ((unsigned char)s[i] < 0x20)
			return false;
	}
	return i == json_string_length(v);
}

void workers_register(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req), *name, *group, *machine;
	long long worker_id;

	if (body == NULL)
		return;
	name = json_object_get(body, "name");
	group = json_object_get(body, "group");
	machine = json_object_get(body, "machine");
	if (!short_text(name, 128) || json_string_length(name) == 0 ||
	    (group != NULL && (!short_text(group, VALIDATE_GROUP_MAX) ||
			       !validate_group(json_string_value(group)))) ||
	    (machine != NULL && !short_text(machine, 512))) {
		http_error(res, 400, "invalid_field",
			   "'name' (1-128 chars), optional 'group' (1-64) and "
			   "'machine' (<= 512) must be strings");
		goto out;
	}
	if (store_workers_register(
		&worker_id, db_conn(), json_string_value(name),
		group != NULL ? json_string_value(group) : "default",
		machine != NULL ? json_string_value(machine) : NULL,
		req->token_id) < 0) {
		http_db_failed(res);
		goto out;
	}
	log_info("worker '%s' registered as %lld", json_string_value(name),
		 worker_id);
	http_json(res, 200,
		  json_pack("{s:I,s:i}", "id", (json_int_t)worker_id,
			    "lease_seconds", server_config.lease_seconds));
out:
	json_decref(body);
}

int workers_list_json(json_t **out)
{
	struct store_worker_list list;
	json_t *workers;
	size_t i;

	*out = NULL;
	if (store_workers_list(&list, db_conn()) != STORE_OK)
		return -1;
	workers = json_array();
	for (i = 0; i < list.count; i++) {
		const struct store_worker_row *w = &list.rows[i];
		json_t *task =
		    !w->has_task
			? json_null()
			: json_pack("{s:I,s:I,s:I,s:s,s:s}", "id",
				    (json_int_t)w->task_id, "job",
				    (json_int_t)w->job_id, "commit_index",
				    (json_int_t)w->commit_index, "commit",
				    w->commit, "lease_expires_at",
				    w->lease_expires_at);

		json_array_append_new(
		    workers,
		    json_pack("{s:I,s:s,s:s,s:s?,s:s,s:s,s:o}", "id",
			      (json_int_t)w->id, "name", w->name, "group",
			      w->group, "machine", w->machine, "registered_at",
			      w->registered_at, "last_seen_at",
			      w->last_seen_at, "task", task));
	}
	store_worker_list_clear(&list);
	*out = json_pack("{s:o}", "workers", workers);
	return *out != NULL ? 0 : -1;
}

void workers_list(struct http_response *res, struct http_request *req)
{
	json_t *list;

	(void)req;
	if (workers_list_json(&list) < 0) {
		http_db_failed(res);
		return;
	}
	http_json(res, 200, list);
}

bool workers_load(struct http_response *res, char *group, size_t size,
		  PGconn *conn, const struct http_request *req,
		  long long worker_id)
{
	long long token_id = 0;
	int rc = store_workers_touch(&token_id, group, size, conn, worker_id);

	if (rc != STORE_OK && rc != STORE_NOT_FOUND) {
		http_db_failed(res);
		return false;
	}
	if (rc == STORE_OK &&
	    (req->token_id == 0 || token_id == req->token_id))
		return true;
	http_error(res, 404, "unknown_worker",
		   "worker %lld is not registered with this token; "
		   "register again",
		   worker_id);
	return false;
}

json_t *workers_plan_json(const struct store_plan *plan)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; list != NULL && i < plan->count; i++) {
		const struct store_plan_entry *e = &plan->entries[i];

		json_array_append_new(
		    list, json_pack("{s:I,s:s,s:I,s:s,s:b}", "index",
				    (json_int_t)e->index, "commit", e->sha,
				    "runs", (json_int_t)e->runs, "purpose",
				    e->purpose, "rebuild", e->rebuild));
	}
	return list;
}

/*
 * Locks task `task_id` and checks that `lease` is its current, unexpired
 * lease and that token `token_id` claimed it.  Answers 409 (lease lost or
 * job cancelled), 403 (another worker's task) or 404 and returns false
 * otherwise; the caller's transaction stays open either way.
 */
static bool check_lease(struct http_response *res, PGconn *conn,
			const char *task_text, long long task_id,
			long long lease, long long token_id,
			struct store_task_lease *out)
{
	int rc = store_tasks_lock(out, conn, task_id);

	if (rc != STORE_OK && rc != STORE_NOT_FOUND) {
		http_db_failed(res);
		return false;
	}
	if (rc == STORE_NOT_FOUND) {
		http_error(res, 404, "not_found", "no task %s", task_text);
	} else if (strcmp(out->job_state, "cancelled") == 0) {
		http_error(res, 409, "cancelled",
			   "the job of task %s was cancelled", task_text);
	} else if (strcmp(out->state, "cancelled") == 0) {
		/* store_tasks_adopt: its machine was taken for gone. */
		http_error(res, 409, "job_moved",
			   "task %s was withdrawn: its job moved to another "
			   "machine; its runs are not counted",
			   task_text);
	} else if (strcmp(out->state, "running") != 0 || out->lease != lease ||
		   !out->live) {
		http_error(res, 409, "lease_lost",
			   "the lease of task %s lapsed or belongs to a "
			   "later claim; its runs are not counted",
			   task_text);
	} else if (out->token_id != token_id) {
		http_error(res, 403, "not_your_task",
			   "task %s was claimed with another worker's token; "
			   "its lease is not yours to use",
			   task_text);
	} else {
		return true;
	}
	return false;
}

/*
 * The "activity" of a heartbeat `body` (issue 15) into *out: NULL when
 * absent; false after answering 400 when it is not a line of printable
 * text of at most WORKERS_ACTIVITY_MAX bytes.
 */
static bool activity_of(struct http_response *res, json_t *body,
			const char **out)
{
	json_t *v = json_object_get(body, "activity");
	const char *text = json_string_value(v);
	size_t i;

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return true;
	if (text == NULL || json_string_length(v) > WORKERS_ACTIVITY_MAX ||
	    strlen(text) != json_string_length(v))
		goto bad;
	for (i = 0; text[i] != '\0'; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			goto bad;
	*out = text;
	return true;
bad:
	http_error(res, 400, "invalid_field",
		   "'activity' must be one line of text of at most %d bytes",
		   WORKERS_ACTIVITY_MAX);
	return false;
}

void workers_heartbeat(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req), *lease;
	struct store_task_lease held;
	PGconn *conn = db_conn();
	long long task_id, token_id;
	const char *activity;

	if (body == NULL)
		return;
	lease = json_object_get(body, "lease");
	if (id_parse(&task_id, req->params[0]) < 0 ||
	    !json_is_integer(lease)) {
		http_error(res, 400, "invalid_field",
			   "a task id and an integer 'lease' are needed");
		goto out;
	}
	if (!activity_of(res, body, &activity))
		goto out;
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		goto out;
	}
	if (!check_lease(res, conn, req->params[0], task_id,
			 json_integer_value(lease), req->token_id, &held)) {
		db_rollback(conn);
		goto out;
	}
	/* A worker busy with a task is seen: its jobs stay with it. */
	if (store_tasks_extend(conn, task_id, activity,
			       server_config.lease_seconds) < 0 ||
	    store_workers_touch(&token_id, NULL, 0, conn, held.worker_id) ==
		STORE_FAILED ||
	    db_commit(conn) < 0) {
		db_rollback(conn);
		http_db_failed(res);
		goto out;
	}
	/* What the job does now is in its answer: this server's next
	 * answer says it (other servers follow the notification). */
	if (activity != NULL)
		jobcache_forget(held.job_id);
	http_json(res, 200,
		  json_pack("{s:s,s:i}", "status", "ok", "lease_seconds",
			    server_config.lease_seconds));
out:
	json_decref(body);
}

/* The position in the plan of commit `index`, or -1 when the task does
 * not run it. */
static long plan_find(json_t *plan, long long index)
{
	size_t i;
	json_t *e;

	json_array_foreach(plan, i, e)
	{
		if (json_integer_value(json_object_get(e, "index")) == index)
			return (long)i;
	}
	return -1;
}

static json_t *plan_entry(json_t *plan, long long index)
{
	long k = plan_find(plan, index);

	return k < 0 ? NULL : json_array_get(plan, (size_t)k);
}

/* What one upload stores: its task and the task's plan. */
struct upload {
	const char *task_text;
	long long task_id, job_id, worker_id;
	const char *kpi;
	json_t *plan;
};

/*
 * Checks run `i` of an upload against the plan and fills *out; answers 400
 * and returns -1 for a malformed run, a commit the task does not hold, or
 * more runs of a commit than the task asked for (`stored` counts them).
 */
static int check_run(struct store_run *out, struct http_response *res,
		     const struct upload *up, size_t i, json_t *run,
		     size_t *stored)
{
	json_t *index = json_object_get(run, "commit_index");
	json_t *entry = plan_entry(up->plan, json_integer_value(index));
	json_t *metrics = json_object_get(run, "metrics");
	json_t *exit_code = json_object_get(run, "exit_code");
	json_t *wall = json_object_get(run, "wall_s");
	json_t *value;
	const char *name;
	long long entry_index;

	/* exit_code is an integer column: out of its range is the
	 * worker's error (400), not the database's (500); a wall time is a
	 * duration no run outlasts. */
	if (!json_is_object(run) || !json_is_object(metrics) ||
	    !json_is_integer(exit_code) ||
	    json_integer_value(exit_code) < INT_MIN ||
	    json_integer_value(exit_code) > INT_MAX ||
	    (wall != NULL &&
	     (!json_is_number(wall) || !(json_number_value(wall) >= 0) ||
	      json_number_value(wall) > WORKERS_WALL_S_MAX)) ||
	    !json_is_integer(index)) {
		http_error(res, 400, "invalid_run",
			   "run %zu needs 'metrics' (object), "
			   "'exit_code' (a 32-bit integer), 'commit_index' "
			   "(integer) and optionally 'wall_s' (seconds from 0 "
			   "to %d)",
			   i, WORKERS_WALL_S_MAX);
		return -1;
	}
	if (entry == NULL) {
		http_error(res, 400, "invalid_run",
			   "run %zu names commit %lld, which task %s "
			   "does not run",
			   i, (long long)json_integer_value(index),
			   up->task_text);
		return -1;
	}
	entry_index = json_integer_value(json_object_get(entry, "index"));
	if (++stored[plan_find(up->plan, entry_index)] >
	    (size_t)json_integer_value(json_object_get(entry, "runs"))) {
		http_error(res, 400, "invalid_run",
			   "more runs of commit %lld than task %s asked for",
			   entry_index, up->task_text);
		return -1;
	}
	json_object_foreach(metrics, name, value)
	{
		if (!json_is_number(value) ||
		    !isfinite(json_number_value(value))) {
			http_error(res, 400, "invalid_run",
				   "metric '%s' of run %zu is not a "
				   "finite number",
				   name, i);
			return -1;
		}
	}
	value = json_object_get(metrics, up->kpi);
	memset(out, 0, sizeof(*out));
	out->job_id = up->job_id;
	out->task_id = up->task_id;
	out->commit_index = entry_index;
	out->worker_id = up->worker_id;
	/* A run that failed or did not print the KPI is kept but not
	 * measured. */
	out->has_kpi = value != NULL && json_integer_value(exit_code) == 0;
	out->kpi = out->has_kpi ? json_number_value(value) : 0;
	out->exit_code = json_integer_value(exit_code);
	out->wall_s = wall != NULL ? json_number_value(wall) : 0.0;
	out->purpose = json_string_value(json_object_get(entry, "purpose"));
	return 0;
}

/*
 * Stores the runs of one upload; 400 for a malformed run, a commit the task
 * does not hold, or more runs of a commit than the task asked for.  A run
 * names its commit with "commit_index".
 */
static int store_runs(struct http_response *res, PGconn *conn,
		      const struct upload *up, json_t *runs)
{
	size_t i, *stored;
	json_t *run;

	stored = calloc(json_array_size(up->plan) + 1, sizeof(*stored));
	if (stored == NULL) {
		http_error(res, 500, "internal", "out of memory");
		return -1;
	}
	json_array_foreach(runs, i, run)
	{
		struct store_run row;
		char *metrics_text;
		int rc;

		if (check_run(&row, res, up, i, run, stored) < 0)
			goto fail;
		metrics_text =
		    json_dumps(json_object_get(run, "metrics"), JSON_COMPACT);
		row.metrics = metrics_text;
		rc = store_runs_insert(conn, &row);
		free(metrics_text);
		if (rc < 0) {
			http_db_failed(res);
			goto fail;
		}
	}
	free(stored);
	return 0;
fail:
	free(stored);
	return -1;
}

/* Marks the commits whose build failed: "build_failures": [{"commit_index",
 * "log"}]. */
static int store_build_failures(struct http_response *res, PGconn *conn,
				long long job_id, json_t *plan, json_t *body)
{
	json_t *failures = json_object_get(body, "build_failures");
	size_t i;
	json_t *f;

	if (failures != NULL && !json_is_array(failures))
		goto bad;
	json_array_foreach(failures, i, f)
	{
		json_t *index = json_object_get(f, "commit_index");
		json_t *log = json_object_get(f, "log");

		if (!json_is_integer(index) ||
		    plan_entry(plan, json_integer_value(index)) == NULL ||
		    (log != NULL && !json_is_string(log)))
			goto bad;
		if (store_tasks_build_failed(
			conn, job_id, json_integer_value(index),
			log != NULL ? json_string_value(log) : "") < 0) {
			http_db_failed(res);
			return -1;
		}
		log_info("job %lld: commit %lld does not build; skipped",
			 job_id, (long long)json_integer_value(index));
	}
	return 0;
bad:
	http_error(res, 400, "invalid_field",
		   "'build_failures' must list {commit_index, log} of commits "
		   "the task runs");
	return -1;
}

/*
 * Stores an upload under a checked lease: its runs, build failures and
 * outcomes, the task done, and the job moved on.  Returns 0, or -1 with
 * the error answered in `res` (the caller rolls back).
 */
static int store_upload(struct http_response *res, PGconn *conn,
			struct upload *up, json_t *body)
{
	json_t *builds = json_object_get(body, "builds");
	struct store_plan plan;
	char *kpi = NULL;
	int rc = -1;

	if (store_tasks_lock_job(&kpi, conn, up->job_id) != STORE_OK) {
		http_db_failed(res);
		return -1;
	}
	if (store_tasks_plan(&plan, conn, up->task_id) != STORE_OK) {
		free(kpi);
		http_db_failed(res);
		return -1;
	}
	up->kpi = kpi;
	up->plan = workers_plan_json(&plan);
	store_plan_clear(&plan);
	if (builds != NULL && json_integer_value(builds) >
				  (json_int_t)json_array_size(up->plan)) {
		http_error(res, 400, "invalid_field",
			   "'builds' is %lld, more than the %zu commits task "
			   "%s builds",
			   (long long)json_integer_value(builds),
			   json_array_size(up->plan), up->task_text);
		goto out;
	}
	if (store_runs(res, conn, up, json_object_get(body, "runs")) < 0 ||
	    store_build_failures(res, conn, up->job_id, up->plan, body) < 0 ||
	    commitlog_store(res, conn, up->job_id, up->plan,
			    json_object_get(body, "outcomes")) < 0)
		goto out;
	if (store_tasks_finish(conn, up->task_id,
			       builds != NULL ? json_integer_value(builds)
					      : -1) < 0) {
		http_db_failed(res);
		goto out;
	}
	rc = bench_upload(res, conn, up->job_id, body, server_config.base_url);
out:
	json_decref(up->plan);
	up->plan = NULL;
	free(kpi);
	up->kpi = NULL;
	return rc;
}

void workers_result(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req), *lease, *runs, *builds;
	struct upload up = {.task_text = req->params[0]};
	struct store_task_lease held;
	PGconn *conn = db_conn();
	long long token_id;

	if (body == NULL)
		return;
	lease = json_object_get(body, "lease");
	runs = json_object_get(body, "runs");
	/* How many builds the task cost; a worker may not say. */
	builds = json_object_get(body, "builds");
	if (id_parse(&up.task_id, req->params[0]) < 0 ||
	    !json_is_integer(lease) || !json_is_array(runs) ||
	    (builds != NULL &&
	     (!json_is_integer(builds) || json_integer_value(builds) < 0))) {
		http_error(res, 400, "invalid_field",
			   "an integer 'lease', a 'runs' list, and optional "
			   "'build_failures' (list), 'outcomes' (list) and "
			   "'builds' (integer >= 0) are needed");
		goto out;
	}
	/* The shape of workers that ran one commit a task. */
	if (json_object_get(body, "build_failed") != NULL ||
	    json_object_get(body, "build_log") != NULL) {
		http_error(res, 400, "invalid_field",
			   "'build_failed' and 'build_log' are no longer "
			   "taken: list each commit that does not build in "
			   "'build_failures' as {commit_index, log}");
		goto out;
	}
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		goto out;
	}
	if (!check_lease(res, conn, req->params[0], up.task_id,
			 json_integer_value(lease), req->token_id, &held)) {
		db_rollback(conn);
		goto out;
	}
	up.job_id = held.job_id;
	up.worker_id = held.worker_id;
	if (store_workers_touch(&token_id, NULL, 0, conn, held.worker_id) ==
	    STORE_FAILED) {
		db_rollback(conn);
		http_db_failed(res);
		goto out;
	}
	if (store_upload(res, conn, &up, body) < 0) {
		db_rollback(conn);
		goto out;
	}
	if (db_commit(conn) < 0) {
		db_rollback(conn);
		http_db_failed(res);
		goto out;
	}
	/* The job its runs moved on: this server's next answer of it is
	 * read anew, as its uploader may ask at once (other servers follow
	 * the notification); the rest of the cache stays. */
	jobcache_forget(up.job_id);
	http_json(res, 200,
		  json_pack("{s:s,s:I}", "status", "ok", "stored",
			    (json_int_t)json_array_size(runs)));
out:
	json_decref(body);
}
