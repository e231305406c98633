#include "rechecks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "db.h"
#include "jobs.h"
#include "log.h"
#include "recheck.h"
#include "report.h"
#include "reportjob.h"
#include "server.h"
#include "stats.h"
#include "store/store_compare.h"
#include "store/store_rechecks.h"
#include "strbuf.h"

/* The level at which a re-check decides. */
#define RECHECK_ALPHA 0.01
/* Seconds between looks at the testcases' schedules. */
#define RECHECK_SCHEDULE_TICK_S 5
/* Re-checks started by one look. */
#define RECHECK_SCHEDULE_BATCH 8
/* The shortest and longest schedule a testcase may set, seconds. */
#define RECHECK_INTERVAL_MIN_S 10
#define RECHECK_INTERVAL_MAX_S (90 * 86400)

/* What the re-check's compare job is linked to, in its transaction. */
struct link {
	long long job_id;
	const char *branch;
};

static int link_recheck(PGconn *conn, long long compare_job_id, void *arg)
{
	const struct link *l = arg;

	return store_rechecks_add(conn, l->job_id, compare_job_id,
				  l->branch) == STORE_OK
		   ? 0
		   : -1;
}

/* Refuses a source that is no finished regression with a culprit. */
static bool source_ok(const struct store_compare_source *source,
		      long long job_id, struct field_errors *errors)
{
	if (strcmp(source->kind, "bisect") != 0) {
		fields_add(errors, "", 409, "not_a_bisection",
			   "job %lld is a %s job: only a bisection's "
			   "regression can be re-checked",
			   job_id, source->kind);
		return false;
	}
	if (strcmp(source->state, "done") != 0 || source->verdict == NULL ||
	    strcmp(source->verdict, "regression") != 0 ||
	    source->culprit_sha == NULL || source->parent_sha == NULL) {
		fields_add(errors, "", 409, "no_regression",
			   "job %lld has no regression with a culprit to "
			   "re-check (it is %s%s%s)",
			   job_id, source->state,
			   source->verdict ? ", verdict " : "",
			   source->verdict ? source->verdict : "");
		return false;
	}
	return true;
}

int rechecks_create(long long *out_id, PGconn *conn, long long job_id,
		    const char *head, long long token_id,
		    struct field_errors *errors)
{
	struct store_compare_source source;
	struct jobs_request request = {0};
	struct link link = {job_id, NULL};
	int rc;

	rc = compare_source_load(&source, conn, job_id, errors);
	if (rc != 0)
		return rc;
	rc = JOBS_REFUSED;
	if (!source_ok(&source, job_id, errors))
		goto out;
	if (head == NULL || *head == '\0')
		head = source.bad_rev;
	link.branch = head;
	compare_of_culprit(&request, &source, head, "head");
	request.within = link_recheck;
	request.within_arg = &link;
	rc = jobs_create(out_id, conn, &request, token_id, errors);
	if (rc == 0)
		log_info("job %lld: re-check of job %lld on %s", *out_id,
			 job_id, head);
	json_decref(request.notify);
out:
	store_compare_source_clear(&source);
	return rc;
}

void rechecks_api_create(struct http_response *res, struct http_request *req)
{
	compare_api_make(res, req, "head", "the revision to re-check on",
			 rechecks_create);
}

/* The value of header `name` in the header block of `message` (folded
 * lines unfolded), malloc'd; NULL when absent. */
static char *header_value(const char *message, const char *name)
{
	size_t n = strlen(name);
	const char *p = message;
	struct strbuf value = STRBUF_INIT;
	char *out = NULL;
	size_t len;

	while (*p != '\0' && *p != '\r' && *p != '\n') {
		const char *eol = strchr(p, '\n');
		size_t line = eol != NULL ? (size_t)(eol - p) : strlen(p);

		if (line > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 1;

			strbuf_appendn(&value, v, line - n - 1);
			p = eol != NULL ? eol + 1 : p + line;
			while (*p == ' ' || *p == '\t') {
				eol = strchr(p, '\n');
				line = eol != NULL ? (size_t)(eol - p)
						   : strlen(p);
				strbuf_appendn(&value, p, line);
				p = eol != NULL ? eol + 1 : p + line;
			}
			if (strbuf_finish(&out, &len, &value) < 0)
				return NULL;
			/* Trim blanks and a CR from either end. */
			while (len > 0 &&
			       (out[len - 1] == '\r' || out[len - 1] == ' '))
				out[--len] = '\0';
			len = strspn(out, " \t");
			memmove(out, out + len, strlen(out + len) + 1);
			return out;
		}
		p = eol != NULL ? eol + 1 : p + line;
	}
	strbuf_clear(&value);
	return NULL;
}

/* The body of the reply: the outcome, the three revisions' means. */
static char *reply_body(const struct sched_job *job,
			const struct store_recheck *rc,
			enum recheck_verdict verdict)
{
	static const char *const labels[3] = {"parent of the culprit",
					      "culprit", "head"};
	struct strbuf b = STRBUF_INIT;
	char *out = NULL;
	size_t len, k;
	double base =
	    stats_mean(job->input[0].values, job->input[0].value_count);

	strbuf_printf(&b,
		      "Hello,\n\nstatbisect re-checked the regression of job "
		      "%lld on a newer head of %s:\n\n  %s on %s %.12s\n\n",
		      rc->job_id, rc->branch, recheck_verdict_name(verdict),
		      rc->branch, rc->head_sha);
	for (k = 0; k < 3 && k < job->count; k++) {
		const struct bisect_commit *c = &job->input[k];
		double mean = c->value_count > 0
				  ? stats_mean(c->values, c->value_count)
				  : NAN;

		strbuf_printf(&b, "  %.12s  %-22s", job->commits[k].sha,
			      labels[k]);
		if (c->value_count == 0)
			strbuf_printf(&b, "  no measurement\n");
		else if (k == 0)
			strbuf_printf(&b, "  %.6g (%zu runs)\n", mean,
				      c->value_count);
		else
			strbuf_printf(&b, "  %.6g (%zu runs) %+.1f%%\n", mean,
				      c->value_count,
				      100.0 * (mean - base) / fabs(base));
	}
	strbuf_printf(&b,
		      "\nThe comparison: %s/jobs/%lld\nThe regression: "
		      "%s/jobs/%lld\n\n-- \nstatbisect robot\n",
		      server_config.base_url, job->id, server_config.base_url,
		      rc->job_id);
	return strbuf_finish(&out, &len, &b) < 0 ? NULL : out;
}

/* Queues the reply in the thread of the regression's last report. */
static void queue_reply(PGconn *conn, const struct sched_job *job,
			const struct store_recheck *rc, const char *body)
{
	char *recipients_text = NULL, *message = NULL, *subject = NULL;
	char *original_subject = NULL, *original_id = NULL;
	const char *to[64];
	json_t *recipients = NULL, *v;
	size_t count = 0, i;

	if (store_rechecks_last_report(&recipients_text, &message, conn,
				       rc->job_id) != STORE_OK)
		goto out; /* nobody was told of the regression */
	recipients = json_loads(recipients_text, 0, NULL);
	json_array_foreach(recipients, i, v) if (count < 64) to[count++] =
	    json_string_value(v);
	original_subject = header_value(message, "Subject");
	original_id = header_value(message, "Message-ID");
	if (count == 0)
		goto out;
	if (original_subject == NULL || strstr(original_subject, "=?"))
		subject = strdup("Re: statbisect regression re-checked");
	else if (asprintf(&subject, "Re: %s", original_subject) < 0)
		subject = NULL;
	if (subject == NULL ||
	    reportjob_queue_mail(conn, rc->job_id, to, count, subject,
				 original_id, body) < 0)
		log_warn("job %lld: the re-check's reply could not be queued",
			 job->id);
out:
	json_decref(recipients);
	free(recipients_text);
	free(message);
	free(subject);
	free(original_subject);
	free(original_id);
}

int rechecks_finish(PGconn *conn, const struct sched_job *job)
{
	struct store_recheck rc;
	struct store_compare cmp;
	struct recheck_numbers numbers = {NAN, NAN, NAN};
	enum recheck_verdict verdict;
	char *body;
	int status = store_rechecks_of_compare(&rc, conn, job->id);

	if (status == STORE_NOT_FOUND)
		return 0;
	if (status != STORE_OK || job->count < 3 ||
	    store_compare_get(&cmp, conn, job->id) != STORE_OK)
		return -1;
	/* The engine's endpoint test decided each column against the
	 * parent; the numbers only describe the head. */
	verdict = cmp.count >= 3 ? recheck_decide(cmp.columns[1].verdict,
						  cmp.columns[2].verdict)
				 : RECHECK_INCONCLUSIVE;
	store_compare_clear(&cmp);
	recheck_measure(&numbers, job->input[0].values,
			job->input[0].value_count, job->input[1].values,
			job->input[1].value_count, job->input[2].values,
			job->input[2].value_count, job->opts.higher_is_better);
	if (store_rechecks_finish(conn, rc.id, recheck_verdict_name(verdict),
				  numbers.change_pct,
				  numbers.p_worse) != STORE_OK)
		return -1;
	log_info("job %lld: %s on %s %.12s (job %lld, %+.1f%%)", rc.job_id,
		 recheck_verdict_name(verdict), rc.branch, rc.head_sha,
		 job->id, numbers.change_pct);
	body = reply_body(job, &rc, verdict);
	if (body != NULL)
		queue_reply(conn, job, &rc, body);
	free(body);
	return 1;
}

int rechecks_json_add(PGconn *conn, json_t *out, long long job_id)
{
	json_t *list;

	if (store_rechecks_json(&list, conn, job_id) != STORE_OK)
		return -1;
	json_object_set_new(out, "rechecks", list);
	return 0;
}

void rechecks_schedule(PGconn *conn)
{
	static time_t last;
	long long due[RECHECK_SCHEDULE_BATCH], id;
	struct field_errors errors;
	size_t count = 0, i;
	time_t now = time(NULL);

	if (now - last < RECHECK_SCHEDULE_TICK_S)
		return;
	last = now;
	if (store_rechecks_due(due, RECHECK_SCHEDULE_BATCH, &count, conn) !=
	    STORE_OK)
		return;
	for (i = 0; i < count; i++) {
		if (store_rechecks_tried(conn, due[i]) != STORE_OK)
			return;
		fields_init(&errors);
		if (rechecks_create(&id, conn, due[i], NULL, 0, &errors) != 0)
			log_info("job %lld: no scheduled re-check (%s)",
				 due[i],
				 errors.count > 0 ? errors.items[0].message
						  : "database failure");
	}
}

void rechecks_api_schedule(struct http_response *res, struct http_request *req)
{
	json_t *body = http_json_body(res, req), *v;
	long long interval = 0;
	PGconn *conn = db_conn();
	int rc;

	if (body == NULL)
		return;
	v = json_object_get(body, "interval_s");
	if (v != NULL && !json_is_null(v) &&
	    (!json_is_integer(v) ||
	     (json_integer_value(v) != 0 &&
	      (json_integer_value(v) < RECHECK_INTERVAL_MIN_S ||
	       json_integer_value(v) > RECHECK_INTERVAL_MAX_S)))) {
		http_error(res, 400, "invalid_field",
			   "'interval_s' is 0 or null (no schedule), or %d to "
			   "%d seconds",
			   RECHECK_INTERVAL_MIN_S, RECHECK_INTERVAL_MAX_S);
		goto out;
	}
	if (json_is_integer(v))
		interval = json_integer_value(v);
	rc = conn == NULL
		 ? STORE_FAILED
		 : store_rechecks_set_interval(conn, req->params[0], interval);
	if (rc == STORE_NOT_FOUND)
		http_error(res, 404, "not_found", "no testcase '%s'",
			   req->params[0]);
	else if (rc != STORE_OK)
		http_db_failed(res);
	else
		http_json(res, 200,
			  json_pack("{s:s,s:o}", "testcase", req->params[0],
				    "interval_s",
				    interval > 0 ? json_integer(interval)
						 : json_null()));
out:
	json_decref(body);
}
