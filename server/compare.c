#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "gitrepo.h"
#include "log.h"
#include "rechecks.h"
#include "server.h"
#include "store/store_compare.h"
#include "utf8.h"

bool compare_is_request(json_t *body)
{
	const char *kind = json_string_value(json_object_get(body, "kind"));

	return kind != NULL && strcmp(kind, "compare") == 0;
}

void compare_request_from_json(struct jobs_request *out, json_t *body,
			       struct field_errors *errors)
{
	json_t *list = json_object_get(body, "revisions"), *v;
	size_t i, n;

	if (list == NULL || json_is_null(list)) {
		fields_add(errors, "revisions", 400, "missing_field",
			   "field 'revisions' is required: a list of %d to "
			   "%d revisions",
			   COMPARE_LEAST, COMPARE_MOST);
		return;
	}
	n = json_array_size(list);
	if (!json_is_array(list) || n < COMPARE_LEAST || n > COMPARE_MOST) {
		fields_add(errors, "revisions", 422, "invalid_field",
			   "field 'revisions' must list %d to %d revisions "
			   "(it lists %zu)",
			   COMPARE_LEAST, COMPARE_MOST,
			   json_is_array(list) ? n : (size_t)0);
		return;
	}
	json_array_foreach(list, i, v)
	{
		const char *rev = json_string_value(v);

		if (rev == NULL || *rev == '\0' ||
		    strlen(rev) != json_string_length(v) ||
		    strlen(rev) > 256) {
			fields_add(errors, "revisions", 400, "invalid_field",
				   "revision %zu must be a non-empty string "
				   "of at most 256 bytes",
				   i + 1);
			return;
		}
		out->revisions[i] = rev;
		out->labels[i] = rev;
		/* A SHA names its column by its first 12 digits. */
		if (strlen(rev) > 12 &&
		    strspn(rev, "0123456789abcdef") == strlen(rev)) {
			snprintf(out->label_room[i],
				 sizeof(out->label_room[i]), "%.12s", rev);
			out->labels[i] = out->label_room[i];
		}
	}
	out->revision_count = n;
	out->good = out->revisions[0];
	out->bad = out->revisions[n - 1];
}

/* Subject and author of commit `oid` into `c`, as UTF-8. */
static int describe(struct gitrepo_commit *c, git_repository *repo,
		    const git_oid *oid)
{
	git_commit *commit = NULL;
	const git_signature *author;
	const char *summary;
	int rc = -1;

	if (git_commit_lookup(&commit, repo, oid) < 0)
		return -1;
	git_oid_tostr(c->sha, sizeof(c->sha), oid);
	summary = git_commit_summary(commit);
	author = git_commit_author(commit);
	if (utf8_sanitize(&c->subject, summary ? summary : "",
			  summary ? strlen(summary) : 0) == 0 &&
	    utf8_sanitize(&c->author_name, author->name,
			  strlen(author->name)) == 0 &&
	    utf8_sanitize(&c->author_email, author->email,
			  strlen(author->email)) == 0)
		rc = 0;
	git_commit_free(commit);
	return rc;
}

void compare_resolve(struct gitrepo_commit **commits, size_t *count,
		     git_repository *repo, const struct jobs_request *request,
		     struct field_errors *errors)
{
	const char *key =
	    request->revision_key ? request->revision_key : "revisions";
	size_t n = request->revision_count, i, k;
	struct gitrepo_commit *list = calloc(n, sizeof(*list));
	git_oid oids[COMPARE_MOST];
	bool ok = list != NULL;
	char *err = NULL;

	*commits = NULL;
	*count = 0;
	for (i = 0; ok && i < n; i++) {
		if (gitrepo_resolve(&oids[i], repo, request->revisions[i],
				    request->repo, &err) < 0) {
			fields_add(errors, key, 422, "unknown_revision", "%s",
				   err);
			fields_set_value(errors, request->revisions[i]);
			free(err);
			err = NULL;
			ok = false;
			break;
		}
		for (k = 0; k < i; k++)
			if (git_oid_equal(&oids[k], &oids[i])) {
				fields_add(errors, key, 422, "invalid_field",
					   "revisions '%s' and '%s' name the "
					   "same commit",
					   request->revisions[k],
					   request->revisions[i]);
				ok = false;
			}
		if (!ok)
			break;
		if (describe(&list[i], repo, &oids[i]) < 0) {
			fields_add(errors, key, 500, "internal",
				   "cannot read revision '%s'",
				   request->revisions[i]);
			ok = false;
			break;
		}
		/* A chain, as the scheduler loads every job's candidates;
		 * the engine never bisects it (compare_advance). */
		if (i > 0) {
			list[i].parents = malloc(sizeof(*list[i].parents));
			if (list[i].parents == NULL) {
				ok = false;
				break;
			}
			list[i].parents[0] = i - 1;
			list[i].parent_count = 1;
		}
	}
	if (!ok) {
		gitrepo_commits_free(list, n);
		if (fields_ok(errors))
			fields_add(errors, "", 500, "internal",
				   "out of memory");
		return;
	}
	*commits = list;
	*count = n;
}

int compare_mark(PGconn *conn, long long job_id,
		 const struct jobs_request *request)
{
	const char *labels[COMPARE_MOST];
	size_t i;

	for (i = 0; i < request->revision_count; i++)
		labels[i] = request->labels[i] != NULL ? request->labels[i]
						       : request->revisions[i];
	return store_compare_mark(conn, job_id, request->revisions, labels,
				  request->revision_count,
				  request->retest_of) == STORE_OK
		   ? 0
		   : -1;
}

/* The engine's endpoint test of column `k` against the first: the same
 * options, without probes or a confirmation (a measurement). */
static int column_test(struct bisect_result *out, const struct sched_job *job,
		       size_t k)
{
	static const size_t first = 0;
	struct bisect_commit ends[2];
	struct bisect_options opts = job->opts;

	ends[0] = job->input[0];
	ends[0].parents = NULL;
	ends[0].parent_count = 0;
	ends[1] = job->input[k];
	ends[1].parents = &first;
	ends[1].parent_count = 1;
	opts.confirm = false;
	opts.probes = 0;
	return bisect_step(out, NULL, ends, 2, &opts);
}

/* "sha10 -10.2% regression", with the engine's reason when it gave one
 * ("the bad commit does not build"), into `buf`; its length. */
static size_t column_note(char *buf, size_t size, bool more, const char *sha,
			  const struct bisect_result *v, const char *name)
{
	const char *reason = v->reason;
	char change[32] = "", said[256];
	int n;

	/* The engine speaks of a range's good and bad ends. */
	if (reason != NULL && strncmp(reason, "the good commit ", 16) == 0) {
		snprintf(said, sizeof(said), "the first revision %s",
			 reason + 16);
		reason = said;
	} else if (reason != NULL &&
		   strncmp(reason, "the bad commit ", 15) == 0) {
		snprintf(said, sizeof(said), "it %s", reason + 15);
		reason = said;
	}
	if (isfinite(v->change_pct))
		snprintf(change, sizeof(change), " %+.1f%%", v->change_pct);
	n = snprintf(buf, size, "%s%.10s%s %s%s%s", more ? "; " : "", sha,
		     change, name, reason ? ": " : "", reason ? reason : "");
	return n < 0 ? 0 : (size_t)n;
}

/* Ends the job: each column's result, the job's verdict (regression when
 * any column regresses, improvement when one improves and none
 * regresses, no-change when every column is the same as the first, else
 * inconclusive), and the report. */
static int finish(PGconn *conn, struct sched_job *job,
		  const struct bisect_result *views, const char *base_url)
{
	struct store_compare cmp;
	size_t i, headline = job->count - 1;
	bool regression = false, improvement = false, undecided = false;
	const char *verdict;
	char message[512] = "";
	size_t used = 0;
	int rc;

	for (i = 1; i < job->count; i++) {
		const struct bisect_result *v = &views[i];
		const char *name = v->verdict == BISECT_PENDING
				       ? "inconclusive"
				       : bisect_verdict_name(v->verdict);

		if (store_compare_set_column(conn, job->id, i, name,
					     v->change_pct,
					     v->p_value) != STORE_OK)
			return -1;
		if (v->verdict == BISECT_REGRESSION && !regression) {
			regression = true;
			headline = i;
		} else if (v->verdict == BISECT_IMPROVEMENT && !regression &&
			   !improvement) {
			improvement = true;
			headline = i;
		} else if (v->verdict != BISECT_NO_CHANGE &&
			   v->verdict != BISECT_REGRESSION &&
			   v->verdict != BISECT_IMPROVEMENT) {
			undecided = true;
		}
		if (used < sizeof(message))
			used +=
			    column_note(message + used, sizeof(message) - used,
					i > 1, job->commits[i].sha, v, name);
	}
	verdict = regression	? "regression"
		  : improvement ? "improvement"
		  : undecided	? "inconclusive"
				: "no-change";
	if (store_compare_finish(conn, job->id, verdict,
				 views[headline].change_pct,
				 views[headline].p_value, message) != STORE_OK)
		return -1;
	log_info("job %lld: compare %s (%s)", job->id, verdict, message);
	/* A re-check's outcome goes to its regression, as a reply there. */
	rc = rechecks_finish(conn, job);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	rc = store_compare_get(&cmp, conn, job->id);
	if (rc != STORE_OK)
		return -1;
	rc = compare_report_queue(conn, job, &cmp, base_url);
	store_compare_clear(&cmp);
	return rc;
}

int compare_advance(PGconn *conn, struct sched_job *job, const char *base_url)
{
	struct bisect_result views[COMPARE_MOST];
	size_t wanted[COMPARE_MOST] = {0};
	struct store_compare cmp;
	size_t i, k;
	int rc;

	rc = store_compare_get(&cmp, conn, job->id);
	if (rc != STORE_OK)
		return rc == STORE_NOT_FOUND ? 0 : -1;
	store_compare_clear(&cmp);
	if (job->count < COMPARE_LEAST || job->count > COMPARE_MOST)
		return -1;
	memset(views, 0, sizeof(views));
	for (k = 1; k < job->count; k++) {
		struct bisect_result *v = &views[k];

		if (column_test(v, job, k) < 0)
			return -1;
		/* No change is measured without runs on both sides. */
		if (job->input[0].value_count == 0 ||
		    job->input[k].value_count == 0)
			v->change_pct = v->p_value = NAN;
		if (v->verdict != BISECT_PENDING)
			continue;
		for (i = 0; i < v->request_count; i++) {
			size_t at = v->requests[i].commit == 0 ? 0 : k;

			if (v->requests[i].runs > wanted[at])
				wanted[at] = v->requests[i].runs;
		}
	}
	memset(&job->result, 0, sizeof(job->result));
	for (k = 0; k < job->count; k++) {
		struct bisect_request *q;

		if (wanted[k] == 0)
			continue;
		q = &job->result.requests[job->result.request_count++];
		q->commit = k;
		q->runs = wanted[k];
		q->purpose = BISECT_SEARCH;
	}
	if (job->result.request_count == 0)
		return finish(conn, job, views, base_url) < 0 ? -1 : 1;
	job->result.verdict = BISECT_PENDING;
	job->result.interleave = true;
	return 0;
}

/* Mean and population standard deviation of the KPI runs of column k. */
static void column_stats(const struct sched_job *job, size_t k, double *mean,
			 double *sd)
{
	const struct bisect_commit *c = &job->input[k];
	double sum = 0, squares = 0;
	size_t i;

	*mean = *sd = NAN;
	if (c->value_count == 0)
		return;
	for (i = 0; i < c->value_count; i++)
		sum += c->values[i];
	*mean = sum / (double)c->value_count;
	for (i = 0; i < c->value_count; i++)
		squares += (c->values[i] - *mean) * (c->values[i] - *mean);
	*sd = sqrt(squares / (double)c->value_count);
}

static json_t *number_or_null(double value)
{
	return isfinite(value) ? json_real(value) : json_null();
}

int compare_json_add(PGconn *conn, json_t *out, const struct sched_job *job)
{
	struct store_compare cmp;
	char kind[16];
	json_t *list;
	double base_mean, base_sd;
	size_t i;
	int rc;

	rc = store_compare_kind(conn, job->id, kind);
	if (rc != STORE_OK)
		return -1;
	json_object_set_new(out, "kind", json_string(kind));
	if (strcmp(kind, "compare") != 0)
		return 0;
	rc = store_compare_get(&cmp, conn, job->id);
	if (rc != STORE_OK)
		return rc == STORE_NOT_FOUND ? 0 : -1;
	column_stats(job, 0, &base_mean, &base_sd);
	list = json_array();
	for (i = 0; i < cmp.count && i < job->count; i++) {
		const struct store_compare_column *c = &cmp.columns[i];
		double mean, sd, change = NAN;

		column_stats(job, i, &mean, &sd);
		/* the stored change once decided, the means' while running */
		if (i > 0)
			change =
			    isfinite(c->change_pct) ? c->change_pct
			    : isfinite(mean) && isfinite(base_mean) &&
				    base_mean != 0
				? 100.0 * (mean - base_mean) / fabs(base_mean)
				: NAN;
		json_array_append_new(
		    list,
		    json_pack(
			"{s:I,s:s,s:s,s:s,s:s,s:I,s:o,s:o,s:o,s:o,s:o}",
			"index", (json_int_t)i, "label", c->label, "revision",
			c->revision, "sha", job->commits[i].sha, "subject",
			job->commits[i].subject, "runs",
			(json_int_t)job->input[i].value_count, "mean",
			number_or_null(mean), "sd", number_or_null(sd),
			"change_pct", number_or_null(change), "p_value",
			number_or_null(c->p_value), "verdict",
			c->verdict ? json_string(c->verdict) : json_null()));
	}
	json_object_set_new(out, "revisions", list);
	json_object_set_new(out, "retest_of",
			    cmp.retest_of > 0
				? json_integer((json_int_t)cmp.retest_of)
				: json_null());
	store_compare_clear(&cmp);
	return 0;
}

int compare_refuse_rerun(PGconn *conn, long long job_id,
			 struct field_errors *errors)
{
	char kind[16];
	int rc = store_compare_kind(conn, job_id, kind);

	if (rc == STORE_FAILED)
		return JOBS_DB_FAILED;
	if (rc != STORE_OK || strcmp(kind, "compare") != 0)
		return 0;
	fields_add(errors, "", 409, "not_a_bisection",
		   "job %lld is a compare job: it cannot be re-run as a "
		   "bisection; submit the comparison again",
		   job_id);
	return JOBS_REFUSED;
}

int compare_source_load(struct store_compare_source *out, PGconn *conn,
			long long job_id, struct field_errors *errors)
{
	int rc = store_compare_source(out, conn, job_id);

	if (rc == STORE_FAILED)
		return JOBS_DB_FAILED;
	if (rc != STORE_OK) {
		fields_add(errors, "", 404, "not_found", "no job %lld",
			   job_id);
		return JOBS_REFUSED;
	}
	return 0;
}

void compare_of_culprit(struct jobs_request *out,
			const struct store_compare_source *source,
			const char *revision, const char *label)
{
	json_error_t e;

	out->repo = source->repo;
	out->testcase = source->testcase;
	out->group = source->group;
	out->revisions[0] = source->parent_sha;
	out->revisions[1] = source->culprit_sha;
	out->revisions[2] = revision;
	out->labels[0] = "base";
	out->labels[1] = "culprit";
	out->labels[2] = label;
	out->revision_count = 3;
	out->revision_key = label;
	out->good = source->parent_sha;
	out->bad = revision;
	out->notify = json_loads(source->notify, JSON_DECODE_ANY, &e);
	if (json_is_null(out->notify)) {
		json_decref(out->notify);
		out->notify = NULL;
	}
}

int compare_retest(long long *out_id, PGconn *conn, long long job_id,
		   const char *fix, long long token_id,
		   struct field_errors *errors)
{
	struct store_compare_source source;
	struct jobs_request request = {0};
	int rc;

	rc = compare_source_load(&source, conn, job_id, errors);
	if (rc != 0)
		return rc;
	rc = JOBS_REFUSED;
	if (strcmp(source.kind, "bisect") != 0) {
		fields_add(errors, "", 409, "not_a_bisection",
			   "job %lld is a %s job: only a bisection's culprit "
			   "can be re-tested",
			   job_id, source.kind);
		goto out;
	}
	if (strcmp(source.state, "done") != 0 || source.culprit_sha == NULL ||
	    source.parent_sha == NULL) {
		fields_add(errors, "", 409, "no_culprit",
			   "job %lld has no culprit to re-test a fix of (it "
			   "is %s%s%s)",
			   job_id, source.state,
			   source.verdict ? ", verdict " : "",
			   source.verdict ? source.verdict : "");
		goto out;
	}
	if (fix == NULL || *fix == '\0') {
		fields_add(errors, "fix", 400, "missing_field",
			   "field 'fix' is required: the revision of the fix");
		goto out;
	}
	compare_of_culprit(&request, &source, fix, "fix");
	request.retest_of = job_id;
	rc = jobs_create(out_id, conn, &request, token_id, errors);
	if (rc == 0)
		log_info("job %lld: re-test of fix %s for job %lld", *out_id,
			 fix, job_id);
	json_decref(request.notify);
out:
	store_compare_source_clear(&source);
	return rc;
}

void compare_api_make(struct http_response *res, struct http_request *req,
		      const char *field, const char *meaning,
		      compare_maker make)
{
	struct field_errors errors;
	long long job_id, new_id;
	json_t *body, *revision, *job;
	PGconn *conn;
	int rc;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	body = http_json_body(res, req);
	if (body == NULL)
		return;
	fields_init(&errors);
	conn = db_conn();
	if (conn == NULL) {
		http_db_failed(res);
		goto out;
	}
	revision = json_object_get(body, field);
	if (revision != NULL && !json_is_null(revision) &&
	    (!json_is_string(revision) ||
	     strlen(json_string_value(revision)) !=
		 json_string_length(revision))) {
		http_error(res, 400, "invalid_field",
			   "field '%s' must be a string: %s", field, meaning);
		goto out;
	}
	rc = make(&new_id, conn, job_id, json_string_value(revision),
		  req->token_id, &errors);
	if (rc == 0)
		rc = jobs_get(&job, conn, new_id, &errors);
	if (rc != 0) {
		if (rc == JOBS_DB_FAILED || !fields_answer(res, &errors))
			http_db_failed(res);
		goto out;
	}
	if (asprintf(&res->location, "/api/v1/jobs/%lld", new_id) < 0)
		res->location = NULL;
	http_json(res, 201, job);
out:
	json_decref(body);
}

void compare_api_retest(struct http_response *res, struct http_request *req)
{
	compare_api_make(res, req, "fix", "the revision of the fix",
			 compare_retest);
}
