#include "commitlog.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "id.h"
#include "log.h"
#include "outcome.h"
#include "server.h"
#include "store/store_outcomes.h"

/* The most metric names kept per commit, and their longest. */
#define COMMITLOG_NAMES_MAX 1000
#define COMMITLOG_NAME_LEN 256

/* The largest signal number an outcome may name (a wait status holds
 * seven bits of it). */
#define COMMITLOG_SIGNAL_MAX 127

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

/* Absent, null, or an integer in [min, max] (the column's range or
 * less: out of it is the worker's error, 400, not the database's). */
static bool optional_int(json_t *v, long long min, long long max)
{
	return v == NULL || json_is_null(v) ||
	       (json_is_integer(v) && json_integer_value(v) >= min &&
		json_integer_value(v) <= max);
}

static bool optional_text(json_t *v)
{
	return v == NULL || json_is_null(v) || json_is_string(v);
}

int commitlog_store(struct http_response *res, PGconn *conn, long long job_id,
		    json_t *plan, json_t *outcomes)
{
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
		long long exit_value, signal_value;
		struct store_outcome_new row = {0};
		char *names_text = NULL;
		int rc;

		if (!json_is_integer(index) ||
		    !plan_has(plan, json_integer_value(index)) ||
		    outcome_status_parse(
			&status,
			json_string_value(json_object_get(o, "status"))) < 0 ||
		    !optional_int(exit_code, INT_MIN, INT_MAX) ||
		    !optional_int(signal, 0, COMMITLOG_SIGNAL_MAX) ||
		    (names != NULL && !json_is_null(names) &&
		     !names_valid(names)) ||
		    !optional_text(json_object_get(o, "run_output")) ||
		    !optional_text(json_object_get(o, "build_log")))
			goto bad;
		exit_value = json_integer_value(exit_code);
		signal_value = json_integer_value(signal);
		if (json_is_array(names))
			names_text = json_dumps(names, JSON_COMPACT);
		row.index = json_integer_value(index);
		row.status = outcome_status_name(status);
		row.exit_code =
		    json_is_integer(exit_code) ? &exit_value : NULL;
		row.signal = json_is_integer(signal) ? &signal_value : NULL;
		row.metrics_seen = names_text;
		row.run_output =
		    json_string_value(json_object_get(o, "run_output"));
		row.build_log =
		    json_string_value(json_object_get(o, "build_log"));
		rc = store_outcomes_set(conn, job_id, &row);
		free(names_text);
		if (rc != STORE_OK) {
			http_db_failed(res);
			return -1;
		}
	}
	return 0;
bad:
	http_error(res, 400, "invalid_field",
		   "'outcomes' must list {commit_index, status (built, "
		   "build_failed, crashed, timed_out, no_kpi or ran), "
		   "exit_code? (32-bit), signal? (0 to 127), metrics_seen?: "
		   "[names], run_output?, "
		   "build_log?} of commits the task runs");
	return -1;
}

/* An outcome as the API shows it, or JSON null when none was reported. */
static json_t *outcome_json(const struct store_outcome *o)
{
	json_t *names = NULL;
	json_error_t e;

	if (o->status == NULL)
		return json_null();
	if (o->metrics_seen != NULL)
		names = json_loads(o->metrics_seen, 0, &e);
	return json_pack(
	    "{s:s,s:o,s:o,s:o}", "status", o->status, "exit_code",
	    o->has_exit_code ? json_integer(o->exit_code) : json_null(),
	    "signal", o->has_signal ? json_integer(o->signal) : json_null(),
	    "metrics_seen", names != NULL ? names : json_null());
}

int commitlog_outcomes(json_t **out, PGconn *conn, long long job_id)
{
	struct store_outcome_list list;
	char key[STORE_INT_TEXT];
	json_t *all;
	size_t i;

	if (store_outcomes_list(&list, conn, job_id) != STORE_OK)
		return -1;
	all = json_object();
	for (i = 0; i < list.count; i++)
		json_object_set_new(all,
				    store_int_text(key, list.items[i].index),
				    outcome_json(&list.items[i]));
	store_outcome_list_clear(&list);
	*out = all;
	return 0;
}

/* Describes `o` as outcome_describe() does, with the metric names
 * `names` and the KPI of job `job_id`. */
static int describe(char **out, PGconn *conn, long long job_id,
		    const char *who, struct outcome *o,
		    const struct store_names *names)
{
	char *kpi = NULL;
	int error;

	if (store_outcomes_kpi(&kpi, conn, job_id) != STORE_OK)
		return -1;
	o->metrics_seen = names->names;
	o->metrics_seen_count = names->count;
	error = outcome_describe(out, who, o, kpi);
	free(kpi);
	return error;
}

int commitlog_missing_kpi(char **out, PGconn *conn,
			  const struct sched_job *job)
{
	long long last = (long long)job->count - 1;
	struct outcome o = {.status = OUTCOME_NO_KPI};
	struct store_endpoint_runs runs;
	struct store_names names = {0};
	int error = -1;

	*out = NULL;
	if (store_outcomes_endpoint_runs(&runs, conn, job->id, last) !=
	    STORE_OK)
		return -1;
	if (runs.with_kpi != 0 || runs.exited_without == 0 ||
	    runs.commits != 2)
		return 0;
	/* The names the run command printed, as the worker reported them;
	 * from the stored runs (monitors' names too) for older workers. */
	if (store_outcomes_names(&names, conn, job->id, 0, last,
				 STORE_NAMES_DISTINCT) != STORE_OK)
		goto out;
	if (names.count == 0) {
		store_names_clear(&names);
		if (store_outcomes_names(&names, conn, job->id, 0, last,
					 STORE_NAMES_FROM_RUNS) != STORE_OK)
			goto out;
	}
	if (describe(out, conn, job->id, "the endpoints", &o, &names) < 0)
		goto out;
	error = 1;
out:
	store_names_clear(&names);
	return error;
}

int commitlog_cause(char **out, PGconn *conn, const struct sched_job *job)
{
	const struct bisect_result *res = &job->result;
	size_t last = job->count - 1, idx;
	struct store_outcome_list stored = {0};
	struct store_names names = {0};
	struct outcome o = {0};
	const char *who;
	int rc, error = -1;

	*out = NULL;
	if (res->verdict != BISECT_INCONCLUSIVE ||
	    (!job->input[0].build_failed && !job->input[last].build_failed))
		return 0;
	/* The engine looks at the good commit first. */
	idx = job->input[0].build_failed ? 0 : last;
	who = idx == 0 ? "the good commit" : "the bad commit";
	rc = store_outcomes_get(&stored, conn, job->id, (long long)idx);
	if (rc == STORE_FAILED)
		return -1;
	if (rc == STORE_NOT_FOUND || stored.items[0].status == NULL ||
	    outcome_status_parse(&o.status, stored.items[0].status) < 0) {
		error = 0; /* no outcome reported: the engine's reason */
		goto out;
	}
	o.exit_code = (int)stored.items[0].exit_code;
	o.term_signal = (int)stored.items[0].signal;
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
	if (store_outcomes_names(&names, conn, job->id, (long long)idx,
				 (long long)idx,
				 STORE_NAMES_REPORTED) != STORE_OK ||
	    describe(out, conn, job->id, who, &o, &names) < 0)
		goto out;
	error = 0;
out:
	store_outcome_list_clear(&stored);
	store_names_clear(&names);
	return error;
}

int commitlog_log(json_t **out, struct field_errors *errors, long long job_id,
		  const char *commit)
{
	struct store_commit_log log;
	char sha[41];

	*out = NULL;
	if (id_parse_sha_prefix(sha, commit) < 0) {
		fields_add(errors, "commit", 400, "invalid_commit",
			   "a commit is named by 4 to 40 hex digits of its "
			   "SHA");
		return -1;
	}
	if (store_outcomes_log(&log, db_conn(), job_id, sha) != STORE_OK) {
		fields_db_failed(errors);
		return -1;
	}
	if (!log.job_found)
		fields_add(errors, "", 404, "not_found", "no job %lld",
			   job_id);
	else if (log.matches == 0)
		fields_add(errors, "commit", 404, "not_found",
			   "commit %s is not a candidate of job %lld", sha,
			   job_id);
	else if (log.matches > 1)
		fields_add(errors, "commit", 400, "ambiguous_commit",
			   "%s names more than one commit of job %lld; give "
			   "more digits",
			   sha, job_id);
	else
		*out = json_pack(
		    "{s:I,s:I,s:s,s:b,s:o,s:o,s:o}", "job", (json_int_t)job_id,
		    "index", (json_int_t)log.index, "commit", log.sha,
		    "build_failed", log.build_failed, "outcome",
		    outcome_json(&log.outcome), "build_log",
		    log.build_log == NULL ? json_null()
					  : json_string(log.build_log),
		    "run_output",
		    log.run_output == NULL ? json_null()
					   : json_string(log.run_output));
	store_commit_log_clear(&log);
	return *out != NULL ? 0 : -1;
}

void commitlog_get(struct http_response *res, struct http_request *req)
{
	struct field_errors errors;
	long long job_id;
	json_t *log;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	fields_init(&errors);
	if (commitlog_log(&log, &errors, job_id, req->params[1]) == 0)
		http_json(res, 200, log);
	else if (!fields_answer(res, &errors))
		http_error(res, 500, "internal", "out of memory");
}
