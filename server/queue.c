/*
 * The worker protocol: register, claim a task under a lease, heartbeat,
 * upload runs.  PostgreSQL row locks are the queue (FOR UPDATE SKIP LOCKED),
 * and a task's `lease` counter, bumped at every claim, tells an upload of
 * the current claim from a late one whose lease lapsed and was re-claimed.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commitlog.h"
#include "db.h"
#include "id.h"
#include "log.h"
#include "patches.h"
#include "scheduler.h"
#include "server.h"

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

void queue_register(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req), *name, *group, *machine;
	char token[24];
	const char *params[4];
	PGresult *r;

	if (body == NULL)
		return;
	name = json_object_get(body, "name");
	group = json_object_get(body, "group");
	machine = json_object_get(body, "machine");
	if (!short_text(name, 128) || json_string_length(name) == 0 ||
	    (group != NULL &&
	     (!short_text(group, 64) || json_string_length(group) == 0)) ||
	    (machine != NULL && !short_text(machine, 512))) {
		http_error(res, 400, "invalid_field",
			   "'name' (1-128 chars), optional 'group' (1-64) and "
			   "'machine' (<= 512) must be strings");
		goto out;
	}
	snprintf(token, sizeof(token), "%lld", req->token_id);
	params[0] = json_string_value(name);
	params[1] = group != NULL ? json_string_value(group) : "default";
	params[2] = machine != NULL ? json_string_value(machine) : NULL;
	params[3] = req->token_id > 0 ? token : NULL;
	r = db_exec(
	    db_conn(),
	    "INSERT INTO workers (name, grp, machine, token_id)"
	    " VALUES ($1, $2, $3, $4) ON CONFLICT (name, grp) DO UPDATE"
	    " SET machine = EXCLUDED.machine, token_id ="
	    " EXCLUDED.token_id, last_seen_at = now() RETURNING id",
	    4, params);
	if (r == NULL) {
		http_db_failed(res);
		goto out;
	}
	log_info("worker '%s' registered as %s", params[0], db_text(r, 0, 0));
	http_json(res, 200,
		  json_pack("{s:I,s:i}", "id", (json_int_t)db_int(r, 0, 0),
			    "lease_seconds", server_config.lease_seconds));
	PQclear(r);
out:
	json_decref(body);
}

/* The worker row of a request, checked to belong to the caller's token. */
static bool load_worker(struct http_response *res, PGconn *conn,
			const struct http_request *req, const char *worker_id)
{
	const char *params[1] = {worker_id};
	PGresult *r;
	bool ok;

	r = db_exec(conn,
		    "UPDATE workers SET last_seen_at = now() WHERE id = $1"
		    " RETURNING token_id",
		    1, params);
	if (r == NULL) {
		http_db_failed(res);
		return false;
	}
	ok = PQntuples(r) == 1 &&
	     (req->token_id == 0 || db_int(r, 0, 0) == req->token_id);
	PQclear(r);
	if (!ok)
		http_error(res, 404, "unknown_worker",
			   "worker %s is not registered with this token; "
			   "register again",
			   worker_id);
	return ok;
}

/*
 * The commits a task runs, in the order to run them: [{"index", "commit",
 * "runs", "purpose"}], from the task's plan (a task of an older server
 * without one runs its single commit).
 */
static int load_plan(json_t **out, PGconn *conn, const char *task_id)
{
	const char *params[1] = {task_id};
	json_t *list;
	PGresult *r;
	int i;

	r = db_exec(
	    conn,
	    "SELECT (p.e->>'idx')::int, c.sha, (p.e->>'runs')::int,"
	    " p.e->>'purpose', t.interleave"
	    " FROM tasks t CROSS JOIN LATERAL"
	    " jsonb_array_elements(CASE WHEN jsonb_array_length(t.plan)"
	    " > 0 THEN t.plan ELSE jsonb_build_array(jsonb_build_object("
	    "'idx', t.commit_idx, 'runs', t.runs_wanted, 'purpose',"
	    " 'search')) END) WITH ORDINALITY AS p(e, ord)"
	    " JOIN job_commits c ON c.job_id = t.job_id"
	    " AND c.idx = (p.e->>'idx')::int"
	    " WHERE t.id = $1 ORDER BY p.ord",
	    1, params);
	if (r == NULL)
		return -1;
	list = json_array();
	for (i = 0; i < PQntuples(r); i++)
		json_array_append_new(
		    list, json_pack("{s:I,s:s,s:I,s:s}", "index",
				    (json_int_t)db_int(r, i, 0), "commit",
				    db_text(r, i, 1), "runs",
				    (json_int_t)db_int(r, i, 2), "purpose",
				    db_text(r, i, 3)));
	PQclear(r);
	if (json_array_size(list) == 0) {
		json_decref(list);
		return -1;
	}
	*out = list;
	return 0;
}

/* Adds the plan to a claimed task: "commits", "interleave", and "commit"
 * and "runs" of the first entry for workers that run one commit. */
static int attach_plan(PGconn *conn, json_t *task, const char *task_id)
{
	const char *params[1] = {task_id};
	json_t *plan, *first;
	PGresult *r;

	if (load_plan(&plan, conn, task_id) < 0)
		return -1;
	first = json_array_get(plan, 0);
	json_object_set(task, "commit", json_object_get(first, "commit"));
	json_object_set(task, "runs", json_object_get(first, "runs"));
	r = db_exec(conn, "SELECT interleave FROM tasks WHERE id = $1", 1,
		    params);
	json_object_set_new(
	    task, "interleave",
	    json_boolean(r != NULL && PQntuples(r) == 1 && db_bool(r, 0, 0)));
	PQclear(r);
	json_object_set_new(task, "commits", plan);
	return 0;
}

void queue_claim(struct http_response *res, struct http_request *req)
{
	char lease_text[24];
	const char *params[2] = {req->params[0], lease_text};
	PGconn *conn = db_conn();
	long long worker_id;
	json_t *task;
	json_error_t e;
	PGresult *r;

	if (!http_path_id(res, req->params[0], "unknown_worker", "worker",
			  &worker_id))
		return;
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		return;
	}
	if (!load_worker(res, conn, req, req->params[0])) {
		db_rollback(conn);
		return;
	}
	snprintf(lease_text, sizeof(lease_text), "%u",
		 server_config.lease_seconds);
	/* The oldest open task whose lease is free or lapsed; a task another
	 * claim holds locked right now is skipped, not waited for. */
	r = db_exec(conn,
		    "WITH next AS ("
		    " SELECT t.id FROM tasks t JOIN jobs j ON j.id = t.job_id"
		    " JOIN workers w ON w.id = $1"
		    " WHERE (t.state = 'queued' OR (t.state = 'running' AND"
		    " t.lease_expires_at < now()))"
		    " AND j.state IN ('queued', 'running')"
		    " AND j.group_name = w.grp"
		    " ORDER BY t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED)"
		    " UPDATE tasks t SET state = 'running', worker_id = $1,"
		    " lease = t.lease + 1,"
		    " lease_expires_at = now() + make_interval(secs => $2)"
		    " FROM next WHERE t.id = next.id"
		    " RETURNING t.id, t.lease, t.job_id, t.commit_idx,"
		    " t.runs_wanted",
		    2, params);
	if (r == NULL)
		goto failed;
	if (PQntuples(r) == 0) {
		PQclear(r);
		db_rollback(conn);
		http_json(res, 200, json_pack("{s:n}", "task"));
		return;
	}
	{
		const char *q[2] = {db_text(r, 0, 2), db_text(r, 0, 3)};
		PGresult *d;

		d = db_exec(conn,
			    "UPDATE jobs SET state = 'running',"
			    " started_at = coalesce(started_at, now())"
			    " WHERE id = $1",
			    1, q);
		if (d == NULL) {
			PQclear(r);
			goto failed;
		}
		PQclear(d);
		d = db_exec(
		    conn,
		    "SELECT c.sha, rp.name, rp.url, t.build, t.run,"
		    " t.kpi, t.timeout_s, t.monitors, t.name,"
		    " t.params"
		    " FROM job_commits c JOIN jobs j ON j.id = c.job_id"
		    " JOIN repos rp ON rp.id = j.repo_id"
		    " JOIN testcases t ON t.id = j.testcase_id"
		    " WHERE c.job_id = $1 AND c.idx = $2",
		    2, q);
		if (d == NULL || PQntuples(d) != 1) {
			PQclear(d);
			PQclear(r);
			goto failed;
		}
		task = json_pack(
		    "{s:I,s:I,s:I,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,"
		    "s:I,s:o,s:o},s:I,s:i}",
		    "id", (json_int_t)db_int(r, 0, 0), "lease",
		    (json_int_t)db_int(r, 0, 1), "job",
		    (json_int_t)db_int(r, 0, 2), "commit", db_text(d, 0, 0),
		    "repo", "name", db_text(d, 0, 1), "url", db_text(d, 0, 2),
		    "testcase", "name", db_text(d, 0, 8), "build",
		    db_text(d, 0, 3), "run", db_text(d, 0, 4), "kpi",
		    db_text(d, 0, 5), "timeout_s", (json_int_t)db_int(d, 0, 6),
		    "monitors", json_loads(db_text(d, 0, 7), 0, &e), "params",
		    json_loads(db_text(d, 0, 9), 0, &e), "runs",
		    (json_int_t)db_int(r, 0, 4), "lease_seconds",
		    server_config.lease_seconds);
		PQclear(d);
		if (task != NULL &&
		    (attach_plan(conn, task, db_text(r, 0, 0)) < 0 ||
		     patches_attach_series(conn, task, db_int(r, 0, 2)) < 0)) {
			json_decref(task);
			PQclear(r);
			goto failed;
		}
	}
	PQclear(r);
	if (task == NULL || db_commit(conn) < 0) {
		json_decref(task);
		goto failed;
	}
	http_json(res, 200, json_pack("{s:o}", "task", task));
	return;
failed:
	db_rollback(conn);
	http_db_failed(res);
}

/*
 * Locks task `task_id` and checks that `lease` is its current, unexpired
 * lease.  Answers 409 (lease lost or job cancelled) or 404 and returns false
 * otherwise; the caller's transaction stays open either way.
 */
static bool check_lease(struct http_response *res, PGconn *conn,
			const char *task_id, long long lease,
			long long *job_id, long long *commit_idx,
			long long *worker_id)
{
	const char *params[1] = {task_id};
	PGresult *r;
	bool ok = false;

	r = db_exec(conn,
		    "SELECT t.state, t.lease, t.lease_expires_at > now(),"
		    " t.job_id, t.commit_idx, t.worker_id, j.state"
		    " FROM tasks t JOIN jobs j ON j.id = t.job_id"
		    " WHERE t.id = $1 FOR UPDATE OF t",
		    1, params);
	if (r == NULL) {
		http_db_failed(res);
		return false;
	}
	if (PQntuples(r) == 0) {
		http_error(res, 404, "not_found", "no task %s", task_id);
	} else if (strcmp(db_text(r, 0, 6), "cancelled") == 0 ||
		   strcmp(db_text(r, 0, 0), "cancelled") == 0) {
		http_error(res, 409, "cancelled",
			   "the job of task %s was cancelled", task_id);
	} else if (strcmp(db_text(r, 0, 0), "running") != 0 ||
		   db_int(r, 0, 1) != lease || !db_bool(r, 0, 2)) {
		http_error(res, 409, "lease_lost",
			   "the lease of task %s lapsed or belongs to a later "
			   "claim; its runs are not counted",
			   task_id);
	} else {
		*job_id = db_int(r, 0, 3);
		*commit_idx = db_int(r, 0, 4);
		*worker_id = db_int(r, 0, 5);
		ok = true;
	}
	PQclear(r);
	return ok;
}

void queue_heartbeat(struct http_response *res, struct http_request *req)
{
	char lease_text[24];
	const char *params[2] = {req->params[0], lease_text};
	json_t *body = http_json_body(res, req), *lease;
	long long task_id, job_id, commit_idx, worker_id;
	PGconn *conn = db_conn();
	PGresult *r;

	if (body == NULL)
		return;
	lease = json_object_get(body, "lease");
	if (id_parse(&task_id, req->params[0]) < 0 ||
	    !json_is_integer(lease)) {
		http_error(res, 400, "invalid_field",
			   "a task id and an integer 'lease' are needed");
		goto out;
	}
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		goto out;
	}
	if (!check_lease(res, conn, req->params[0], json_integer_value(lease),
			 &job_id, &commit_idx, &worker_id)) {
		db_rollback(conn);
		goto out;
	}
	snprintf(lease_text, sizeof(lease_text), "%u",
		 server_config.lease_seconds);
	r = db_exec(conn,
		    "UPDATE tasks SET lease_expires_at = now() +"
		    " make_interval(secs => $2) WHERE id = $1",
		    2, params);
	PQclear(r);
	if (r == NULL || db_commit(conn) < 0) {
		db_rollback(conn);
		http_db_failed(res);
		goto out;
	}
	http_json(res, 200,
		  json_pack("{s:s,s:i}", "status", "ok", "lease_seconds",
			    server_config.lease_seconds));
out:
	json_decref(body);
}

/* Stores the runs of one upload; 400 for a malformed run. */
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

/*
 * Stores the runs of one upload; 400 for a malformed run, a commit the task
 * does not hold, or more runs of a commit than the task asked for.  A run
 * names its commit with "commit_index"; without it, the task's first.
 */
static int store_runs(struct http_response *res, PGconn *conn,
		      const char *task_id, long long job_id, json_t *plan,
		      long long worker_id, const char *kpi, json_t *runs)
{
	char job_text[24], idx_text[24], worker_text[24], kpi_text[40];
	char exit_text[24], wall_text[40];
	const char *params[9];
	size_t i, k, *stored;
	json_t *run;

	stored = calloc(json_array_size(plan) + 1, sizeof(*stored));
	if (stored == NULL) {
		http_error(res, 500, "internal", "out of memory");
		return -1;
	}
	snprintf(job_text, sizeof(job_text), "%lld", job_id);
	snprintf(worker_text, sizeof(worker_text), "%lld", worker_id);
	json_array_foreach(runs, i, run)
	{
		json_t *index = json_object_get(run, "commit_index");
		json_t *entry =
		    index == NULL
			? json_array_get(plan, 0)
			: plan_entry(plan, json_integer_value(index));
		json_t *metrics = json_object_get(run, "metrics");
		json_t *exit_code = json_object_get(run, "exit_code");
		json_t *wall = json_object_get(run, "wall_s");
		json_t *value;
		const char *name;
		char *metrics_text;
		PGresult *r;

		/* exit_code is an integer column: out of its range is the
		 * worker's error (400), not the database's (500). */
		if (!json_is_object(run) || !json_is_object(metrics) ||
		    !json_is_integer(exit_code) ||
		    json_integer_value(exit_code) < INT_MIN ||
		    json_integer_value(exit_code) > INT_MAX ||
		    (wall != NULL && !json_is_number(wall)) ||
		    (index != NULL && !json_is_integer(index))) {
			http_error(res, 400, "invalid_run",
				   "run %zu needs 'metrics' (object), "
				   "'exit_code' (a 32-bit integer), 'wall_s' "
				   "(number) "
				   "and optionally 'commit_index' (integer)",
				   i);
			goto fail;
		}
		if (entry == NULL) {
			http_error(res, 400, "invalid_run",
				   "run %zu names commit %lld, which task %s "
				   "does not run",
				   i, (long long)json_integer_value(index),
				   task_id);
			goto fail;
		}
		k = (size_t)plan_find(
		    plan, json_integer_value(json_object_get(entry, "index")));
		if (++stored[k] > (size_t)json_integer_value(
				      json_object_get(entry, "runs"))) {
			http_error(res, 400, "invalid_run",
				   "more runs of commit %lld than task %s "
				   "asked for",
				   (long long)json_integer_value(
				       json_object_get(entry, "index")),
				   task_id);
			goto fail;
		}
		snprintf(idx_text, sizeof(idx_text), "%lld",
			 (long long)json_integer_value(
			     json_object_get(entry, "index")));
		json_object_foreach(metrics, name, value)
		{
			if (!json_is_number(value) ||
			    !isfinite(json_number_value(value))) {
				http_error(res, 400, "invalid_run",
					   "metric '%s' of run %zu is not a "
					   "finite number",
					   name, i);
				goto fail;
			}
		}
		value = json_object_get(metrics, kpi);
		/* A run that failed or did not print the KPI is kept but
		 * not measured. */
		if (value != NULL && json_integer_value(exit_code) == 0)
			snprintf(kpi_text, sizeof(kpi_text), "%.17g",
				 json_number_value(value));
		snprintf(exit_text, sizeof(exit_text), "%lld",
			 (long long)json_integer_value(exit_code));
		snprintf(wall_text, sizeof(wall_text), "%.6f",
			 wall != NULL ? json_number_value(wall) : 0.0);
		metrics_text = json_dumps(metrics, JSON_COMPACT);
		params[0] = job_text;
		params[1] = task_id;
		params[2] = idx_text;
		params[3] = worker_text;
		params[4] = value != NULL && json_integer_value(exit_code) == 0
				? kpi_text
				: NULL;
		params[5] = metrics_text;
		params[6] = exit_text;
		params[7] = wall_text;
		params[8] =
		    json_string_value(json_object_get(entry, "purpose"));
		r = db_exec(conn,
			    "INSERT INTO runs (job_id, task_id, commit_idx,"
			    " worker_id, kpi, metrics, exit_code, wall_s,"
			    " purpose) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
			    " $9)",
			    9, params);
		free(metrics_text);
		if (r == NULL) {
			http_db_failed(res);
			goto fail;
		}
		PQclear(r);
	}
	free(stored);
	return 0;
fail:
	free(stored);
	return -1;
}

/* Marks the commits whose build failed: "build_failures": [{"commit_index",
 * "log"}], or the older "build_failed" / "build_log" for the first. */
static int store_build_failures(struct http_response *res, PGconn *conn,
				long long job_id, json_t *plan, json_t *body)
{
	json_t *failures = json_object_get(body, "build_failures");
	char job_text[24], idx_text[24];
	const char *params[3] = {job_text, idx_text, NULL};
	size_t i;
	json_t *f;

	snprintf(job_text, sizeof(job_text), "%lld", job_id);
	if (failures == NULL &&
	    json_is_true(json_object_get(body, "build_failed")))
		failures = json_pack(
		    "[{s:O,s:O}]", "commit_index",
		    json_object_get(json_array_get(plan, 0), "index"), "log",
		    json_object_get(body, "build_log") != NULL
			? json_object_get(body, "build_log")
			: json_string(""));
	else
		json_incref(failures);
	if (failures != NULL && !json_is_array(failures))
		goto bad;
	json_array_foreach(failures, i, f)
	{
		json_t *index = json_object_get(f, "commit_index");
		json_t *log = json_object_get(f, "log");
		PGresult *r;

		if (!json_is_integer(index) ||
		    plan_entry(plan, json_integer_value(index)) == NULL ||
		    (log != NULL && !json_is_string(log)))
			goto bad;
		snprintf(idx_text, sizeof(idx_text), "%lld",
			 (long long)json_integer_value(index));
		params[2] = log != NULL ? json_string_value(log) : "";
		r = db_exec(conn,
			    "UPDATE job_commits SET build_failed = true,"
			    " build_log = right($3, 65536),"
			    " outcome = 'build_failed'"
			    " WHERE job_id = $1 AND idx = $2",
			    3, params);
		if (r == NULL) {
			json_decref(failures);
			http_db_failed(res);
			return -1;
		}
		PQclear(r);
		log_info("job %lld: commit %s does not build; skipped", job_id,
			 idx_text);
	}
	json_decref(failures);
	return 0;
bad:
	json_decref(failures);
	http_error(res, 400, "invalid_field",
		   "'build_failures' must list {commit_index, log} of commits "
		   "the task runs");
	return -1;
}

void queue_result(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req), *lease, *runs, *build_failed;
	json_t *build_log, *builds, *plan = NULL;
	long long task_id, job_id, commit_idx, worker_id;
	char job_text[24], builds_text[24];
	const char *params[3];
	PGconn *conn = db_conn();
	PGresult *r;

	if (body == NULL)
		return;
	lease = json_object_get(body, "lease");
	runs = json_object_get(body, "runs");
	build_failed = json_object_get(body, "build_failed");
	build_log = json_object_get(body, "build_log");
	/* How many builds the task cost; an older worker does not say. */
	builds = json_object_get(body, "builds");
	if (id_parse(&task_id, req->params[0]) < 0 ||
	    !json_is_integer(lease) || !json_is_array(runs) ||
	    (build_failed != NULL && !json_is_boolean(build_failed)) ||
	    (build_log != NULL && !json_is_string(build_log)) ||
	    (builds != NULL &&
	     (!json_is_integer(builds) || json_integer_value(builds) < 0))) {
		http_error(res, 400, "invalid_field",
			   "an integer 'lease', a 'runs' list, and optional "
			   "'build_failed' (boolean), 'build_log' (string) "
			   "and 'builds' (integer >= 0) are needed");
		goto out;
	}
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		goto out;
	}
	if (!check_lease(res, conn, req->params[0], json_integer_value(lease),
			 &job_id, &commit_idx, &worker_id))
		goto rollback;
	snprintf(job_text, sizeof(job_text), "%lld", job_id);
	params[0] = job_text;
	r = db_exec(conn,
		    "SELECT t.kpi FROM jobs j JOIN testcases t"
		    " ON t.id = j.testcase_id WHERE j.id = $1 FOR UPDATE OF j",
		    1, params);
	if (r == NULL || PQntuples(r) != 1) {
		PQclear(r);
		http_db_failed(res);
		goto rollback;
	}
	if (load_plan(&plan, conn, req->params[0]) < 0) {
		PQclear(r);
		http_db_failed(res);
		goto rollback;
	}
	if (builds != NULL &&
	    json_integer_value(builds) > (json_int_t)json_array_size(plan)) {
		PQclear(r);
		http_error(res, 400, "invalid_field",
			   "'builds' is %lld, more than the %zu commits task "
			   "%s builds",
			   (long long)json_integer_value(builds),
			   json_array_size(plan), req->params[0]);
		goto rollback;
	}
	if (store_runs(res, conn, req->params[0], job_id, plan, worker_id,
		       db_text(r, 0, 0), runs) < 0 ||
	    store_build_failures(res, conn, job_id, plan, body) < 0 ||
	    commitlog_store(res, conn, job_id, plan,
			    json_object_get(body, "outcomes")) < 0) {
		PQclear(r);
		goto rollback;
	}
	PQclear(r);
	params[0] = req->params[0];
	params[1] = NULL;
	if (builds != NULL) {
		snprintf(builds_text, sizeof(builds_text), "%lld",
			 (long long)json_integer_value(builds));
		params[1] = builds_text;
	}
	r = db_exec(conn,
		    "UPDATE tasks SET state = 'done', finished_at = now(),"
		    " builds = $2 WHERE id = $1",
		    2, params);
	if (r == NULL) {
		http_db_failed(res);
		goto rollback;
	}
	PQclear(r);
	if (sched_advance(conn, job_id, server_config.base_url) < 0 ||
	    db_commit(conn) < 0) {
		http_db_failed(res);
		goto rollback;
	}
	http_json(res, 200,
		  json_pack("{s:s,s:I}", "status", "ok", "stored",
			    (json_int_t)json_array_size(runs)));
	goto out;
rollback:
	db_rollback(conn);
out:
	json_decref(plan);
	json_decref(body);
}
