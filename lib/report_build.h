/*
 * report_build - everything between a finished job and its mail: cleaning
 * the text that comes from outside (commit subjects, branch names,
 * commands, the machine), selecting and ordering the metric table, picking
 * the recipients, and rendering the RFC 5322 message with lib/report.h,
 * once.
 *
 * Pure like report.h: the caller loads the job and passes the date and the
 * Message-ID (report_date, report_message_id); nothing here reads a clock,
 * a database or the network.  Errors are negated errno values as in
 * report.h.
 */
#ifndef STATBISECT_REPORT_BUILD_H
#define STATBISECT_REPORT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "bisect.h"
#include "report.h"

/* Longest commit subject, machine, branch or parameter text in a report. */
#define REPORT_TEXT_MAX 300
/* Longest line of a command in the reproduce section (a body line may not
 * pass 998 octets); a command with a longer line is left out. */
#define REPORT_COMMAND_LINE_MAX 900
/* Longest reason of an inconclusive report (wrapped into lines). */
#define REPORT_REASON_MAX 2000
/* The most build logs a report links, and testcase parameters it lists. */
#define REPORT_BUILD_LOGS_MAX 10
#define REPORT_PARAMS_MAX 32

/*
 * A copy of `text` fit for one line of a report and of its headers: every
 * control character (CR, LF, TAB, ESC, DEL...) becomes a space, invalid
 * UTF-8 becomes '?', and text beyond `max` bytes is cut at a character
 * boundary and marked with "...".  "" for NULL.  Returns the malloc'd
 * copy, or NULL when memory ran out.
 */
char *report_clean_line(const char *text, size_t max);

/*
 * A command for the reproduce section: each line cleaned as
 * report_clean_line does, CRLF line ends made LF.  NULL (the command is
 * left out) when `command` is NULL, a line is longer than
 * REPORT_COMMAND_LINE_MAX or memory runs out.
 */
char *report_clean_command(const char *command);

/*
 * The reproduce section's lines that fetch the benchmark's repository
 * `bench_repo` (its password masked) at `bench_commit` into ./bench and
 * export STATBISECT_BENCH_DIR, cleaned as report_clean_command does;
 * NULL when either is NULL (no benchmark repository, or no commit of it
 * ran) or memory runs out.  The caller frees it.
 */
char *report_bench_command(const char *bench_repo, const char *bench_commit);

/* `when` as an RFC 5322 date in UTC ("Thu, 03 Dec 2026 08:21:03 +0000")
 * into `buf` of `size` bytes (32 suffice). */
void report_date(char *buf, size_t size, time_t when);

/*
 * The Message-ID of job `job_id`'s report, "<statbisect.jobID.TAG@HOST>",
 * into `buf` of `size` bytes (REPORT_MESSAGE_ID_MAX suffice).  `tag` is
 * the caller's random text (hex digits from lib/secret.h, so two reports
 * never share an id); `host` is this machine's name, replaced by
 * "localhost" when NULL, empty, longer than 127 bytes or holding a blank,
 * '<', '>' or '@'.  Returns 0, or -EINVAL when `tag` is not 1 to 64 hex
 * digits.
 */
#define REPORT_MESSAGE_ID_MAX 256
int report_message_id(char *buf, size_t size, long long job_id,
		      const char *tag, const char *host);

/*
 * Every metric's samples on the two sides compared (side 0 the parent or
 * the good end, side 1 the culprit or the bad end), in the order each
 * name first came.  Start from an all-zero struct; free with
 * report_samples_clear.
 */
struct report_series {
	char *name;
	double *side[2];
	size_t count[2];
	size_t capacity[2];
};

struct report_samples {
	struct report_series *series;
	size_t count, capacity;
	/* An index of the names: slot_count (a power of two, at least twice
	 * count) slots, each 0 or a series' index + 1, so that adding a
	 * value finds its series without comparing every name: a job whose
	 * runs carry 2,000 metrics made 40 million comparisons otherwise
	 * (docs/PERFORMANCE.md). */
	size_t *slots;
	size_t slot_count;
};

/*
 * Adds one run's `value` of metric `name` to `side` (0 or 1).  Names come
 * from workers: a name metrics_name_valid() refuses, a value that is not
 * finite or a side other than 0 and 1 is left out.  Returns 0 (added or
 * left out) or -ENOMEM.
 */
int report_samples_add(struct report_samples *samples, const char *name,
		       int side, double value);
void report_samples_clear(struct report_samples *samples);

/* One candidate commit as the report needs it; text as stored. */
struct report_commit {
	const char *sha; /* 40 hex digits */
	const char *subject;
	const char *author_email; /* or NULL */
	bool build_failed;
	size_t runs; /* counted runs: search and confirmation */
};

/*
 * A finished job, as loaded from the database.  Strings are as stored
 * (report_build cleans what comes from outside) and may be NULL where
 * marked.
 */
struct report_job {
	long long id;
	const char *base_url;	       /* where people reach the server */
	const char *mail_from;	       /* From: "Name <addr>" or addr */
	const char *mail_from_address; /* the robot's own address */
	const char *repo, *repo_url;
	const char *web_url; /* commit link template with "{sha}", or NULL */
	const char *branch;  /* the bad revision as submitted */
	bool branch_watched; /* a watched branch's name (watcher.h) */
	const char *testcase, *kpi;
	const char *build, *run; /* commands; build may be NULL or "" */
	/* The testcase's benchmark repository (any password in it is masked
	 * in the report) and the commit of it the job ran, or NULL. */
	const char *bench_repo, *bench_commit;
	const char *machine; /* of a worker that ran the culprit, or NULL */
	const struct report_param *params; /* values as text */
	size_t param_count;
	const char *const *notify; /* the job's addresses */
	size_t notify_count;
	const char *const *testcase_notify; /* the testcase's: Cc */
	size_t testcase_notify_count;
	bool notify_author;
	const struct report_commit *commits; /* oldest (good) first */
	size_t commit_count;
	const struct bisect_result *result;
	size_t which; /* the culprit reported (see report_build_sides) */
	const struct report_samples *samples;
	const char *date, *message_id; /* report_date, report_message_id */
	/* A patch job's report is a reply (all NULL / 0 otherwise): its
	 * subject ("Re: <the patch's>"), the "<message-id>" it answers, the
	 * url/base/patch lines shown under the commit line, and the patch's
	 * To and Cc, who get it too when notify_author is set. */
	const char *reply_subject, *in_reply_to;
	const char *const *reply_lines;
	size_t reply_line_count;
	const char *const *patch_recipients;
	size_t patch_recipient_count;
	/* The job's read key, which every link to the job's pages carries
	 * (so whoever gets the report can open them), or NULL. */
	const char *link_key;
};

/*
 * The two commits job `job` compares in report `which`: a culprit and its
 * parent when the verdict is a regression or an improvement and `which`
 * names a culprit, else the range's ends.  Sets *base_idx and *new_idx.
 * The caller loads the samples of these two.
 */
void report_build_sides(size_t *base_idx, size_t *new_idx,
			const struct bisect_result *result, size_t which,
			size_t commit_count);

/* An address report_build refused, and whose it was. */
struct report_skipped {
	const char *address;
	const char *whose; /* "the culprit author's", "a notify", ... */
};

/*
 * A report ready for the outbox: its Subject and its whole message
 * (CRLF), and the addresses it goes to (To, then Cc), which point into
 * the job's strings.  Free with report_mail_clear.
 */
struct report_mail {
	char *subject;
	char *message;
	const char **recipients;
	size_t recipient_count;
	struct report_skipped *skipped; /* addresses left out, for a log */
	size_t skipped_count;
};

/*
 * Builds report `job->which` of `job`: To the culprit's author (when the
 * testcase opts in and there is a culprit) and the job's notify list, Cc
 * the testcase's list, each address once (without regard to case) and
 * only when report_address_is_valid(); when To would be empty the Cc list
 * moves there, and with nobody at all the message is addressed to
 * mail_from_address.  Returns 0, -ENOMEM, or -EINVAL when a field the
 * report cannot do without is missing or not finite (the KPI change of a
 * culprit, the date, the Message-ID, a sha).
 */
int report_build(struct report_mail *out, const struct report_job *job);
void report_mail_clear(struct report_mail *mail);

#endif
