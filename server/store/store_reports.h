/*
 * store_reports: what a job's report is made of (the job's repository,
 * testcase and recipients, the machine that ran it, every metric of the
 * runs compared), and the report's hand-off to the outbox.
 */
#ifndef STATBISECT_STORE_REPORTS_H
#define STATBISECT_STORE_REPORTS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "report_build.h"

/*
 * The stored facts of one job that its report shows.  Strings belong to
 * the struct (NULL where the column is); free with store_report_facts_clear.
 */
struct store_report_facts {
	PGresult *row;
	const char *repo, *repo_url, *web_url, *bad_rev;
	const char *testcase, *build, *run, *kpi;
	const char *bench_repo, *bench_commit; /* or NULL: none */
	struct report_param *params; /* values as text: strings as they are,
					other JSON as JSON */
	size_t param_count;
	const char **notify, **testcase_notify;
	size_t notify_count, testcase_notify_count;
	bool notify_author;
	char *machine; /* of a worker that ran commit `commit_idx`, or NULL */
	char **texts;  /* storage of the above */
	size_t text_count;
};

/*
 * Loads the facts of job `job_id`, with the machine of a worker that ran
 * its commit `commit_idx`.  Returns 0, or -1 on a database error or when
 * there is no such job.
 */
int store_reports_facts(struct store_report_facts *out, PGconn *conn,
			long long job_id, size_t commit_idx);
void store_report_facts_clear(struct store_report_facts *facts);

/*
 * Adds every metric of the runs of job `job_id` that gave a KPI to
 * `samples`: those of commit `base_idx` on side 0, of `new_idx` on side 1,
 * in the order the runs came.  Returns 0 or -1 (database, memory).
 */
int store_reports_samples(struct report_samples *samples, PGconn *conn,
			  long long job_id, size_t base_idx, size_t new_idx);

/*
 * Queues a report of job `job_id` in the outbox, to `recipients` (as a
 * JSON list), with its Subject and whole message.  Returns 0 or -1.
 */
int store_reports_queue(PGconn *conn, long long job_id,
			const char *const *recipients, size_t recipient_count,
			const char *subject, const char *message);

/*
 * Job read keys: what a report's links carry so that whoever got the
 * report can read that job's pages, and only them, without an account.
 * Stored hashed (SHA-256, as tokens are).
 *
 * store_reports_add_key keeps `key` as a read key of job `job_id`;
 * store_reports_key_opens answers 1 when `key` is a live read key of job
 * `job_id`, 0 when it is not (unknown, revoked, another job's), -1 on a
 * database error; store_reports_revoke_keys revokes every live key of the
 * job and sets *count to their number (STORE_NOT_FOUND: no such job).  Each
 * returns 0 or -1 otherwise.
 */
int store_reports_add_key(PGconn *conn, long long job_id, const char *key);
int store_reports_key_opens(PGconn *conn, long long job_id, const char *key);
int store_reports_revoke_keys(PGconn *conn, long long job_id,
			      long long *count);

#endif
