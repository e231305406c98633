/*
 * The store of the worker protocol and the outbox (server/store/) against
 * a real PostgreSQL: a private cluster started with scripts/pg-local, the
 * migrations of sql/ applied, rows made by the tests.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/db.h"
#include "../../server/store/store_outbox.h"
#include "../../server/store/store_outcomes.h"
#include "../../server/store/store_spread.h"
#include "../../server/store/store_tasks.h"
#include "testdb.h"

/* A lease as workers.c makes them: a 63-bit random number. */
#define LEASE 0x5deece66d1234567LL

static long long token_a, token_b;

/* Runs `sql` with `n` parameters and returns the first column of the
 * first row as a number (0 when there is none). */
static long long sql_int(const char *sql, int n, const char *const *params)
{
	PGresult *r = db_exec(db_conn(), sql, n, params);
	long long value;

	assert_non_null(r);
	value = PQntuples(r) > 0 && !db_is_null(r, 0, 0) ? db_int(r, 0, 0) : 0;
	PQclear(r);
	return value;
}

/* The shared cluster (testdb.h) with two worker tokens, a repository and
 * a testcase. */
static int fixture_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	token_a = sql_int("INSERT INTO tokens (name, role, token_hash)"
			  " VALUES ('a', 'worker', 'hash-a') RETURNING id",
			  0, NULL);
	token_b = sql_int("INSERT INTO tokens (name, role, token_hash)"
			  " VALUES ('b', 'worker', 'hash-b') RETURNING id",
			  0, NULL);
	testdb_exec(
	    "INSERT INTO repos (name, url) VALUES ('proj', '/srv/proj')");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better, params) VALUES ('tc', 'make',"
		    " './bench', 'score', true, '{\"n\": 1}')");
	return 0;
}

/* A job of group `group` with three commits c0 <- c1 <- c2. */
static long long make_job(const char *group)
{
	const char *params[1] = {group};
	char job_text[24];
	const char *job_params[1] = {job_text};
	long long job;

	job = sql_int("INSERT INTO jobs (repo_id, testcase_id, good_rev,"
		      " bad_rev, good_sha, bad_sha, group_name)"
		      " SELECT r.id, t.id, 'c0', 'c2', 'c0', 'c2', $1"
		      " FROM repos r, testcases t RETURNING id",
		      1, params);
	snprintf(job_text, sizeof(job_text), "%lld", job);
	sql_int("INSERT INTO job_commits (job_id, idx, sha, subject,"
		" author_name, author_email, parents)"
		" SELECT $1, i, 'c' || i, 's' || i, 'Ada', 'ada@example.org',"
		" CASE WHEN i = 0 THEN '{}'::int[] ELSE ARRAY[i - 1] END"
		" FROM generate_series(0, 2) i",
		1, job_params);
	return job;
}

static void queue_two_commit_task(long long job)
{
	struct store_plan_entry entries[2] = {
	    {.index = 2, .runs = 3, .purpose = "search"},
	    {.index = 0, .runs = 4, .purpose = "confirm"},
	};
	struct store_plan plan = {
	    .entries = entries, .count = 2, .interleave = true};

	assert_int_equal(store_tasks_insert(db_conn(), job, &plan), 0);
}

static void test_store_tasks__register_again_keeps_the_worker(void **state)
{
	long long first, again, token = -1;
	char group[8];

	(void)state;
	assert_int_equal(store_workers_register(&first, db_conn(), "box",
						"reg", "4 threads", token_a),
			 0);
	assert_int_equal(store_workers_register(&again, db_conn(), "box",
						"reg", NULL, token_b),
			 0);
	assert_int_equal(again, first);
	assert_int_equal(store_workers_touch(&token, group, sizeof(group),
					     db_conn(), first),
			 0);
	assert_int_equal(token, token_b);
	/* Its group, cut to the room given. */
	assert_string_equal(group, "reg");
	assert_int_equal(
	    store_workers_touch(&token, group, 3, db_conn(), first), 0);
	assert_string_equal(group, "re");
	assert_int_equal(
	    store_workers_touch(&token, NULL, 0, db_conn(), first + 1000),
	    STORE_NOT_FOUND);
}

static void test_store_tasks__claim_hands_out_the_plan_once(void **state)
{
	struct store_claim claim;
	long long worker, job = make_job("claim"), open = -1;
	char job_text[24];
	const char *params[1] = {job_text};
	PGresult *r;

	(void)state;
	snprintf(job_text, sizeof(job_text), "%lld", job);
	assert_int_equal(store_workers_register(&worker, db_conn(), "box",
						"claim", NULL, token_a),
			 0);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), worker, token_a, LEASE, 60),
	    STORE_NOT_FOUND);
	queue_two_commit_task(job);
	assert_int_equal(store_tasks_open_count(&open, db_conn(), job), 0);
	assert_int_equal(open, 1);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), worker, token_a, LEASE, 60),
	    0);
	assert_int_equal(db_commit(db_conn()), 0);
	assert_int_equal(claim.job_id, job);
	assert_string_equal(claim.repo_name, "proj");
	assert_string_equal(claim.repo_url, "/srv/proj");
	assert_string_equal(claim.testcase_name, "tc");
	assert_string_equal(claim.kpi, "score");
	assert_string_equal(claim.params, "{\"n\": 1}");
	assert_int_equal(claim.timeout_s, 600);
	assert_int_equal(claim.plan.count, 2);
	assert_true(claim.plan.interleave);
	assert_string_equal(claim.plan.entries[0].sha, "c2");
	assert_int_equal(claim.plan.entries[0].runs, 3);
	assert_string_equal(claim.plan.entries[0].purpose, "search");
	assert_string_equal(claim.plan.entries[1].sha, "c0");
	assert_string_equal(claim.plan.entries[1].purpose, "confirm");
	r = db_exec(db_conn(), "SELECT state FROM jobs WHERE id = $1", 1,
		    params);
	assert_non_null(r);
	assert_string_equal(db_text(r, 0, 0), "running");
	PQclear(r);
	/* The worker list shows the task under the live lease. */
	{
		struct store_worker_list list;
		size_t i, found = 0;

		assert_int_equal(store_workers_list(&list, db_conn()), 0);
		for (i = 0; i < list.count; i++) {
			const struct store_worker_row *w = &list.rows[i];

			if (w->id != worker)
				continue;
			found++;
			assert_string_equal(w->group, "claim");
			assert_null(w->machine);
			assert_true(w->has_task);
			assert_int_equal(w->task_id, claim.task_id);
			assert_int_equal(w->commit_index, 2);
			assert_string_equal(w->commit, "c2");
			assert_int_equal(strlen(w->lease_expires_at), 20);
		}
		assert_int_equal(found, 1);
		store_worker_list_clear(&list);
	}
	/* A live lease is not handed out again. */
	{
		struct store_claim second;

		assert_int_equal(store_tasks_claim(&second, db_conn(), worker,
						   token_b, LEASE + 1, 60),
				 STORE_NOT_FOUND);
	}
	store_claim_clear(&claim);
}

/* The first bench commit uploaded is the job's; the same one again is
 * fine, another is refused; a claim of the job then names it. */
static void test_store_tasks__bench_commit_is_pinned_once(void **state)
{
	static const char sha1[] = "1111111111111111111111111111111111111111";
	static const char sha2[] = "2222222222222222222222222222222222222222";
	struct store_claim claim;
	long long worker, job = make_job("bench");

	(void)state;
	assert_int_equal(store_tasks_bench_pin(db_conn(), job, sha1), 0);
	assert_int_equal(store_tasks_bench_pin(db_conn(), job, sha1), 0);
	assert_int_equal(store_tasks_bench_pin(db_conn(), job, sha2),
			 STORE_CONFLICT);
	assert_int_equal(store_tasks_bench_pin(db_conn(), job + 1000, sha1),
			 STORE_NOT_FOUND);
	assert_int_equal(store_workers_register(&worker, db_conn(), "box",
						"bench", NULL, token_a),
			 0);
	queue_two_commit_task(job);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), worker, token_a, LEASE, 60),
	    0);
	assert_int_equal(db_commit(db_conn()), 0);
	assert_int_equal(claim.job_id, job);
	assert_string_equal(claim.bench_sha, sha1);
	/* The fixture's testcase names no benchmark repository. */
	assert_string_equal(claim.bench_repo, "");
	assert_string_equal(claim.bench_rev, "");
	store_claim_clear(&claim);
}

static void test_store_tasks__lease_lock_extend_and_finish(void **state)
{
	struct store_task_lease held;
	struct store_claim claim;
	long long worker, job = make_job("lease"), open = -1;

	(void)state;
	assert_int_equal(store_workers_register(&worker, db_conn(), "box",
						"lease", NULL, token_a),
			 0);
	queue_two_commit_task(job);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), worker, token_a, LEASE, 60),
	    0);
	assert_int_equal(store_tasks_lock(&held, db_conn(), claim.task_id), 0);
	assert_string_equal(held.state, "running");
	assert_string_equal(held.job_state, "running");
	assert_int_equal(claim.lease, LEASE);
	assert_int_equal(held.lease, LEASE);
	assert_int_equal(held.job_id, job);
	assert_int_equal(held.worker_id, worker);
	assert_int_equal(held.token_id, token_a);
	assert_true(held.live);
	assert_int_equal(
	    store_tasks_extend(db_conn(), claim.task_id, "building it", 120),
	    0);
	{
		struct store_activity a;

		assert_int_equal(store_tasks_activity(&a, db_conn(), job), 0);
		assert_string_equal(a.text, "building it");
		store_activity_clear(&a);
	}
	assert_int_equal(store_tasks_finish(db_conn(), claim.task_id, 2), 0);
	{
		struct store_activity a;

		/* A task that is done does nothing now. */
		assert_int_equal(store_tasks_activity(&a, db_conn(), job),
				 STORE_NOT_FOUND);
	}
	assert_int_equal(store_tasks_lock(&held, db_conn(), claim.task_id), 0);
	assert_string_equal(held.state, "done");
	assert_int_equal(store_tasks_open_count(&open, db_conn(), job), 0);
	assert_int_equal(open, 0);
	assert_int_equal(
	    store_tasks_lock(&held, db_conn(), claim.task_id + 1000),
	    STORE_NOT_FOUND);
	store_claim_clear(&claim);
}

static void test_store_tasks__runs_come_back_in_upload_order(void **state)
{
	struct store_claim claim;
	struct store_run_kpi *kpis;
	long long worker, job = make_job("runs");
	size_t count;
	char *kpi = NULL;

	(void)state;
	assert_int_equal(store_workers_register(&worker, db_conn(), "box",
						"runs", NULL, token_a),
			 0);
	queue_two_commit_task(job);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), worker, token_a, LEASE, 60),
	    0);
	assert_int_equal(store_tasks_lock_job(&kpi, db_conn(), job), 0);
	assert_string_equal(kpi, "score");
	free(kpi);
	{
		struct store_run run = {
		    .job_id = job,
		    .task_id = claim.task_id,
		    .commit_index = 2,
		    .worker_id = worker,
		    .has_kpi = true,
		    .kpi = 0.1,
		    .metrics = "{\"score\": 0.1}",
		    .exit_code = 0,
		    .wall_s = 1.5,
		    .purpose = "search",
		};

		assert_int_equal(store_runs_insert(db_conn(), &run), 0);
		run.commit_index = 0;
		run.has_kpi = false;
		run.exit_code = 3;
		run.purpose = "confirm";
		assert_int_equal(store_runs_insert(db_conn(), &run), 0);
	}
	assert_int_equal(store_runs_kpis(&kpis, &count, db_conn(), job), 0);
	assert_int_equal(count, 2);
	assert_int_equal(kpis[0].commit_index, 2);
	assert_true(kpis[0].has_kpi);
	assert_true(kpis[0].kpi == 0.1); /* %.17g keeps every bit */
	assert_false(kpis[0].confirm);
	assert_int_equal(kpis[1].commit_index, 0);
	assert_false(kpis[1].has_kpi);
	assert_true(kpis[1].confirm);
	free(kpis);
	assert_int_equal(store_tasks_build_failed(db_conn(), job, 1, "boom"),
			 0);
	store_claim_clear(&claim);
}

/* The worker job `job` is bound to; 0 when none. */
static long long job_worker(long long job)
{
	char text[24];
	const char *params[1] = {text};

	snprintf(text, sizeof(text), "%lld", job);
	return sql_int("SELECT coalesce(worker_id, 0) FROM jobs WHERE id = $1",
		       1, params);
}

/* Stores a run of commit 2 of `job` under `task`, made by `worker`. */
static void add_run(long long job, long long task, long long worker)
{
	struct store_run run = {
	    .job_id = job,
	    .task_id = task,
	    .commit_index = 2,
	    .worker_id = worker,
	    .has_kpi = true,
	    .kpi = 1.0,
	    .metrics = "{\"score\": 1.0}",
	    .exit_code = 0,
	    .wall_s = 1.0,
	    .purpose = "search",
	};

	assert_int_equal(store_runs_insert(db_conn(), &run), 0);
}

/* How many of job `job`'s runs the engine is given. */
static size_t counted_runs(long long job)
{
	struct store_run_kpi *kpis;
	size_t count;

	assert_int_equal(store_runs_kpis(&kpis, &count, db_conn(), job), 0);
	free(kpis);
	return count;
}

static void test_store_tasks__a_job_keeps_to_its_first_machine(void **state)
{
	struct store_claim claim, other;
	long long a, b, job = make_job("fleet"), job2;

	(void)state;
	assert_int_equal(store_workers_register(&a, db_conn(), "fleet-a",
						"fleet", NULL, token_a),
			 0);
	assert_int_equal(store_workers_register(&b, db_conn(), "fleet-b",
						"fleet", NULL, token_b),
			 0);
	queue_two_commit_task(job);
	assert_int_equal(job_worker(job), 0);
	/* The first claim binds the job to its worker. */
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE, 60), 0);
	assert_int_equal(claim.job_id, job);
	assert_int_equal(job_worker(job), a);
	assert_int_equal(store_tasks_finish(db_conn(), claim.task_id, 1), 0);
	store_claim_clear(&claim);
	/* The next task of the job is not the other live worker's to take,
	 * even with the job's worker busy elsewhere... */
	queue_two_commit_task(job);
	assert_int_equal(
	    store_tasks_claim(&other, db_conn(), b, token_b, LEASE + 1, 60),
	    STORE_NOT_FOUND);
	/* ...but a task of another job is, at once, binding that job. */
	job2 = make_job("fleet");
	queue_two_commit_task(job2);
	assert_int_equal(
	    store_tasks_claim(&other, db_conn(), b, token_b, LEASE + 1, 60),
	    0);
	assert_int_equal(other.job_id, job2);
	assert_int_equal(job_worker(job2), b);
	assert_int_equal(job_worker(job), a);
	store_claim_clear(&other);
	/* The job's own worker gets its task. */
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE + 2, 60),
	    0);
	assert_int_equal(claim.job_id, job);
	store_claim_clear(&claim);
}

/* A task of a spread job (lib/spread.h): for one machine, or for the
 * next to join. */
static void queue_spread_task(long long job, long long for_worker)
{
	struct store_plan_entry entry = {
	    .index = 1, .runs = 3, .purpose = "search"};
	struct store_plan plan = {.entries = &entry,
				  .count = 1,
				  .for_worker = for_worker,
				  .joining = for_worker == 0};

	assert_int_equal(store_tasks_insert(db_conn(), job, &plan), 0);
}

static void
test_store_tasks__a_spread_job_hands_each_machine_its_own(void **state)
{
	struct store_claim claim;
	long long a, b, c, job = make_job("spread");
	char job_text[24], a_text[24];
	const char *params[1] = {job_text};

	(void)state;
	snprintf(job_text, sizeof(job_text), "%lld", job);
	assert_int_equal(store_workers_register(&a, db_conn(), "spread-a",
						"spread", NULL, token_a),
			 0);
	snprintf(a_text, sizeof(a_text), "%lld", a);
	assert_int_equal(store_workers_register(&b, db_conn(), "spread-b",
						"spread", NULL, token_b),
			 0);
	assert_int_equal(store_workers_register(&c, db_conn(), "spread-c",
						"spread", NULL, token_b),
			 0);
	assert_int_equal(store_spread_start(db_conn(), job, 3), 0);
	queue_spread_task(job, 0);
	queue_spread_task(job, 0);
	/* The first to claim joins as slot 0 and is the job's machine. */
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE, 60), 0);
	assert_int_equal(claim.job_id, job);
	assert_int_equal(job_worker(job), a);
	store_claim_clear(&claim);
	/* A machine in the job does not join it twice... */
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE + 1, 60),
	    STORE_NOT_FOUND);
	/* ...another joins as slot 1, and the joins are used up. */
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), b, token_b, LEASE + 2, 60),
	    0);
	store_claim_clear(&claim);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), c, token_b, LEASE + 3, 60),
	    STORE_NOT_FOUND);
	/* two machines, a in slot 0 and b in slot 1 */
	assert_int_equal(sql_int("SELECT sum(CASE m.worker_id WHEN $2"
				 " THEN 10 + m.slot ELSE 100 + m.slot END)"
				 " FROM job_machines m WHERE m.job_id = $1",
				 2, (const char *[]){job_text, a_text}),
			 111);
	/* A task for machine b is b's alone, though a is the job's
	 * machine and c is idle. */
	queue_spread_task(job, b);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE + 4, 60),
	    STORE_NOT_FOUND);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), c, token_b, LEASE + 5, 60),
	    STORE_NOT_FOUND);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), b, token_b, LEASE + 6, 60),
	    0);
	store_claim_clear(&claim);
	/* Runs of every machine count while it is spread. */
	add_run(
	    job,
	    sql_int("SELECT max(id) FROM tasks WHERE job_id = $1", 1, params),
	    b);
	add_run(
	    job,
	    sql_int("SELECT min(id) FROM tasks WHERE job_id = $1", 1, params),
	    a);
	assert_int_equal(sql_int("SELECT count(*) FROM runs WHERE job_id = $1"
				 " AND NOT superseded",
				 1, params),
			 2);
	/* Settled on b: b's task is the job's, a's runs no longer count. */
	assert_int_equal(store_spread_settle(db_conn(), job, b, "test"), 0);
	assert_int_equal(job_worker(job), b);
	assert_int_equal(counted_runs(job), 1);
	queue_two_commit_task(job);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE + 7, 60),
	    STORE_NOT_FOUND);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), b, token_b, LEASE + 8, 60),
	    0);
	assert_int_equal(claim.job_id, job);
	store_claim_clear(&claim);
}

static void
test_store_tasks__a_job_moves_when_its_machine_is_gone(void **state)
{
	struct store_task_lease held;
	struct store_claim claim, other;
	struct store_move move;
	long long a, b, job = make_job("move");
	char a_text[24];
	const char *a_params[1] = {a_text};

	(void)state;
	assert_int_equal(store_workers_register(&a, db_conn(), "move-a",
						"move", NULL, token_a),
			 0);
	assert_int_equal(store_workers_register(&b, db_conn(), "move-b",
						"move", NULL, token_b),
			 0);
	snprintf(a_text, sizeof(a_text), "%lld", a);
	queue_two_commit_task(job);
	assert_int_equal(
	    store_tasks_claim(&claim, db_conn(), a, token_a, LEASE, 60), 0);
	add_run(job, claim.task_id, a);
	assert_int_equal(counted_runs(job), 1);
	/* Worker a was just seen: its job stays with it. */
	assert_int_equal(store_tasks_adopt(&move, db_conn(), b, 60),
			 STORE_NOT_FOUND);
	/* Not seen for an hour, a is gone; a claim alone still takes no
	 * task of its job, the move does. */
	sql_int("UPDATE workers SET last_seen_at = now() - interval '1 hour'"
		" WHERE id = $1",
		1, a_params);
	assert_int_equal(
	    store_tasks_claim(&other, db_conn(), b, token_b, LEASE + 1, 60),
	    STORE_NOT_FOUND);
	assert_int_equal(store_tasks_adopt(&move, db_conn(), b, 60), 0);
	assert_int_equal(move.job_id, job);
	assert_int_equal(move.old_worker_id, a);
	assert_true(move.unseen_s >= 3599);
	assert_int_equal(move.runs_superseded, 1);
	assert_int_equal(move.tasks_withdrawn, 1);
	assert_int_equal(job_worker(job), b);
	/* The old runs are kept but no longer given to the engine; the task
	 * planned from them is withdrawn. */
	assert_int_equal(counted_runs(job), 0);
	assert_int_equal(store_tasks_lock(&held, db_conn(), claim.task_id), 0);
	assert_string_equal(held.state, "cancelled");
	/* A late run of the old machine is stored superseded; the new
	 * machine's count. */
	add_run(job, claim.task_id, a);
	assert_int_equal(counted_runs(job), 0);
	queue_two_commit_task(job);
	assert_int_equal(
	    store_tasks_claim(&other, db_conn(), b, token_b, LEASE + 1, 60),
	    0);
	assert_int_equal(other.job_id, job);
	add_run(job, other.task_id, b);
	assert_int_equal(counted_runs(job), 1);
	/* Back again, a does not take the job back from live b. */
	sql_int("UPDATE workers SET last_seen_at = now() WHERE id = $1", 1,
		a_params);
	assert_int_equal(store_tasks_adopt(&move, db_conn(), a, 60),
			 STORE_NOT_FOUND);
	assert_int_equal(job_worker(job), b);
	store_claim_clear(&claim);
	store_claim_clear(&other);
}

/* Another server's connection: a lock it would wait on fails the test
 * within 5 s instead of hanging it. */
static PGconn *another_conn(void)
{
	PGconn *conn = PQconnectdb(testdb.conninfo);
	PGresult *r;

	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	r = PQexec(conn, "SET statement_timeout = 5000");
	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	return conn;
}

static void test_store_tasks__concurrent_claims_bind_a_job_once(void **state)
{
	struct store_claim mine, theirs, none;
	long long a, b, job = make_job("race"), job2 = make_job("race");
	PGconn *other = another_conn();

	(void)state;
	assert_int_equal(store_workers_register(&a, db_conn(), "race-a",
						"race", NULL, token_a),
			 0);
	assert_int_equal(store_workers_register(&b, db_conn(), "race-b",
						"race", NULL, token_b),
			 0);
	queue_two_commit_task(job);
	queue_two_commit_task(job);
	queue_two_commit_task(job2);
	/* a's claim, not yet committed, holds the unbound job... */
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(
	    store_tasks_claim(&mine, db_conn(), a, token_a, LEASE, 60), 0);
	assert_int_equal(mine.job_id, job);
	/* ...so b's claim at the same time passes over the job's second
	 * task, without waiting, and takes the other job's. */
	assert_int_equal(db_begin(other), 0);
	assert_int_equal(
	    store_tasks_claim(&theirs, other, b, token_b, LEASE + 1, 60), 0);
	assert_int_equal(theirs.job_id, job2);
	assert_int_equal(db_commit(other), 0);
	assert_int_equal(db_commit(db_conn()), 0);
	assert_int_equal(job_worker(job), a);
	assert_int_equal(job_worker(job2), b);
	/* The job's second task is a's alone. */
	assert_int_equal(
	    store_tasks_claim(&none, db_conn(), b, token_b, LEASE + 2, 60),
	    STORE_NOT_FOUND);
	assert_int_equal(
	    store_tasks_claim(&none, db_conn(), a, token_a, LEASE + 2, 60), 0);
	assert_int_equal(none.job_id, job);
	assert_int_not_equal(none.task_id, mine.task_id);
	store_claim_clear(&none);
	store_claim_clear(&theirs);
	store_claim_clear(&mine);
	PQfinish(other);
}

static void test_store_outbox__next_skips_what_waits_or_was_sent(void **state)
{
	const char *to[2] = {"a@example.org", "b@example.org"};
	struct store_outbox_item item;
	long long job = make_job("outbox");

	(void)state;
	assert_int_equal(
	    store_outbox_insert(db_conn(), job, to, 2, "subject", "message"),
	    0);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_outbox_next(&item, db_conn()), 0);
	assert_string_equal(item.recipients,
			    "[\"a@example.org\", \"b@example.org\"]");
	assert_string_equal(item.message, "message");
	assert_int_equal(item.attempts, 0);
	assert_int_equal(
	    store_outbox_failed(db_conn(), item.id, "refused", 600, 172800),
	    0);
	assert_int_equal(db_commit(db_conn()), 0);
	{
		struct store_outbox_item again;
		char id[24];
		const char *params[1] = {id};

		/* The next attempt waits 5 s. */
		assert_int_equal(store_outbox_next(&again, db_conn()),
				 STORE_NOT_FOUND);
		snprintf(id, sizeof(id), "%lld", item.id);
		assert_int_equal(
		    sql_int("SELECT attempts FROM outbox WHERE id = $1", 1,
			    params),
		    1);
		assert_int_equal(store_outbox_sent(db_conn(), item.id), 0);
		assert_int_equal(
		    sql_int("SELECT count(*) FROM outbox WHERE id = $1"
			    " AND sent_at IS NOT NULL AND last_error IS NULL",
			    1, params),
		    1);
	}
	store_outbox_item_clear(&item);
}

/* Text of the first column of the first row of `sql` ("" for none). */
static void sql_text(char *out, size_t size, const char *sql)
{
	PGresult *r = db_exec(db_conn(), sql, 0, NULL);

	assert_non_null(r);
	snprintf(out, size, "%s",
		 PQntuples(r) > 0 && !db_is_null(r, 0, 0) ? db_text(r, 0, 0)
							  : "");
	PQclear(r);
}

/*
 * A database made by the migrations before 009, with a task from before
 * plans and a job from before parents were stored, then migrated on:
 * 009 backfills both and drops what stood in for them.
 */
static void
test_store_tasks__migration_009_backfills_plans_and_parents(void **state)
{
	char dir[] = "/tmp/sb-sql-before-009-XXXXXX";
	char command[4 * PATH_MAX], conninfo[sizeof(testdb.conninfo) + 32];
	char text[256], sql[PATH_MAX + 8];
	struct store_plan plan;
	long long task;

	(void)state;
	testdb_exec("CREATE DATABASE before_009");
	assert_non_null(mkdtemp(dir));
	snprintf(command, sizeof(command),
		 "for f in '%s'/sql/00[0-8]_*.sql; do ln -s \"$f\" '%s'/;"
		 " done",
		 testdb.root, dir);
	assert_int_equal(system(command), 0);
	db_disconnect();
	snprintf(conninfo, sizeof(conninfo), "%s dbname=before_009",
		 testdb.conninfo);
	db_configure(conninfo);
	assert_int_equal(db_migrate(db_conn(), dir), 0);
	testdb_exec(
	    "INSERT INTO repos (name, url) VALUES ('old', '/srv/old')");
	testdb_exec(
	    "INSERT INTO testcases (name, build, run, kpi,"
	    " higher_is_better) VALUES ('old', 'make', './b', 'k', true)");
	/* Job 1 from before parents; job 2 with its own (2's parent is 0). */
	testdb_exec(
	    "INSERT INTO jobs (repo_id, testcase_id, good_rev, bad_rev,"
	    " good_sha, bad_sha) SELECT r.id, t.id, 'a', 'c', 'a', 'c'"
	    " FROM repos r, testcases t, generate_series(1, 2)");
	testdb_exec("INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email) SELECT j, i, 'c' || i, 's',"
		    " 'Ada', 'ada@example.org' FROM generate_series(1, 2) j,"
		    " generate_series(0, 2) i");
	testdb_exec("UPDATE job_commits SET parents = CASE idx WHEN 0 THEN"
		    " '{}'::int[] WHEN 1 THEN '{0}' ELSE '{0}' END"
		    " WHERE job_id = 2");
	task = sql_int("INSERT INTO tasks (job_id, commit_idx, runs_wanted)"
		       " VALUES (1, 1, 7) RETURNING id",
		       0, NULL);
	snprintf(sql, sizeof(sql), "%s/sql", testdb.root);
	assert_int_equal(db_migrate(db_conn(), sql), 0);
	sql_text(text, sizeof(text), "SELECT plan::text FROM tasks");
	assert_string_equal(text, "[{\"idx\": 1, \"runs\": 7,"
				  " \"purpose\": \"search\"}]");
	assert_int_equal(store_tasks_plan(&plan, db_conn(), task), 0);
	assert_int_equal(plan.count, 1);
	assert_string_equal(plan.entries[0].sha, "c1");
	assert_int_equal(plan.entries[0].runs, 7);
	store_plan_clear(&plan);
	sql_text(text, sizeof(text),
		 "SELECT count(*) FROM information_schema.columns WHERE"
		 " table_name = 'tasks' AND column_name IN ('commit_idx',"
		 " 'runs_wanted')");
	assert_string_equal(text, "0");
	sql_text(text, sizeof(text),
		 "SELECT string_agg(job_id || ':' || parents::text, ' '"
		 " ORDER BY job_id, idx) FROM job_commits");
	assert_string_equal(text, "1:{} 1:{0} 1:{1} 2:{} 2:{0} 2:{0}");
	/* A task runs at least one commit now. */
	assert_null(db_exec(
	    db_conn(), "INSERT INTO tasks (job_id, plan) VALUES (1, '[]')", 0,
	    NULL));
	db_disconnect();
	db_configure(testdb.conninfo);
	snprintf(command, sizeof(command), "rm -rf '%s'", dir);
	assert_int_equal(system(command), 0);
}

static void test_store_outcomes__set_list_names_and_log(void **state)
{
	long long job = make_job("outcomes"), exit_code = 2;
	struct store_outcome_new crashed = {
	    .index = 1,
	    .status = "crashed",
	    .exit_code = &exit_code,
	    .metrics_seen = "[\"b.x\", \"a.y\"]",
	    .run_output = "Segmentation fault",
	};
	struct store_outcome_list list;
	struct store_commit_log log;
	struct store_names names;
	char *kpi = NULL;

	(void)state;
	assert_int_equal(store_outcomes_set(db_conn(), job, &crashed), 0);
	assert_int_equal(store_outcomes_list(&list, db_conn(), job), 0);
	assert_int_equal(list.count, 1);
	assert_int_equal(list.items[0].index, 1);
	assert_string_equal(list.items[0].status, "crashed");
	assert_true(list.items[0].has_exit_code);
	assert_int_equal(list.items[0].exit_code, 2);
	assert_false(list.items[0].has_signal);
	store_outcome_list_clear(&list);
	assert_int_equal(store_outcomes_get(&list, db_conn(), job, 0), 0);
	assert_null(list.items[0].status);
	store_outcome_list_clear(&list);
	assert_int_equal(store_outcomes_get(&list, db_conn(), job, 9),
			 STORE_NOT_FOUND);
	assert_int_equal(store_outcomes_names(&names, db_conn(), job, 1, 1,
					      STORE_NAMES_REPORTED),
			 0);
	assert_int_equal(names.count, 2);
	assert_string_equal(names.names[0], "a.y");
	assert_string_equal(names.names[1], "b.x");
	store_names_clear(&names);
	assert_int_equal(store_outcomes_kpi(&kpi, db_conn(), job), 0);
	assert_string_equal(kpi, "score");
	free(kpi);
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "c1"), 0);
	assert_true(log.job_found);
	assert_int_equal(log.matches, 1);
	assert_string_equal(log.sha, "c1");
	assert_string_equal(log.run_output, "Segmentation fault");
	assert_null(log.build_log);
	store_commit_log_clear(&log);
	/* "c" is the start of every commit's SHA. */
	assert_int_equal(store_outcomes_log(&log, db_conn(), job, "c"), 0);
	assert_int_equal(log.matches, 2);
	store_commit_log_clear(&log);
	assert_int_equal(store_outcomes_log(&log, db_conn(), job + 1000, "c"),
			 0);
	assert_false(log.job_found);
	store_commit_log_clear(&log);
}

/* db_exec_prepared, which the claim's statements use: the statement is
 * prepared on the connection once and run with each call's parameters,
 * and a new session (after a reset or reconnection) prepares it again
 * instead of naming a statement that session never saw. */
static void
test_db__prepared_statement_runs_again_in_a_new_session(void **state)
{
	static const char sql[] = "SELECT $1::int + 1";
	const char *one[1] = {"1"}, *many[1] = {"41"};
	PGresult *r;
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		r = db_exec_prepared(db_conn(), sql, 1, one);
		assert_non_null(r);
		assert_string_equal(PQgetvalue(r, 0, 0), "2");
		PQclear(r);
		r = db_exec_prepared(db_conn(), sql, 1, many);
		assert_non_null(r);
		assert_string_equal(PQgetvalue(r, 0, 0), "42");
		PQclear(r);
		assert_int_equal(
		    sql_int("SELECT count(*) FROM pg_prepared_statements"
			    " WHERE statement = 'SELECT $1::int + 1'",
			    0, NULL),
		    1);
		db_disconnect();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_store_tasks__register_again_keeps_the_worker),
	    cmocka_unit_test(test_store_tasks__claim_hands_out_the_plan_once),
	    cmocka_unit_test(test_store_tasks__bench_commit_is_pinned_once),
	    cmocka_unit_test(test_store_tasks__lease_lock_extend_and_finish),
	    cmocka_unit_test(test_store_tasks__runs_come_back_in_upload_order),
	    cmocka_unit_test(
		test_store_tasks__a_job_keeps_to_its_first_machine),
	    cmocka_unit_test(
		test_store_tasks__a_job_moves_when_its_machine_is_gone),
	    cmocka_unit_test(
		test_store_tasks__concurrent_claims_bind_a_job_once),
	    cmocka_unit_test(
		test_store_outbox__next_skips_what_waits_or_was_sent),
	    cmocka_unit_test(
		test_store_tasks__migration_009_backfills_plans_and_parents),
	    cmocka_unit_test(test_store_outcomes__set_list_names_and_log),
	    cmocka_unit_test(
		test_store_tasks__a_spread_job_hands_each_machine_its_own),
	    cmocka_unit_test(
		test_db__prepared_statement_runs_again_in_a_new_session),
	};

	return cmocka_run_group_tests(tests, fixture_setup, testdb_teardown);
}
