#include "reportjob.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "metrics.h"
#include "report.h"
#include "rowselect.h"
#include "server.h"
#include "stats.h"
#include "utf8.h"

/* Longest commit subject, machine or branch text put in a report. */
#define REPORTJOB_TEXT_MAX 300
/* Longest command line put in a report's reproduce section; a body line
 * may not pass 998 octets. */
#define REPORTJOB_COMMAND_LINE_MAX 900
/* Longest reason of an inconclusive report (wrapped into lines), and the
 * most build logs a report links. */
#define REPORTJOB_REASON_MAX 2000
#define REPORTJOB_BUILD_LOGS_MAX 10

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
static int load_metrics(struct metric_table *t, PGconn *conn, long long job_id,
			size_t base_idx, size_t new_idx)
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
			/* Names come from workers: only those a run can
			 * print reach the report. */
			if (json_is_number(value) &&
			    metrics_name_valid(name) &&
			    isfinite(json_number_value(value)) &&
			    table_add(t, name, side,
				      json_number_value(value)) < 0) {
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

static void side_of(struct report_side *out, const double *x, size_t n)
{
	double mean = n > 0 ? stats_mean(x, n) : 0;

	out->mean = mean;
	out->runs = n;
	out->stddev_pct =
	    n > 1 && mean != 0 ? 100.0 * stats_pop_sd(x, n) / fabs(mean) : 0;
}

/*
 * Rows: the KPI first, then every metric that lib/rowselect.h selects (the
 * robot's rules and a per-row test with FDR control across all rows).
 */
static int build_rows(struct report_metric_row **out, size_t *count,
		      const struct metric_table *t, const char *kpi)
{
	struct report_metric_row *rows = NULL;
	struct rowselect_series *series = NULL;
	struct rowselect_row *selected = NULL;
	size_t i, n = 0;
	int error = -1;

	rows = calloc(t->count + 1, sizeof(*rows));
	series = calloc(t->count + 1, sizeof(*series));
	selected = calloc(t->count + 1, sizeof(*selected));
	if (rows == NULL || series == NULL || selected == NULL)
		goto out;
	for (i = 0; i < t->count; i++) {
		series[i].name = t->series[i].name;
		series[i].base = t->series[i].side[0];
		series[i].base_count = t->series[i].count[0];
		series[i].culprit = t->series[i].side[1];
		series[i].culprit_count = t->series[i].count[1];
	}
	if (rowselect_select(selected, series, t->count, kpi, NULL) < 0)
		goto out;
	for (i = 0; i < t->count; i++) {
		const struct metric_series *s = &t->series[i];

		if (!selected[i].shown)
			continue;
		rows[n].metric = s->name;
		side_of(&rows[n].base, s->side[0], s->count[0]);
		side_of(&rows[n].culprit, s->side[1], s->count[1]);
		if (strcmp(s->name, kpi) == 0 && n > 0) {
			struct report_metric_row first = rows[0];

			rows[0] = rows[n];
			rows[n] = first;
		}
		n++;
	}
	*out = rows;
	rows = NULL;
	*count = n;
	error = 0;
out:
	free(rows);
	free(series);
	free(selected);
	return error;
}

/*
 * A copy of `s` fit for one line of a report and of its headers: every
 * control character (CR, LF, TAB, ESC, DEL...) becomes a space, invalid
 * UTF-8 becomes '?', and text beyond `max` bytes is cut at a character
 * boundary and marked with "...".  Commit subjects, branch names and the
 * machine come from outside; whatever they hold, the report is rendered
 * and no header can be injected.  NULL when out of memory; "" for NULL.
 */
static char *clean_line(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *out = malloc(max + 4), *o = out;
	size_t n;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		n = utf8_char_len((const char *)p, 4);
		if ((size_t)(o - out) + (n ? n : 1) > max) {
			memcpy(o, "...", 3);
			o += 3;
			break;
		}
		if (n == 0) {
			*o++ = '?';
			p++;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			*o++ = ' ';
			p++;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
	return out;
}

/*
 * A command for the reproduce section: each line cleaned as clean_line()
 * does (CRLF line ends become LF), or NULL (left out of the report) when a
 * line is longer than REPORTJOB_COMMAND_LINE_MAX or memory runs out.
 */
static char *clean_command(const char *command)
{
	char *copy, *out = NULL, *line, *save = NULL, *clean;
	size_t len = 0;

	if (command == NULL || (copy = strdup(command)) == NULL)
		return NULL;
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char *grown;
		size_t n;

		n = strlen(line);
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n > REPORTJOB_COMMAND_LINE_MAX)
			goto fail;
		clean = clean_line(line, REPORTJOB_COMMAND_LINE_MAX + 4);
		if (clean == NULL)
			goto fail;
		n = strlen(clean);
		grown = realloc(out, len + n + 2);
		if (grown == NULL) {
			free(clean);
			goto fail;
		}
		out = grown;
		if (len > 0)
			out[len++] = '\n';
		memcpy(out + len, clean, n + 1);
		len += n;
		free(clean);
	}
	free(copy);
	return out;
fail:
	free(copy);
	free(out);
	return NULL;
}

/* `text` for a POSIX shell: as it is when made of safe characters, else
 * in single quotes. */
static char *shell_word(const char *text)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				   "@%+=:,./_-~";
	size_t n = strlen(text), i;
	char *out, *o;

	if (n > 0 && strspn(text, safe) == n)
		return strdup(text);
	out = malloc(4 * n + 3);
	if (out == NULL)
		return NULL;
	o = out;
	*o++ = '\'';
	for (i = 0; i < n; i++) {
		if (text[i] == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = text[i];
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
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
	json_t *params, *notify, *testcase_notify;
	bool notify_author;
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
			 " t.name, t.build, t.run, t.kpi, t.params, j.notify,"
			 " t.notify, t.notify_author"
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
	f->testcase_notify = json_loads(db_text(f->row, 0, 10), 0, NULL);
	f->notify_author = db_bool(f->row, 0, 11);
	r = db_exec(conn,
		    "SELECT w.machine FROM runs r JOIN workers w"
		    " ON w.id = r.worker_id WHERE r.job_id = $1"
		    " AND r.commit_idx = $2 AND w.machine IS NOT NULL LIMIT 1",
		    2, params);
	if (r != NULL && PQntuples(r) == 1)
		f->machine = clean_line(db_text(r, 0, 0), REPORTJOB_TEXT_MAX);
	PQclear(r);
	return 0;
}

static void facts_clear(struct job_facts *f)
{
	PQclear(f->row);
	json_decref(f->params);
	json_decref(f->notify);
	json_decref(f->testcase_notify);
	free(f->machine);
}

/* Culprits listed in one report, at most (the engine's own bound). */
#define REPORTJOB_CHANGES_MAX BISECT_MAX_CULPRITS

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
 * JSON numbers or the plain string, cleaned as lines.  Storage lives in
 * `texts`. */
static size_t collect_params(struct report_param *out, char **texts,
			     size_t max, json_t *params)
{
	const char *key;
	json_t *value;
	size_t n = 0;

	json_object_foreach(params, key, value)
	{
		char *raw;

		if (n == max)
			break;
		raw = json_is_string(value)
			  ? NULL
			  : json_dumps(value, JSON_ENCODE_ANY);
		texts[2 * n] = clean_line(
		    json_is_string(value) ? json_string_value(value) : raw,
		    REPORTJOB_TEXT_MAX);
		texts[2 * n + 1] = clean_line(key, REPORTJOB_TEXT_MAX);
		free(raw);
		out[n].key = texts[2 * n + 1] != NULL && texts[2 * n + 1][0]
				 ? texts[2 * n + 1]
				 : "?";
		out[n].value = texts[2 * n] != NULL ? texts[2 * n] : "";
		n++;
	}
	return n;
}

/*
 * Who gets a report: To the culprit's author (when the testcase opts in
 * and there is a culprit) and the job's notify list, Cc the testcase's
 * list; each address once (compared without regard to case), each checked
 * with report_address_is_valid().  When To would be empty the Cc list
 * moves there.  The strings belong to the facts and the job.
 */
struct recipients {
	const char **to, **cc;
	size_t to_count, cc_count;
};

static bool already(const struct recipients *r, const char *address)
{
	size_t i;

	for (i = 0; i < r->to_count; i++)
		if (strcasecmp(r->to[i], address) == 0)
			return true;
	for (i = 0; i < r->cc_count; i++)
		if (strcasecmp(r->cc[i], address) == 0)
			return true;
	return false;
}

static void add_recipient(struct recipients *r, bool cc, const char *address,
			  long long job_id, const char *whose)
{
	if (address == NULL || already(r, address))
		return;
	if (!report_address_is_valid(address)) {
		log_warn("job %lld: %s address is not a plain address; "
			 "not sent to it",
			 job_id, whose);
		return;
	}
	if (cc)
		r->cc[r->cc_count++] = address;
	else
		r->to[r->to_count++] = address;
}

static int collect_recipients(struct recipients *r, const struct job_facts *f,
			      const struct sched_job *job, bool culprit,
			      size_t culprit_idx)
{
	size_t max = 1 + json_array_size(f->notify) +
		     json_array_size(f->testcase_notify);
	size_t i;
	json_t *v;

	r->to = calloc(max + 1, sizeof(*r->to));
	r->cc = calloc(max + 1, sizeof(*r->cc));
	r->to_count = r->cc_count = 0;
	if (r->to == NULL || r->cc == NULL)
		return -1;
	if (culprit && f->notify_author)
		add_recipient(r, false, job->commits[culprit_idx].author_email,
			      job->id, "the culprit author's");
	json_array_foreach(f->notify, i, v)
	    add_recipient(r, false, json_string_value(v), job->id, "a notify");
	json_array_foreach(f->testcase_notify, i, v) add_recipient(
	    r, true, json_string_value(v), job->id, "a testcase notify");
	if (r->to_count == 0) {
		const char **swap = r->to;

		r->to = r->cc;
		r->to_count = r->cc_count;
		r->cc = swap;
		r->cc_count = 0;
	}
	return 0;
}

static void recipients_clear(struct recipients *r)
{
	free(r->to);
	free(r->cc);
}

static int insert_outbox(PGconn *conn, long long job_id,
			 const struct recipients *rcpt, const char *subject,
			 const char *message)
{
	char id[24], *recipients = NULL;
	const char *params[4];
	json_t *list = json_array();
	PGresult *r;
	size_t i;

	for (i = 0; list != NULL && i < rcpt->to_count; i++)
		json_array_append_new(list, json_string(rcpt->to[i]));
	for (i = 0; list != NULL && i < rcpt->cc_count; i++)
		json_array_append_new(list, json_string(rcpt->cc[i]));
	if (list != NULL)
		recipients = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (recipients == NULL)
		return -1;
	snprintf(id, sizeof(id), "%lld", job_id);
	params[0] = id;
	params[1] = recipients;
	params[2] = subject;
	params[3] = message;
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

/* Cleaned copies of everything from outside that the report shows. */
struct clean_texts {
	char *culprit_subject, *parent_subject, *good_subject, *bad_subject;
	char *branch, *tree, *testcase, *build, *run, *checkout;
	char *params[64];
};

static void clean_texts_clear(struct clean_texts *c)
{
	free(c->culprit_subject);
	free(c->parent_subject);
	free(c->good_subject);
	free(c->bad_subject);
	free(c->branch);
	free(c->tree);
	free(c->testcase);
	free(c->build);
	free(c->run);
	free(c->checkout);
	for (size_t i = 0; i < 64; i++)
		free(c->params[i]);
}

/* A required line: its cleaned text, or "?" when nothing is left. */
static const char *line_or_mark(const char *s)
{
	return s != NULL && s[0] != '\0' && strspn(s, " ") != strlen(s) ? s
									: "?";
}

static int clean_all(struct clean_texts *c, const struct job_facts *f,
		     const struct sched_job *job, size_t base_idx,
		     size_t new_idx)
{
	char *url = NULL;
	int error = -1;

	c->culprit_subject =
	    clean_line(job->commits[new_idx].subject, REPORTJOB_TEXT_MAX);
	c->parent_subject =
	    clean_line(job->commits[base_idx].subject, REPORTJOB_TEXT_MAX);
	c->good_subject =
	    clean_line(job->commits[0].subject, REPORTJOB_TEXT_MAX);
	c->bad_subject = clean_line(job->commits[job->count - 1].subject,
				    REPORTJOB_TEXT_MAX);
	c->branch = clean_line(f->bad_rev, REPORTJOB_TEXT_MAX);
	c->tree = clean_line(f->repo, REPORTJOB_TEXT_MAX);
	c->testcase = clean_line(f->testcase, REPORTJOB_TEXT_MAX);
	if (c->culprit_subject == NULL || c->parent_subject == NULL ||
	    c->good_subject == NULL || c->bad_subject == NULL ||
	    c->branch == NULL || c->tree == NULL || c->testcase == NULL)
		goto out;
	/* Commands with an over-long line are left out (NULL). */
	c->build =
	    f->build != NULL && f->build[0] ? clean_command(f->build) : NULL;
	c->run = clean_command(f->run);
	url = shell_word(f->repo_url != NULL ? f->repo_url : "");
	if (url != NULL &&
	    asprintf(&c->checkout,
		     "git clone %s %s && cd %s && git checkout %s", url,
		     f->repo, f->repo, job->commits[new_idx].sha) >= 0) {
		char *clean = clean_command(c->checkout);

		free(c->checkout);
		c->checkout = clean;
	} else {
		c->checkout = NULL;
	}
	error = 0;
out:
	free(url);
	return error;
}

int reportjob_queue(PGconn *conn, const struct sched_job *job,
		    const char *base_url, size_t which)
{
	const struct bisect_result *res = &job->result;
	bool culprit = (res->verdict == BISECT_REGRESSION ||
			res->verdict == BISECT_IMPROVEMENT) &&
		       which < res->culprit_count;
	const struct bisect_culprit *cul =
	    culprit ? &res->culprits[which] : NULL;
	size_t base_idx = culprit ? cul->parent : 0;
	size_t new_idx = culprit ? cul->commit : job->count - 1;
	struct report_change changes[REPORTJOB_CHANGES_MAX];
	char *other_subjects[REPORTJOB_CHANGES_MAX] = {NULL};
	struct report_param params[32];
	struct report_metric_row *rows = NULL;
	struct metric_table table = {0};
	struct job_facts facts = {0};
	struct clean_texts texts = {0};
	struct recipients rcpt = {0};
	struct report_input in = {0};
	struct report_message msg = {0};
	char *subject = NULL, *body = NULL, *message = NULL;
	char *job_url = NULL, *report_url = NULL, *commit_url = NULL;
	char *reason = NULL, *build_logs[REPORTJOB_BUILD_LOGS_MAX];
	char date[64], mid[256];
	size_t row_count = 0, build_log_count = 0, i;
	int error = -1, rc;

	if (load_facts(&facts, conn, job, new_idx) < 0 ||
	    load_metrics(&table, conn, job->id, base_idx, new_idx) < 0 ||
	    build_rows(&rows, &row_count, &table, facts.kpi) < 0 ||
	    clean_all(&texts, &facts, job, base_idx, new_idx) < 0 ||
	    collect_recipients(&rcpt, &facts, job, culprit, new_idx) < 0)
		goto out;
	if (asprintf(&job_url, "%s/jobs/%lld", base_url, job->id) < 0) {
		job_url = NULL;
		goto out;
	}
	if (asprintf(&report_url, "%s/api/v1/jobs/%lld/report", base_url,
		     job->id) < 0) {
		report_url = NULL;
		goto out;
	}
	if (facts.web_url != NULL && strstr(facts.web_url, "{sha}") != NULL) {
		const char *at = strstr(facts.web_url, "{sha}");
		char *raw = NULL;

		if (asprintf(&raw, "%.*s%s%s", (int)(at - facts.web_url),
			     facts.web_url, job->commits[new_idx].sha,
			     at + 5) < 0)
			goto out;
		commit_url = clean_line(raw, 2 * REPORTJOB_COMMAND_LINE_MAX);
		free(raw);
	}
	in.robot_name = "statbisect robot";
	in.robot_email = server_config.mail_from_address;
	in.service_name = "statbisect performance bisection";
	in.service_url = base_url;
	in.tree = line_or_mark(texts.tree);
	in.branch = line_or_mark(texts.branch);
	/* A culprit's report says its own direction; a verdict of change
	 * without a culprit (never given by the engine) names no commit. */
	in.kind = culprit ? (cul->regression ? REPORT_REGRESSION
					     : REPORT_IMPROVEMENT)
		  : res->verdict == BISECT_REGRESSION ||
			  res->verdict == BISECT_IMPROVEMENT
		      ? REPORT_INCONCLUSIVE
		      : kind_of(res->verdict);
	if (culprit && res->culprit_count > 1) {
		size_t k, n = res->culprit_count < REPORTJOB_CHANGES_MAX
				  ? res->culprit_count
				  : REPORTJOB_CHANGES_MAX;

		for (k = 0; k < n; k++) {
			const struct bisect_culprit *o = &res->culprits[k];

			changes[k].sha = job->commits[o->commit].sha;
			other_subjects[k] =
			    clean_line(job->commits[o->commit].subject,
				       REPORTJOB_TEXT_MAX);
			changes[k].subject = other_subjects[k];
			changes[k].kind = o->regression ? REPORT_REGRESSION
							: REPORT_IMPROVEMENT;
			changes[k].change_pct = o->change_pct;
		}
		in.changes = changes;
		in.change_count = n;
	}
	in.kpi = facts.kpi;
	in.change_pct = culprit ? cul->change_pct : res->change_pct;
	in.culprit_sha = job->commits[new_idx].sha;
	in.culprit_subject = texts.culprit_subject;
	in.parent_sha = job->commits[base_idx].sha;
	in.parent_subject = texts.parent_subject;
	in.commit_url = commit_url;
	in.testcase = line_or_mark(texts.testcase);
	in.machine = facts.machine != NULL && facts.machine[0] != '\0'
			 ? facts.machine
			 : NULL;
	in.param_count =
	    collect_params(params, texts.params, 32, facts.params);
	in.params = params;
	in.rows = rows;
	in.row_count = row_count;
	in.kpi_row_first = true;
	in.job_url = job_url;
	in.report_url = report_url;
	in.checkout_cmd = texts.checkout;
	in.build_cmd = texts.build;
	in.run_cmd = texts.run;
	in.base_runs = job->input[base_idx].value_count +
		       job->input[base_idx].confirm_count;
	in.culprit_runs = job->input[new_idx].value_count +
			  job->input[new_idx].confirm_count;
	in.confidence = culprit ? cul->confidence : -1.0;
	if (!(in.confidence <= 1))
		in.confidence = -1.0;
	in.change_ci95_given = true;
	in.change_ci95_lo =
	    culprit ? cul->change_ci95_lo : res->change_ci95_lo;
	in.change_ci95_hi =
	    culprit ? cul->change_ci95_hi : res->change_ci95_hi;
	/* The KPI row shows the one estimate (lib/estimate.h) that the
	 * subject shows, over the same runs, not a change of its own. */
	if (row_count > 0 && strcmp(rows[0].metric, facts.kpi) == 0 &&
	    !report_metric_is_absolute(facts.kpi) && isfinite(in.change_pct)) {
		rows[0].change_given = true;
		rows[0].change = in.change_pct;
	}
	in.good_sha = job->commits[0].sha;
	in.bad_sha = job->commits[job->count - 1].sha;
	in.good_subject = texts.good_subject;
	in.bad_subject = texts.bad_subject;
	/* Why an inconclusive job bisected nothing, and where the build
	 * logs of the commits that did not build are. */
	if (in.kind == REPORT_INCONCLUSIVE && res->reason != NULL &&
	    (reason = clean_line(res->reason, REPORTJOB_REASON_MAX)) == NULL)
		goto out;
	in.reason = reason;
	if (in.kind == REPORT_INCONCLUSIVE && in.reason == NULL &&
	    res->verdict != BISECT_INCONCLUSIVE)
		in.reason = "the search named no culprit";
	for (i = 0;
	     i < job->count && build_log_count < REPORTJOB_BUILD_LOGS_MAX;
	     i++) {
		if (!job->commits[i].build_failed)
			continue;
		if (asprintf(&build_logs[build_log_count],
			     "%s/api/v1/jobs/%lld/commits/%s/log", base_url,
			     job->id, job->commits[i].sha) < 0)
			goto out;
		build_log_count++;
	}
	in.build_log_urls = (const char *const *)build_logs;
	in.build_log_url_count = build_log_count;
	if ((rc = report_render_subject(&subject, &in)) < 0 ||
	    (rc = report_render_body(&body, &in)) < 0) {
		/* Should not happen with cleaned input; the verdict stands
		 * with a plainer report: the KPI row, no extras. */
		log_error("job %lld: cannot render the report (%s); "
			  "retrying without parameters, commands and "
			  "extra rows",
			  job->id, strerror(-rc));
		free(subject);
		subject = NULL;
		in.row_count = row_count > 0 ? 1 : 0;
		in.param_count = 0;
		in.machine = NULL;
		in.commit_url = NULL;
		in.checkout_cmd = in.build_cmd = in.run_cmd = NULL;
		if (report_render_subject(&subject, &in) < 0 ||
		    report_render_body(&body, &in) < 0) {
			log_error("job %lld: cannot render the report",
				  job->id);
			goto out;
		}
	}
	rfc5322_date(date, sizeof(date));
	message_id(mid, sizeof(mid), job->id);
	msg.from = server_config.mail_from;
	if (rcpt.to_count > 0) {
		msg.to = rcpt.to;
		msg.to_count = rcpt.to_count;
		msg.cc = rcpt.cc;
		msg.cc_count = rcpt.cc_count;
	} else {
		/* Nobody to tell: the report is kept, addressed to us. */
		msg.to = &server_config.mail_from_address;
		msg.to_count = 1;
	}
	msg.date = date;
	msg.message_id = mid;
	msg.subject = subject;
	msg.body = body;
	if ((rc = report_message_render(&message, &msg)) < 0) {
		log_error("job %lld: cannot build the report message (%s)",
			  job->id, strerror(-rc));
		goto out;
	}
	error = insert_outbox(conn, job->id, &rcpt, subject, message);
out:
	free(subject);
	free(body);
	free(message);
	free(job_url);
	free(report_url);
	free(commit_url);
	free(reason);
	for (i = 0; i < build_log_count; i++)
		free(build_logs[i]);
	for (size_t k = 0; k < REPORTJOB_CHANGES_MAX; k++)
		free(other_subjects[k]);
	free(rows);
	recipients_clear(&rcpt);
	clean_texts_clear(&texts);
	table_clear(&table);
	facts_clear(&facts);
	return error;
}
