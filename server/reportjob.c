#include "reportjob.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "report.h"
#include "server.h"
#include "stats.h"

/* Every metric's values on the two sides being compared. */
struct metric_series {
	char *name;
	double *side[2];
	size_t count[2];
	size_t capacity[2];
};

struct metric_table {
	struct metric_series *series;
	size_t count, capacity;
};

static void table_clear(struct metric_table *t)
{
	size_t i;

	for (i = 0; i < t->count; i++) {
		free(t->series[i].name);
		free(t->series[i].side[0]);
		free(t->series[i].side[1]);
	}
	free(t->series);
	memset(t, 0, sizeof(*t));
}

static int table_add(struct metric_table *t, const char *name, int side,
		     double value)
{
	struct metric_series *s = NULL;
	size_t i;

	for (i = 0; i < t->count; i++) {
		if (strcmp(t->series[i].name, name) == 0) {
			s = &t->series[i];
			break;
		}
	}
	if (s == NULL) {
		if (t->count == t->capacity) {
			size_t cap = t->capacity ? t->capacity * 2 : 16;
			void *grown = realloc(t->series, cap * sizeof(*s));

			if (grown == NULL)
				return -1;
			t->series = grown;
			t->capacity = cap;
		}
		s = &t->series[t->count];
		memset(s, 0, sizeof(*s));
		s->name = strdup(name);
		if (s->name == NULL)
			return -1;
		t->count++;
	}
	if (s->count[side] == s->capacity[side]) {
		size_t cap = s->capacity[side] ? s->capacity[side] * 2 : 8;
		double *grown = realloc(s->side[side], cap * sizeof(double));

		if (grown == NULL)
			return -1;
		s->side[side] = grown;
		s->capacity[side] = cap;
	}
	s->side[side][s->count[side]++] = value;
	return 0;
}

/* Loads every metric of the successful runs of two commits. */
static int load_metrics(struct metric_table *t, PGconn *conn,
			long long job_id, size_t base_idx, size_t new_idx)
{
	char id[24], a[24], b[24];
	const char *params[3] = {id, a, b};
	PGresult *r;
	int i;

	snprintf(id, sizeof(id), "%lld", job_id);
	snprintf(a, sizeof(a), "%zu", base_idx);
	snprintf(b, sizeof(b), "%zu", new_idx);
	r = db_exec(conn,
		    "SELECT commit_idx, metrics FROM runs WHERE job_id = $1"
		    " AND commit_idx IN ($2, $3) AND kpi IS NOT NULL"
		    " ORDER BY id",
		    3, params);
	if (r == NULL)
		return -1;
	for (i = 0; i < PQntuples(r); i++) {
		int side = (size_t)db_int(r, i, 0) == base_idx ? 0 : 1;
		json_t *metrics = json_loads(db_text(r, i, 1), 0, NULL);
		const char *name;
		json_t *value;

		json_object_foreach(metrics, name, value)
		{
			if (json_is_number(value) &&
			    table_add(t, name, side, json_number_value(value)) <
				    0) {
				json_decref(metrics);
				PQclear(r);
				return -1;
			}
		}
		json_decref(metrics);
	}
	PQclear(r);
	return 0;
}

static double minimum(const double *x, size_t n)
{
	double m = x[0];
	size_t i;

	for (i = 1; i < n; i++)
		m = x[i] < m ? x[i] : m;
	return m;
}

static double maximum(const double *x, size_t n)
{
	double m = x[0];
	size_t i;

	for (i = 1; i < n; i++)
		m = x[i] > m ? x[i] : m;
	return m;
}

/*
 * The kernel robot's rule for showing a row: at least 3 runs a side, the
 * two sets barely overlap (new minimum above the base median and new median
 * above the base maximum, or the mirror image), the medians differ by more
 * than 1%, and perf-profile rows only above 5% of cycles.
 */
static bool robot_shows(const struct metric_series *s)
{
	const double *a = s->side[0], *b = s->side[1];
	size_t na = s->count[0], nb = s->count[1];
	double med_a, med_b, ratio;

	if (na < 3 || nb < 3)
		return false;
	med_a = stats_median(a, na);
	med_b = stats_median(b, nb);
	if (!((minimum(b, nb) > med_a && med_b > maximum(a, na)) ||
	      (maximum(b, nb) < med_a && med_b < minimum(a, na))))
		return false;
	if (med_a == 0 || med_b == 0)
		return true;
	ratio = fabs(med_b / med_a);
	if (ratio < 1)
		ratio = 1 / ratio;
	if (ratio <= 1.01)
		return false;
	if (strncmp(s->name, "perf-profile", 12) == 0)
		return stats_mean(a, na) > 5 || stats_mean(b, nb) > 5;
	return true;
}

static void side_of(struct report_side *out, const double *x, size_t n)
{
	double mean = n > 0 ? stats_mean(x, n) : 0;

	out->mean = mean;
	out->runs = n;
	out->stddev_pct = n > 1 && mean != 0
				  ? 100.0 * stats_pop_sd(x, n) / fabs(mean)
				  : 0;
}

/* Rows: the KPI first, then every other metric the robot would show. */
static int build_rows(struct report_metric_row **out, size_t *count,
		      const struct metric_table *t, const char *kpi)
{
	struct report_metric_row *rows;
	size_t i, n = 0;

	rows = calloc(t->count + 1, sizeof(*rows));
	if (rows == NULL)
		return -1;
	for (i = 0; i < t->count; i++) {
		const struct metric_series *s = &t->series[i];
		bool is_kpi = strcmp(s->name, kpi) == 0;

		if (s->count[0] == 0 || s->count[1] == 0)
			continue;
		if (!is_kpi && !robot_shows(s))
			continue;
		rows[n].metric = s->name;
		side_of(&rows[n].base, s->side[0], s->count[0]);
		side_of(&rows[n].culprit, s->side[1], s->count[1]);
		if (is_kpi && n > 0) {
			struct report_metric_row first = rows[0];

			rows[0] = rows[n];
			rows[n] = first;
		}
		n++;
	}
	*out = rows;
	*count = n;
	return 0;
}

static void rfc5322_date(char *buf, size_t size)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
					   "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
					     "May", "Jun", "Jul", "Aug",
					     "Sep", "Oct", "Nov", "Dec"};
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	snprintf(buf, size, "%s, %02d %s %04d %02d:%02d:%02d +0000",
		 days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
		 tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void message_id(char *buf, size_t size, long long job_id)
{
	unsigned char raw[8] = {0};
	char host[128] = "localhost";
	unsigned long long tag = 0;
	size_t i;

	if (getrandom(raw, sizeof(raw), 0) < 0)
		raw[0] = (unsigned char)time(NULL);
	for (i = 0; i < sizeof(raw); i++)
		tag = tag << 8 | raw[i];
	if (gethostname(host, sizeof(host) - 1) < 0 || host[0] == '\0' ||
	    strpbrk(host, "<>@ \t\r\n") != NULL)
		snprintf(host, sizeof(host), "localhost");
	snprintf(buf, size, "<statbisect.job%lld.%016llx@%s>", job_id, tag,
		 host);
}

struct job_facts {
	PGresult *row;
	const char *repo, *repo_url, *web_url, *bad_rev, *testcase, *build,
		*run, *kpi;
	json_t *params, *notify;
	char *machine;
};

static int load_facts(struct job_facts *f, PGconn *conn,
		      const struct sched_job *job, size_t culprit)
{
	char id[24], idx[24];
	const char *params[2] = {id, idx};
	PGresult *r;

	snprintf(id, sizeof(id), "%lld", job->id);
	snprintf(idx, sizeof(idx), "%zu", culprit);
	f->row = db_exec(conn,
			 "SELECT rp.name, rp.url, rp.web_url, j.bad_rev,"
			 " t.name, t.build, t.run, t.kpi, t.params, j.notify"
			 " FROM jobs j JOIN repos rp ON rp.id = j.repo_id"
			 " JOIN testcases t ON t.id = j.testcase_id"
			 " WHERE j.id = $1",
			 1, params);
	if (f->row == NULL || PQntuples(f->row) != 1)
		return -1;
	f->repo = db_text(f->row, 0, 0);
	f->repo_url = db_text(f->row, 0, 1);
	f->web_url = db_text(f->row, 0, 2);
	f->bad_rev = db_text(f->row, 0, 3);
	f->testcase = db_text(f->row, 0, 4);
	f->build = db_text(f->row, 0, 5);
	f->run = db_text(f->row, 0, 6);
	f->kpi = db_text(f->row, 0, 7);
	f->params = json_loads(db_text(f->row, 0, 8), 0, NULL);
	f->notify = json_loads(db_text(f->row, 0, 9), 0, NULL);
	r = db_exec(conn,
		    "SELECT w.machine FROM runs r JOIN workers w"
		    " ON w.id = r.worker_id WHERE r.job_id = $1"
		    " AND r.commit_idx = $2 AND w.machine IS NOT NULL LIMIT 1",
		    2, params);
	if (r != NULL && PQntuples(r) == 1)
		f->machine = strdup(db_text(r, 0, 0));
	PQclear(r);
	return 0;
}

static void facts_clear(struct job_facts *f)
{
	PQclear(f->row);
	json_decref(f->params);
	json_decref(f->notify);
	free(f->machine);
}

static enum report_kind kind_of(enum bisect_verdict v)
{
	switch (v) {
	case BISECT_REGRESSION:
		return REPORT_REGRESSION;
	case BISECT_IMPROVEMENT:
		return REPORT_IMPROVEMENT;
	case BISECT_NO_CHANGE:
		return REPORT_NO_CHANGE;
	default:
		return REPORT_INCONCLUSIVE;
	}
}

/* Testcase parameters as report key/value pairs; values are printed as
 * JSON numbers or the plain string.  Storage lives in `texts`. */
static size_t collect_params(struct report_param *out, char **texts,
			     size_t max, json_t *params)
{
	const char *key;
	json_t *value;
	size_t n = 0;

	json_object_foreach(params, key, value)
	{
		if (n == max)
			break;
		texts[n] = json_is_string(value)
				   ? strdup(json_string_value(value))
				   : json_dumps(value, JSON_ENCODE_ANY);
		out[n].key = key;
		out[n].value = texts[n] != NULL ? texts[n] : "";
		n++;
	}
	return n;
}

static int insert_outbox(PGconn *conn, long long job_id, json_t *notify,
			 const char *subject, const char *message)
{
	char id[24];
	char *recipients = json_dumps(notify != NULL ? notify : json_array(),
				      JSON_COMPACT);
	const char *params[4] = {id, recipients, subject, message};
	PGresult *r;

	snprintf(id, sizeof(id), "%lld", job_id);
	if (recipients == NULL)
		return -1;
	r = db_exec(conn,
		    "INSERT INTO outbox (job_id, recipients, subject, message)"
		    " VALUES ($1, $2, $3, $4)",
		    4, params);
	free(recipients);
	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

int reportjob_queue(PGconn *conn, const struct sched_job *job,
		    const char *base_url)
{
	const struct bisect_result *res = &job->result;
	bool culprit = res->verdict == BISECT_REGRESSION ||
		       res->verdict == BISECT_IMPROVEMENT;
	size_t base_idx = culprit ? res->parent : 0;
	size_t new_idx = culprit ? res->culprit : job->count - 1;
	struct report_param params[32];
	char *param_texts[32] = {0};
	struct report_metric_row *rows = NULL;
	struct metric_table table = {0};
	struct job_facts facts = {0};
	struct report_input in = {0};
	struct report_message msg = {0};
	char *subject = NULL, *body = NULL, *message = NULL;
	char *job_url = NULL, *report_url = NULL, *commit_url = NULL;
	char *checkout = NULL;
	const char **to = NULL;
	char date[64], mid[256];
	size_t row_count = 0, i, to_count = 0;
	int error = -1;

	if (load_facts(&facts, conn, job, new_idx) < 0 ||
	    load_metrics(&table, conn, job->id, base_idx, new_idx) < 0 ||
	    build_rows(&rows, &row_count, &table, facts.kpi) < 0)
		goto out;
	if (asprintf(&job_url, "%s/jobs/%lld", base_url, job->id) < 0 ||
	    asprintf(&report_url, "%s/api/v1/jobs/%lld/report", base_url,
		     job->id) < 0 ||
	    asprintf(&checkout, "git clone %s %s && cd %s && git checkout %s",
		     facts.repo_url, facts.repo, facts.repo,
		     job->commits[new_idx].sha) < 0)
		goto out;
	if (facts.web_url != NULL) {
		const char *at = strstr(facts.web_url, "{sha}");

		if (asprintf(&commit_url, "%.*s%s%s",
			     (int)(at - facts.web_url), facts.web_url,
			     job->commits[new_idx].sha, at + 5) < 0)
			goto out;
	}
	in.robot_name = "statbisect robot";
	in.robot_email = server_config.mail_from_address;
	in.service_name = "statbisect performance bisection";
	in.service_url = base_url;
	in.tree = facts.repo;
	in.branch = facts.bad_rev;
	in.kind = kind_of(res->verdict);
	in.kpi = facts.kpi;
	in.change_pct = res->change_pct;
	in.culprit_sha = job->commits[new_idx].sha;
	in.culprit_subject = job->commits[new_idx].subject;
	in.parent_sha = job->commits[base_idx].sha;
	in.parent_subject = job->commits[base_idx].subject;
	in.commit_url = commit_url;
	in.testcase = facts.testcase;
	in.machine = facts.machine;
	in.param_count = collect_params(params, param_texts, 32, facts.params);
	in.params = params;
	in.rows = rows;
	in.row_count = row_count;
	in.kpi_row_first = true;
	in.job_url = job_url;
	in.report_url = report_url;
	in.checkout_cmd = checkout;
	in.build_cmd = facts.build;
	in.run_cmd = facts.run;
	in.base_runs = job->input[base_idx].value_count;
	in.culprit_runs = job->input[new_idx].value_count;
	in.confidence = culprit ? 1.0 - res->p_value : -1.0;
	in.good_sha = job->commits[0].sha;
	in.bad_sha = job->commits[job->count - 1].sha;
	in.good_subject = job->commits[0].subject;
	in.bad_subject = job->commits[job->count - 1].subject;
	if (report_render_subject(&subject, &in) < 0 ||
	    report_render_body(&body, &in) < 0) {
		log_error("job %lld: cannot render the report", job->id);
		goto out;
	}
	to_count = json_array_size(facts.notify);
	to = calloc(to_count + 1, sizeof(*to));
	if (to == NULL)
		goto out;
	for (i = 0; i < to_count; i++)
		to[i] = json_string_value(json_array_get(facts.notify, i));
	if (to_count == 0)
		to[to_count++] = server_config.mail_from_address;
	rfc5322_date(date, sizeof(date));
	message_id(mid, sizeof(mid), job->id);
	msg.from = server_config.mail_from;
	msg.to = to;
	msg.to_count = to_count;
	msg.date = date;
	msg.message_id = mid;
	msg.subject = subject;
	msg.body = body;
	if (report_message_render(&message, &msg) < 0) {
		log_error("job %lld: cannot build the report message",
			  job->id);
		goto out;
	}
	error = insert_outbox(conn, job->id, facts.notify, subject, message);
out:
	for (i = 0; i < 32; i++)
		free(param_texts[i]);
	free(to);
	free(subject);
	free(body);
	free(message);
	free(job_url);
	free(report_url);
	free(commit_url);
	free(checkout);
	free(rows);
	table_clear(&table);
	facts_clear(&facts);
	return error;
}
