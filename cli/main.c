/*
 * statbisect: the command-line client of statbisect-server, for people and
 * CI.  Submits a bisection (and optionally follows it to its verdict),
 * shows a job, prints its report, cancels it.  The exit status carries the
 * verdict: 0 no change or improvement, 1 regression, 2 anything else.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "id.h"
#include "jsonout.h"
#include "remote.h"
#include "timeleft.h"
#include "watch.h"

enum cli_exit {
	CLI_EXIT_GOOD = 0,	 /* no change, improvement, or success */
	CLI_EXIT_REGRESSION = 1, /* the verdict is a regression */
	CLI_EXIT_TROUBLE = 2,	 /* error, inconclusive, failed, cancelled */
};

#define CLI_DEFAULT_SERVER "http://127.0.0.1:8080"
#define CLI_DEFAULT_POLL_S 5.0
/* Consecutive failed polls (server unreachable, or 502, 503 or 504)
 * tolerated while waiting, with a growing pause between them: at least
 * 72 s in all. */
#define CLI_POLL_RETRIES 8

struct cli_options {
	const char *command;
	const char *server;
	const char *token;
	const char *repo, *testcase, *good, *bad;
	json_t *notify;	   /* array of strings */
	json_t *revisions; /* submit --revision: a compare job */
	const char *webhook, *webhook_format; /* submit --webhook */
	const char *fix;		      /* retest --fix */
	const char *group; /* submit --group: machines other than the
			    * testcase's */
	bool wait, json, poll_given;
	long long runs_min, runs_max; /* 0: the testcase's */
	long long machines;	      /* submit --machines; 0: one */
	double poll_s;
	long long job_id;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: statbisect submit --repo NAME --testcase NAME"
		" --good REV --bad REV\n"
		"                         [--notify ADDRESS]..."
		" [--runs-min N] [--runs-max N] [--group NAME]\n"
		"                         [--machines K]"
		" (K machines of the group at once, 1 to 8)\n"
		"                         [--webhook URL]"
		" [--webhook-format statbisect|github-status]\n"
		"                         [--wait] [--poll SECONDS]"
		" [--json]\n"
		"       statbisect submit --repo NAME --testcase NAME"
		" --revision REV --revision REV...\n"
		"                         (a compare job of 2 to 4 revisions,"
		" the first the base;\n"
		"                         --notify, --runs-*, --webhook*,"
		" --wait, --json"
		" as above)\n"
		"       statbisect retest JOB --fix REV [--wait]"
		" [--poll SECONDS] [--json]\n"
		"                         (the culprit's parent, the culprit"
		" and the fix compared)\n"
		"       statbisect status JOB [--wait] [--poll SECONDS]"
		" [--json]\n"
		"       statbisect report JOB\n"
		"       statbisect cancel JOB [--json]\n"
		"       statbisect watch add|list|show|pause|resume|delete|"
		"history|push ... (see statbisect watch --help)\n"
		"options of every command:\n"
		"  --server URL    the server (STATBISECT_SERVER; "
		"default " CLI_DEFAULT_SERVER ")\n"
		"  --token TOKEN   a bearer token (STATBISECT_TOKEN)\n"
		"--wait follows the job, printing progress on standard error, "
		"and ends\n"
		"with the verdict line.  Exit status: 0 no change or "
		"improvement (or the\n"
		"command succeeded), 1 regression, 2 error, inconclusive, "
		"failed or\n"
		"cancelled.\n"
		"--webhook URL gets a JSON POST when the job ends ({sha} in it"
		" becomes the\n"
		"bad commit), signed with STATBISECT_WEBHOOK_SECRET when that"
		" is set\n"
		"(docs/CI.md, \"Webhooks\").\n");
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "statbisect: <message>" on standard error; the exit status. */
static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("statbisect: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EXIT_TROUBLE;
}

/* Writes text that came from the server with control characters
 * replaced, so it cannot drive the terminal. */
static void put_clean(FILE *out, const char *text)
{
	for (; text != NULL && *text != '\0'; text++) {
		unsigned char c = (unsigned char)*text;

		fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
	}
}

static bool parse_seconds(const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !isfinite(v) ||
	    v < 0.1 || v > 3600)
		return false;
	*out = v;
	return true;
}

static void pause_s(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *str_field(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static long long int_field(json_t *obj, const char *key)
{
	return (long long)json_integer_value(json_object_get(obj, key));
}

static bool job_finished(json_t *job)
{
	const char *state = str_field(job, "state");

	return state != NULL &&
	       (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0 ||
		strcmp(state, "cancelled") == 0);
}

/* The exit status a finished job stands for. */
static int job_exit_status(json_t *job)
{
	const char *state = str_field(job, "state");
	const char *verdict = str_field(job, "verdict");

	if (state == NULL || strcmp(state, "done") != 0 || verdict == NULL)
		return CLI_EXIT_TROUBLE;
	if (strcmp(verdict, "regression") == 0)
		return CLI_EXIT_REGRESSION;
	if (strcmp(verdict, "no-change") == 0 ||
	    strcmp(verdict, "improvement") == 0)
		return CLI_EXIT_GOOD;
	return CLI_EXIT_TROUBLE;
}

/* The index of `sha` among the job's candidates, or -1 when the job's
 * JSON does not say. */
static long long commit_index(json_t *job, const char *sha)
{
	json_t *commits = json_object_get(job, "commits"), *c;
	size_t i;

	if (sha == NULL)
		return -1;
	if (str_field(job, "good") != NULL &&
	    strcmp(sha, str_field(job, "good")) == 0)
		return 0;
	if (str_field(job, "bad") != NULL &&
	    strcmp(sha, str_field(job, "bad")) == 0)
		return int_field(job, "candidates") - 1;
	json_array_foreach(commits, i, c)
	{
		if (str_field(c, "commit") != NULL &&
		    strcmp(str_field(c, "commit"), sha) == 0)
			return int_field(c, "index");
	}
	return -1;
}

/* "job 7: running, 3 commits tested, 25 runs, range a..b (9 commits)" */
static char *progress_line(json_t *job)
{
	json_t *range = json_object_get(job, "range");
	const char *after = str_field(range, "after");
	const char *through = str_field(range, "through");
	long long lo = commit_index(job, after);
	long long hi = commit_index(job, through);
	const char *phase =
	    str_field(json_object_get(job, "progress"), "phase");
	const char *why = "";
	char *line = NULL, span[48] = "";

	if (lo >= 0 && hi > lo)
		snprintf(span, sizeof(span), " (%lld commit%s)", hi - lo,
			 hi - lo == 1 ? "" : "s");
	/* The range moves back or aside after a culprit is found: say so. */
	if (phase != NULL && strcmp(phase, "follow-up") == 0)
		why = "; a culprit is found, now checking another part of the "
		      "range for a change the search stepped over";
	else if (phase != NULL && strcmp(phase, "confirming") == 0)
		why = "; confirming with fresh runs";
	else if (phase != NULL && strcmp(phase, "resolving") == 0)
		why = "; listing the range's commits";
	if (asprintf(
		&line,
		"job %lld: %s, %lld commit%s tested, %lld run%s, "
		"range %.12s..%.12s%s%s",
		int_field(job, "id"),
		str_field(job, "state") ? str_field(job, "state") : "?",
		int_field(job, "commits_tested"),
		int_field(job, "commits_tested") == 1 ? "" : "s",
		int_field(job, "runs"), int_field(job, "runs") == 1 ? "" : "s",
		after ? after : "?", through ? through : "?", span, why) < 0)
		return NULL;
	return line;
}

/*
 * The job's change as every view shows it: one decimal, with its 95%
 * interval when the API gives one ("-5.0% (95% CI -6.2% to -3.8%)").
 * Empty when the job has no change.
 */
static void format_change(char *buf, size_t size, json_t *job)
{
	json_t *change = json_object_get(job, "change_pct");
	json_t *ci = json_object_get(job, "change_ci95");
	int n;

	buf[0] = '\0';
	if (!json_is_number(change))
		return;
	n = snprintf(buf, size, "%+.1f%%", json_number_value(change));
	if (n > 0 && (size_t)n < size && json_is_array(ci) &&
	    json_is_number(json_array_get(ci, 0)) &&
	    json_is_number(json_array_get(ci, 1)))
		snprintf(buf + n, size - (size_t)n,
			 " (95%% CI %+.1f%% to %+.1f%%)",
			 json_number_value(json_array_get(ci, 0)),
			 json_number_value(json_array_get(ci, 1)));
}

/* The entry of the job's culprit in its list of changes (the regression
 * of a range that also improved need not be the first). */
static json_t *named_culprit(json_t *job)
{
	json_t *list = json_object_get(job, "culprits"), *c;
	const char *culprit = str_field(job, "culprit");
	size_t i;

	json_array_foreach(list, i, c)
	{
		const char *sha = str_field(c, "commit");

		if (culprit != NULL && sha != NULL &&
		    strcmp(sha, culprit) == 0)
			return c;
	}
	return json_array_get(list, 0);
}

/* The closing line of a finished job. */
static void print_verdict(FILE *out, json_t *job)
{
	const char *state = str_field(job, "state");
	const char *verdict = str_field(job, "verdict");
	const char *message = str_field(job, "message");
	const char *culprit = str_field(job, "culprit");
	json_t *first = named_culprit(job);
	char change[96];

	format_change(change, sizeof(change), job);
	fprintf(out, "job %lld: ", int_field(job, "id"));
	if (state == NULL || strcmp(state, "done") != 0 || verdict == NULL) {
		put_clean(out, state != NULL ? state : "unknown state");
		if (message != NULL) {
			fputs(": ", out);
			put_clean(out, message);
		}
	} else if (culprit != NULL) {
		put_clean(out, verdict);
		fputs(": first ", out);
		put_clean(out, strcmp(verdict, "regression") == 0 ? "bad"
								  : "changed");
		fputs(" commit ", out);
		put_clean(out, culprit);
		if (str_field(first, "subject") != NULL) {
			fputs(" \"", out);
			put_clean(out, str_field(first, "subject"));
			fputc('"', out);
		}
		if (change[0] != '\0') {
			fprintf(out, ", %s ", change);
			put_clean(out, str_field(job, "kpi"));
		}
	} else if (strcmp(verdict, "no-change") == 0) {
		fputs("no-change: ", out);
		put_clean(out, str_field(job, "kpi"));
		fputs(" did not change between ", out);
		fprintf(out, "%.12s and %.12s",
			str_field(job, "good") ? str_field(job, "good") : "?",
			str_field(job, "bad") ? str_field(job, "bad") : "?");
	} else {
		put_clean(out, verdict);
		fputs(": ", out);
		put_clean(out, message != NULL ? message
					       : "the runs could not decide");
	}
	fputc('\n', out);
}

static void print_json(json_t *value)
{
	if (jsonout_print(stdout, value) < 0)
		fail("out of memory");
}

/* A labelled line of the status summary, if `value` is there. */
static void summary_line(const char *label, const char *value)
{
	if (value == NULL)
		return;
	printf("%-10s ", label);
	put_clean(stdout, value);
	fputc('\n', stdout);
}

/* A compare job's columns, one "revision:" line each. */
static void print_revisions(json_t *job)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(job, "revisions"), i, c)
	{
		json_t *change = json_object_get(c, "change_pct");
		const char *verdict = str_field(c, "verdict");
		char line[160];

		snprintf(line, sizeof(line), "%.12s %lld runs",
			 str_field(c, "sha") ? str_field(c, "sha") : "",
			 int_field(c, "runs"));
		if (json_is_number(change))
			snprintf(line + strlen(line),
				 sizeof(line) - strlen(line), " %+.1f%%",
				 json_number_value(change));
		summary_line("revision:", line);
		if (verdict != NULL) {
			fputs("             ", stdout);
			put_clean(stdout, verdict);
			fputc('\n', stdout);
		}
	}
}

static void print_summary(json_t *job)
{
	json_t *first = named_culprit(job);
	char line[160];

	printf("job %lld: ", int_field(job, "id"));
	put_clean(stdout, str_field(job, "state"));
	if (str_field(job, "verdict") != NULL) {
		fputs(", ", stdout);
		put_clean(stdout, str_field(job, "verdict"));
	}
	fputc('\n', stdout);
	summary_line("repo:", str_field(job, "repo"));
	summary_line("testcase:", str_field(job, "testcase"));
	summary_line("kpi:", str_field(job, "kpi"));
	summary_line("good:", str_field(job, "good"));
	summary_line("bad:", str_field(job, "bad"));
	snprintf(line, sizeof(line),
		 "%lld candidates, %lld commits tested, %lld runs",
		 int_field(job, "candidates"),
		 int_field(job, "commits_tested"), int_field(job, "runs"));
	summary_line("tested:", line);
	summary_line("culprit:", str_field(job, "culprit"));
	summary_line("subject:", str_field(first, "subject"));
	summary_line("parent:", str_field(job, "parent"));
	format_change(line, sizeof(line), job);
	if (line[0] != '\0')
		summary_line("change:", line);
	print_revisions(job);
	summary_line("message:", str_field(job, "message"));
	summary_line("created:", str_field(job, "created_at"));
	summary_line("finished:", str_field(job, "finished_at"));
}

/*
 * GETs job `job_id`.  Returns 0 with the job in *out, or -1 after setting
 * *message (malloc'd) and *transient (worth trying again: the server was
 * unreachable, its database was (503), or a proxy in front of it said so
 * (502, 504); a 500 is a fault that trying again does not mend).
 */
static int fetch_job(struct remote *remote, long long job_id, json_t **out,
		     char **message, bool *transient)
{
	struct remote_reply reply;
	char path[64];

	*out = NULL;
	*message = NULL;
	*transient = false;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", job_id);
	if (remote_call(remote, "GET", path, NULL, &reply, message) < 0) {
		*transient = true;
		return -1;
	}
	if (reply.status != 200 || !json_is_object(reply.json) ||
	    !json_is_integer(json_object_get(reply.json, "id"))) {
		*transient = reply.status == 502 || reply.status == 503 ||
			     reply.status == 504;
		*message = reply.status == 200
			       ? strdup("the server's reply is not a job")
			       : remote_error_message(&reply);
		remote_reply_clear(&reply);
		return -1;
	}
	*out = json_incref(reply.json);
	remote_reply_clear(&reply);
	return 0;
}

/* Ends a command that shows a finished job: the verdict line (on
 * standard error when standard output carries the JSON). */
static int finish_job(json_t *job, const struct cli_options *o)
{
	print_verdict(o->json ? stderr : stdout, job);
	if (o->json)
		print_json(job);
	return job_exit_status(job);
}

/* Prints progress `line` with the job's elapsed time and the estimate of
 * the time left, when the server gives them ("; 4 min 12 s so far, about
 * 3 min left"). */
static void print_times(const char *line, json_t *job)
{
	json_t *progress = json_object_get(job, "progress");
	json_t *elapsed = json_object_get(progress, "elapsed_s");
	json_t *left = json_object_get(progress, "time_left_s");
	char so_far[40], to_go[40];

	if (!json_is_number(elapsed)) {
		fprintf(stderr, "%s\n", line);
		return;
	}
	timeleft_format(so_far, sizeof(so_far), json_number_value(elapsed));
	if (json_is_number(left))
		fprintf(stderr, "%s; %s so far, about %s left\n", line, so_far,
			timeleft_format(to_go, sizeof(to_go),
					json_number_value(left)));
	else
		fprintf(stderr, "%s; %s so far\n", line, so_far);
}

/* Polls job `job_id` until it finishes, printing progress lines on
 * standard error as they change; the exit status of the verdict. */
static int follow_job(struct remote *remote, long long job_id,
		      const struct cli_options *o)
{
	json_t *job = NULL;
	char *last = NULL, *line, *message;
	int failures = 0, status;
	bool transient;

	for (;;) {
		if (fetch_job(remote, job_id, &job, &message, &transient) <
		    0) {
			if (!transient || ++failures > CLI_POLL_RETRIES) {
				status = fail("%s", message ? message
							    : "out of memory");
				free(message);
				goto out;
			}
			fprintf(stderr, "statbisect: %s; trying again\n",
				message ? message : "out of memory");
			free(message);
			/* At least 2 s a step: a restarting server needs
			 * longer than a fast poll. */
			pause_s(fmax(o->poll_s, 2.0) * failures);
			continue;
		}
		failures = 0;
		if (job_finished(job))
			break;
		line = progress_line(job);
		if (line != NULL &&
		    (last == NULL || strcmp(line, last) != 0)) {
			print_times(line, job);
			free(last);
			last = line;
		} else {
			free(line);
		}
		json_decref(job);
		job = NULL;
		pause_s(o->poll_s);
	}
	status = finish_job(job, o);
out:
	json_decref(job);
	free(last);
	return status;
}

/* Fails with the server's message for a reply that is not `expect`. */
static int reply_failed(const struct remote_reply *reply)
{
	char *message = remote_error_message(reply);
	int status = fail("%s", message != NULL ? message : "out of memory");

	free(message);
	return status;
}

static int post_job(struct remote *remote, const struct cli_options *o,
		    const char *path, json_t *body);

static int cmd_submit(struct remote *remote, const struct cli_options *o)
{
	json_t *body;
	int status;

	if (json_array_size(o->revisions) > 0)
		body = json_pack("{s:s,s:s,s:s,s:O}", "kind", "compare",
				 "repo", o->repo, "testcase", o->testcase,
				 "revisions", o->revisions);
	else
		body =
		    json_pack("{s:s,s:s,s:s,s:s}", "repo", o->repo, "testcase",
			      o->testcase, "good", o->good, "bad", o->bad);
	if (body == NULL)
		return fail("the arguments must be UTF-8 text");
	if (json_array_size(o->notify) > 0)
		json_object_set(body, "notify", o->notify);
	if (o->runs_min > 0)
		json_object_set_new(body, "runs_min",
				    json_integer(o->runs_min));
	if (o->runs_max > 0)
		json_object_set_new(body, "runs_max",
				    json_integer(o->runs_max));
	if (o->machines > 0)
		json_object_set_new(body, "machines",
				    json_integer(o->machines));
	if (o->group != NULL &&
	    json_object_set_new(body, "group", json_string(o->group)) < 0) {
		json_decref(body);
		return fail("--group must be UTF-8 text");
	}
	/* The webhook's secret comes from the environment, never the
	 * command line, where ps shows it. */
	if (o->webhook != NULL &&
	    json_object_set_new(
		body, "webhook",
		json_pack("{s:s,s:s?,s:s?}", "url", o->webhook, "format",
			  o->webhook_format, "secret",
			  getenv("STATBISECT_WEBHOOK_SECRET"))) < 0) {
		json_decref(body);
		return fail("--webhook must be UTF-8 text");
	}
	status = post_job(remote, o, "/api/v1/jobs", body);
	json_decref(body);
	return status;
}

static int cmd_retest(struct remote *remote, const struct cli_options *o)
{
	char path[64];
	json_t *body = json_pack("{s:s}", "fix", o->fix);
	int status;

	if (body == NULL)
		return fail("the arguments must be UTF-8 text");
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/retest", o->job_id);
	status = post_job(remote, o, path, body);
	json_decref(body);
	return status;
}

/* POSTs `body` to `path`, which answers 201 with a new job; prints it
 * (or follows it with --wait). */
static int post_job(struct remote *remote, const struct cli_options *o,
		    const char *path, json_t *body)
{
	struct remote_reply reply = {0};
	char *err = NULL;
	json_t *job;
	int status;

	if (remote_call(remote, "POST", path, body, &reply, &err) < 0) {
		status = fail("%s", err != NULL ? err : "out of memory");
		goto out;
	}
	job = reply.json;
	/* 202: a long range, its candidates listed in the background. */
	if ((reply.status != 201 && reply.status != 202) ||
	    !json_is_object(job) ||
	    !json_is_integer(json_object_get(job, "id"))) {
		status = reply.status == 201 || reply.status == 202
			     ? fail("the server's reply is not a job")
			     : reply_failed(&reply);
		goto out;
	}
	if (reply.status == 202)
		fprintf(stderr,
			"job %lld submitted: listing its range in the "
			"background, %s/jobs/%lld\n",
			int_field(job, "id"), remote_server_url(remote),
			int_field(job, "id"));
	else
		fprintf(stderr,
			"job %lld submitted: %lld candidates, %s/jobs/%lld\n",
			int_field(job, "id"), int_field(job, "candidates"),
			remote_server_url(remote), int_field(job, "id"));
	if (o->wait) {
		status = follow_job(remote, int_field(job, "id"), o);
		goto out;
	}
	if (o->json)
		print_json(job);
	else
		printf("%lld\n", int_field(job, "id"));
	status = CLI_EXIT_GOOD;
out:
	remote_reply_clear(&reply);
	free(err);
	return status;
}

static int cmd_status(struct remote *remote, const struct cli_options *o)
{
	char *message = NULL;
	json_t *job = NULL;
	bool transient;
	int status;

	if (o->wait)
		return follow_job(remote, o->job_id, o);
	if (fetch_job(remote, o->job_id, &job, &message, &transient) < 0) {
		status = fail("%s", message ? message : "out of memory");
		free(message);
		return status;
	}
	if (o->json)
		print_json(job);
	else
		print_summary(job);
	json_decref(job);
	return CLI_EXIT_GOOD;
}

static int cmd_report(struct remote *remote, const struct cli_options *o)
{
	struct remote_reply reply;
	char path[64], *err = NULL;
	int status = CLI_EXIT_GOOD;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/report", o->job_id);
	if (remote_call(remote, "GET", path, NULL, &reply, &err) < 0) {
		status = fail("%s", err != NULL ? err : "out of memory");
		free(err);
		return status;
	}
	if (reply.status != 200)
		status = reply_failed(&reply);
	else
		fwrite(reply.body, 1, reply.len, stdout);
	remote_reply_clear(&reply);
	return status;
}

static int cmd_cancel(struct remote *remote, const struct cli_options *o)
{
	struct remote_reply reply;
	char path[64], *err = NULL;
	int status = CLI_EXIT_GOOD;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", o->job_id);
	if (remote_call(remote, "DELETE", path, NULL, &reply, &err) < 0) {
		status = fail("%s", err != NULL ? err : "out of memory");
		free(err);
		return status;
	}
	if (reply.status != 200 || !json_is_object(reply.json))
		status = reply_failed(&reply);
	else if (o->json)
		print_json(reply.json);
	else
		printf("job %lld: cancelled\n", o->job_id);
	remote_reply_clear(&reply);
	return status;
}

/* Reads the command line into `o`; the exit status to end with, or -1 to
 * carry on. */
static int parse_args(struct cli_options *o, int argc, char **argv)
{
	enum {
		OPT_REPO = 256,
		OPT_TESTCASE,
		OPT_GOOD,
		OPT_BAD,
		OPT_NOTIFY,
		OPT_WAIT,
		OPT_JSON,
		OPT_SERVER,
		OPT_TOKEN,
		OPT_POLL,
		OPT_RUNS_MIN,
		OPT_RUNS_MAX,
		OPT_REVISION,
		OPT_FIX,
		OPT_WEBHOOK,
		OPT_WEBHOOK_FORMAT,
		OPT_GROUP,
		OPT_MACHINES
	};
	static const struct option options[] = {
	    {"repo", required_argument, NULL, OPT_REPO},
	    {"testcase", required_argument, NULL, OPT_TESTCASE},
	    {"good", required_argument, NULL, OPT_GOOD},
	    {"bad", required_argument, NULL, OPT_BAD},
	    {"notify", required_argument, NULL, OPT_NOTIFY},
	    {"wait", no_argument, NULL, OPT_WAIT},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"server", required_argument, NULL, OPT_SERVER},
	    {"token", required_argument, NULL, OPT_TOKEN},
	    {"poll", required_argument, NULL, OPT_POLL},
	    {"runs-min", required_argument, NULL, OPT_RUNS_MIN},
	    {"runs-max", required_argument, NULL, OPT_RUNS_MAX},
	    {"group", required_argument, NULL, OPT_GROUP},
	    {"machines", required_argument, NULL, OPT_MACHINES},
	    {"revision", required_argument, NULL, OPT_REVISION},
	    {"fix", required_argument, NULL, OPT_FIX},
	    {"webhook", required_argument, NULL, OPT_WEBHOOK},
	    {"webhook-format", required_argument, NULL, OPT_WEBHOOK_FORMAT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *env;
	bool submit, retest;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (opt) {
		case OPT_REPO:
			o->repo = optarg;
			break;
		case OPT_TESTCASE:
			o->testcase = optarg;
			break;
		case OPT_GOOD:
			o->good = optarg;
			break;
		case OPT_BAD:
			o->bad = optarg;
			break;
		case OPT_NOTIFY:
			if (json_array_append_new(o->notify,
						  json_string(optarg)) < 0)
				return fail("--notify '%s' is not UTF-8 text",
					    optarg);
			break;
		case OPT_REVISION:
			if (json_array_append_new(o->revisions,
						  json_string(optarg)) < 0)
				return fail("--revision '%s' is not UTF-8 "
					    "text",
					    optarg);
			break;
		case OPT_FIX:
			o->fix = optarg;
			break;
		case OPT_WEBHOOK:
			o->webhook = optarg;
			break;
		case OPT_WEBHOOK_FORMAT:
			o->webhook_format = optarg;
			break;
		case OPT_WAIT:
			o->wait = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_SERVER:
			o->server = optarg;
			break;
		case OPT_TOKEN:
			o->token = optarg;
			break;
		case OPT_GROUP:
			o->group = optarg;
			break;
		case OPT_MACHINES:
			/* the server checks the range and says so */
			if (id_parse(&o->machines, optarg) < 0)
				return fail("--machines takes a whole number "
					    "of machines, not '%s'",
					    optarg);
			break;
		case OPT_POLL:
			if (!parse_seconds(optarg, &o->poll_s))
				return fail("--poll takes seconds from 0.1 to "
					    "3600, not '%s'",
					    optarg);
			o->poll_given = true;
			break;
		case OPT_RUNS_MIN:
		case OPT_RUNS_MAX:
			if (id_parse(opt == OPT_RUNS_MIN ? &o->runs_min
							 : &o->runs_max,
				     optarg) < 0)
				return fail("%s takes a whole number of runs, "
					    "not '%s'",
					    opt == OPT_RUNS_MIN ? "--runs-min"
								: "--runs-max",
					    optarg);
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_GOOD;
		case ':':
			return fail("%s needs a value (see --help)",
				    argv[optind - 1]);
		default:
			return fail("unknown option '%s' (see --help)",
				    argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return CLI_EXIT_TROUBLE;
	}
	o->command = argv[optind++];
	if (strcmp(o->command, "help") == 0) {
		usage(stdout);
		return CLI_EXIT_GOOD;
	}
	submit = strcmp(o->command, "submit") == 0;
	retest = strcmp(o->command, "retest") == 0;
	if (!submit && !retest && strcmp(o->command, "status") != 0 &&
	    strcmp(o->command, "report") != 0 &&
	    strcmp(o->command, "cancel") != 0)
		return fail("unknown command '%s': submit, retest, status, "
			    "report or cancel (see --help)",
			    o->command);
	if (o->webhook_format != NULL && o->webhook == NULL)
		return fail("--webhook-format needs --webhook URL");
	if ((o->webhook != NULL) && !submit)
		return fail("--webhook is for submit only");
	if ((o->fix != NULL) != retest)
		return fail(retest ? "retest needs --fix REV"
				   : "--fix is for retest only");
	if (!submit && json_array_size(o->revisions) > 0)
		return fail("--revision is for submit only");
	if (submit && json_array_size(o->revisions) > 0) {
		if (optind < argc)
			return fail("submit takes no argument '%s'",
				    argv[optind]);
		if (o->repo == NULL || o->testcase == NULL ||
		    o->good != NULL || o->bad != NULL)
			return fail("a compare job needs --repo, --testcase "
				    "and --revision (no --good or --bad)");
	} else if (submit) {
		if (optind < argc)
			return fail("submit takes no argument '%s'",
				    argv[optind]);
		if (o->repo == NULL || o->testcase == NULL ||
		    o->good == NULL || o->bad == NULL)
			return fail("submit needs --repo, --testcase, --good "
				    "and --bad");
	} else {
		if (o->repo != NULL || o->testcase != NULL ||
		    o->good != NULL || o->bad != NULL ||
		    json_array_size(o->notify) > 0 || o->runs_min > 0 ||
		    o->runs_max > 0 || o->group != NULL || o->machines > 0)
			return fail("--repo, --testcase, --good, --bad, "
				    "--notify, --runs-min, --runs-max, "
				    "--group and --machines are for submit "
				    "only");
		if (optind + 1 != argc)
			return fail("%s takes one job id", o->command);
		if (id_parse(&o->job_id, argv[optind]) < 0)
			return fail("'%s' is not a job id", argv[optind]);
		if (o->wait && strcmp(o->command, "status") != 0 && !retest)
			return fail("--wait is for submit, retest and "
				    "status");
		if (o->json && strcmp(o->command, "report") == 0)
			return fail("report prints the message itself; "
				    "--json does not apply");
	}
	if (o->poll_given && !o->wait)
		return fail("--poll needs --wait");
	if (o->server == NULL) {
		env = getenv("STATBISECT_SERVER");
		o->server =
		    env != NULL && env[0] != '\0' ? env : CLI_DEFAULT_SERVER;
	}
	if (o->token == NULL) {
		env = getenv("STATBISECT_TOKEN");
		if (env == NULL || env[0] == '\0')
			return fail("no token: pass --token TOKEN or set "
				    "STATBISECT_TOKEN");
		o->token = env;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cli_options o = {0};
	struct remote *remote = NULL;
	char *err = NULL;
	int status;

	if (argc > 1 && strcmp(argv[1], "watch") == 0)
		return watch_main(argc - 1, argv + 1);
	o.poll_s = CLI_DEFAULT_POLL_S;
	o.notify = json_array();
	o.revisions = json_array();
	if (o.notify == NULL || o.revisions == NULL)
		return fail("out of memory");
	status = parse_args(&o, argc, argv);
	if (status >= 0)
		goto out;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		status = fail("cannot initialise libcurl");
		goto out;
	}
	if (remote_new(&remote, o.server, o.token, &err) < 0) {
		status = fail("%s", err != NULL ? err : "out of memory");
		goto cleanup;
	}
	if (strcmp(o.command, "submit") == 0)
		status = cmd_submit(remote, &o);
	else if (strcmp(o.command, "retest") == 0)
		status = cmd_retest(remote, &o);
	else if (strcmp(o.command, "status") == 0)
		status = cmd_status(remote, &o);
	else if (strcmp(o.command, "report") == 0)
		status = cmd_report(remote, &o);
	else
		status = cmd_cancel(remote, &o);
	if (fflush(stdout) != 0 || ferror(stdout))
		status = fail("cannot write the output: %s", strerror(errno));
cleanup:
	remote_free(remote);
	curl_global_cleanup();
out:
	free(err);
	json_decref(o.notify);
	json_decref(o.revisions);
	return status;
}
