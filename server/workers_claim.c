/*
 * The worker's claim: the oldest task it may run, under a new lease, or
 * none; with "?wait=SECONDS" a claim that finds none waits for one
 * (issue 14), held by the HTTP layer (http_wait) rather than by a thread,
 * and woken when a task is queued (server/notify.c on the store's
 * 'statbisect_tasks' channel, whichever server queued it).  Every try is
 * a claim of its own in its own transaction, so the database's row locks
 * (store_tasks_claim) keep one task from going to two workers, however
 * many servers and claims there are.
 */
#include <ctype.h>
#include <stdlib.h>

#include "bench.h"
#include "db.h"
#include "log.h"
#include "patches.h"
#include "scheduler.h"
#include "secret.h"
#include "server.h"
#include "spreadjob.h"
#include "workers.h"

/* The longest wait a claim may ask for, and how often a waiting claim
 * looks again without being woken. */
#define CLAIM_WAIT_MAX_S 30
#define CLAIM_RETRY_MS 2000

/* The task as a claim answers it: what to run, and the plan ("commits",
 * "interleave"; "commit" and "runs" of the first entry for workers that
 * run one commit). */
static json_t *claim_json(const struct store_claim *claim)
{
	const struct store_plan_entry *first = &claim->plan.entries[0];
	json_error_t e;

	return json_pack(
	    "{s:I,s:I,s:I,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:I,s:o,s:o},"
	    "s:I,s:i,s:b,s:o}",
	    "id", (json_int_t)claim->task_id, "lease",
	    (json_int_t)claim->lease, "job", (json_int_t)claim->job_id,
	    "commit", first->sha, "repo", "name", claim->repo_name, "url",
	    claim->repo_url, "testcase", "name", claim->testcase_name, "build",
	    claim->build, "run", claim->run, "kpi", claim->kpi, "timeout_s",
	    (json_int_t)claim->timeout_s, "monitors",
	    json_loads(claim->monitors, 0, &e), "params",
	    json_loads(claim->params, 0, &e), "runs", (json_int_t)first->runs,
	    "lease_seconds", server_config.lease_seconds, "interleave",
	    claim->plan.interleave, "commits",
	    workers_plan_json(&claim->plan));
}

/* A new lease: a random positive 63-bit number.  Returns 0 or -1 when
 * the kernel gave no randomness. */
static int new_lease(long long *out)
{
	char hex[2 * 8 + 1];
	unsigned long long bits;

	if (secret_hex(hex, 8) < 0)
		return -1;
	bits = strtoull(hex, NULL, 16) & 0x7fffffffffffffffULL;
	*out = bits != 0 ? (long long)bits : 1;
	return 0;
}

/*
 * Takes over for worker `worker_id` a job of its group whose machine is
 * gone (issue 14) and asks the engine again: with the old machine's runs
 * no longer counted, it starts over from the endpoints on this one.
 * Returns 1 when a job moved, 0 when none was stranded, -1 on a database
 * error.
 */
static int adopt_stranded_job(PGconn *conn, long long worker_id)
{
	struct store_move move;
	int rc = store_tasks_adopt(&move, conn, worker_id,
				   server_config.machine_timeout_s);

	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc != STORE_OK)
		return -1;
	log_info("job %lld: worker %lld not seen for %lld s (machine "
		 "timeout %u s); the job moves to worker %lld, which measures "
		 "again: %lld runs kept but no longer counted, %lld tasks "
		 "withdrawn",
		 move.job_id, move.old_worker_id, move.unseen_s,
		 server_config.machine_timeout_s, worker_id,
		 move.runs_superseded, move.tasks_withdrawn);
	if (sched_advance(conn, move.job_id, server_config.base_url) < 0)
		return -1;
	return 1;
}

/* A task for worker `worker_id`: of a job bound to it or to none, else of
 * a job it takes over from a machine that is gone. */
static int claim_task(struct store_claim *out, PGconn *conn,
		      long long worker_id, long long token_id, long long lease)
{
	int rc = store_tasks_claim(out, conn, worker_id, token_id, lease,
				   server_config.lease_seconds);

	if (rc != STORE_NOT_FOUND)
		return rc;
	rc = spreadjob_drop_lost(conn, worker_id);
	if (rc == 0)
		rc = adopt_stranded_job(conn, worker_id);
	if (rc <= 0)
		return rc < 0 ? STORE_FAILED : STORE_NOT_FOUND;
	return store_tasks_claim(out, conn, worker_id, token_id, lease,
				 server_config.lease_seconds);
}

/*
 * The claim's wait in milliseconds: its "?wait=SECONDS", 0 to
 * CLAIM_WAIT_MAX_S, in whole seconds; 0 when not given.  Answers 400 and
 * returns false for anything else.
 */
static bool claim_wait(struct http_response *res,
		       const struct http_request *req, unsigned *out_ms)
{
	const char *text = http_query(req, "wait");
	unsigned seconds = 0;
	size_t i;

	*out_ms = 0;
	if (text == NULL)
		return true;
	for (i = 0; isdigit((unsigned char)text[i]) && i < 3; i++)
		seconds = seconds * 10 + (unsigned)(text[i] - '0');
	if (i == 0 || text[i] != '\0' || seconds > CLAIM_WAIT_MAX_S) {
		http_error(res, 400, "invalid_field",
			   "'wait' must be a whole number of seconds from 0 "
			   "to %d",
			   CLAIM_WAIT_MAX_S);
		return false;
	}
	*out_ms = seconds * 1000;
	return true;
}

/*
 * No task for the claim: it says so, but while its wait lasts it is held
 * and tried again when a task is queued (notify.c wakes the held claims)
 * or, in case that notification was lost or a lease lapsed, every
 * CLAIM_RETRY_MS.
 */
static void answer_none(struct http_response *res,
			const struct http_request *req, unsigned wait_ms,
			const char *group)
{
	http_json(res, 200, json_pack("{s:n}", "task"));
	if (req->waited_ms < wait_ms) {
		unsigned long long left = wait_ms - req->waited_ms;

		/* Only a task of its group wakes it (sql/100_notify.sql
		 * says the group). */
		http_wait_tagged(res,
				 left < CLAIM_RETRY_MS ? (unsigned)left
						       : CLAIM_RETRY_MS,
				 group);
	}
}

void workers_claim(struct http_response *res, struct http_request *req)
{
	PGconn *conn = db_conn();
	struct store_claim claim;
	char group[HTTP_WAIT_TAG_MAX + 1];
	long long worker_id, lease;
	unsigned wait_ms;
	json_t *task;
	int rc;

	if (!http_path_id(res, req->params[0], "unknown_worker", "worker",
			  &worker_id) ||
	    !claim_wait(res, req, &wait_ms))
		return;
	if (new_lease(&lease) < 0) {
		http_error(res, 503, "unavailable",
			   "no randomness for a lease; try again");
		return;
	}
	if (conn == NULL || db_begin(conn) < 0) {
		http_db_failed(res);
		return;
	}
	if (!workers_load(res, group, sizeof(group), conn, req, worker_id)) {
		db_rollback(conn);
		return;
	}
	rc = claim_task(&claim, conn, worker_id, req->token_id, lease);
	/* No task: the worker was seen all the same, and a machine another
	 * job left behind stays left (spreadjob.h). */
	if (rc == STORE_NOT_FOUND && db_commit(conn) == 0) {
		answer_none(res, req, wait_ms, group);
		return;
	}
	if (rc != STORE_OK) {
		db_rollback(conn);
		http_db_failed(res);
		return;
	}
	task = claim_json(&claim);
	/* A patch job's task carries its series for the worker to apply. */
	if (task != NULL &&
	    (bench_claim_fill(task, &claim) < 0 ||
	     patches_attach_series(conn, task, claim.job_id) < 0)) {
		json_decref(task);
		task = NULL;
	}
	store_claim_clear(&claim);
	if (task == NULL || db_commit(conn) < 0) {
		json_decref(task);
		db_rollback(conn);
		http_db_failed(res);
		return;
	}
	http_json(res, 200, json_pack("{s:o}", "task", task));
}
