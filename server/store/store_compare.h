/*
 * store_compare: the SQL of compare jobs (issue 13, sql/060_compare.sql):
 * a job's revisions as columns (job_columns), each column's result, the
 * job's end, and what a fix re-test needs of the bisection it re-tests.
 * Return codes and ownership as in store_jobs.h.
 */
#ifndef STATBISECT_STORE_COMPARE_H
#define STATBISECT_STORE_COMPARE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/*
 * Makes job `job_id`, just stored with store_jobs_create (its candidates
 * the revisions in order), a compare job: its kind, the bisection it
 * re-tests (`retest_of`, 0: none) and one column per revision, with the
 * revision as submitted and its label.
 */
int store_compare_mark(PGconn *conn, long long job_id,
		       const char *const *revisions, const char *const *labels,
		       size_t count, long long retest_of);

/* One column of a compare job. */
struct store_compare_column {
	long long idx;
	const char *revision, *label;
	const char *verdict; /* NULL before the end, and for the first */
	double change_pct, p_value; /* NAN when not known */
};

struct store_compare {
	long long retest_of; /* 0: none */
	struct store_compare_column *columns;
	size_t count;
	PGresult *result;
};

void store_compare_clear(struct store_compare *cmp);

/* The columns of job `job_id`, in order.  STORE_NOT_FOUND when it is not
 * a compare job (or there is no such job). */
int store_compare_get(struct store_compare *out, PGconn *conn,
		      long long job_id);

/* Stores column `idx`'s result against the first column. */
int store_compare_set_column(PGconn *conn, long long job_id, size_t idx,
			     const char *verdict, double change_pct,
			     double p_value);

/* Ends job `job_id`: state done, `verdict`, the headline change and its
 * p-value (NAN: none) and `message` (or NULL). */
int store_compare_finish(PGconn *conn, long long job_id, const char *verdict,
			 double change_pct, double p_value,
			 const char *message);

/* The kind of job `job_id` ("bisect", "patch", "compare") into `kind`.
 * STORE_NOT_FOUND when there is no such job. */
int store_compare_kind(PGconn *conn, long long job_id, char kind[16]);

/* What a fix re-test takes from the job it re-tests. */
struct store_compare_source {
	const char *kind, *state, *verdict;
	const char *culprit_sha, *parent_sha; /* NULL without a culprit */
	const char *repo, *testcase;
	const char *notify;  /* JSON text */
	const char *bad_rev; /* as submitted: a branch, say */
	const char *group;   /* the machine group it ran on */
	PGresult *result;
};

void store_compare_source_clear(struct store_compare_source *source);

/* Job `job_id` as a fix re-test's source.  STORE_NOT_FOUND when there is
 * no such job. */
int store_compare_source(struct store_compare_source *out, PGconn *conn,
			 long long job_id);

#endif
