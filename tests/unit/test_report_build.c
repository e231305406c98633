/*
 * Tests of lib/report_build.c: a finished job's facts made into its mail
 * (text cleaning, recipients, the metric table, the links, one rendering).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_build.h"

#define SHA_GOOD "1111111111111111111111111111111111111111"
#define SHA_PARENT "2222222222222222222222222222222222222222"
#define SHA_CULPRIT "3333333333333333333333333333333333333333"
#define SHA_BAD "4444444444444444444444444444444444444444"

/* ---- text ------------------------------------------------------------- */

static void assert_clean_line(const char *text, size_t max, const char *want)
{
	char *got = report_clean_line(text, max);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_report_build__clean_line(void **state)
{
	(void)state;
	assert_clean_line(NULL, 10, "");
	assert_clean_line("net: x\r\nBcc: y\tz\x1b[m\x7f", 100,
			  "net: x  Bcc: y z [m ");
	/* A Latin-1 byte and a cut sequence become '?'; valid UTF-8 stays. */
	assert_clean_line("caf\xe9 \xe2\x82 \xc3\xa9", 100,
			  "caf? ?? \xc3\xa9");
	/* Cut at a character boundary, marked. */
	assert_clean_line("abcdef", 4, "abcd...");
	assert_clean_line("ab\xc3\xa9x", 3, "ab...");
	assert_clean_line("abcd", 4, "abcd");
}

static void test_report_build__clean_command(void **state)
{
	char long_line[REPORT_COMMAND_LINE_MAX + 2];
	char *got;

	(void)state;
	got = report_clean_command("make -j2\r\n\n./bench --x\t1\r\n");
	assert_non_null(got);
	assert_string_equal(got, "make -j2\n./bench --x 1");
	free(got);
	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	assert_null(report_clean_command(long_line));
	assert_null(report_clean_command(NULL));
	assert_null(report_clean_command("\n\n"));
}

static void test_report_build__date_and_message_id(void **state)
{
	char buf[REPORT_MESSAGE_ID_MAX];

	(void)state;
	report_date(buf, sizeof(buf), 1767225600); /* 2026-01-01 00:00 */
	assert_string_equal(buf, "Thu, 01 Jan 2026 00:00:00 +0000");
	report_date(buf, sizeof(buf), 1796286061);
	assert_string_equal(buf, "Thu, 03 Dec 2026 08:21:01 +0000");
	assert_int_equal(report_message_id(buf, sizeof(buf), 7,
					   "00ff12ab34cd56ef", "bench1"),
			 0);
	assert_string_equal(buf, "<statbisect.job7.00ff12ab34cd56ef@bench1>");
	assert_int_equal(
	    report_message_id(buf, sizeof(buf), 7, "ab", "a@b<c>"), 0);
	assert_string_equal(buf, "<statbisect.job7.ab@localhost>");
	assert_int_equal(report_message_id(buf, sizeof(buf), 7, "ab", NULL),
			 0);
	assert_string_equal(buf, "<statbisect.job7.ab@localhost>");
	assert_int_equal(report_message_id(buf, sizeof(buf), 7, "", "h"),
			 -EINVAL);
	assert_int_equal(report_message_id(buf, sizeof(buf), 7, "xyz", "h"),
			 -EINVAL);
}

static void test_report_build__samples_leave_out_bad_names(void **state)
{
	struct report_samples samples = {0};

	(void)state;
	assert_int_equal(report_samples_add(&samples, "ops", 0, 1.0), 0);
	assert_int_equal(report_samples_add(&samples, "ops", 1, 2.0), 0);
	assert_int_equal(report_samples_add(&samples, "ops", 1, 3.0), 0);
	assert_int_equal(report_samples_add(&samples, "bad name", 0, 1), 0);
	assert_int_equal(report_samples_add(&samples, "nan", 0, NAN), 0);
	assert_int_equal(report_samples_add(&samples, "ops", 2, 1.0), 0);
	assert_int_equal(samples.count, 1);
	assert_string_equal(samples.series[0].name, "ops");
	assert_int_equal(samples.series[0].count[0], 1);
	assert_int_equal(samples.series[0].count[1], 2);
	assert_true(samples.series[0].side[1][1] == 3.0);
	report_samples_clear(&samples);
	assert_int_equal(samples.count, 0);
}

/* Many names (the samples' index grows several times): each value goes
 * to its own series, and the series keep the order names first came. */
static void test_report_build__samples_many_names_keep_order(void **state)
{
	struct report_samples samples = {0};
	char name[32];
	size_t i, round;

	(void)state;
	for (round = 0; round < 2; round++)
		for (i = 0; i < 3000; i++) {
			snprintf(name, sizeof(name), "m%zu",
				 (i * 7919) % 3000);
			assert_int_equal(report_samples_add(&samples, name, 0,
							    (double)i + round),
					 0);
		}
	assert_int_equal(report_samples_add(&samples, "m5", 1, -1.0), 0);
	assert_int_equal(samples.count, 3000);
	for (i = 0; i < 3000; i++) {
		const struct report_series *s = &samples.series[i];

		snprintf(name, sizeof(name), "m%zu", (i * 7919) % 3000);
		assert_string_equal(s->name, name);
		assert_int_equal(s->count[0], 2);
		assert_true(s->side[0][0] == (double)i);
		assert_true(s->side[0][1] == (double)i + 1);
		assert_int_equal(s->count[1], strcmp(name, "m5") == 0);
	}
	report_samples_clear(&samples);
	assert_null(samples.slots);
	assert_int_equal(samples.count, 0);
}

/* ---- whole reports ---------------------------------------------------- */

struct fixture {
	struct report_commit commits[4];
	struct report_param params[2];
	const char *notify[3];
	const char *testcase_notify[2];
	struct bisect_result result;
	struct report_samples samples;
	struct report_job job;
};

/* A job of four commits whose third (SHA_CULPRIT) made "ops" 10% lower. */
static void fixture_init(struct fixture *f)
{
	static const double base[] = {100, 101, 99}, slow[] = {90, 91, 89};
	size_t i;

	memset(f, 0, sizeof(*f));
	f->commits[0] =
	    (struct report_commit){SHA_GOOD, "bench: add", NULL, false, 3};
	f->commits[1] = (struct report_commit){SHA_PARENT, "mm: prepare",
					       "prep@example.org", false, 3};
	f->commits[2] = (struct report_commit){
	    SHA_CULPRIT, "net: udp: slow\r\nBcc: evil@example.org",
	    "Author@Example.org", false, 4};
	f->commits[3] = (struct report_commit){SHA_BAD, "", NULL, false, 3};
	f->params[0] = (struct report_param){"threads", "4"};
	f->params[1] = (struct report_param){"mode", "fast\nslow"};
	f->notify[0] = "author@example.org"; /* the author again */
	f->notify[1] = "not an address";
	f->notify[2] = "dev@example.org";
	f->testcase_notify[0] = "list@example.org";
	f->testcase_notify[1] = "DEV@example.org";
	f->result.verdict = BISECT_REGRESSION;
	f->result.culprit_count = 1;
	f->result.culprits[0].commit = 2;
	f->result.culprits[0].parent = 1;
	f->result.culprits[0].change_pct = -10.04;
	f->result.culprits[0].change_ci95_lo = -11.5;
	f->result.culprits[0].change_ci95_hi = -8.5;
	f->result.culprits[0].confidence = 0.987;
	f->result.culprits[0].regression = true;
	f->result.change_pct = -10;
	f->result.change_ci95_lo = NAN;
	f->result.change_ci95_hi = NAN;
	for (i = 0; i < 3; i++) {
		assert_int_equal(
		    report_samples_add(&f->samples, "time.elapsed", 0, 5), 0);
		assert_int_equal(
		    report_samples_add(&f->samples, "ops", 0, base[i]), 0);
		assert_int_equal(
		    report_samples_add(&f->samples, "ops", 1, slow[i]), 0);
		assert_int_equal(
		    report_samples_add(&f->samples, "time.elapsed", 1, 5), 0);
	}
	f->job = (struct report_job){
	    .id = 7,
	    .base_url = "http://sb.example:8080",
	    .mail_from = "statbisect robot <robot@sb.example>",
	    .mail_from_address = "robot@sb.example",
	    .repo = "toy",
	    .repo_url = "/srv/git/toy repo",
	    .web_url = "https://git.example/toy/commit/{sha}",
	    .branch = "main",
	    .testcase = "toy-bench",
	    .kpi = "ops",
	    .build = "make\r\n",
	    .run = "./bench",
	    .machine = "4 threads 1 sockets Toy CPU with 8G memory",
	    .params = f->params,
	    .param_count = 2,
	    .notify = f->notify,
	    .notify_count = 3,
	    .testcase_notify = f->testcase_notify,
	    .testcase_notify_count = 2,
	    .notify_author = true,
	    .commits = f->commits,
	    .commit_count = 4,
	    .result = &f->result,
	    .which = 0,
	    .samples = &f->samples,
	    .date = "Thu, 01 Jan 2026 00:00:00 +0000",
	    .message_id = "<statbisect.job7.00ff@host>",
	    .link_key = "0a1b",
	};
}

/* `text` holds `line` as a whole line (CRLF ends). */
static void assert_line(const char *text, const char *line)
{
	const char *at = text;
	size_t n = strlen(line);

	while ((at = strstr(at, line)) != NULL) {
		if ((at == text || at[-1] == '\n') &&
		    strncmp(at + n, "\r\n", 2) == 0)
			return;
		at += n;
	}
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_report_build__regression(void **state)
{
	struct fixture f;
	struct report_mail mail;
	struct report_side base = {100, 0, 3}, slow = {90, 0, 3};
	char *kpi_row = NULL, *row_line;

	(void)state;
	fixture_init(&f);
	base.stddev_pct = 100.0 * sqrt(2.0 / 3) / 100;
	slow.stddev_pct = 100.0 * sqrt(2.0 / 3) / 90;
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_string_equal(mail.subject,
			    "[toy:main] [net]  3333333333:  ops -10.0% "
			    "regression");
	/* To: the author, then the notify list; Cc the testcase's; each
	 * address once without regard to case; the bad one left out. */
	assert_int_equal(mail.recipient_count, 3);
	assert_string_equal(mail.recipients[0], "Author@Example.org");
	assert_string_equal(mail.recipients[1], "dev@example.org");
	assert_string_equal(mail.recipients[2], "list@example.org");
	assert_int_equal(mail.skipped_count, 1);
	assert_string_equal(mail.skipped[0].address, "not an address");
	assert_string_equal(mail.skipped[0].whose, "a notify");
	assert_line(mail.message, "Date: Thu, 01 Jan 2026 00:00:00 +0000");
	assert_line(mail.message, "From: statbisect robot <robot@sb.example>");
	assert_line(mail.message, "To: Author@Example.org, dev@example.org");
	assert_line(mail.message, "Cc: list@example.org");
	assert_line(mail.message, "Message-ID: <statbisect.job7.00ff@host>");
	/* The subject's CR LF became blanks: no header was added. */
	assert_null(strstr(mail.message, "\nBcc:"));
	assert_line(mail.message,
		    "commit: " SHA_CULPRIT " (\"net: udp: slow  Bcc: "
		    "evil@example.org\")");
	assert_line(mail.message,
		    "https://git.example/toy/commit/" SHA_CULPRIT " main");
	assert_line(mail.message, "testcase: toy-bench");
	assert_line(
	    mail.message,
	    "test machine: 4 threads 1 sockets Toy CPU with 8G memory");
	assert_line(mail.message, "runs: 3 (parent) / 4 (culprit), "
				  "confidence: 98.7%");
	assert_line(mail.message, "change: -10.0% (95% CI -11.5% to -8.5%)");
	assert_line(mail.message, "\tthreads: 4");
	assert_line(mail.message, "\tmode: fast slow");
	assert_line(mail.message, "| Reported-by: statbisect robot "
				  "<robot@sb.example>");
	/* Every link opens a page of the job with its read key, none the
	 * API (a reader without an account has no token). */
	assert_line(mail.message,
		    "| Closes: http://sb.example:8080/jobs/7/report?key=0a1b");
	assert_line(mail.message, "http://sb.example:8080/jobs/7?key=0a1b");
	assert_line(mail.message,
		    "http://sb.example:8080/jobs/7/runs.csv?key=0a1b");
	assert_line(mail.message,
		    "http://sb.example:8080/jobs/7/runs.json?key=0a1b");
	assert_null(strstr(mail.message, "/api/"));
	assert_line(mail.message,
		    "\tgit clone '/srv/git/toy repo' toy && cd toy && "
		    "git checkout " SHA_CULPRIT);
	assert_line(mail.message, "\tmake");
	assert_line(mail.message, "\t./bench");
	assert_line(mail.message, "mode/testcase/threads:");
	assert_line(mail.message, "  fast slow/toy-bench/4");
	/* The KPI row shows the job's change estimate, not the means'. */
	assert_int_equal(report_format_row_with_change(&kpi_row, "ops", &base,
						       &slow, -10.04),
			 0);
	kpi_row[strlen(kpi_row) - 1] = '\0';
	assert_line(mail.message, kpi_row);
	row_line = strstr(mail.message, kpi_row);
	assert_non_null(strstr(row_line, "\r\n\r\n\r\nDisclaimer:"));
	/* An unchanged metric is not a row. */
	assert_null(strstr(mail.message, "time.elapsed"));
	free(kpi_row);
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

static void test_report_build__no_change_with_nobody_to_tell(void **state)
{
	struct fixture f;
	struct report_mail mail;

	(void)state;
	fixture_init(&f);
	f.result.verdict = BISECT_NO_CHANGE;
	f.result.culprit_count = 0;
	f.job.notify_count = 0;
	f.job.testcase_notify_count = 0;
	f.job.notify_author = true; /* no culprit: no author */
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_string_equal(mail.subject, "[toy:main] no change of ops in "
					  "1111111111..4444444444");
	assert_int_equal(mail.recipient_count, 0);
	assert_line(mail.message, "To: robot@sb.example");
	assert_null(strstr(mail.message, "\r\nCc:"));
	assert_line(mail.message, "good: " SHA_GOOD " (\"bench: add\")");
	assert_line(mail.message, "bad:  " SHA_BAD " (\"\")");
	assert_line(mail.message, "runs: 3 (good) / 3 (bad)");
	assert_null(strstr(mail.message, "Closes:"));
	/* The checkout is of the bad end. */
	assert_line(mail.message,
		    "\tgit clone '/srv/git/toy repo' toy && cd toy && "
		    "git checkout " SHA_BAD);
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

/* A testcase with its own benchmark repository: the reproduce section
 * fetches it at the job's bench commit beside the tree, and exports
 * $STATBISECT_BENCH_DIR before build and run; no password of either
 * repository is shown. */
static void test_report_build__bench_repo_in_reproduce(void **state)
{
	struct fixture f;
	struct report_mail mail;
	const char *bench, *clone, *build;

	(void)state;
	fixture_init(&f);
	f.job.bench_repo = "https://robot:s3cret@git.example/bench.git";
	f.job.bench_commit = SHA_GOOD;
	f.job.repo_url = "https://robot:s3cret@git.example/toy.git";
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_line(mail.message,
		    "\tgit clone 'https://robot:***@git.example/bench.git' "
		    "bench && git -C bench checkout " SHA_GOOD);
	assert_line(mail.message, "\texport STATBISECT_BENCH_DIR=$PWD/bench");
	assert_null(strstr(mail.message, "s3cret"));
	/* The bench first, then the tree (whose cd would move $PWD), then
	 * the build. */
	bench = strstr(mail.message, "\texport STATBISECT_BENCH_DIR");
	clone = strstr(mail.message,
		       "\tgit clone 'https://robot:***@git.example/toy.git' "
		       "toy && cd toy && git checkout " SHA_CULPRIT);
	build = strstr(mail.message, "\tmake\r\n");
	assert_non_null(bench);
	assert_non_null(clone);
	assert_non_null(build);
	assert_true(bench < clone && clone < build);
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

/* Without a bench commit (the job never ran), no bench lines. */
static void test_report_build__no_bench_lines_without_commit(void **state)
{
	struct fixture f;
	struct report_mail mail;

	(void)state;
	fixture_init(&f);
	f.job.bench_repo = "https://git.example/bench.git";
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_null(strstr(mail.message, "STATBISECT_BENCH_DIR"));
	assert_null(strstr(mail.message, "bench.git"));
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

static void test_report_build__inconclusive_says_why(void **state)
{
	struct fixture f;
	struct report_mail mail;

	(void)state;
	fixture_init(&f);
	f.result.verdict = BISECT_INCONCLUSIVE;
	f.result.culprit_count = 0;
	f.result.reason = "the good end\ndid not build";
	f.result.change_pct = NAN; /* the engine compared nothing */
	f.commits[0].build_failed = true;
	f.job.branch = "\x01\x02";
	f.job.build = NULL;
	f.job.link_key = NULL;
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_string_equal(mail.subject, "[toy:?] inconclusive result for "
					  "ops in 1111111111..4444444444");
	assert_line(mail.message,
		    "No commit was bisected: the good end did not build.");
	/* The table's change is that of its own means, not a change of 0%
	 * beside two different numbers. */
	assert_non_null(strstr(mail.message, "-10.0%"));
	assert_null(strstr(mail.message, "+0.0%"));
	assert_line(mail.message, "Build logs of the commits that did not "
				  "build (skipped):");
	/* Without a key the links are the pages all the same. */
	assert_line(mail.message,
		    "http://sb.example:8080/jobs/7/commits/" SHA_GOOD "/log");
	assert_line(mail.message, "http://sb.example:8080/jobs/7");
	assert_null(strstr(mail.message, "\tmake"));
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

/* A range with two changes: each report lists both, in their own
 * directions, and names its own culprit. */
static void test_report_build__several_changes(void **state)
{
	struct fixture f;
	struct report_mail mail;

	(void)state;
	fixture_init(&f);
	f.result.culprit_count = 2;
	f.result.culprits[1] = f.result.culprits[0];
	f.result.culprits[1].commit = 3;
	f.result.culprits[1].parent = 2;
	f.result.culprits[1].change_pct = 5.5;
	f.result.culprits[1].regression = false;
	f.job.which = 1;
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_string_equal(mail.subject,
			    "[toy:main]  4444444444:  ops 5.5% improvement");
	assert_line(mail.message, "  333333333333 -10.0% regression: "
				  "net: udp: slow  Bcc: evil@example.org");
	assert_line(mail.message, "  444444444444 5.5% improvement: ");
	assert_null(strstr(mail.message, "Closes:"));
	/* The author of this culprit has no address. */
	assert_string_equal(mail.recipients[0], "author@example.org");
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

/* A commit link that could not share a line with the branch is left
 * out; the report is still made, once. */
static void test_report_build__overlong_link_left_out(void **state)
{
	struct fixture f;
	struct report_mail mail;
	char web_url[1500];

	(void)state;
	fixture_init(&f);
	memset(web_url, 'x', sizeof(web_url));
	memcpy(web_url, "https://", 8);
	strcpy(web_url + sizeof(web_url) - 6, "{sha}");
	f.job.web_url = web_url;
	assert_int_equal(report_build(&mail, &f.job), 0);
	assert_line(mail.message, "toy main");
	report_mail_clear(&mail);
	report_samples_clear(&f.samples);
}

static void test_report_build__refuses_missing_facts(void **state)
{
	struct fixture f;
	struct report_mail mail;

	(void)state;
	fixture_init(&f);
	f.job.message_id = "no id";
	assert_int_equal(report_build(&mail, &f.job), -EINVAL);
	assert_null(mail.message);
	f.job.message_id = "<a@b>";
	f.result.culprits[0].change_pct = NAN;
	assert_int_equal(report_build(&mail, &f.job), -EINVAL);
	f.job.commit_count = 0;
	assert_int_equal(report_build(&mail, &f.job), -EINVAL);
	report_samples_clear(&f.samples);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_build__clean_line),
	    cmocka_unit_test(test_report_build__clean_command),
	    cmocka_unit_test(test_report_build__date_and_message_id),
	    cmocka_unit_test(test_report_build__samples_leave_out_bad_names),
	    cmocka_unit_test(test_report_build__samples_many_names_keep_order),
	    cmocka_unit_test(test_report_build__regression),
	    cmocka_unit_test(test_report_build__no_change_with_nobody_to_tell),
	    cmocka_unit_test(test_report_build__bench_repo_in_reproduce),
	    cmocka_unit_test(test_report_build__no_bench_lines_without_commit),
	    cmocka_unit_test(test_report_build__inconclusive_says_why),
	    cmocka_unit_test(test_report_build__several_changes),
	    cmocka_unit_test(test_report_build__overlong_link_left_out),
	    cmocka_unit_test(test_report_build__refuses_missing_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
