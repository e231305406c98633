#include "store_patches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db.h"

int store_patches_lookup(PGconn *conn, const char *repo, const char *testcase,
			 long long *repo_id, char **repo_url,
			 long long *testcase_id, bool *found,
			 const char **which)
{
	const char *params[2] = {repo, testcase};
	PGresult *r;

	*found = false;
	*repo_url = NULL;
	r = db_exec(conn,
		    "SELECT (SELECT id FROM repos"
		    " WHERE name = $1 AND deleted_at IS NULL),"
		    " (SELECT url FROM repos"
		    " WHERE name = $1 AND deleted_at IS NULL),"
		    " (SELECT id FROM testcases"
		    " WHERE name = $2 AND deleted_at IS NULL)",
		    2, params);
	if (r == NULL)
		return -1;
	if (db_is_null(r, 0, 0)) {
		*which = "repo";
	} else if (db_is_null(r, 0, 2)) {
		*which = "testcase";
	} else {
		*found = true;
		*repo_id = db_int(r, 0, 0);
		*repo_url = strdup(db_text(r, 0, 1));
		*testcase_id = db_int(r, 0, 2);
	}
	PQclear(r);
	return *found && *repo_url == NULL ? -1 : 0;
}

/* The bytes as PostgreSQL's bytea hex input, "\x0a1b...". */
static char *bytea_hex(const char *bytes, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *out = malloc(2 * len + 3), *p;
	size_t i;

	if (out == NULL)
		return NULL;
	p = out;
	*p++ = '\\';
	*p++ = 'x';
	for (i = 0; i < len; i++) {
		*p++ = digits[(unsigned char)bytes[i] >> 4];
		*p++ = digits[(unsigned char)bytes[i] & 15];
	}
	*p = '\0';
	return out;
}

static int insert_commit(PGconn *conn, const char *job, size_t idx,
			 const char *sha, const char *subject,
			 const char *author_name, const char *author_email)
{
	char idx_text[24], parents[24];
	const char *params[7];
	PGresult *r;

	snprintf(idx_text, sizeof(idx_text), "%zu", idx);
	if (idx == 0)
		snprintf(parents, sizeof(parents), "{}");
	else
		snprintf(parents, sizeof(parents), "{%zu}", idx - 1);
	params[0] = job;
	params[1] = idx_text;
	params[2] = sha;
	params[3] = subject;
	params[4] = author_name;
	params[5] = author_email;
	params[6] = parents;
	r = db_exec(conn,
		    "INSERT INTO job_commits (job_id, idx, sha, subject,"
		    " author_name, author_email, parents)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7)",
		    7, params);
	PQclear(r);
	return r == NULL ? -1 : 0;
}

static int insert_patch(PGconn *conn, const char *job, size_t idx,
			const struct store_patch *p)
{
	char idx_text[24], date[24], offset[24];
	char *recipients = NULL, *diff = NULL;
	const char *params[13];
	PGresult *r = NULL;

	snprintf(idx_text, sizeof(idx_text), "%zu", idx);
	snprintf(date, sizeof(date), "%lld", (long long)p->date);
	snprintf(offset, sizeof(offset), "%d", p->date_offset);
	recipients = json_dumps(p->recipients, JSON_COMPACT);
	diff = bytea_hex(p->diff, p->diff_len);
	if (recipients == NULL || diff == NULL)
		goto out;
	params[0] = job;
	params[1] = idx_text;
	params[2] = p->message_id;
	params[3] = p->in_reply_to;
	params[4] = p->subject;
	params[5] = p->author_name;
	params[6] = p->author_email;
	params[7] = date;
	params[8] = offset;
	params[9] = recipients;
	params[10] = p->message;
	params[11] = diff;
	params[12] = p->link;
	r = db_exec(conn,
		    "INSERT INTO job_patches (job_id, idx, message_id,"
		    " in_reply_to, subject, author_name, author_email, date,"
		    " date_offset, recipients, message, diff, link)"
		    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
		    " $12, $13)",
		    13, params);
	PQclear(r);
out:
	free(recipients);
	free(diff);
	return r == NULL ? -1 : 0;
}

int store_patches_insert_job(PGconn *conn, const struct store_patch_job *job,
			     const struct store_patch *patches, size_t count,
			     long long *job_id)
{
	char repo_id[24], testcase_id[24], token[24], runs_min[24],
	    runs_max[24], job_text[24];
	const char *params[9];
	char *notify = NULL, bad_rev[64];
	PGresult *r;
	size_t i;
	int error = -1;

	notify = job->notify != NULL ? json_dumps(job->notify, JSON_COMPACT)
				     : strdup("[]");
	if (notify == NULL)
		return -1;
	snprintf(repo_id, sizeof(repo_id), "%lld", job->repo_id);
	snprintf(testcase_id, sizeof(testcase_id), "%lld", job->testcase_id);
	snprintf(token, sizeof(token), "%lld", job->token_id);
	snprintf(runs_min, sizeof(runs_min), "%lld", job->runs_min);
	snprintf(runs_max, sizeof(runs_max), "%lld", job->runs_max);
	/* bad_rev names what was tested on top of the base */
	snprintf(bad_rev, sizeof(bad_rev), "%zu patch%s", count,
		 count == 1 ? "" : "es");
	params[0] = repo_id;
	params[1] = testcase_id;
	params[2] = job->base_rev;
	params[3] = bad_rev;
	params[4] = job->base_sha;
	params[5] = patches[count - 1].sha;
	params[6] = notify;
	params[7] = job->token_id > 0 ? token : NULL;
	params[8] = job->runs_min > 0 ? runs_min : NULL;
	r = db_exec(conn,
		    "INSERT INTO jobs (kind, repo_id, testcase_id, good_rev,"
		    " bad_rev, good_sha, bad_sha, notify, created_by,"
		    " runs_min, runs_max, group_name) VALUES ('patch', $1,"
		    " $2, $3, $4, $5, $6, $7, $8, $9, $10, (SELECT"
		    " group_name FROM testcases WHERE id = $2)) RETURNING id",
		    10,
		    (const char *const[]){
			params[0], params[1], params[2], params[3], params[4],
			params[5], params[6], params[7], params[8],
			job->runs_max > 0 ? runs_max : NULL});
	if (r == NULL)
		goto out;
	*job_id = db_int(r, 0, 0);
	PQclear(r);
	snprintf(job_text, sizeof(job_text), "%lld", *job_id);
	if (insert_commit(conn, job_text, 0, job->base_sha, job->base_subject,
			  job->base_author_name, job->base_author_email) < 0)
		goto out;
	for (i = 0; i < count; i++)
		if (insert_commit(conn, job_text, i + 1, patches[i].sha,
				  patches[i].title, patches[i].author_name,
				  patches[i].author_email) < 0 ||
		    insert_patch(conn, job_text, i + 1, &patches[i]) < 0)
			goto out;
	error = 0;
out:
	free(notify);
	return error;
}

int store_patches_series_json(json_t **out, PGconn *conn, long long job_id)
{
	char id[24];
	const char *params[1] = {id};
	json_t *list;
	PGresult *r;
	int i;

	*out = NULL;
	snprintf(id, sizeof(id), "%lld", job_id);
	r = db_exec_prepared(
	    conn,
	    "SELECT c.sha, encode(p.diff, 'hex'), p.message,"
	    " p.author_name, p.author_email, p.date, p.date_offset,"
	    " (SELECT sha FROM job_commits WHERE job_id = $1"
	    " AND idx = 0)"
	    " FROM job_patches p JOIN job_commits c"
	    " ON c.job_id = p.job_id AND c.idx = p.idx"
	    " WHERE p.job_id = $1 ORDER BY p.idx",
	    1, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	list = json_array();
	for (i = 0; i < PQntuples(r); i++)
		json_array_append_new(
		    list, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I}", "commit",
				    db_text(r, i, 0), "diff", db_text(r, i, 1),
				    "message", db_text(r, i, 2), "author_name",
				    db_text(r, i, 3), "author_email",
				    db_text(r, i, 4), "date",
				    (json_int_t)db_int(r, i, 5), "date_offset",
				    (json_int_t)db_int(r, i, 6)));
	*out =
	    json_pack("{s:s,s:o}", "base", db_text(r, 0, 7), "patches", list);
	PQclear(r);
	return *out != NULL ? 0 : -1;
}

/* A nullable text column as JSON. */
static json_t *text_or_null(const PGresult *r, int row, int col)
{
	return db_is_null(r, row, col) ? json_null()
				       : json_string(db_text(r, row, col));
}

int store_patches_reply_json(json_t **out, PGconn *conn, long long job_id,
			     size_t idx)
{
	char id[24], idx_text[24];
	const char *params[2] = {id, idx_text};
	json_error_t e;
	PGresult *r;

	*out = NULL;
	snprintf(id, sizeof(id), "%lld", job_id);
	snprintf(idx_text, sizeof(idx_text), "%zu", idx);
	r = db_exec(conn,
		    "SELECT p.message_id, p.in_reply_to, p.subject, p.link,"
		    " p.recipients, b.sha, rp.url, p.idx"
		    " FROM job_patches p JOIN jobs j ON j.id = p.job_id"
		    " JOIN repos rp ON rp.id = j.repo_id"
		    " JOIN job_commits b ON b.job_id = j.id AND b.idx = 0"
		    " WHERE p.job_id = $1 AND (p.idx = $2 OR $2 = 0)"
		    " ORDER BY p.idx DESC LIMIT 1",
		    2, params);
	if (r == NULL)
		return -1;
	if (PQntuples(r) == 1)
		*out = json_pack(
		    "{s:o,s:o,s:s,s:o,s:o,s:s,s:s,s:I}", "message_id",
		    text_or_null(r, 0, 0), "in_reply_to",
		    text_or_null(r, 0, 1), "subject", db_text(r, 0, 2), "link",
		    text_or_null(r, 0, 3), "recipients",
		    json_loads(db_text(r, 0, 4), 0, &e), "base",
		    db_text(r, 0, 5), "repo_url", db_text(r, 0, 6), "number",
		    (json_int_t)db_int(r, 0, 7));
	PQclear(r);
	return 0;
}

int store_patches_list_json(json_t **out, PGconn *conn, long long job_id)
{
	char id[24];
	const char *params[1] = {id};
	PGresult *r;
	int i;

	snprintf(id, sizeof(id), "%lld", job_id);
	r = db_exec(conn,
		    "SELECT p.idx, c.sha, p.subject, p.message_id,"
		    " p.author_name, p.author_email"
		    " FROM job_patches p JOIN job_commits c"
		    " ON c.job_id = p.job_id AND c.idx = p.idx"
		    " WHERE p.job_id = $1 ORDER BY p.idx",
		    1, params);
	if (r == NULL)
		return -1;
	*out = json_array();
	for (i = 0; i < PQntuples(r); i++)
		json_array_append_new(
		    *out,
		    json_pack("{s:I,s:s,s:s,s:o,s:s,s:s}", "index",
			      (json_int_t)db_int(r, i, 0), "commit",
			      db_text(r, i, 1), "subject", db_text(r, i, 2),
			      "message_id", text_or_null(r, i, 3),
			      "author_name", db_text(r, i, 4), "author_email",
			      db_text(r, i, 5)));
	PQclear(r);
	return 0;
}

int store_patches_names(json_t **out, PGconn *conn, bool testcases)
{
	PGresult *r =
	    db_exec(conn,
		    testcases ? "SELECT name FROM testcases"
				" WHERE deleted_at IS NULL ORDER BY name"
			      : "SELECT name FROM repos"
				" WHERE deleted_at IS NULL ORDER BY name",
		    0, NULL);
	int i;

	if (r == NULL)
		return -1;
	*out = json_array();
	for (i = 0; i < PQntuples(r); i++)
		json_array_append_new(*out, json_string(db_text(r, i, 0)));
	PQclear(r);
	return 0;
}
