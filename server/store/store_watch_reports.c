#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"
#include "report_build.h"
#include "store.h"
#include "store_watches.h"

/* The jobs of the same watch, branch and range as job `self` (a.job_id),
 * the other testcases' measurements and bisections of the same head. */
#define SIBLINGS_OF(self)                                                     \
	" FROM watch_jobs wa JOIN jobs ja ON ja.id = wa.job_id"               \
	" JOIN watch_jobs wb ON wb.watch_id = wa.watch_id"                    \
	" AND wb.branch = wa.branch AND wb.job_id <> wa.job_id"               \
	" JOIN jobs jb ON jb.id = wb.job_id AND jb.good_sha = ja.good_sha"    \
	" AND jb.bad_sha = ja.bad_sha"                                        \
	" AND jb.testcase_id <> ja.testcase_id WHERE wa.job_id = " self

int store_watches_has_siblings(PGconn *conn, long long job_id, bool *out)
{
	char job[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(job, job_id)};
	PGresult *r;

	r = db_exec(conn, "SELECT count(*)" SIBLINGS_OF("$1"), 1, params);
	if (r == NULL)
		return -1;
	*out = db_int(r, 0, 0) > 0;
	PQclear(r);
	return 0;
}

int store_watches_hold(PGconn *conn, long long job_id, size_t which,
		       const char *sha)
{
	char job[STORE_INT_TEXT], idx[STORE_INT_TEXT];
	const char *params[3] = {store_int_text(job, job_id),
				 store_int_text(idx, (long long)which), sha};

	return store_watches_exec(conn,
				  "INSERT INTO watch_held (job_id, which,"
				  " culprit_sha) VALUES ($1, $2, $3)"
				  " ON CONFLICT DO NOTHING",
				  3, params);
}

int store_watches_held_ready(struct store_watch_held **out, size_t *count,
			     PGconn *conn)
{
	PGresult *r;
	size_t n, i;

	*out = NULL;
	*count = 0;
	r = db_exec(
	    conn,
	    "SELECT h.job_id, h.which, h.culprit_sha, wa.watch_id || ' ' ||"
	    " wa.branch || ' ' || ja.good_sha || ' ' || ja.bad_sha"
	    " FROM watch_held h JOIN watch_jobs wa ON wa.job_id = h.job_id"
	    " JOIN jobs ja ON ja.id = h.job_id WHERE NOT EXISTS (SELECT 1"
	    " FROM watch_jobs wb JOIN jobs jb ON jb.id = wb.job_id"
	    " WHERE wb.watch_id = wa.watch_id AND wb.branch = wa.branch"
	    " AND jb.good_sha = ja.good_sha AND jb.bad_sha = ja.bad_sha"
	    " AND jb.state IN ('queued', 'running'))"
	    " ORDER BY 4, h.culprit_sha, h.job_id, h.which LIMIT 64",
	    0, NULL);
	if (r == NULL)
		return -1;
	n = (size_t)PQntuples(r);
	*out = calloc(n + 1, sizeof(**out));
	if (*out == NULL) {
		PQclear(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct store_watch_held *h = &(*out)[i];

		h->job_id = db_int(r, (int)i, 0);
		h->which = (size_t)db_int(r, (int)i, 1);
		store_watches_row_copy(h->culprit, sizeof(h->culprit), r,
				       (int)i, 2);
		store_watches_row_copy(h->group, sizeof(h->group), r, (int)i,
				       3);
	}
	*count = n;
	PQclear(r);
	return 0;
}

int store_watches_unhold(PGconn *conn, long long job_id, size_t which)
{
	char job[STORE_INT_TEXT], idx[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(job, job_id),
				 store_int_text(idx, (long long)which)};

	return store_watches_exec(conn,
				  "DELETE FROM watch_held WHERE job_id = $1"
				  " AND which = $2",
				  2, params);
}

int store_watches_held_samples(struct report_samples *samples, PGconn *conn,
			       long long job_id, size_t which, size_t base_idx,
			       size_t new_idx)
{
	char job[STORE_INT_TEXT], idx[STORE_INT_TEXT], base[STORE_INT_TEXT];
	char new[STORE_INT_TEXT];
	const char *params[4] = {store_int_text(job, job_id),
				 store_int_text(idx, (long long)which),
				 store_int_text(base, (long long)base_idx),
				 store_int_text(new, (long long)new_idx)};
	PGresult *r;
	int i, error = 0;

	/* The KPI runs of the other held jobs of the same head and culprit,
	 * named "<testcase>.<kpi>"; their ranges are the same, so are the
	 * commits' indices. */
	r = db_exec(
	    conn,
	    "SELECT t.name || '.' || t.kpi, r.commit_idx = $4, r.kpi"
	    " FROM watch_held ha JOIN watch_jobs wa ON wa.job_id = ha.job_id"
	    " JOIN jobs ja ON ja.id = ha.job_id"
	    " JOIN watch_held hb ON hb.culprit_sha = ha.culprit_sha"
	    " AND hb.job_id <> ha.job_id"
	    " JOIN watch_jobs wb ON wb.job_id = hb.job_id"
	    " AND wb.watch_id = wa.watch_id AND wb.branch = wa.branch"
	    " JOIN jobs jb ON jb.id = hb.job_id AND jb.good_sha = ja.good_sha"
	    " AND jb.bad_sha = ja.bad_sha"
	    " JOIN testcases t ON t.id = jb.testcase_id"
	    " JOIN runs r ON r.job_id = jb.id AND r.commit_idx IN ($3, $4)"
	    " AND r.kpi IS NOT NULL AND NOT r.superseded"
	    " WHERE ha.job_id = $1 AND ha.which = $2 ORDER BY r.id",
	    4, params);
	if (r == NULL)
		return -1;
	for (i = 0; i < PQntuples(r) && error == 0; i++)
		error = report_samples_add(samples, db_text(r, i, 0),
					   db_bool(r, i, 1) ? 1 : 0,
					   db_double(r, i, 2));
	PQclear(r);
	return error < 0 ? -1 : 0;
}
