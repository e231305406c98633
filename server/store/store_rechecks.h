/*
 * store_rechecks: the SQL of re-checks of a regression on a newer head
 * (issue 13, sql/065_rechecks.sql).  Return codes and ownership as in
 * store_jobs.h.
 */
#ifndef STATBISECT_STORE_RECHECKS_H
#define STATBISECT_STORE_RECHECKS_H

#include <jansson.h>
#include <libpq-fe.h>

#include "store.h"

/* Links compare job `compare_job_id` (just stored, its last revision the
 * head) to regression `job_id` as its re-check on `branch`, in the
 * caller's transaction.  STORE_NOT_FOUND when the compare job has no
 * revisions. */
int store_rechecks_add(PGconn *conn, long long job_id,
		       long long compare_job_id, const char *branch);

/* What a finished compare job re-checks, when it is a re-check. */
struct store_recheck {
	long long id, job_id;
	char branch[256];
	char head_sha[41];
};

/* The re-check that compare job `compare_job_id` is; STORE_NOT_FOUND when
 * it is none. */
int store_rechecks_of_compare(struct store_recheck *out, PGconn *conn,
			      long long compare_job_id);

/* Stores re-check `id`'s outcome. */
int store_rechecks_finish(PGconn *conn, long long id, const char *verdict,
			  double change_pct, double p_worse);

/*
 * The re-checks of job `job_id`, oldest first, as its API answer shows
 * them: [{"job", "branch", "head", "state", "verdict", "change_pct",
 * "note"}] into *out (a new reference; [] when none).
 */
int store_rechecks_json(json_t **out, PGconn *conn, long long job_id);

/*
 * Up to `max` finished regressions due a scheduled re-check: their
 * testcase has recheck_interval_s, and neither a re-check nor the job
 * itself ended within it, and no re-check of theirs is open.  Ids into
 * out[], their number into *count.
 */
int store_rechecks_due(long long *out, size_t max, size_t *count,
		       PGconn *conn);

/* Sets testcase `testcase`'s re-check interval (0: none).
 * STORE_NOT_FOUND when there is no such testcase. */
int store_rechecks_set_interval(PGconn *conn, const char *testcase,
				long long interval_s);

/* Notes that the schedule tried job `job_id` now. */
int store_rechecks_tried(PGconn *conn, long long job_id);

/* The recipients (JSON text) and whole message of the last report mailed
 * for job `job_id`, each malloc'd; STORE_NOT_FOUND when none was. */
int store_rechecks_last_report(char **recipients, char **message, PGconn *conn,
			       long long job_id);

#endif
