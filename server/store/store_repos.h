/*
 * Repositories and testcases: the repos and testcases tables, what a job
 * names by repository and testcase.  Text in the structs points into
 * `held`, which the struct owns (the *_clear functions free it); in the
 * items of a list `held` is NULL and the list holds the text.
 */
#ifndef STATBISECT_STORE_REPOS_H
#define STATBISECT_STORE_REPOS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

struct store_repo {
	long long id;
	const char *name;
	const char *url;	/* as registered: may hold a password */
	const char *web_url;	/* commit link with {sha}, or NULL */
	const char *created_at; /* STORE_TIMESTAMP text */
	PGresult *held;
};

struct store_repo_list {
	struct store_repo *items;
	size_t count;
	PGresult *held;
};

void store_repo_clear(struct store_repo *repo);
void store_repo_list_clear(struct store_repo_list *list);

/*
 * Registers repository `name` at `url` with `web_url` (may be NULL) and
 * fills *out.  0, STORE_EXISTS (the name is taken) or STORE_FAILED.
 */
int store_repos_create(struct store_repo *out, PGconn *conn, const char *name,
		       const char *url, const char *web_url);

/*
 * The repository named `name` (deleted ones are not found): 0,
 * STORE_NOT_FOUND or STORE_FAILED.
 */
int store_repos_find(struct store_repo *out, PGconn *conn, const char *name);

/* Every repository not deleted, by name: 0 or STORE_FAILED. */
int store_repos_list(struct store_repo_list *out, PGconn *conn);

/*
 * Sets the URL and commit link (NULL: none) of repository `name` and
 * fills *out.  0, STORE_NOT_FOUND (no such repository, or deleted) or
 * STORE_FAILED.
 */
int store_repos_update(struct store_repo *out, PGconn *conn, const char *name,
		       const char *url, const char *web_url);

/*
 * Deletes repository `name` softly (deleted_at is set; finished jobs keep
 * reading it) unless an open job, a watch or an inbox rule uses it.  Call
 * it inside a transaction (db_begin): it locks the row first, so that a
 * job being stored with it is waited for and then seen.  0,
 * STORE_NOT_FOUND, STORE_CONFLICT (in use) or STORE_FAILED.
 */
int store_repos_delete(PGconn *conn, const char *name);

/*
 * Locks the repository `repo_id` and the testcase `testcase_id` against
 * deletion until the transaction ends (FOR KEY SHARE): 0, STORE_NOT_FOUND
 * when either was deleted meanwhile, or STORE_FAILED.  What starts new
 * work calls it in the transaction that stores the work.
 */
int store_repos_hold(PGconn *conn, long long repo_id, long long testcase_id);

/* What a testcase is, as a client registers it. */
struct store_testcase_fields {
	const char *name;
	const char *build; /* shell commands */
	const char *run;
	const char *kpi; /* the metric a change is judged by */
	bool higher_is_better;
	double min_change_pct;
	long long runs_min, runs_max, timeout_s;
	const char *params;   /* JSON text: an object */
	const char *monitors; /* JSON text: an array of names */
	const char *notify;   /* JSON text: an array of addresses */
	bool notify_author;
	/* The benchmark's repository (a git URL) and revision, or NULL:
	 * none, or (bench_rev) the repository's HEAD. */
	const char *bench_repo, *bench_rev;
	/* The machine group its jobs run on (NULL when storing: 'default'). */
	const char *group;
};

struct store_testcase {
	long long id;
	struct store_testcase_fields fields;
	const char *created_at;
	PGresult *held;
};

struct store_testcase_list {
	struct store_testcase *items;
	size_t count;
	PGresult *held;
};

void store_testcase_clear(struct store_testcase *testcase);
void store_testcase_list_clear(struct store_testcase_list *list);

/*
 * Registers the testcase `fields` and fills *out.  0, STORE_EXISTS (the
 * name is taken) or STORE_FAILED.
 */
int store_testcases_create(struct store_testcase *out, PGconn *conn,
			   const struct store_testcase_fields *fields);

/* The testcase named `name` (deleted ones are not found): 0,
 * STORE_NOT_FOUND or STORE_FAILED. */
int store_testcases_find(struct store_testcase *out, PGconn *conn,
			 const char *name);

/* Every testcase not deleted, by name: 0 or STORE_FAILED. */
int store_testcases_list(struct store_testcase_list *out, PGconn *conn);

/*
 * Replaces every field of the testcase `fields->name` (the name stays)
 * and fills *out.  0, STORE_NOT_FOUND (none, or deleted), STORE_CONFLICT
 * (a job of it is queued or running and a field that shapes what it
 * measures would change: all but notify, notify_author and group) or
 * STORE_FAILED.
 */
int store_testcases_update(struct store_testcase *out, PGconn *conn,
			   const struct store_testcase_fields *fields);

/* store_repos_delete for testcase `name`: in use while an open job, a
 * watch or an inbox rule runs it. */
int store_testcases_delete(PGconn *conn, const char *name);

#endif
