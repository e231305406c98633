#include "store_repos.h"

#include <stdlib.h>
#include <string.h>

#include "../db.h"

/* SQLSTATE unique_violation: the name is taken. */
#define STORE_REPOS_UNIQUE "23505"

#define REPO_COLUMNS "id, name, url, web_url, " STORE_TIMESTAMP("created_at")

#define TESTCASE_COLUMNS                                                      \
	"id, name, build, run, kpi, higher_is_better, min_change_pct,"        \
	" runs_min, runs_max, timeout_s, params, monitors, notify,"           \
	" notify_author, " STORE_TIMESTAMP(                                   \
	    "created_at") ", bench_repo,"                                     \
			  " bench_rev, group_name"

static void repo_fill(struct store_repo *out, const PGresult *r, int row)
{
	out->id = db_int(r, row, 0);
	out->name = db_text(r, row, 1);
	out->url = db_text(r, row, 2);
	out->web_url = db_text(r, row, 3);
	out->created_at = db_text(r, row, 4);
}

static void testcase_fill(struct store_testcase *out, const PGresult *r,
			  int row)
{
	struct store_testcase_fields *f = &out->fields;

	out->id = db_int(r, row, 0);
	f->name = db_text(r, row, 1);
	f->build = db_text(r, row, 2);
	f->run = db_text(r, row, 3);
	f->kpi = db_text(r, row, 4);
	f->higher_is_better = db_bool(r, row, 5);
	f->min_change_pct = db_double(r, row, 6);
	f->runs_min = db_int(r, row, 7);
	f->runs_max = db_int(r, row, 8);
	f->timeout_s = db_int(r, row, 9);
	f->params = db_text(r, row, 10);
	f->monitors = db_text(r, row, 11);
	f->notify = db_text(r, row, 12);
	f->notify_author = db_bool(r, row, 13);
	out->created_at = db_text(r, row, 14);
	f->bench_repo = db_text(r, row, 15);
	f->bench_rev = db_text(r, row, 16);
	f->group = db_text(r, row, 17);
}

/*
 * The status of a one-row result `r` (NULL when the command failed with
 * SQLSTATE `state`); *rows keeps it when it has the row.
 */
static int one_row(PGresult **rows, PGresult *r, const char *state)
{
	int error = store_one_row(r);

	*rows = error == STORE_OK ? r : NULL;
	if (error == STORE_FAILED && state != NULL &&
	    strcmp(state, STORE_REPOS_UNIQUE) == 0)
		return STORE_EXISTS;
	return error;
}

void store_repo_clear(struct store_repo *repo)
{
	if (repo == NULL)
		return;
	PQclear(repo->held);
	memset(repo, 0, sizeof(*repo));
}

void store_repo_list_clear(struct store_repo_list *list)
{
	if (list == NULL)
		return;
	free(list->items);
	PQclear(list->held);
	memset(list, 0, sizeof(*list));
}

int store_repos_create(struct store_repo *out, PGconn *conn, const char *name,
		       const char *url, const char *web_url)
{
	const char *params[3] = {name, url, web_url}, *state;
	PGresult *r;
	int error;

	memset(out, 0, sizeof(*out));
	r = db_exec_state(conn,
			  "INSERT INTO repos (name, url, web_url)"
			  " VALUES ($1, $2, $3) RETURNING " REPO_COLUMNS,
			  3, params, &state);
	error = one_row(&out->held, r, state);
	if (error == STORE_OK)
		repo_fill(out, out->held, 0);
	return error;
}

int store_repos_find(struct store_repo *out, PGconn *conn, const char *name)
{
	const char *params[1] = {name};
	int error;

	memset(out, 0, sizeof(*out));
	error = one_row(&out->held,
			db_exec(conn,
				"SELECT " REPO_COLUMNS " FROM repos"
				" WHERE name = $1 AND deleted_at IS NULL",
				1, params),
			NULL);
	if (error == STORE_OK)
		repo_fill(out, out->held, 0);
	return error;
}

int store_repos_list(struct store_repo_list *out, PGconn *conn)
{
	PGresult *r;
	size_t row;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT " REPO_COLUMNS " FROM repos"
		    " WHERE deleted_at IS NULL ORDER BY name",
		    0, NULL);
	out->items = store_rows_alloc(&out->count, r, sizeof(*out->items));
	if (out->items == NULL)
		return STORE_FAILED;
	for (row = 0; row < out->count; row++)
		repo_fill(&out->items[row], r, (int)row);
	out->held = r;
	return STORE_OK;
}

void store_testcase_clear(struct store_testcase *testcase)
{
	if (testcase == NULL)
		return;
	PQclear(testcase->held);
	memset(testcase, 0, sizeof(*testcase));
}

void store_testcase_list_clear(struct store_testcase_list *list)
{
	if (list == NULL)
		return;
	free(list->items);
	PQclear(list->held);
	memset(list, 0, sizeof(*list));
}

/* The texts of a testcase's fields as $1..$16 of the statements below. */
struct testcase_texts {
	char min_change[32], runs_min[STORE_INT_TEXT],
	    runs_max[STORE_INT_TEXT];
	char timeout_s[STORE_INT_TEXT];
	const char *params[16];
};

static void testcase_texts(struct testcase_texts *t,
			   const struct store_testcase_fields *fields)
{
	snprintf(t->min_change, sizeof(t->min_change), "%.17g",
		 fields->min_change_pct);
	t->params[0] = fields->name;
	t->params[1] = fields->build;
	t->params[2] = fields->run;
	t->params[3] = fields->kpi;
	t->params[4] = fields->higher_is_better ? "true" : "false";
	t->params[5] = t->min_change;
	t->params[6] = store_int_text(t->runs_min, fields->runs_min);
	t->params[7] = store_int_text(t->runs_max, fields->runs_max);
	t->params[8] = store_int_text(t->timeout_s, fields->timeout_s);
	t->params[9] = fields->params;
	t->params[10] = fields->monitors;
	t->params[11] = fields->notify;
	t->params[12] = fields->notify_author ? "true" : "false";
	t->params[13] = fields->bench_repo;
	t->params[14] = fields->bench_rev;
	t->params[15] = fields->group != NULL ? fields->group : "default";
}

int store_testcases_create(struct store_testcase *out, PGconn *conn,
			   const struct store_testcase_fields *fields)
{
	struct testcase_texts t;
	const char *state;
	PGresult *r;
	int error;

	memset(out, 0, sizeof(*out));
	testcase_texts(&t, fields);
	r = db_exec_state(conn,
			  "INSERT INTO testcases (name, build, run, kpi,"
			  " higher_is_better, min_change_pct, runs_min,"
			  " runs_max, timeout_s, params, monitors, notify,"
			  " notify_author, bench_repo, bench_rev, group_name)"
			  " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
			  " $11, $12, $13, $14, $15, $16)"
			  " RETURNING " TESTCASE_COLUMNS,
			  16, t.params, &state);
	error = one_row(&out->held, r, state);
	if (error == STORE_OK)
		testcase_fill(out, out->held, 0);
	return error;
}

/* Whether live testcase `name` has a job queued or running. */
static bool testcase_busy(PGconn *conn, const char *name)
{
	const char *params[1] = {name};
	PGresult *r = db_exec(conn,
			      "SELECT EXISTS (SELECT FROM jobs j JOIN"
			      " testcases t ON t.id = j.testcase_id"
			      " WHERE t.name = $1 AND t.deleted_at IS NULL"
			      " AND j.state IN ('queued', 'running'))",
			      1, params);
	bool busy = r != NULL && db_bool(r, 0, 0);

	PQclear(r);
	return busy;
}

int store_testcases_update(struct store_testcase *out, PGconn *conn,
			   const struct store_testcase_fields *fields)
{
	struct testcase_texts t;
	int error;

	memset(out, 0, sizeof(*out));
	testcase_texts(&t, fields);
	/* What a job measures is read from its testcase as it runs: with
	 * a job of it queued or running, only who is told may change. */
	error = one_row(
	    &out->held,
	    db_exec(conn,
		    "UPDATE testcases t SET build = $2, run = $3, kpi = $4,"
		    " higher_is_better = $5, min_change_pct = $6,"
		    " runs_min = $7, runs_max = $8, timeout_s = $9,"
		    " params = $10, monitors = $11, notify = $12,"
		    " notify_author = $13, bench_repo = $14,"
		    " bench_rev = $15, group_name = $16"
		    " WHERE name = $1 AND deleted_at IS NULL"
		    " AND ((t.build, t.run, t.kpi, t.higher_is_better,"
		    " t.min_change_pct, t.runs_min, t.runs_max, t.timeout_s,"
		    " t.params, t.monitors, t.bench_repo, t.bench_rev)"
		    " IS NOT DISTINCT FROM ($2, $3, $4, $5::boolean,"
		    " $6::float8, $7::integer, $8::integer, $9::integer,"
		    " $10::jsonb, $11::jsonb, $14, $15) OR NOT EXISTS"
		    " (SELECT FROM jobs j WHERE j.testcase_id = t.id"
		    " AND j.state IN ('queued', 'running')))"
		    " RETURNING " TESTCASE_COLUMNS,
		    16, t.params),
	    NULL);
	if (error == STORE_OK)
		testcase_fill(out, out->held, 0);
	if (error == STORE_NOT_FOUND && testcase_busy(conn, fields->name))
		error = STORE_CONFLICT;
	return error;
}

int store_testcases_find(struct store_testcase *out, PGconn *conn,
			 const char *name)
{
	const char *params[1] = {name};
	int error;

	memset(out, 0, sizeof(*out));
	error = one_row(&out->held,
			db_exec(conn,
				"SELECT " TESTCASE_COLUMNS " FROM testcases"
				" WHERE name = $1 AND deleted_at IS NULL",
				1, params),
			NULL);
	if (error == STORE_OK)
		testcase_fill(out, out->held, 0);
	return error;
}

int store_testcases_list(struct store_testcase_list *out, PGconn *conn)
{
	PGresult *r;
	size_t row;

	memset(out, 0, sizeof(*out));
	r = db_exec(conn,
		    "SELECT " TESTCASE_COLUMNS " FROM testcases"
		    " WHERE deleted_at IS NULL ORDER BY name",
		    0, NULL);
	out->items = store_rows_alloc(&out->count, r, sizeof(*out->items));
	if (out->items == NULL)
		return STORE_FAILED;
	for (row = 0; row < out->count; row++)
		testcase_fill(&out->items[row], r, (int)row);
	out->held = r;
	return STORE_OK;
}

int store_repos_update(struct store_repo *out, PGconn *conn, const char *name,
		       const char *url, const char *web_url)
{
	const char *params[3] = {name, url, web_url};
	int error;

	memset(out, 0, sizeof(*out));
	error = one_row(&out->held,
			db_exec(conn,
				"UPDATE repos SET url = $2, web_url = $3"
				" WHERE name = $1 AND deleted_at IS NULL"
				" RETURNING " REPO_COLUMNS,
				3, params),
			NULL);
	if (error == STORE_OK)
		repo_fill(out, out->held, 0);
	return error;
}

/*
 * The soft delete of store_repos_delete and store_testcases_delete:
 * `lock` takes the live row of name $1 FOR UPDATE and answers its id;
 * then, in a statement of its own so that it sees what the transactions
 * it waited for stored, `mark` sets deleted_at of id $1 unless it is used,
 * answering the row when it did.
 */
static int soft_delete(PGconn *conn, const char *name, const char *lock,
		       const char *mark)
{
	const char *params[1] = {name};
	char id[STORE_INT_TEXT];
	PGresult *r;
	int error;

	error = one_row(&r, db_exec(conn, lock, 1, params), NULL);
	if (error != STORE_OK)
		return error;
	params[0] = store_int_text(id, db_int(r, 0, 0));
	PQclear(r);
	error = one_row(&r, db_exec(conn, mark, 1, params), NULL);
	PQclear(r);
	return error == STORE_NOT_FOUND ? STORE_CONFLICT : error;
}

/* A job still to finish: every state but the final ones. */
#define STORE_REPOS_OPEN_JOB "state NOT IN ('done', 'failed', 'cancelled')"

int store_repos_delete(PGconn *conn, const char *name)
{
	return soft_delete(
	    conn, name,
	    "SELECT id FROM repos WHERE name = $1 AND deleted_at IS NULL"
	    " FOR UPDATE",
	    "UPDATE repos SET deleted_at = now() WHERE id = $1"
	    " AND NOT EXISTS (SELECT 1 FROM jobs WHERE repo_id = $1"
	    " AND " STORE_REPOS_OPEN_JOB ")"
	    " AND NOT EXISTS (SELECT 1 FROM watches WHERE repo_id = $1)"
	    " AND NOT EXISTS (SELECT 1 FROM inbox_rules WHERE repo_id = $1)"
	    " RETURNING id");
}

int store_testcases_delete(PGconn *conn, const char *name)
{
	return soft_delete(
	    conn, name,
	    "SELECT id FROM testcases WHERE name = $1 AND deleted_at IS NULL"
	    " FOR UPDATE",
	    "UPDATE testcases SET deleted_at = now() WHERE id = $1"
	    " AND NOT EXISTS (SELECT 1 FROM jobs WHERE testcase_id = $1"
	    " AND " STORE_REPOS_OPEN_JOB ")"
	    " AND NOT EXISTS (SELECT 1 FROM watch_testcases"
	    " WHERE testcase_id = $1)"
	    " AND NOT EXISTS (SELECT 1 FROM inbox_rules"
	    " WHERE testcase_id = $1)"
	    " RETURNING id");
}

int store_repos_hold(PGconn *conn, long long repo_id, long long testcase_id)
{
	char repo[STORE_INT_TEXT], testcase[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(repo, repo_id),
				 store_int_text(testcase, testcase_id)};
	PGresult *r;
	int error;

	r = db_exec(conn,
		    "SELECT 1 FROM repos r, testcases t"
		    " WHERE r.id = $1 AND r.deleted_at IS NULL"
		    " AND t.id = $2 AND t.deleted_at IS NULL"
		    " FOR KEY SHARE",
		    2, params);
	error = store_one_row(r);
	if (error == STORE_OK)
		PQclear(r);
	return error;
}
