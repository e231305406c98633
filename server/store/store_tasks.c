/*
 * Workers, tasks, leases and runs in PostgreSQL.  Row locks are the queue
 * (FOR UPDATE SKIP LOCKED); a task's plan is a jsonb list of {"idx",
 * "runs", "purpose"}.
 */
#include "store_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../db.h"
#include "store.h"

static char *copy_text(const PGresult *r, int row, int col)
{
	const char *text = db_text(r, row, col);

	return strdup(text != NULL ? text : "");
}

/* Runs a command whose result is not read: 0 or -1. */
void store_plan_clear(struct store_plan *plan)
{
	free(plan->entries);
	memset(plan, 0, sizeof(*plan));
}

int store_workers_register(long long *out_id, PGconn *conn, const char *name,
			   const char *group, const char *machine,
			   long long token_id)
{
	char token[STORE_INT_TEXT];
	const char *params[4] = {name, group, machine, NULL};
	PGresult *r;

	store_int_text(token, token_id);
	params[3] = token_id > 0 ? token : NULL;
	r = db_exec(
	    conn,
	    "INSERT INTO workers (name, grp, machine, token_id)"
	    " VALUES ($1, $2, $3, $4) ON CONFLICT (name, grp) DO UPDATE"
	    " SET machine = EXCLUDED.machine, token_id ="
	    " EXCLUDED.token_id, last_seen_at = now() RETURNING id",
	    4, params);
	if (r == NULL)
		return -1;
	*out_id = db_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int store_workers_touch(long long *out_token_id, char *group, size_t size,
			PGconn *conn, long long worker_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {id};
	PGresult *r;
	int rc = STORE_NOT_FOUND;

	store_int_text(id, worker_id);
	r = db_exec_prepared(
	    conn,
	    "UPDATE workers SET last_seen_at = now() WHERE id = $1"
	    " RETURNING token_id, grp",
	    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		*out_token_id = db_int(r, 0, 0);
		if (group != NULL)
			snprintf(group, size, "%s", db_text(r, 0, 1));
		rc = 0;
	}
	PQclear(r);
	return rc;
}

void store_worker_list_clear(struct store_worker_list *list)
{
	free(list->rows);
	PQclear(list->result);
	memset(list, 0, sizeof(*list));
}

/* Each worker with the latest running task it holds a live lease on. */
/* clang-format off */
static const char workers_list_sql[] =
    "SELECT w.id, w.name, w.grp, w.machine,"
    " " STORE_TIMESTAMP("w.registered_at") ","
    " " STORE_TIMESTAMP("w.last_seen_at") ","
    " t.id, t.job_id, t.commit_idx, c.sha,"
    " " STORE_TIMESTAMP("t.lease_expires_at")
    " FROM workers w LEFT JOIN LATERAL"
    " (SELECT id, job_id, (plan->0->>'idx')::int AS commit_idx,"
    " lease_expires_at FROM tasks"
    " WHERE worker_id = w.id AND state = 'running'"
    " AND lease_expires_at > now() ORDER BY id DESC LIMIT 1) t"
    " ON true LEFT JOIN job_commits c"
    " ON c.job_id = t.job_id AND c.idx = t.commit_idx"
    " ORDER BY w.grp, w.name";
/* clang-format on */

int store_workers_list(struct store_worker_list *out, PGconn *conn)
{
	PGresult *r;
	size_t i;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn, workers_list_sql, 0, NULL);
	if (r == NULL)
		return STORE_FAILED;
	out->result = r;
	out->count = (size_t)PQntuples(r);
	out->rows = calloc(out->count + 1, sizeof(*out->rows));
	if (out->rows == NULL) {
		store_worker_list_clear(out);
		return STORE_FAILED;
	}
	for (i = 0; i < out->count; i++) {
		struct store_worker_row *w = &out->rows[i];
		int row = (int)i;

		w->id = db_int(r, row, 0);
		w->name = db_text(r, row, 1);
		w->group = db_text(r, row, 2);
		w->machine = db_text(r, row, 3);
		w->registered_at = db_text(r, row, 4);
		w->last_seen_at = db_text(r, row, 5);
		w->has_task = !db_is_null(r, row, 6);
		w->task_id = db_int(r, row, 6);
		w->job_id = db_int(r, row, 7);
		w->commit_index = db_int(r, row, 8);
		w->commit = db_text(r, row, 9);
		w->lease_expires_at = db_text(r, row, 10);
	}
	return STORE_OK;
}

int store_tasks_plan(struct store_plan *out, PGconn *conn, long long task_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {id};
	PGresult *r;
	int i, n;

	memset(out, 0, sizeof(*out));
	store_int_text(id, task_id);
	r = db_exec_prepared(
	    conn,
	    "SELECT (p.e->>'idx')::int, c.sha, (p.e->>'runs')::int,"
	    " p.e->>'purpose', t.interleave,"
	    " coalesce((p.e->>'rebuild')::boolean, false)"
	    " FROM tasks t CROSS JOIN LATERAL"
	    " jsonb_array_elements(t.plan) WITH ORDINALITY AS p(e, ord)"
	    " JOIN job_commits c ON c.job_id = t.job_id"
	    " AND c.idx = (p.e->>'idx')::int"
	    " WHERE t.id = $1 ORDER BY p.ord",
	    1, params);
	if (r == NULL)
		return -1;
	n = PQntuples(r);
	if (n == 0) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->entries = calloc((size_t)n, sizeof(*out->entries));
	if (out->entries == NULL) {
		PQclear(r);
		return -1;
	}
	out->count = (size_t)n;
	out->interleave = db_bool(r, 0, 4);
	for (i = 0; i < n; i++) {
		struct store_plan_entry *e = &out->entries[i];

		e->index = db_int(r, i, 0);
		snprintf(e->sha, sizeof(e->sha), "%s", db_text(r, i, 1));
		e->runs = db_int(r, i, 2);
		snprintf(e->purpose, sizeof(e->purpose), "%s",
			 db_text(r, i, 3) != NULL ? db_text(r, i, 3) : "");
		e->rebuild = db_bool(r, i, 5);
	}
	PQclear(r);
	return 0;
}

void store_claim_clear(struct store_claim *claim)
{
	free(claim->repo_name);
	free(claim->repo_url);
	free(claim->testcase_name);
	free(claim->build);
	free(claim->run);
	free(claim->kpi);
	free(claim->monitors);
	free(claim->params);
	free(claim->bench_repo);
	free(claim->bench_rev);
	free(claim->bench_sha);
	store_plan_clear(&claim->plan);
	memset(claim, 0, sizeof(*claim));
}

/* What the worker needs of the claimed task's job: repository and
 * testcase; and the job marked running. */
static int claim_job(struct store_claim *out, PGconn *conn,
		     long long worker_id)
{
	char job[STORE_INT_TEXT], worker[STORE_INT_TEXT], task[STORE_INT_TEXT];
	const char *params[3] = {job, worker, task};
	PGresult *r;

	store_int_text(job, out->job_id);
	store_int_text(worker, worker_id);
	store_int_text(task, out->task_id);
	/* A machine joining a spread job (lib/spread.h) takes its next
	 * slot; the claim's query locked the job row. */
	r = db_exec_prepared(
	    conn,
	    "WITH t AS (UPDATE tasks SET for_worker = $2, joining = false"
	    " WHERE id = $3 AND joining RETURNING job_id)"
	    " INSERT INTO job_machines (job_id, worker_id, slot)"
	    " SELECT t.job_id, $2, (SELECT coalesce(max(slot) + 1, 0)"
	    " FROM job_machines m WHERE m.job_id = $1) FROM t"
	    " ON CONFLICT (job_id, worker_id) DO UPDATE SET left_at = NULL",
	    3, params);
	if (r == NULL)
		return -1;
	PQclear(r);
	/* The job keeps to the machine of its first claim (issue 14); the
	 * claim's query locked the job row and saw it unbound or ours. */
	r = db_exec_prepared(
	    conn,
	    "UPDATE jobs SET state = 'running',"
	    " started_at = coalesce(started_at, now()),"
	    " bound_at = CASE WHEN worker_id IS NULL THEN now()"
	    " ELSE bound_at END,"
	    " worker_id = coalesce(worker_id, $2) WHERE id = $1",
	    2, params);
	if (r == NULL)
		return -1;
	PQclear(r);
	r = db_exec_prepared(conn,
			     "SELECT rp.name, rp.url, t.build, t.run, t.kpi,"
			     " t.timeout_s, t.monitors, t.name, t.params,"
			     " t.bench_repo, t.bench_rev, j.bench_sha"
			     " FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
			     " JOIN testcases t ON t.id = j.testcase_id"
			     " WHERE j.id = $1",
			     1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) != 1) {
		PQclear(r);
		return -1;
	}
	out->repo_name = copy_text(r, 0, 0);
	out->repo_url = copy_text(r, 0, 1);
	out->build = copy_text(r, 0, 2);
	out->run = copy_text(r, 0, 3);
	out->kpi = copy_text(r, 0, 4);
	out->timeout_s = db_int(r, 0, 5);
	out->monitors = copy_text(r, 0, 6);
	out->testcase_name = copy_text(r, 0, 7);
	out->params = copy_text(r, 0, 8);
	out->bench_repo = copy_text(r, 0, 9);
	out->bench_rev = copy_text(r, 0, 10);
	out->bench_sha = copy_text(r, 0, 11);
	PQclear(r);
	if (out->repo_name == NULL || out->repo_url == NULL ||
	    out->build == NULL || out->run == NULL || out->kpi == NULL ||
	    out->monitors == NULL || out->testcase_name == NULL ||
	    out->params == NULL || out->bench_repo == NULL ||
	    out->bench_rev == NULL || out->bench_sha == NULL)
		return -1;
	return 0;
}

int store_tasks_bench_pin(PGconn *conn, long long job_id, const char *sha)
{
	char job[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id), sha};
	PGresult *r;
	int error;

	r = db_exec(conn,
		    "UPDATE jobs SET bench_sha = coalesce(bench_sha, $2)"
		    " WHERE id = $1 RETURNING bench_sha = $2",
		    2, params);
	error = store_one_row(r);
	if (error != STORE_OK)
		return error;
	if (!db_bool(r, 0, 0))
		error = STORE_CONFLICT;
	PQclear(r);
	return error;
}

/* The tasks a claim by worker $1 may take, and how it takes one. */
#define CLAIM_FROM                                                            \
	" FROM tasks t JOIN jobs j ON j.id = t.job_id"                        \
	" JOIN workers w ON w.id = $1"                                        \
	" WHERE j.state IN ('queued', 'running') AND j.group_name = w.grp"    \
	" AND (j.spread OR j.worker_id IS NULL OR j.worker_id = $1)"          \
	" AND (NOT j.spread OR t.for_worker = $1 OR (t.joining AND NOT"       \
	" EXISTS (SELECT FROM job_machines m WHERE m.job_id = j.id"           \
	" AND m.worker_id = $1 AND m.left_at IS NULL)))"
#define CLAIM_LOCK                                                            \
	" ORDER BY t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED"                  \
	" FOR NO KEY UPDATE OF j SKIP LOCKED"

int store_tasks_claim(struct store_claim *out, PGconn *conn,
		      long long worker_id, long long token_id, long long lease,
		      unsigned lease_seconds)
{
	char worker[STORE_INT_TEXT], seconds[STORE_INT_TEXT];
	char token[STORE_INT_TEXT], lease_text[STORE_INT_TEXT];
	const char *params[4] = {worker, seconds, NULL, lease_text};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	store_int_text(worker, worker_id);
	store_int_text(seconds, (long long)lease_seconds);
	if (token_id > 0)
		params[2] = store_int_text(token, token_id);
	store_int_text(lease_text, lease);
	/* A task whose lease lapsed, else the oldest queued task, of a job
	 * of the group bound to this worker or to none yet; a task or job
	 * another claim (or an upload) holds locked right now is skipped,
	 * not waited for.  Locking the job row too keeps two claimers from
	 * binding one job each to itself.  The two are looked for apart so
	 * that each walks an index of its own (sql/160_claim_queue.sql):
	 * the queued tasks in id order, the running ones by expiry. */
	r = db_exec_prepared(
	    conn,
	    "WITH lapsed AS (SELECT t.id" CLAIM_FROM " AND t.state = 'running'"
	    " AND t.lease_expires_at < now()" CLAIM_LOCK "),"
	    " queued AS (SELECT t.id" CLAIM_FROM " AND t.state = 'queued'"
	    " AND NOT EXISTS (SELECT FROM lapsed)" CLAIM_LOCK ")"
	    " UPDATE tasks t SET state = 'running', worker_id = $1,"
	    " token_id = $3, lease = $4,"
	    " lease_expires_at = now() + make_interval(secs => $2)"
	    " FROM (SELECT id FROM lapsed UNION ALL"
	    " SELECT id FROM queued) next WHERE t.id = next.id"
	    " RETURNING t.id, t.lease, t.job_id",
	    4, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->task_id = db_int(r, 0, 0);
	out->lease = db_int(r, 0, 1);
	out->job_id = db_int(r, 0, 2);
	PQclear(r);
	if (claim_job(out, conn, worker_id) < 0 ||
	    store_tasks_plan(&out->plan, conn, out->task_id) != 0) {
		store_claim_clear(out);
		return -1;
	}
	return 0;
}

/* A job whose machine is gone: bound to another worker of the group not
 * seen for the timeout.  A job row another transaction holds is skipped. */
/* clang-format off */
static const char adopt_sql[] =
    "WITH stranded AS ("
    " SELECT j.id, j.worker_id AS old_worker,"
    " extract(epoch FROM now() - w.last_seen_at)::bigint AS unseen"
    " FROM jobs j JOIN workers me ON me.id = $1"
    " JOIN workers w ON w.id = j.worker_id"
    " WHERE j.state IN ('queued', 'running') AND j.group_name = me.grp"
    " AND j.worker_id <> $1 AND NOT j.spread"
    " AND w.last_seen_at < now() - make_interval(secs => $2)"
    " ORDER BY j.id LIMIT 1 FOR NO KEY UPDATE OF j SKIP LOCKED)"
    " UPDATE jobs j SET worker_id = $1, bound_at = now(),"
    " machine_moves = j.machine_moves + 1"
    " FROM stranded s WHERE j.id = s.id"
    " RETURNING j.id, s.old_worker, s.unseen";
/* clang-format on */

int store_tasks_adopt(struct store_move *out, PGconn *conn,
		      long long worker_id, unsigned machine_timeout_s)
{
	char worker[STORE_INT_TEXT], seconds[STORE_INT_TEXT];
	char job[STORE_INT_TEXT];
	const char *params[2] = {worker, seconds};
	const char *job_params[2] = {job, worker};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	store_int_text(worker, worker_id);
	store_int_text(seconds, (long long)machine_timeout_s);
	r = db_exec(conn, adopt_sql, 2, params);
	if (r == NULL)
		return STORE_FAILED;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	out->job_id = db_int(r, 0, 0);
	out->old_worker_id = db_int(r, 0, 1);
	out->unseen_s = db_int(r, 0, 2);
	PQclear(r);
	store_int_text(job, out->job_id);
	/* The runs so far stay for the record, counted no more; the tasks
	 * planned from them are withdrawn (one an upload holds right now
	 * is left to end: its runs come in superseded, see
	 * store_runs_insert). */
	r = db_exec(conn,
		    "WITH old AS (UPDATE runs SET superseded = true"
		    " WHERE job_id = $1 AND NOT superseded"
		    " AND worker_id IS DISTINCT FROM $2 RETURNING 1)"
		    " SELECT count(*) FROM old",
		    2, job_params);
	if (r == NULL)
		return STORE_FAILED;
	out->runs_superseded = db_int(r, 0, 0);
	PQclear(r);
	r = db_exec(conn,
		    "WITH open AS (SELECT id FROM tasks WHERE job_id = $1"
		    " AND state IN ('queued', 'running')"
		    " FOR UPDATE SKIP LOCKED),"
		    " gone AS (UPDATE tasks t SET state = 'cancelled',"
		    " finished_at = now() FROM open WHERE t.id = open.id"
		    " RETURNING 1) SELECT count(*) FROM gone",
		    1, job_params);
	if (r == NULL)
		return STORE_FAILED;
	out->tasks_withdrawn = db_int(r, 0, 0);
	PQclear(r);
	return STORE_OK;
}

int store_tasks_lock(struct store_task_lease *out, PGconn *conn,
		     long long task_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {id};
	PGresult *r;

	memset(out, 0, sizeof(*out));
	store_int_text(id, task_id);
	r = db_exec(conn,
		    "SELECT t.state, t.lease, t.lease_expires_at > now(),"
		    " t.job_id, t.worker_id, j.state, t.token_id"
		    " FROM tasks t JOIN jobs j ON j.id = t.job_id"
		    " WHERE t.id = $1 FOR UPDATE OF t",
		    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return STORE_NOT_FOUND;
	}
	snprintf(out->state, sizeof(out->state), "%s", db_text(r, 0, 0));
	out->lease = db_int(r, 0, 1);
	out->live = db_bool(r, 0, 2);
	out->job_id = db_int(r, 0, 3);
	out->worker_id = db_int(r, 0, 4);
	snprintf(out->job_state, sizeof(out->job_state), "%s",
		 db_text(r, 0, 5));
	out->token_id = db_is_null(r, 0, 6) ? 0 : db_int(r, 0, 6);
	PQclear(r);
	return 0;
}

int store_tasks_extend(PGconn *conn, long long task_id, const char *activity,
		       unsigned lease_seconds)
{
	char id[STORE_INT_TEXT], seconds[STORE_INT_TEXT];
	const char *params[3] = {id, seconds, activity};

	store_int_text(id, task_id);
	store_int_text(seconds, (long long)lease_seconds);
	return store_command(
	    conn,
	    "UPDATE tasks SET lease_expires_at = now() +"
	    " make_interval(secs => $2),"
	    " activity_at = CASE WHEN $3::text IS NULL OR $3 IS NOT DISTINCT"
	    " FROM activity THEN activity_at ELSE now() END,"
	    " activity = coalesce($3, activity) WHERE id = $1",
	    3, params);
}

void store_activity_clear(struct store_activity *activity)
{
	PQclear(activity->result);
	memset(activity, 0, sizeof(*activity));
}

int store_tasks_activity(struct store_activity *out, PGconn *conn,
			 long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r;
	int rc;

	memset(out, 0, sizeof(*out));
	r = db_exec(
	    conn,
	    "SELECT t.activity, " STORE_TIMESTAMP(
		"t.activity_at") ", w.name FROM tasks t JOIN workers w ON "
				 "w.id = t.worker_id"
				 " WHERE t.job_id = $1 AND t.state = 'running'"
				 " AND t.activity IS NOT NULL ORDER BY t.id "
				 "DESC LIMIT 1",
	    1, params);
	if ((rc = store_one_row(r)) != STORE_OK)
		return rc;
	out->result = r;
	out->text = db_text(r, 0, 0);
	out->since = db_text(r, 0, 1);
	out->worker = db_text(r, 0, 2);
	return STORE_OK;
}

int store_tasks_lock_job(char **out, PGconn *conn, long long job_id)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {id};
	PGresult *r;
	int rc = STORE_NOT_FOUND;

	*out = NULL;
	store_int_text(id, job_id);
	r = db_exec(conn,
		    "SELECT t.kpi FROM jobs j JOIN testcases t"
		    " ON t.id = j.testcase_id WHERE j.id = $1 FOR UPDATE OF j",
		    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1) {
		*out = copy_text(r, 0, 0);
		rc = *out != NULL ? 0 : -1;
	}
	PQclear(r);
	return rc;
}

int store_runs_insert(PGconn *conn, const struct store_run *run)
{
	char job[STORE_INT_TEXT], task[STORE_INT_TEXT], index[STORE_INT_TEXT];
	char worker[STORE_INT_TEXT], exit_code[STORE_INT_TEXT];
	char kpi[40], wall[40];
	const char *params[9] = {job,	    task, index,
				 worker,    NULL, run->metrics,
				 exit_code, wall, run->purpose};

	store_int_text(job, run->job_id);
	store_int_text(task, run->task_id);
	store_int_text(index, run->commit_index);
	store_int_text(worker, run->worker_id);
	store_int_text(exit_code, run->exit_code);
	if (run->has_kpi) {
		snprintf(kpi, sizeof(kpi), "%.17g", run->kpi);
		params[4] = kpi;
	}
	snprintf(wall, sizeof(wall), "%.6f", run->wall_s);
	/* A run of a machine the job has moved away from is kept for the
	 * record but not counted (issue 14); a spread job counts every
	 * machine's (lib/spread.h). */
	return store_command(conn,
			     "INSERT INTO runs (job_id, task_id, commit_idx,"
			     " worker_id, kpi, metrics, exit_code, wall_s,"
			     " purpose, superseded) SELECT $1, $2, $3, $4, $5,"
			     " $6, $7, $8, $9, NOT j.spread AND j.worker_id"
			     " IS NOT NULL AND j.worker_id <> $4"
			     " FROM jobs j WHERE j.id = $1",
			     9, params);
}

int store_tasks_build_failed(PGconn *conn, long long job_id, long long index,
			     const char *log)
{
	char job[STORE_INT_TEXT], idx[STORE_INT_TEXT];
	const char *params[3] = {job, idx, log};

	store_int_text(job, job_id);
	store_int_text(idx, index);
	return store_command(conn,
			     "UPDATE job_commits SET build_failed = true,"
			     " build_log = right($3, 65536),"
			     " outcome = 'build_failed'"
			     " WHERE job_id = $1 AND idx = $2",
			     3, params);
}

int store_tasks_finish(PGconn *conn, long long task_id, long long builds)
{
	char id[STORE_INT_TEXT], builds_text[STORE_INT_TEXT];
	const char *params[2] = {id, NULL};

	store_int_text(id, task_id);
	if (builds >= 0) {
		store_int_text(builds_text, builds);
		params[1] = builds_text;
	}
	return store_command(
	    conn,
	    "UPDATE tasks SET state = 'done', finished_at = now(),"
	    " builds = $2 WHERE id = $1",
	    2, params);
}

int store_tasks_insert(PGconn *conn, long long job_id,
		       const struct store_plan *plan)
{
	char job[STORE_INT_TEXT];
	char worker[STORE_INT_TEXT];
	const char *params[5] = {job, NULL, NULL, NULL, NULL};
	json_t *list = json_array();
	char *plan_text;
	size_t i;
	int rc;

	if (list == NULL || plan->count == 0) {
		json_decref(list);
		return -1;
	}
	for (i = 0; i < plan->count; i++) {
		const struct store_plan_entry *e = &plan->entries[i];

		json_t *entry = json_pack(
		    "{s:I,s:I,s:s}", "idx", (json_int_t)e->index, "runs",
		    (json_int_t)e->runs, "purpose", e->purpose);

		if (e->rebuild)
			json_object_set_new(entry, "rebuild", json_true());
		json_array_append_new(list, entry);
	}
	plan_text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (plan_text == NULL)
		return -1;
	store_int_text(job, job_id);
	params[1] = plan_text;
	params[2] = plan->interleave ? "true" : "false";
	if (plan->for_worker > 0)
		params[3] = store_int_text(worker, plan->for_worker);
	params[4] = plan->joining ? "true" : "false";
	rc = store_command(conn,
			   "INSERT INTO tasks (job_id, plan, interleave,"
			   " for_worker, joining) VALUES ($1, $2, $3, $4, $5)",
			   5, params);
	free(plan_text);
	return rc;
}

int store_tasks_open_count(long long *out, PGconn *conn, long long job_id)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {job};
	PGresult *r;

	store_int_text(job, job_id);
	r = db_exec(conn,
		    "SELECT count(*) FROM tasks WHERE job_id = $1"
		    " AND state IN ('queued', 'running')",
		    1, params);
	if (r == NULL)
		return -1;
	*out = db_int(r, 0, 0);
	PQclear(r);
	return 0;
}
