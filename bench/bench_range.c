/*
 * bench_range: listing a 100,000-commit range with merges into a job's
 * candidates and making the engine's first decision on it, with the
 * time and the peak memory of each.
 *
 * The repository (bench/genrepo.py dag) has 100,000 commits: a main line
 * that merges a side branch of 1 to 6 commits every 8 to 12 commits.  Its
 * range bench-good..bench-bad holds 99,999 candidates, just under the
 * server's JOBS_RANGE_LIMIT (server/jobs.h), which the server lists in the
 * resolver thread (server/resolver.c: gitrepo_range on the bare mirror).
 * The candidates then become the engine's DAG as the scheduler makes it
 * (server/scheduler.c load_commits: one array of parent indices, each
 * commit pointing into it), and bisect_step() is called with the two
 * endpoints measured apart, so that it walks the DAG for the first
 * commit to test (git bisect's best split of all 99,999).
 *
 * The listing runs RUNS times (each with a fresh repository handle, as the
 * resolver opens one per job); the peak resident set (getrusage
 * ru_maxrss) is read after the first listing and again at the end.
 * Prints `range_list_ms` (wall-clock) and `range_list_cpu_ms` (user and
 * system time), `range_dag_ms`, `range_first_step_ms` and
 * `range_peak_rss_mb`; the issue asks for the listing and the DAG in
 * under 2 s and 200 MB: the exit status is 1 when the listing's CPU time
 * with the DAG's and the first step's, or the peak, is over.
 */
#include <git2.h>

#include "bench_util.h"
#include "bisect.h"
#include "gitrepo.h"

/* server/jobs.h's JOBS_RANGE_LIMIT (the benchmarks link lib/ only). */
#define RANGE_LIMIT 100000
#define RUNS 3
#define LIMIT_MS 2000.0
#define LIMIT_MB 200.0
#define ENDPOINT_RUNS 5

static double rss_now_mb(void)
{
	char line[256];
	double kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %lf kB", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024.0;
}

static struct gitrepo_commit *list(size_t *count, const char *path, double *ms,
				   double *cpu_ms)
{
	struct gitrepo_commit *commits = NULL;
	git_repository *repo = NULL;
	git_oid good, bad;
	char *err = NULL;
	double t0 = bench_now_ms(), c0 = bench_cpu_ms();

	if (gitrepo_open(&repo, path, &err) < 0 ||
	    gitrepo_resolve(&good, repo, "bench-good", "bench", &err) < 0 ||
	    gitrepo_resolve(&bad, repo, "bench-bad", "bench", &err) < 0 ||
	    gitrepo_range(&commits, count, repo, &good, &bad, RANGE_LIMIT,
			  &err) < 0)
		bench_die("listing the range: %s", err);
	git_repository_free(repo);
	*ms = bench_now_ms() - t0;
	*cpu_ms = bench_cpu_ms() - c0;
	return commits;
}

/* The engine's input, as the scheduler builds it from the candidates. */
struct dag_input {
	struct bisect_commit *input;
	size_t *parents;
	size_t merges;
};

static void dag_build(struct dag_input *out,
		      const struct gitrepo_commit *commits, size_t count)
{
	size_t i, k, room = 1, used = 0;

	for (i = 0; i < count; i++)
		room += commits[i].parent_count;
	out->input = calloc(count, sizeof(*out->input));
	out->parents = calloc(room, sizeof(*out->parents));
	out->merges = 0;
	if (out->input == NULL || out->parents == NULL)
		bench_die("out of memory");
	for (i = 0; i < count; i++) {
		out->input[i].parents = &out->parents[used];
		for (k = 0; k < commits[i].parent_count; k++)
			out->parents[used++] = commits[i].parents[k];
		out->input[i].parent_count = commits[i].parent_count;
		out->merges += commits[i].parent_count > 1;
	}
}

int main(void)
{
	static const double good_runs[ENDPOINT_RUNS] = {100, 101, 99, 100.5,
							99.5};
	static const double bad_runs[ENDPOINT_RUNS] = {90, 91, 89, 90.5, 89.5};
	double list_ms[RUNS], list_cpu_ms[RUNS], dag_ms, step_ms, rss_base,
	    rss_list = 0, t0;
	struct gitrepo_commit *commits = NULL;
	struct bisect_options opts;
	struct bisect_result res;
	struct dag_input dag;
	char path[BENCH_PATH_MAX];
	size_t count = 0;
	int run, ok;

	if (gitrepo_global_init() < 0)
		bench_die("cannot initialise libgit2");
	bench_repo(path, sizeof(path), "dag");
	rss_base = rss_now_mb();
	for (run = 0; run < RUNS; run++) {
		gitrepo_commits_free(commits, count);
		commits = list(&count, path, &list_ms[run], &list_cpu_ms[run]);
		if (run == 0)
			rss_list = bench_peak_rss_mb();
	}

	t0 = bench_now_ms();
	dag_build(&dag, commits, count);
	dag_ms = bench_now_ms() - t0;
	dag.input[0].values = good_runs;
	dag.input[0].value_count = ENDPOINT_RUNS;
	dag.input[count - 1].values = bad_runs;
	dag.input[count - 1].value_count = ENDPOINT_RUNS;
	bisect_options_init(&opts, true);
	t0 = bench_now_ms();
	if (bisect_step(&res, NULL, dag.input, count, &opts) < 0)
		bench_die("bisect_step failed");
	step_ms = bench_now_ms() - t0;
	if (res.verdict != BISECT_PENDING || res.request_count == 0 ||
	    res.requests[0].commit == 0 || res.requests[0].commit >= count - 1)
		bench_die("the engine did not ask for a commit inside the "
			  "range");

	printf("range_candidates: %zu (%zu merges)\n", count, dag.merges);
	for (run = 0; run < RUNS; run++)
		printf("range_list_%d_ms: %.1f (cpu %.1f)\n", run + 1,
		       list_ms[run], list_cpu_ms[run]);
	printf("range_list_ms: %.1f (median of %d)\n",
	       bench_median(list_ms, RUNS), RUNS);
	printf("range_list_cpu_ms: %.1f (median of %d)\n",
	       bench_median(list_cpu_ms, RUNS), RUNS);
	printf("range_dag_ms: %.1f\n", dag_ms);
	printf("range_first_step_ms: %.1f (asks for commit %zu, %zu "
	       "candidates left)\n",
	       step_ms, res.requests[0].commit, res.candidates_left);
	printf("range_rss_before_mb: %.1f\n", rss_base);
	printf("range_peak_rss_after_first_listing_mb: %.1f\n", rss_list);
	printf("range_peak_rss_mb: %.1f\n", bench_peak_rss_mb());
	/* CPU time, not wall-clock: on the shared machine other sessions'
	 * load stretches the latter by half or more. */
	ok = bench_median(list_cpu_ms, RUNS) + dag_ms + step_ms < LIMIT_MS &&
	     bench_peak_rss_mb() < LIMIT_MB;
	gitrepo_commits_free(commits, count);
	free(dag.input);
	free(dag.parents);
	bench_tmp_cleanup();
	git_libgit2_shutdown();
	return ok ? 0 : 1;
}
