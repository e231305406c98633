#include "reportjob.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "report_build.h"
#include "secret.h"
#include "server.h"
#include "store/store_reports.h"

/* Random bytes in a report's Message-ID. */
#define REPORTJOB_TAG_BYTES 8

/* The commits as lib/report_build.h takes them; NULL when out of memory. */
static struct report_commit *commits_of(const struct sched_job *job)
{
	struct report_commit *commits = calloc(job->count, sizeof(*commits));
	size_t i;

	for (i = 0; commits != NULL && i < job->count; i++) {
		commits[i].sha = job->commits[i].sha;
		commits[i].subject = job->commits[i].subject;
		commits[i].author_email = job->commits[i].author_email;
		commits[i].build_failed = job->commits[i].build_failed;
		commits[i].runs =
		    job->input[i].value_count + job->input[i].confirm_count;
	}
	return commits;
}

/* A fresh Message-ID for the report of job `job_id`. */
static int new_message_id(char *buf, size_t size, long long job_id)
{
	char tag[2 * REPORTJOB_TAG_BYTES + 1];
	char host[128] = "";

	if (secret_hex(tag, REPORTJOB_TAG_BYTES) < 0)
		return -1;
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	return report_message_id(buf, size, job_id, tag, host);
}

int reportjob_queue(PGconn *conn, const struct sched_job *job,
		    const char *base_url, size_t which)
{
	struct store_report_facts facts = {0};
	struct report_samples samples = {0};
	struct report_commit *commits = commits_of(job);
	struct report_job in = {0};
	struct report_mail mail = {0};
	char date[64], message_id[REPORT_MESSAGE_ID_MAX];
	size_t base_idx, new_idx, i;
	int error = -1, rc;

	report_build_sides(&base_idx, &new_idx, &job->result, which,
			   job->count);
	if (commits == NULL ||
	    store_reports_facts(&facts, conn, job->id, new_idx) < 0 ||
	    store_reports_samples(&samples, conn, job->id, base_idx, new_idx) <
		0)
		goto out;
	if (new_message_id(message_id, sizeof(message_id), job->id) < 0) {
		log_error("job %lld: no randomness for the report's "
			  "Message-ID",
			  job->id);
		goto out;
	}
	report_date(date, sizeof(date), time(NULL));
	in.id = job->id;
	in.base_url = base_url;
	in.mail_from = server_config.mail_from;
	in.mail_from_address = server_config.mail_from_address;
	in.repo = facts.repo;
	in.repo_url = facts.repo_url;
	in.web_url = facts.web_url;
	in.branch = facts.bad_rev;
	in.testcase = facts.testcase;
	in.kpi = facts.kpi;
	in.build = facts.build;
	in.run = facts.run;
	in.machine = facts.machine;
	in.params = facts.params;
	in.param_count = facts.param_count;
	in.notify = facts.notify;
	in.notify_count = facts.notify_count;
	in.testcase_notify = facts.testcase_notify;
	in.testcase_notify_count = facts.testcase_notify_count;
	in.notify_author = facts.notify_author;
	in.commits = commits;
	in.commit_count = job->count;
	in.result = &job->result;
	in.which = which;
	in.samples = &samples;
	in.date = date;
	in.message_id = message_id;
	if ((rc = report_build(&mail, &in)) < 0) {
		log_error("job %lld: cannot build the report (%s)", job->id,
			  strerror(-rc));
		goto out;
	}
	for (i = 0; i < mail.skipped_count; i++)
		log_warn("job %lld: %s address is not a plain address; "
			 "not sent to it",
			 job->id, mail.skipped[i].whose);
	error = store_reports_queue(conn, job->id, mail.recipients,
				    mail.recipient_count, mail.subject,
				    mail.message);
out:
	report_mail_clear(&mail);
	report_samples_clear(&samples);
	store_report_facts_clear(&facts);
	free(commits);
	return error;
}
