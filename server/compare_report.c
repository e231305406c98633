/*
 * The report of a compare job: its facts loaded as for any report
 * (store_reports_facts), its table made from the runs the scheduler
 * loaded (one column per revision: the KPI), rendered by
 * lib/report_compare.h and queued in the outbox in the transaction that
 * ended the job.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "log.h"
#include "report_build.h"
#include "report_compare.h"
#include "secret.h"
#include "server.h"
#include "store/store_compare.h"
#include "store/store_reports.h"

#define COMPARE_TAG_BYTES 8
#define COMPARE_KEY_BYTES 32

static enum report_kind kind_of(const char *verdict)
{
	if (verdict == NULL)
		return REPORT_INCONCLUSIVE;
	if (strcmp(verdict, "regression") == 0)
		return REPORT_REGRESSION;
	if (strcmp(verdict, "improvement") == 0)
		return REPORT_IMPROVEMENT;
	if (strcmp(verdict, "no-change") == 0)
		return REPORT_NO_CHANGE;
	return REPORT_INCONCLUSIVE;
}

static bool listed(const char **list, size_t count, const char *address)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (strcasecmp(list[i], address) == 0)
			return true;
	return false;
}

/* Adds `address` to `list` unless it is there or not plain. */
static void add_recipient(const char **list, size_t *count,
			  const char *address)
{
	if (address != NULL && report_address_is_valid(address) &&
	    !listed(list, *count, address))
		list[(*count)++] = address;
}

/* Everything the message needs that the report text does not. */
struct compare_mail {
	const char **to, **cc;
	size_t to_count, cc_count;
	char date[64], message_id[REPORT_MESSAGE_ID_MAX];
	char key[2 * COMPARE_KEY_BYTES + 1];
};

static int mail_setup(struct compare_mail *m,
		      const struct store_report_facts *facts, PGconn *conn,
		      long long job_id)
{
	char tag[2 * COMPARE_TAG_BYTES + 1], host[128] = "";
	size_t i;

	m->to = calloc(facts->notify_count + 1, sizeof(*m->to));
	m->cc = calloc(facts->testcase_notify_count + 1, sizeof(*m->cc));
	if (m->to == NULL || m->cc == NULL)
		return -1;
	for (i = 0; i < facts->notify_count; i++)
		add_recipient(m->to, &m->to_count, facts->notify[i]);
	for (i = 0; i < facts->testcase_notify_count; i++)
		if (facts->testcase_notify[i] != NULL &&
		    !listed(m->to, m->to_count, facts->testcase_notify[i]))
			add_recipient(m->cc, &m->cc_count,
				      facts->testcase_notify[i]);
	if (secret_hex(tag, COMPARE_TAG_BYTES) < 0 ||
	    secret_hex(m->key, COMPARE_KEY_BYTES) < 0)
		return -1;
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	if (report_message_id(m->message_id, sizeof(m->message_id), job_id,
			      tag, host) < 0 ||
	    store_reports_add_key(conn, job_id, m->key) < 0)
		return -1;
	report_date(m->date, sizeof(m->date), time(NULL));
	return 0;
}

/* Text cleaned for the report, kept until the report is queued. */
/* Room for COMPARE_MOST columns' 2 texts, REPORT_PARAMS_MAX parameters' 2, and
 * the 7 others. */
struct compare_texts {
	char *items[2 * COMPARE_MOST + 2 * REPORT_PARAMS_MAX + 7];
	size_t count;
};

static const char *keep(struct compare_texts *t, char *text)
{
	if (text == NULL)
		return NULL;
	if (t->count == sizeof(t->items) / sizeof(t->items[0])) {
		free(text);
		return NULL;
	}
	t->items[t->count++] = text;
	return text;
}

static void texts_clear(struct compare_texts *t)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		free(t->items[i]);
	t->count = 0;
}

static const char *line(struct compare_texts *t, const char *text)
{
	return keep(t, report_clean_line(text, REPORT_TEXT_MAX));
}

/* Renders the subject and the whole message into *subject, *message. */
static int render(char **subject, char **message,
		  const struct report_compare_input *in,
		  const struct compare_mail *m)
{
	struct report_message msg = {0};
	char *body = NULL;
	int error;

	if ((error = report_compare_subject(subject, in)) < 0 ||
	    (error = report_compare_body(&body, in)) < 0)
		return error;
	msg.from = server_config.mail_from;
	if (m->to_count + m->cc_count > 0) {
		msg.to = m->to_count > 0 ? m->to : m->cc;
		msg.to_count = m->to_count > 0 ? m->to_count : m->cc_count;
		msg.cc = m->to_count > 0 && m->cc_count > 0 ? m->cc : NULL;
		msg.cc_count = m->to_count > 0 ? m->cc_count : 0;
	} else {
		/* Nobody to tell: the report is kept, addressed to us. */
		msg.to = &server_config.mail_from_address;
		msg.to_count = 1;
	}
	msg.date = m->date;
	msg.message_id = m->message_id;
	msg.subject = *subject;
	msg.body = body;
	error = report_message_render(message, &msg);
	free(body);
	return error;
}

int compare_report_queue(PGconn *conn, const struct sched_job *job,
			 const struct store_compare *cmp, const char *base_url)
{
	struct store_report_facts facts = {0};
	struct report_compare_input in = {0};
	struct report_compare_column columns[COMPARE_MOST];
	struct report_samples pairs[COMPARE_MOST - 1];
	struct report_compare_row *rows = NULL;
	size_t row_count = 0;
	struct report_param params[REPORT_PARAMS_MAX];
	struct compare_texts texts = {0};
	struct compare_mail mail = {0};
	const char **recipients = NULL;
	char *subject = NULL, *message = NULL, *job_url = NULL, *query = NULL;
	size_t i, n = job->count < cmp->count ? job->count : cmp->count;
	int error = -1, rc;

	memset(pairs, 0, sizeof(pairs));
	if (n < COMPARE_LEAST ||
	    store_reports_facts(&facts, conn, job->id, 0) < 0 ||
	    mail_setup(&mail, &facts, conn, job->id) < 0 ||
	    asprintf(&job_url, "%s/jobs/%lld", base_url, job->id) < 0 ||
	    asprintf(&query, "?key=%s", mail.key) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		columns[i].label = line(&texts, cmp->columns[i].label);
		columns[i].sha = job->commits[i].sha;
		columns[i].subject = line(&texts, job->commits[i].subject);
		columns[i].runs = job->input[i].value_count;
		columns[i].kind = kind_of(cmp->columns[i].verdict);
		columns[i].change_pct =
		    i == 0 ? 0 : cmp->columns[i].change_pct;
		if (!isfinite(columns[i].change_pct) &&
		    columns[i].kind != REPORT_INCONCLUSIVE)
			columns[i].change_pct = 0;
		if (columns[i].label == NULL || columns[i].subject == NULL)
			goto out;
	}
	/* Every metric of each revision's runs against the first's; a
	 * revision without a measurement (it did not build) leaves the
	 * table without rows, the verdict lines say "inconclusive". */
	for (i = 1; i < n; i++)
		if (store_reports_samples(&pairs[i - 1], conn, job->id, 0, i) <
		    0)
			goto out;
	if (report_compare_rows(&rows, &row_count, pairs, n, facts.kpi) < 0)
		goto out;
	for (i = 0; i < facts.param_count && i < REPORT_PARAMS_MAX; i++) {
		params[i].key = line(&texts, facts.params[i].key);
		params[i].value = line(&texts, facts.params[i].value);
		if (params[i].key == NULL || params[i].value == NULL)
			goto out;
	}
	in.robot_name = "statbisect robot";
	in.service_name = "statbisect performance bisection";
	in.service_url = base_url;
	in.tree = line(&texts, facts.repo);
	in.branch = line(&texts, cmp->columns[n - 1].revision);
	in.kpi = facts.kpi;
	in.testcase = line(&texts, facts.testcase);
	in.machine =
	    facts.machine != NULL ? line(&texts, facts.machine) : NULL;
	in.params = params;
	in.param_count = i;
	in.columns = columns;
	in.column_count = n;
	in.rows = rows;
	in.row_count = row_count;
	in.job_url = job_url;
	in.link_query = query;
	in.build_cmd = keep(&texts, report_clean_command(facts.build));
	in.run_cmd = keep(&texts, report_clean_command(facts.run));
	in.bench_cmd = keep(&texts, report_bench_command(facts.bench_repo,
							 facts.bench_commit));
	if ((rc = render(&subject, &message, &in, &mail)) < 0) {
		log_error("job %lld: cannot build the compare report (%s)",
			  job->id, strerror(-rc));
		goto out;
	}
	recipients =
	    calloc(mail.to_count + mail.cc_count + 1, sizeof(*recipients));
	if (recipients == NULL)
		goto out;
	for (i = 0; i < mail.to_count; i++)
		recipients[i] = mail.to[i];
	for (i = 0; i < mail.cc_count; i++)
		recipients[mail.to_count + i] = mail.cc[i];
	error = store_reports_queue(conn, job->id, recipients,
				    mail.to_count + mail.cc_count, subject,
				    message);
out:
	for (i = 0; i + 1 < COMPARE_MOST; i++)
		report_samples_clear(&pairs[i]);
	free(rows);
	free(recipients);
	free(subject);
	free(message);
	free(job_url);
	free(query);
	free(mail.to);
	free(mail.cc);
	texts_clear(&texts);
	store_report_facts_clear(&facts);
	return error;
}
