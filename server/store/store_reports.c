#include "store_reports.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"
#include "store.h"
#include "store_outbox.h"

/* Keeps `text` (malloc'd, or NULL) in the facts' storage. */
static const char *keep(struct store_report_facts *f, char *text)
{
	if (text != NULL)
		f->texts[f->text_count++] = text;
	return text;
}

/* The strings of the JSON list `list_text` as an array of kept copies. */
static const char **string_list(struct store_report_facts *f,
				const char *list_text, size_t *count)
{
	json_t *list = json_loads(list_text != NULL ? list_text : "[]",
				  JSON_DECODE_ANY, NULL);
	const char **out;
	json_t *value;
	size_t i;

	*count = 0;
	out = calloc(json_array_size(list) + 1, sizeof(*out));
	if (out == NULL) {
		json_decref(list);
		return NULL;
	}
	json_array_foreach(list, i, value)
	{
		/* Entries that are not strings were never accepted; NULL
		 * keeps the count as the job stored it. */
		out[(*count)++] =
		    json_is_string(value)
			? keep(f, strdup(json_string_value(value)))
			: NULL;
	}
	json_decref(list);
	return out;
}

/* The testcase's parameters as key and value texts. */
static int params_of(struct store_report_facts *f, const char *params_text)
{
	json_t *params = json_loads(params_text != NULL ? params_text : "{}",
				    JSON_DECODE_ANY, NULL);
	const char *key;
	json_t *value;

	f->params = calloc(json_object_size(params) + 1, sizeof(*f->params));
	if (f->params == NULL) {
		json_decref(params);
		return -1;
	}
	json_object_foreach(params, key, value)
	{
		struct report_param *p = &f->params[f->param_count++];

		p->key = keep(f, strdup(key));
		p->value = keep(f, json_is_string(value)
				       ? strdup(json_string_value(value))
				       : json_dumps(value, JSON_ENCODE_ANY));
	}
	json_decref(params);
	return 0;
}

/* The machine the job is bound to (issue 14: its counted runs are all
 * that machine's); for a job from before that, the machine of a run of
 * the commit. */
static int machine_of(struct store_report_facts *f, PGconn *conn,
		      const char *const params[2])
{
	PGresult *r =
	    db_exec(conn,
		    "SELECT m FROM (SELECT 0 AS k, w.machine AS m FROM jobs j"
		    " JOIN workers w ON w.id = j.worker_id WHERE j.id = $1"
		    " UNION ALL SELECT 1, w.machine FROM runs r"
		    " JOIN workers w ON w.id = r.worker_id WHERE r.job_id = $1"
		    " AND r.commit_idx = $2 AND NOT r.superseded) x"
		    " WHERE m IS NOT NULL ORDER BY k LIMIT 1",
		    2, params);

	if (r != NULL && PQntuples(r) == 1)
		f->machine = strdup(db_text(r, 0, 0));
	PQclear(r);
	return 0;
}

int store_reports_facts(struct store_report_facts *out, PGconn *conn,
			long long job_id, size_t commit_idx)
{
	char id[24], idx[24];
	const char *params[2] = {id, idx};
	const char *notify, *testcase_notify, *test_params;
	size_t texts;

	memset(out, 0, sizeof(*out));
	snprintf(id, sizeof(id), "%lld", job_id);
	snprintf(idx, sizeof(idx), "%zu", commit_idx);
	out->row =
	    db_exec(conn,
		    "SELECT rp.name, rp.url, rp.web_url, j.bad_rev,"
		    " t.name, t.build, t.run, t.kpi, t.params, j.notify,"
		    " t.notify, t.notify_author, t.bench_repo, j.bench_sha"
		    " FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
		    " JOIN testcases t ON t.id = j.testcase_id"
		    " WHERE j.id = $1",
		    1, params);
	if (out->row == NULL || PQntuples(out->row) != 1)
		return -1;
	out->repo = db_text(out->row, 0, 0);
	out->repo_url = db_text(out->row, 0, 1);
	out->web_url = db_text(out->row, 0, 2);
	out->bad_rev = db_text(out->row, 0, 3);
	out->testcase = db_text(out->row, 0, 4);
	out->build = db_text(out->row, 0, 5);
	out->run = db_text(out->row, 0, 6);
	out->kpi = db_text(out->row, 0, 7);
	test_params = db_text(out->row, 0, 8);
	notify = db_text(out->row, 0, 9);
	testcase_notify = db_text(out->row, 0, 10);
	out->notify_author = db_bool(out->row, 0, 11);
	out->bench_repo = db_text(out->row, 0, 12);
	out->bench_commit = db_text(out->row, 0, 13);
	/* Every text the lists and parameters can keep, at most. */
	texts = 2 * strlen(test_params != NULL ? test_params : "") +
		strlen(notify != NULL ? notify : "") +
		strlen(testcase_notify != NULL ? testcase_notify : "") + 4;
	out->texts = calloc(texts, sizeof(*out->texts));
	if (out->texts == NULL || params_of(out, test_params) < 0)
		return -1;
	out->notify = string_list(out, notify, &out->notify_count);
	out->testcase_notify =
	    string_list(out, testcase_notify, &out->testcase_notify_count);
	if (out->notify == NULL || out->testcase_notify == NULL)
		return -1;
	return machine_of(out, conn, params);
}

void store_report_facts_clear(struct store_report_facts *facts)
{
	size_t i;

	PQclear(facts->row);
	for (i = 0; i < facts->text_count; i++)
		free(facts->texts[i]);
	free(facts->texts);
	free(facts->params);
	free(facts->notify);
	free(facts->testcase_notify);
	free(facts->machine);
	memset(facts, 0, sizeof(*facts));
}

int store_reports_samples(struct report_samples *samples, PGconn *conn,
			  long long job_id, size_t base_idx, size_t new_idx)
{
	char id[24], a[24], b[24];
	const char *params[3] = {id, a, b};
	PGresult *r;
	int i, error = 0;

	snprintf(id, sizeof(id), "%lld", job_id);
	snprintf(a, sizeof(a), "%zu", base_idx);
	snprintf(b, sizeof(b), "%zu", new_idx);
	r = db_exec(conn,
		    "SELECT commit_idx, metrics FROM runs WHERE job_id = $1"
		    " AND commit_idx IN ($2, $3) AND kpi IS NOT NULL"
		    " AND NOT superseded ORDER BY id",
		    3, params);
	if (r == NULL)
		return -1;
	for (i = 0; i < PQntuples(r) && error == 0; i++) {
		int side = (size_t)db_int(r, i, 0) == base_idx ? 0 : 1;
		json_t *metrics = json_loads(db_text(r, i, 1), 0, NULL);
		const char *name;
		json_t *value;

		json_object_foreach(metrics, name, value)
		{
			if (json_is_number(value) &&
			    report_samples_add(samples, name, side,
					       json_number_value(value)) < 0) {
				error = -1;
				break;
			}
		}
		json_decref(metrics);
	}
	PQclear(r);
	return error;
}

int store_reports_queue(PGconn *conn, long long job_id,
			const char *const *recipients, size_t recipient_count,
			const char *subject, const char *message)
{
	/* The outbox's one INSERT lives with its other SQL. */
	return store_outbox_insert(conn, job_id, recipients, recipient_count,
				   subject, message);
}

/* How a key is stored and looked up: its hex SHA-256. */
#define KEY_HASH(param) "encode(sha256(convert_to(" param ", 'UTF8')), 'hex')"

int store_reports_add_key(PGconn *conn, long long job_id, const char *key)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id, job_id), key};
	PGresult *r;

	r = db_exec(conn,
		    "INSERT INTO job_read_keys (job_id, key_hash)"
		    " VALUES ($1, " KEY_HASH("$2") ")",
		    2, params);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

int store_reports_key_opens(PGconn *conn, long long job_id, const char *key)
{
	char id[STORE_INT_TEXT];
	const char *params[2] = {store_int_text(id, job_id), key};
	PGresult *r = db_exec(
	    conn,
	    "SELECT 1 FROM job_read_keys WHERE job_id = $1"
	    " AND key_hash = " KEY_HASH("$2") " AND revoked_at IS NULL",
	    2, params);
	int status = store_one_row(r);

	if (status == STORE_FAILED)
		return -1;
	if (status == STORE_NOT_FOUND)
		return 0;
	PQclear(r);
	return 1;
}

int store_reports_revoke_keys(PGconn *conn, long long job_id, long long *count)
{
	char id[STORE_INT_TEXT];
	const char *params[1] = {store_int_text(id, job_id)};
	PGresult *r =
	    db_exec(conn, "SELECT 1 FROM jobs WHERE id = $1", 1, params);
	int status = store_one_row(r);

	if (status != STORE_OK)
		return status;
	PQclear(r);
	r = db_exec(conn,
		    "UPDATE job_read_keys SET revoked_at = now()"
		    " WHERE job_id = $1 AND revoked_at IS NULL",
		    1, params);
	if (r == NULL)
		return -1;
	*count = strtoll(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return 0;
}
