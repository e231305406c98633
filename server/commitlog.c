#include "commitlog.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "outcome.h"
#include "server.h"

/* The most metric names kept per commit, and their longest. */
#define COMMITLOG_NAMES_MAX 1000
#define COMMITLOG_NAME_LEN 256

/* The plan entry of commit `index`, or NULL when the task does not run
 * it (the plan as workers.c loads it: [{"index", ...}]). */
static bool plan_has(json_t *plan, long long index)
{
	size_t i;
	json_t *e;

	json_array_foreach(plan, i, e)
	{
		if (json_integer_value(json_object_get(e, "index")) == index)
			return true;
	}
	return false;
}

static bool names_valid(json_t *names)
{
	size_t i;
	json_t *name;

	if (!json_is_array(names) ||
	    json_array_size(names) > COMMITLOG_NAMES_MAX)
		return false;
	json_array_foreach(names, i, name)
	{
		if (!json_is_string(name) ||
		    json_string_length(name) > COMMITLOG_NAME_LEN)
			return false;
	}
	return true;
}

static bool optional_int(json_t *v)
{
	return v == NULL || json_is_null(v) || json_is_integer(v);
}

static bool optional_text(json_t *v)
{
	return v == NULL || json_is_null(v) || json_is_string(v);
}

int commitlog_store(struct http_response *res, PGconn *conn, long long job_id,
		    json_t *plan, json_t *outcomes)
{
	char job_text[24], idx_text[24], exit_text[24], signal_text[24];
	const char *params[8];
	enum outcome_status status;
	size_t i;
	json_t *o;

	if (outcomes == NULL)
		return 0;
	if (!json_is_array(outcomes))
		goto bad;
	json_array_foreach(outcomes, i, o)
	{
		json_t *index = json_object_get(o, "commit_index");
		json_t *exit_code = json_object_get(o, "exit_code");
		json_t *signal = json_object_get(o, "signal");
		json_t *names = json_object_get(o, "metrics_seen");
		json_t *output = json_object_get(o, "run_output");
		json_t *build_log = json_object_get(o, "build_log");
		char *names_text = NULL;
		PGresult *r;

		if (!json_is_integer(index) ||
		    !plan_has(plan, json_integer_value(index)) ||
		    outcome_status_parse(
			&status,
			json_string_value(json_object_get(o, "status"))) < 0 ||
		    !optional_int(exit_code) || !optional_int(signal) ||
		    (names != NULL && !json_is_null(names) &&
		     !names_valid(names)) ||
		    !optional_text(output) || !optional_text(build_log))
			goto bad;
		snprintf(job_text, sizeof(job_text), "%lld", job_id);
		snprintf(idx_text, sizeof(idx_text), "%lld",
			 (long long)json_integer_value(index));
		snprintf(exit_text, sizeof(exit_text), "%lld",
			 (long long)json_integer_value(exit_code));
		snprintf(signal_text, sizeof(signal_text), "%lld",
			 (long long)json_integer_value(signal));
		if (json_is_array(names))
			names_text = json_dumps(names, JSON_COMPACT);
		params[0] = job_text;
		params[1] = idx_text;
		params[2] = outcome_status_name(status);
		params[3] = json_is_integer(exit_code) ? exit_text : NULL;
		params[4] = json_is_integer(signal) ? signal_text : NULL;
		params[5] = names_text;
		params[6] = json_string_value(output);
		params[7] = json_string_value(build_log);
		/* A commit built by an earlier task keeps that task's build
		 * log; a task that only built keeps the last run output. */
		r = db_exec(
		    conn,
		    "UPDATE job_commits SET outcome = $3,"
		    " outcome_exit_code = $4, outcome_signal = $5,"
		    " metrics_seen = coalesce($6::jsonb, metrics_seen),"
		    " run_output = coalesce(right($7, 16384),"
		    " run_output),"
		    " build_log = coalesce(right($8, 65536), build_log)"
		    " WHERE job_id = $1 AND idx = $2",
		    8, params);
		free(names_text);
		if (r == NULL) {
			http_db_failed(res);
			return -1;
		}
		PQclear(r);
	}
	return 0;
bad:
	http_error(res, 400, "invalid_field",
		   "'outcomes' must list {commit_index, status (built, "
		   "build_failed, crashed, timed_out, no_kpi or ran), "
		   "exit_code?, signal?, metrics_seen?: [names], run_output?, "
		   "build_log?} of commits the task runs");
	return -1;
}

/* The outcome in columns `col`.. (outcome, exit code, signal, metrics
 * seen) of row `row`, or JSON null when none was reported. */
static json_t *outcome_json(PGresult *r, int row, int col)
{
	json_t *names = NULL;
	json_error_t e;

	if (db_is_null(r, row, col))
		return json_null();
	if (!db_is_null(r, row, col + 3))
		names = json_loads(db_text(r, row, col + 3), 0, &e);
	return json_pack("{s:s,s:o,s:o,s:o}", "status", db_text(r, row, col),
			 "exit_code",
			 db_is_null(r, row, col + 1)
			     ? json_null()
			     : json_integer(db_int(r, row, col + 1)),
			 "signal",
			 db_is_null(r, row, col + 2)
			     ? json_null()
			     : json_integer(db_int(r, row, col + 2)),
			 "metrics_seen", names != NULL ? names : json_null());
}

int commitlog_outcomes(json_t **out, PGconn *conn, long long job_id)
{
	char job_text[24];
	const char *params[1] = {job_text};
	json_t *all;
	PGresult *r;
	int i;

	snprintf(job_text, sizeof(job_text), "%lld", job_id);
	r = db_exec(conn,
		    "SELECT idx, outcome, outcome_exit_code, outcome_signal,"
		    " metrics_seen FROM job_commits WHERE job_id = $1"
		    " AND outcome IS NOT NULL",
		    1, params);
	if (r == NULL)
		return -1;
	all = json_object();
	for (i = 0; i < PQntuples(r); i++)
		json_object_set_new(all, db_text(r, i, 0),
				    outcome_json(r, i, 1));
	PQclear(r);
	*out = all;
	return 0;
}

/* Describes `o` of commit `idx` of `job` as outcome_describe() does,
 * with the metric names the rows of `names` hold in column 0. */
static int describe(char **out, const char *who, struct outcome *o,
		    PGresult *names, const char *kpi)
{
	const char **list = NULL;
	int i, n = names != NULL ? PQntuples(names) : 0, error;

	if (n > 0) {
		list = calloc((size_t)n, sizeof(*list));
		if (list == NULL)
			return -1;
		for (i = 0; i < n; i++)
			list[i] = db_text(names, i, 0);
	}
	o->metrics_seen = list;
	o->metrics_seen_count = (size_t)n;
	error = outcome_describe(out, who, o, kpi);
	free(list);
	return error;
}

/* The KPI of job `id_text`'s testcase, into a malloc'd *out. */
static int load_kpi(char **out, PGconn *conn, const char *id_text)
{
	const char *params[1] = {id_text};
	PGresult *r;

	r = db_exec(conn,
		    "SELECT t.kpi FROM jobs j JOIN testcases t"
		    " ON t.id = j.testcase_id WHERE j.id = $1",
		    1, params);
	if (r == NULL)
		return -1;
	*out = PQntuples(r) == 1 ? strdup(db_text(r, 0, 0)) : NULL;
	PQclear(r);
	return *out != NULL ? 0 : -1;
}

int commitlog_missing_kpi(char **out, PGconn *conn,
			  const struct sched_job *job)
{
	char id_text[24], last_text[24], *kpi = NULL;
	const char *params[2] = {id_text, last_text};
	struct outcome o = {.status = OUTCOME_NO_KPI};
	PGresult *r, *names = NULL;
	bool missing;
	int error = -1;

	*out = NULL;
	snprintf(id_text, sizeof(id_text), "%lld", job->id);
	snprintf(last_text, sizeof(last_text), "%zu", job->count - 1);
	r = db_exec(conn,
		    "SELECT count(*) FILTER (WHERE kpi IS NOT NULL),"
		    " count(*) FILTER (WHERE kpi IS NULL AND exit_code = 0),"
		    " count(DISTINCT commit_idx) FROM runs"
		    " WHERE job_id = $1 AND commit_idx IN (0, $2::int)",
		    2, params);
	if (r == NULL)
		return -1;
	missing = db_int(r, 0, 0) == 0 && db_int(r, 0, 1) > 0 &&
		  db_int(r, 0, 2) == 2;
	PQclear(r);
	if (!missing)
		return 0;
	/* The names the run command printed, as the worker reported them;
	 * from the stored runs (monitors' names too) for older workers. */
	names = db_exec(conn,
			"SELECT DISTINCT n FROM job_commits,"
			" jsonb_array_elements_text(metrics_seen) AS n"
			" WHERE job_id = $1 AND idx IN (0, $2::int)"
			" AND jsonb_typeof(metrics_seen) = 'array' ORDER BY n",
			2, params);
	if (names != NULL && PQntuples(names) == 0) {
		PQclear(names);
		names =
		    db_exec(conn,
			    "SELECT DISTINCT n FROM runs,"
			    " jsonb_object_keys(metrics) AS n"
			    " WHERE job_id = $1 AND commit_idx IN (0, $2::int)"
			    " ORDER BY n",
			    2, params);
	}
	if (names == NULL || load_kpi(&kpi, conn, id_text) < 0 ||
	    describe(out, "the endpoints", &o, names, kpi) < 0)
		goto out;
	error = 1;
out:
	PQclear(names);
	free(kpi);
	return error;
}

int commitlog_cause(char **out, PGconn *conn, const struct sched_job *job)
{
	const struct bisect_result *res = &job->result;
	size_t last = job->count - 1, idx;
	char id_text[24], idx_text[24], *kpi = NULL;
	const char *params[2] = {id_text, idx_text};
	const char *who;
	struct outcome o = {0};
	PGresult *r = NULL, *names = NULL;
	int error = -1;

	*out = NULL;
	if (res->verdict != BISECT_INCONCLUSIVE ||
	    (!job->input[0].build_failed && !job->input[last].build_failed))
		return 0;
	/* The engine looks at the good commit first. */
	idx = job->input[0].build_failed ? 0 : last;
	who = idx == 0 ? "the good commit" : "the bad commit";
	snprintf(id_text, sizeof(id_text), "%lld", job->id);
	snprintf(idx_text, sizeof(idx_text), "%zu", idx);
	r = db_exec(conn,
		    "SELECT outcome, outcome_exit_code, outcome_signal"
		    " FROM job_commits WHERE job_id = $1 AND idx = $2",
		    2, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) != 1 || db_is_null(r, 0, 0) ||
	    outcome_status_parse(&o.status, db_text(r, 0, 0)) < 0) {
		error = 0; /* no outcome reported: the engine's reason */
		goto out;
	}
	o.exit_code = (int)db_int(r, 0, 1);
	o.term_signal = (int)db_int(r, 0, 2);
	if (job->commits[idx].build_failed)
		o.status = OUTCOME_BUILD_FAILED;
	if (o.status == OUTCOME_RAN || o.status == OUTCOME_BUILT) {
		/* The last upload ran well, earlier ones did not. */
		if (asprintf(out,
			     "%zu runs of %s gave no value of the KPI (see "
			     "its run output)",
			     job->commits[idx].failed_runs, who) < 0) {
			*out = NULL;
			goto out;
		}
		error = 0;
		goto out;
	}
	names = db_exec(conn,
			"SELECT n FROM job_commits,"
			" jsonb_array_elements_text(metrics_seen) AS n"
			" WHERE job_id = $1 AND idx = $2"
			" AND jsonb_typeof(metrics_seen) = 'array' ORDER BY n",
			2, params);
	if (names == NULL || load_kpi(&kpi, conn, id_text) < 0 ||
	    describe(out, who, &o, names, kpi) < 0)
		goto out;
	error = 0;
out:
	PQclear(r);
	PQclear(names);
	free(kpi);
	return error;
}

/* A commit named in a path: 4 to 40 hex digits, folded to lower case
 * into `sha`. */
static bool parse_sha(char *sha, size_t size, const char *text)
{
	size_t i, len = strlen(text);

	if (len < 4 || len > 40 || len >= size)
		return false;
	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)text[i]))
			return false;
		sha[i] = (char)tolower((unsigned char)text[i]);
	}
	sha[len] = '\0';
	return true;
}

void commitlog_get(struct http_response *res, struct http_request *req)
{
	char sha[41];
	const char *params[2] = {req->params[0], sha};
	long long job_id;
	PGresult *r;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	if (!parse_sha(sha, sizeof(sha), req->params[1])) {
		http_error(res, 400, "invalid_commit",
			   "a commit is named by 4 to 40 hex digits of its "
			   "SHA");
		return;
	}
	/* One row per matching commit; one with NULLs when none does. */
	r = db_exec(db_conn(),
		    "SELECT c.idx, c.sha, c.build_failed, c.outcome,"
		    " c.outcome_exit_code, c.outcome_signal, c.metrics_seen,"
		    " c.build_log, c.run_output"
		    " FROM jobs j LEFT JOIN job_commits c ON c.job_id = j.id"
		    " AND left(c.sha, length($2)) = $2"
		    " WHERE j.id = $1 ORDER BY c.idx LIMIT 2",
		    2, params);
	if (r == NULL) {
		http_db_failed(res);
		return;
	}
	if (PQntuples(r) == 0)
		http_error(res, 404, "not_found", "no job %lld", job_id);
	else if (db_is_null(r, 0, 0))
		http_error(res, 404, "not_found",
			   "commit %s is not a candidate of job %lld", sha,
			   job_id);
	else if (PQntuples(r) > 1)
		http_error(res, 400, "ambiguous_commit",
			   "%s names more than one commit of job %lld; give "
			   "more digits",
			   sha, job_id);
	else
		http_json(
		    res, 200,
		    json_pack(
			"{s:I,s:I,s:s,s:b,s:o,s:o,s:o}", "job",
			(json_int_t)job_id, "index",
			(json_int_t)db_int(r, 0, 0), "commit",
			db_text(r, 0, 1), "build_failed", db_bool(r, 0, 2),
			"outcome", outcome_json(r, 0, 3), "build_log",
			db_is_null(r, 0, 7) ? json_null()
					    : json_string(db_text(r, 0, 7)),
			"run_output",
			db_is_null(r, 0, 8) ? json_null()
					    : json_string(db_text(r, 0, 8))));
	PQclear(r);
}
