/*
 * bench_report: how long the robot's report of a job takes to make when
 * every run carries 2,000 metrics.
 *
 * The job is a regression found in a range of 40 commits; the report
 * compares the culprit with its parent, each with RUNS_PER_SIDE runs.
 * Two parts are timed, as server/reportjob.c does them:
 *  - the samples: every metric of every run of the two commits added
 *    with report_samples_add() (store_reports_samples does it for each
 *    run's JSON object read from the database; the parse is not timed),
 *  - the render: report_build(), the whole RFC 5322 message with the
 *    metric table.
 * Each is repeated REPEATS times; the medians are printed as
 * `report_samples_ms`, `report_render_ms` and their sum
 * `report_total_ms`.  The issue asks for under 50 ms: the exit status is
 * 1 when the median of the sum is not.
 */
#include <math.h>

#include "bench_util.h"
#include "report_build.h"

#define METRICS 2000
#define RUNS_PER_SIDE 10
#define COMMITS 40
#define CULPRIT 23
#define REPEATS 9
#define LIMIT_MS 50.0

static char names[METRICS][32];

/* Run `run` of `side`'s value of metric `m`: the culprit makes a third
 * of the metrics 5% worse, with a little noise. */
static double value(size_t m, int side, size_t run)
{
	double base = 1000.0 + (double)m;
	double noise = (double)((m * 7 + run * 13) % 11) - 5.0;

	return base * (side == 1 && m % 3 == 0 ? 0.95 : 1.0) + noise;
}

static void fill_samples(struct report_samples *samples)
{
	size_t run, m;
	int side;

	/* In the order the runs come from the database: run by run, each
	 * with all of its metrics. */
	for (run = 0; run < RUNS_PER_SIDE; run++)
		for (side = 0; side < 2; side++)
			for (m = 0; m < METRICS; m++)
				if (report_samples_add(samples, names[m], side,
						       value(m, side, run)) <
				    0)
					bench_die("out of memory");
}

int main(void)
{
	static struct report_commit commits[COMMITS];
	static char shas[COMMITS][41], subjects[COMMITS][64];
	static const char *notify[] = {"dev@example.org"};
	struct report_param params[] = {{"threads", "4"}};
	double samples_ms[REPEATS], render_ms[REPEATS], total_ms[REPEATS];
	struct report_samples samples = {0};
	struct bisect_result result = {0};
	struct report_mail mail = {0};
	struct report_job job;
	size_t i, j, bytes = 0;
	double t0, total;

	for (i = 0; i < METRICS; i++)
		snprintf(names[i], sizeof(names[i]), "group%02zu.metric%04zu",
			 i / 100, i);
	for (i = 0; i < COMMITS; i++) {
		for (j = 0; j < 40; j++)
			shas[i][j] = "0123456789abcdef"[(i * 7 + j * 3) % 16];
		snprintf(subjects[i], sizeof(subjects[i]),
			 "net: change %zu of the range", i);
		commits[i] = (struct report_commit){shas[i], subjects[i],
						    "author@example.org",
						    false, RUNS_PER_SIDE};
	}
	result.verdict = BISECT_REGRESSION;
	result.culprit_count = 1;
	result.culprits[0] = (struct bisect_culprit){
	    .commit = CULPRIT,
	    .parent = CULPRIT - 1,
	    .change_pct = -5.0,
	    .change_ci95_lo = -5.5,
	    .change_ci95_hi = -4.5,
	    .p_value = 1e-6,
	    .confidence = 0.99,
	    .confirmed = true,
	    .regression = true,
	};
	result.change_pct = -5.0;
	result.change_ci95_lo = NAN;
	result.change_ci95_hi = NAN;
	result.p_value = 1e-6;
	result.confidence = 0.99;
	job = (struct report_job){
	    .id = 14,
	    .base_url = "http://sb.example:8080",
	    .mail_from = "statbisect robot <robot@sb.example>",
	    .mail_from_address = "robot@sb.example",
	    .repo = "linux",
	    .repo_url = "https://git.example/linux.git",
	    .web_url = "https://git.example/linux/commit/{sha}",
	    .branch = "main",
	    .testcase = "many-metrics",
	    .kpi = "group00.metric0000",
	    .build = "make -j8",
	    .run = "./bench --all-metrics",
	    .machine = "2 threads 1 sockets Bench CPU with 4G memory",
	    .params = params,
	    .param_count = 1,
	    .notify = notify,
	    .notify_count = 1,
	    .notify_author = true,
	    .commits = commits,
	    .commit_count = COMMITS,
	    .result = &result,
	    .which = 0,
	    .date = "Sun, 06 Dec 2026 03:00:00 +0000",
	    .message_id = "<statbisect.job14.00ff@bench>",
	    .link_key = "0a1b",
	};
	for (i = 0; i < REPEATS; i++) {
		report_samples_clear(&samples);
		t0 = bench_now_ms();
		fill_samples(&samples);
		samples_ms[i] = bench_now_ms() - t0;
		job.samples = &samples;
		t0 = bench_now_ms();
		if (report_build(&mail, &job) < 0)
			bench_die("report_build failed");
		render_ms[i] = bench_now_ms() - t0;
		total_ms[i] = samples_ms[i] + render_ms[i];
		bytes = strlen(mail.message);
		report_mail_clear(&mail);
	}
	printf("report_metrics: %d per run, %d runs per side, %zu series\n",
	       METRICS, RUNS_PER_SIDE, samples.count);
	printf("report_message_bytes: %zu\n", bytes);
	printf("report_samples_ms: %.2f (median of %d)\n",
	       bench_median(samples_ms, REPEATS), REPEATS);
	printf("report_render_ms: %.2f (median of %d)\n",
	       bench_median(render_ms, REPEATS), REPEATS);
	total = bench_median(total_ms, REPEATS);
	printf("report_total_ms: %.2f (median of %d)\n", total, REPEATS);
	report_samples_clear(&samples);
	return total < LIMIT_MS ? 0 : 1;
}
