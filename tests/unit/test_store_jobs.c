/*
 * server/store/store_jobs.c against a real PostgreSQL (tests/unit/testdb.h):
 * a job stored with its commits reads back as it went in, lists filter and
 * page with one total, cancelling is refused once a job has ended, and a
 * missing job is STORE_NOT_FOUND everywhere.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/store/store_jobs.h"
#include "../../server/store/store_repos.h"
#include "testdb.h"

#define NO_JOB 999999

/* Three commits: good, a middle one that merges nothing, bad. */
static void fill_commits(struct gitrepo_commit commits[3], size_t parents[2])
{
	static const char *const shas[] = {
	    "1111111111111111111111111111111111111111",
	    "2222222222222222222222222222222222222222",
	    "3333333333333333333333333333333333333333"};
	static char subjects[3][32], names[] = "Ada", emails[] = "ada@x.org";
	size_t i;

	memset(commits, 0, 3 * sizeof(*commits));
	parents[0] = 0;
	parents[1] = 1;
	for (i = 0; i < 3; i++) {
		snprintf(commits[i].sha, sizeof(commits[i].sha), "%s",
			 shas[i]);
		snprintf(subjects[i], sizeof(subjects[i]), "mm: change %zu",
			 i);
		commits[i].subject = subjects[i];
		commits[i].author_name = names;
		commits[i].author_email = emails;
		if (i > 0) {
			commits[i].parents = &parents[i - 1];
			commits[i].parent_count = 1;
		}
	}
}

/* Stores a job of repository `repo_id` and testcase `testcase_id`. */
static long long make_job(long long repo_id, long long testcase_id)
{
	struct store_job_new job = {0};
	struct gitrepo_commit commits[3];
	size_t parents[2];
	long long id = 0;

	fill_commits(commits, parents);
	job.repo_id = repo_id;
	job.testcase_id = testcase_id;
	job.good_rev = "v1.0";
	job.bad_rev = "v1.1";
	job.notify = "[\"dev@example.org\"]";
	job.runs_min = 4;
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_jobs_create(&id, db_conn(), &job, commits, 3),
			 STORE_OK);
	assert_int_equal(db_commit(db_conn()), 0);
	assert_true(id > 0);
	return id;
}

static int group_setup(void **state)
{
	if (testdb_setup(state) < 0)
		return -1;
	testdb_exec("INSERT INTO repos (name, url, web_url) VALUES"
		    " ('toy', '/srv/toy.git', 'https://x/{sha}'),"
		    " ('other', '/srv/other.git', NULL)");
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better) VALUES ('bench', 'make', './b', 'ops',"
		    " true)");
	return 0;
}

/* The ids of a registered repository and testcase. */
struct target {
	long long repo_id, testcase_id;
};

static void target(struct target *out, const char *repo, const char *testcase)
{
	struct store_testcase t;
	struct store_repo r;

	assert_int_equal(store_repos_find(&r, db_conn(), repo), STORE_OK);
	assert_int_equal(store_testcases_find(&t, db_conn(), testcase),
			 STORE_OK);
	out->repo_id = r.id;
	out->testcase_id = t.id;
	store_repo_clear(&r);
	store_testcase_clear(&t);
}

static void test_store_jobs__a_job_reads_back_as_stored(void **state)
{
	struct target t;
	struct store_job job;
	char job_state[16];
	long long id;

	(void)state;
	target(&t, "toy", "bench");
	id = make_job(t.repo_id, t.testcase_id);
	assert_int_equal(store_jobs_get(&job, db_conn(), id), STORE_OK);
	assert_int_equal(job.id, id);
	assert_string_equal(job.state, "queued");
	assert_null(job.verdict);
	assert_null(job.culprit);
	assert_string_equal(job.good_sha,
			    "1111111111111111111111111111111111111111");
	assert_string_equal(job.bad_sha,
			    "3333333333333333333333333333333333333333");
	assert_string_equal(job.good_rev, "v1.0");
	assert_string_equal(job.repo, "toy");
	assert_string_equal(job.testcase, "bench");
	assert_string_equal(job.kpi, "ops");
	assert_true(job.higher_is_better);
	assert_string_equal(job.notify, "[\"dev@example.org\"]");
	assert_true(isnan(job.change_pct));
	assert_int_equal(strlen(job.created_at), 20);
	assert_int_equal(job.created_at[19], 'Z');
	assert_null(job.finished_at);
	store_job_clear(&job);
	store_job_clear(&job);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_jobs_lock(db_conn(), id, job_state), STORE_OK);
	assert_string_equal(job_state, "queued");
	db_rollback(db_conn());
}

static void test_store_jobs__candidates_keep_their_parents(void **state)
{
	struct target t;
	char sql[160];
	PGresult *r;
	long long id;

	(void)state;
	target(&t, "toy", "bench");
	id = make_job(t.repo_id, t.testcase_id);
	snprintf(sql, sizeof(sql),
		 "SELECT idx, subject, parents::text FROM job_commits"
		 " WHERE job_id = %lld ORDER BY idx",
		 id);
	r = db_exec(db_conn(), sql, 0, NULL);
	assert_non_null(r);
	assert_int_equal(PQntuples(r), 3);
	assert_string_equal(db_text(r, 1, 1), "mm: change 1");
	assert_string_equal(db_text(r, 0, 2), "{}");
	assert_string_equal(db_text(r, 2, 2), "{1}");
	PQclear(r);
}

/* COPY's text format escapes; what it reads back must be what went in. */
static void test_store_jobs__copied_text_survives_exactly(void **state)
{
	static char subject0[] = "tab\there, back\\slash \\N and \\t",
		    subject1[] = "two\nlines\r\nand a trailing \\",
		    subject2[] = "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x90\xa7",
		    name1[] = "Zo\xc3\xab\tO'Brien \\\\ x", empty[] = "";
	struct gitrepo_commit commits[3];
	struct store_job_new job = {0};
	struct target t;
	size_t parents[2];
	char sql[160];
	PGresult *r;
	long long id;

	(void)state;
	target(&t, "toy", "bench");
	fill_commits(commits, parents);
	commits[0].subject = subject0;
	commits[1].subject = subject1;
	commits[1].author_name = name1;
	commits[2].subject = subject2;
	commits[2].author_email = empty;
	job.repo_id = t.repo_id;
	job.testcase_id = t.testcase_id;
	job.good_rev = "v1.0";
	job.bad_rev = "v1.1";
	job.notify = "[]";
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_jobs_create(&id, db_conn(), &job, commits, 3),
			 STORE_OK);
	assert_int_equal(db_commit(db_conn()), 0);
	snprintf(sql, sizeof(sql),
		 "SELECT subject, author_name, author_email, parents::text"
		 " FROM job_commits WHERE job_id = %lld ORDER BY idx",
		 id);
	r = db_exec(db_conn(), sql, 0, NULL);
	assert_non_null(r);
	assert_int_equal(PQntuples(r), 3);
	assert_string_equal(db_text(r, 0, 0), subject0);
	assert_string_equal(db_text(r, 1, 0), subject1);
	assert_string_equal(db_text(r, 1, 1), name1);
	assert_string_equal(db_text(r, 2, 0), subject2);
	assert_string_equal(db_text(r, 2, 2), "");
	assert_string_equal(db_text(r, 2, 3), "{1}");
	PQclear(r);
}

/* A COPY that fails (here: a duplicate idx) fails the store and leaves
 * the connection usable once the caller rolls back. */
static void test_store_jobs__a_failed_copy_rolls_back(void **state)
{
	struct gitrepo_commit commits[3];
	size_t parents[2];
	struct target t;
	long long id;

	(void)state;
	target(&t, "toy", "bench");
	id = make_job(t.repo_id, t.testcase_id);
	fill_commits(commits, parents);
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(store_jobs_add_commits(db_conn(), id, commits, 3),
			 STORE_FAILED);
	db_rollback(db_conn());
	assert_int_equal(store_jobs_add_commits(db_conn(), NO_JOB, commits, 0),
			 STORE_OK);
}

static void test_store_jobs__lists_filter_and_page(void **state)
{
	struct store_jobs_filter filter = {.limit = 1, .offset = 0};
	struct target toy, other;
	struct store_jobs_page page, all;
	long long first, second;

	(void)state;
	target(&toy, "toy", "bench");
	target(&other, "other", "bench");
	first = make_job(other.repo_id, other.testcase_id);
	second = make_job(other.repo_id, other.testcase_id);
	filter.repo = "other";
	assert_int_equal(store_jobs_list(&page, db_conn(), &filter), STORE_OK);
	assert_int_equal(page.total, 2);
	assert_int_equal(page.count, 1);
	assert_int_equal(page.rows[0].id, second);
	assert_string_equal(page.rows[0].repo, "other");
	assert_null(page.rows[0].culprit);
	assert_true(page.rows[0].age_seconds >= 0);
	store_jobs_page_clear(&page);
	filter.offset = 1;
	assert_int_equal(store_jobs_list(&page, db_conn(), &filter), STORE_OK);
	assert_int_equal(page.count, 1);
	assert_int_equal(page.rows[0].id, first);
	store_jobs_page_clear(&page);
	/* Past the end: no row, and still the total. */
	filter.offset = 5;
	assert_int_equal(store_jobs_list(&page, db_conn(), &filter), STORE_OK);
	assert_int_equal(page.total, 2);
	assert_int_equal(page.count, 0);
	store_jobs_page_clear(&page);
	filter.offset = 0;
	filter.verdict = "regression";
	assert_int_equal(store_jobs_list(&page, db_conn(), &filter), STORE_OK);
	assert_int_equal(page.total, 0);
	store_jobs_page_clear(&page);
	filter = (struct store_jobs_filter){.limit = 200, .state = "queued"};
	assert_int_equal(store_jobs_list(&all, db_conn(), &filter), STORE_OK);
	assert_true(all.total >= 2);
	assert_int_equal(all.count, (size_t)all.total);
	store_jobs_page_clear(&all);
}

static void test_store_jobs__an_ended_job_is_not_cancelled(void **state)
{
	struct target t;
	struct store_job job;
	char before[16];
	long long id;

	(void)state;
	target(&t, "toy", "bench");
	id = make_job(t.repo_id, t.testcase_id);
	assert_int_equal(store_jobs_cancel(before, db_conn(), id), STORE_OK);
	assert_string_equal(before, "queued");
	assert_int_equal(store_jobs_get(&job, db_conn(), id), STORE_OK);
	assert_string_equal(job.state, "cancelled");
	assert_string_equal(job.message, "cancelled on request");
	assert_non_null(job.finished_at);
	store_job_clear(&job);
	assert_int_equal(store_jobs_cancel(before, db_conn(), id),
			 STORE_CONFLICT);
	assert_string_equal(before, "cancelled");
	assert_int_equal(store_jobs_cancel(before, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
}

static void test_store_jobs__report_runs_and_rerun_of_a_job(void **state)
{
	struct store_job_delivery delivery;
	struct store_job_rerun rerun;
	struct store_job_runs runs;
	struct target t;
	char *message = NULL, sql[256];
	long long id, builds = -1;

	(void)state;
	target(&t, "toy", "bench");
	id = make_job(t.repo_id, t.testcase_id);
	assert_int_equal(store_jobs_report(&message, db_conn(), id), STORE_OK);
	assert_null(message);
	assert_int_equal(store_jobs_delivery(&delivery, db_conn(), id),
			 STORE_NOT_FOUND);
	snprintf(
	    sql, sizeof(sql),
	    "INSERT INTO outbox (job_id, recipients, subject, message)"
	    " VALUES (%lld, '[\"a@x.org\"]', 's', 'Subject: s\r\n\r\nhi')",
	    id);
	testdb_exec(sql);
	assert_int_equal(store_jobs_report(&message, db_conn(), id), STORE_OK);
	assert_string_equal(message, "Subject: s\r\n\r\nhi");
	free(message);
	assert_int_equal(store_jobs_delivery(&delivery, db_conn(), id),
			 STORE_OK);
	assert_string_equal(delivery.state, "pending");
	assert_int_equal(delivery.attempts, 0);
	assert_string_equal(delivery.recipients, "[\"a@x.org\"]");
	assert_null(delivery.sent_at);
	store_job_delivery_clear(&delivery);
	assert_int_equal(store_jobs_runs(&runs, db_conn(), id), STORE_OK);
	assert_int_equal(runs.count, 0);
	store_job_runs_clear(&runs);
	assert_int_equal(store_jobs_builds(&builds, db_conn(), id), STORE_OK);
	assert_int_equal(builds, 0);
	assert_int_equal(store_jobs_rerun_source(&rerun, db_conn(), id),
			 STORE_OK);
	assert_string_equal(rerun.repo, "toy");
	assert_string_equal(rerun.testcase, "bench");
	assert_string_equal(rerun.bad_sha,
			    "3333333333333333333333333333333333333333");
	assert_string_equal(rerun.notify, "[\"dev@example.org\"]");
	store_job_rerun_clear(&rerun);
	assert_int_equal(store_jobs_report(&message, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
	assert_int_equal(store_jobs_runs(&runs, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
	assert_int_equal(store_jobs_rerun_source(&rerun, db_conn(), NO_JOB),
			 STORE_NOT_FOUND);
	assert_int_equal(
	    store_jobs_get(&(struct store_job){0}, db_conn(), NO_JOB),
	    STORE_NOT_FOUND);
}

static void test_store_jobs__the_path_follows_the_tasks(void **state)
{
	struct store_job_page_info info;
	struct store_job_path path;
	struct target t;
	char sql[256];
	long long id;

	(void)state;
	target(&t, "toy", "bench");
	id = make_job(t.repo_id, t.testcase_id);
	/* Endpoints first (a plan of two), then the middle one alone (what
	 * sql/009 made of a task of an older server without a plan). */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO tasks (job_id, plan)"
		 " VALUES (%lld, '[{\"idx\": 2}, {\"idx\": 0}]'),"
		 " (%lld, '[{\"idx\": 1, \"runs\": 5}]')",
		 id, id);
	testdb_exec(sql);
	assert_int_equal(store_jobs_path(&path, db_conn(), id), STORE_OK);
	assert_int_equal(path.count, 3);
	assert_int_equal(path.commits[0].index, 2);
	assert_int_equal(path.commits[1].index, 0);
	assert_int_equal(path.commits[2].index, 1);
	assert_string_equal(path.commits[2].subject, "mm: change 1");
	assert_string_equal(path.commits[2].author_name, "Ada");
	assert_null(path.commits[2].log_tail);
	store_job_path_clear(&path);
	assert_int_equal(
	    store_jobs_page_info(&info, db_conn(), id,
				 "1111111111111111111111111111111111111111",
				 "3333333333333333333333333333333333333333",
				 "2222222222222222222222222222222222222222"),
	    STORE_OK);
	assert_int_equal(info.range_lo, 0);
	assert_int_equal(info.range_hi, 2);
	assert_string_equal(info.culprit_author, "Ada <ada@x.org>");
	assert_string_equal(info.web_url, "https://x/{sha}");
	store_job_page_info_clear(&info);
}

/* A job runs on its testcase's group unless it names its own; a re-run
 * reads the group back to keep it. */
static void test_store_jobs__a_job_takes_its_testcase_group(void **state)
{
	struct store_job_new job = {0};
	struct gitrepo_commit commits[3];
	struct store_job_rerun source;
	struct store_job row;
	struct target t;
	size_t parents[2];
	long long inherited = 0, named = 0;

	(void)state;
	testdb_exec("INSERT INTO testcases (name, build, run, kpi,"
		    " higher_is_better, group_name) VALUES ('arm', 'make',"
		    " './b', 'ops', true, 'arm64')");
	target(&t, "toy", "arm");
	fill_commits(commits, parents);
	job.repo_id = t.repo_id;
	job.testcase_id = t.testcase_id;
	job.good_rev = "v1.0";
	job.bad_rev = "v1.1";
	job.notify = "[]";
	assert_int_equal(db_begin(db_conn()), 0);
	assert_int_equal(
	    store_jobs_create(&inherited, db_conn(), &job, commits, 3),
	    STORE_OK);
	job.group = "b";
	assert_int_equal(
	    store_jobs_create(&named, db_conn(), &job, commits, 3), STORE_OK);
	assert_int_equal(db_commit(db_conn()), 0);
	assert_int_equal(store_jobs_get(&row, db_conn(), inherited), STORE_OK);
	assert_string_equal(row.group, "arm64");
	store_job_clear(&row);
	assert_int_equal(store_jobs_get(&row, db_conn(), named), STORE_OK);
	assert_string_equal(row.group, "b");
	store_job_clear(&row);
	assert_int_equal(store_jobs_rerun_source(&source, db_conn(), named),
			 STORE_OK);
	assert_string_equal(source.group, "b");
	store_job_rerun_clear(&source);
	/* A testcase registered without one runs on 'default'. */
	target(&t, "toy", "bench");
	assert_int_equal(store_jobs_get(&row, db_conn(),
					make_job(t.repo_id, t.testcase_id)),
			 STORE_OK);
	assert_string_equal(row.group, "default");
	store_job_clear(&row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_jobs__a_job_reads_back_as_stored),
	    cmocka_unit_test(test_store_jobs__candidates_keep_their_parents),
	    cmocka_unit_test(test_store_jobs__copied_text_survives_exactly),
	    cmocka_unit_test(test_store_jobs__a_failed_copy_rolls_back),
	    cmocka_unit_test(test_store_jobs__lists_filter_and_page),
	    cmocka_unit_test(test_store_jobs__an_ended_job_is_not_cancelled),
	    cmocka_unit_test(test_store_jobs__report_runs_and_rerun_of_a_job),
	    cmocka_unit_test(test_store_jobs__the_path_follows_the_tasks),
	    cmocka_unit_test(test_store_jobs__a_job_takes_its_testcase_group),
	};

	return cmocka_run_group_tests(tests, group_setup, testdb_teardown);
}
