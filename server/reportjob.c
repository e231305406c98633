#include "reportjob.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "gitrepo.h"
#include "http.h"
#include "log.h"
#include "patches.h"
#include "report_build.h"
#include "secret.h"
#include "server.h"
#include "store/store.h"
#include "store/store_reports.h"
#include "watcher.h"

/* Random bytes in a report's Message-ID, and in the read key its links
 * carry. */
#define REPORTJOB_TAG_BYTES 8
#define REPORTJOB_KEY_BYTES 32

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

/*
 * The branch a report names after its tree: the revision the job was
 * submitted with when that names a branch or a tag, else (a job submitted
 * by SHA, or as "HEAD~2") a branch of the mirror that holds the bad
 * commit.  Returns a malloc'd name, or NULL to keep the revision as given.
 */
static char *branch_of(const char *repo, const char *bad_rev,
		       const char *bad_sha)
{
	git_repository *mirror = NULL;
	git_reference *ref = NULL;
	char path[4096], *name = NULL, *err = NULL;
	git_oid oid;

	if (repo == NULL || bad_rev == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/repos/%s.git", server_config.data_dir,
		 repo);
	if (gitrepo_open(&mirror, path, &err) < 0) {
		free(err);
		return NULL;
	}
	if (git_reference_dwim(&ref, mirror, bad_rev) == 0 &&
	    (git_reference_is_branch(ref) || git_reference_is_tag(ref))) {
		git_reference_free(ref);
	} else {
		git_reference_free(ref);
		if (git_oid_fromstr(&oid, bad_sha) == 0)
			gitrepo_branch_of(&name, mirror, &oid);
	}
	git_repository_free(mirror);
	return name;
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

int reportjob_queue_mail(PGconn *conn, long long job_id, const char *const *to,
			 size_t count, const char *subject,
			 const char *in_reply_to, const char *body)
{
	char date[64], message_id[REPORT_MESSAGE_ID_MAX], *message = NULL;
	struct report_message msg = {0};
	int error;

	if (new_message_id(message_id, sizeof(message_id), job_id) < 0)
		return -1;
	report_date(date, sizeof(date), time(NULL));
	msg.from = server_config.mail_from;
	msg.to = to;
	msg.to_count = count;
	msg.date = date;
	msg.message_id = message_id;
	msg.in_reply_to = in_reply_to;
	msg.subject = subject;
	msg.body = body;
	if (report_message_render(&message, &msg) < 0)
		return -1;
	error = store_reports_queue(conn, job_id, to, count, subject, message);
	free(message);
	return error;
}

int reportjob_queue(PGconn *conn, const struct sched_job *job,
		    const char *base_url, size_t which)
{
	struct store_report_facts facts = {0};
	struct report_samples samples = {0};
	struct report_commit *commits = commits_of(job);
	struct report_job in = {0};
	struct report_mail mail = {0};
	struct patches_reply reply = {0};
	const char **patch_recipients = NULL;
	char *job_url = NULL;
	char date[64], message_id[REPORT_MESSAGE_ID_MAX], *branch = NULL;
	char key[2 * REPORTJOB_KEY_BYTES + 1];
	size_t base_idx, new_idx, i;
	int error = -1, rc;

	report_build_sides(&base_idx, &new_idx, &job->result, which,
			   job->count);
	if (commits == NULL ||
	    store_reports_facts(&facts, conn, job->id, new_idx) < 0 ||
	    store_reports_samples(&samples, conn, job->id, base_idx, new_idx) <
		0 ||
	    watcher_report_samples(conn, job, which, base_idx, new_idx,
				   &samples) < 0)
		goto out;
	if (new_message_id(message_id, sizeof(message_id), job->id) < 0) {
		log_error("job %lld: no randomness for the report's "
			  "Message-ID",
			  job->id);
		goto out;
	}
	/* A patch job's report is a reply in the patch's thread. */
	if (asprintf(&job_url, "%s/jobs/%lld", base_url, job->id) < 0) {
		job_url = NULL;
		goto out;
	}
	if (patches_reply_load(&reply, conn, job->id, new_idx, job_url) < 0 ||
	    (patch_recipients = calloc(json_array_size(reply.recipients) + 1,
				       sizeof(*patch_recipients))) == NULL)
		goto out;
	for (i = 0; i < json_array_size(reply.recipients); i++)
		patch_recipients[in.patch_recipient_count++] =
		    json_string_value(json_array_get(reply.recipients, i));
	in.patch_recipients = patch_recipients;
	in.reply_subject = reply.subject;
	in.in_reply_to = reply.in_reply_to;
	in.reply_lines = (const char *const *)reply.lines;
	in.reply_line_count = reply.line_count;
	/* The report's links open the job's pages for whoever reads it. */
	if (secret_hex(key, REPORTJOB_KEY_BYTES) < 0 ||
	    store_reports_add_key(conn, job->id, key) < 0)
		goto out;
	report_date(date, sizeof(date), time(NULL));
	in.id = job->id;
	in.base_url = base_url;
	in.mail_from = server_config.mail_from;
	in.mail_from_address = server_config.mail_from_address;
	in.repo = facts.repo;
	in.repo_url = facts.repo_url;
	in.web_url = facts.web_url;
	branch = branch_of(facts.repo, facts.bad_rev,
			   job->commits[job->count - 1].sha);
	in.branch = branch != NULL ? branch : facts.bad_rev;
	in.branch_watched = job->watched_branch[0] != '\0';
	in.testcase = facts.testcase;
	in.kpi = facts.kpi;
	in.build = facts.build;
	in.run = facts.run;
	in.bench_repo = facts.bench_repo;
	in.bench_commit = facts.bench_commit;
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
	in.link_key = key;
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
	patches_reply_clear(&reply);
	free(patch_recipients);
	free(job_url);
	free(commits);
	free(branch);
	return error;
}

void reportjob_keys_revoke(struct http_response *res, struct http_request *req)
{
	long long job_id, count = 0;
	PGconn *conn;
	int rc;

	if (!http_path_id(res, req->params[0], "not_found", "job", &job_id))
		return;
	conn = db_conn();
	rc = conn != NULL ? store_reports_revoke_keys(conn, job_id, &count)
			  : -1;
	if (rc == STORE_NOT_FOUND) {
		http_error(res, 404, "not_found", "no job %lld", job_id);
		return;
	}
	if (rc < 0) {
		http_db_failed(res);
		return;
	}
	log_info("job %lld: %lld read key(s) revoked", job_id, count);
	http_json(res, 200,
		  json_pack("{s:I,s:I}", "job", (json_int_t)job_id, "revoked",
			    (json_int_t)count));
}
