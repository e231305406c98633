/*
 * Unit tests of several machines for one job (lib/spread.c).
 *
 * Jobs are driven as the server drives them: spread_step() plans runs for
 * the free machines; a planned machine is busy (its commits open) until
 * its runs are made, one machine at a time in turn; then spread_step()
 * again, until it settles.  The settled machine then runs the ordinary
 * engine over the whole range of its own runs to its verdict.  Each
 * machine has its own level (an offset of a few percent) and Gaussian
 * noise from a seeded gsl_rng, so every run sees the same data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "bisect.h"
#include "spread.h"

#define RUNS_CAP 96
#define COMMITS_MAX 256
#define MACHINES 4

struct machine_runs {
	double values[COMMITS_MAX][RUNS_CAP];
	double confirm[COMMITS_MAX][RUNS_CAP];
	size_t seq[COMMITS_MAX][RUNS_CAP];
	size_t confirm_seq[COMMITS_MAX][RUNS_CAP];
	size_t count[COMMITS_MAX], confirm_count[COMMITS_MAX];
	struct bisect_commit in[COMMITS_MAX];
	size_t open[BISECT_MAX_REQUESTS];
	size_t arrival[COMMITS_MAX]; /* given when job->arrival is set */
	struct spread_plan plan;     /* planned, not yet run */
	double offset;		     /* its level, times the true one */
};

struct job {
	size_t count, culprit;
	double change; /* the culprit's level, times good's */
	double sd;     /* of one run, in percent of the level */
	size_t parents[COMMITS_MAX];
	struct bisect_commit shape[COMMITS_MAX];
	struct machine_runs *machines;
	struct spread_machine spread[MACHINES];
	size_t machine_count;
	size_t seq, runs;
	bool arrival; /* give spread_step the machines' arrival[] */
	gsl_rng *rng;
	struct bisect_options opts;
};

static struct job *job_new(size_t count, size_t culprit, double change,
			   size_t machine_count, unsigned long seed)
{
	struct job *job = calloc(1, sizeof(*job));
	size_t i, m;

	assert_non_null(job);
	job->machines = calloc(MACHINES, sizeof(*job->machines));
	assert_non_null(job->machines);
	job->count = count;
	job->culprit = culprit;
	job->change = change;
	job->sd = 1.0;
	job->machine_count = machine_count;
	job->rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(job->rng, seed);
	bisect_options_init(&job->opts, true);
	for (i = 0; i < count; i++) {
		job->parents[i] = i - 1;
		job->shape[i].parents = i > 0 ? &job->parents[i] : NULL;
		job->shape[i].parent_count = i > 0;
	}
	for (m = 0; m < MACHINES; m++)
		job->machines[m].offset =
		    m == 0 ? 1.0 : 1.0 + 0.03 * (m % 2 ? 1.0 : -1.0) / m;
	return job;
}

static void job_free(struct job *job)
{
	gsl_rng_free(job->rng);
	free(job->machines);
	free(job);
}

/* The engine's and spread_step's view of machine m's runs. */
static const struct spread_machine *view(struct job *job, size_t m)
{
	struct machine_runs *r = &job->machines[m];
	struct spread_machine *s = &job->spread[m];
	size_t i;

	for (i = 0; i < job->count; i++) {
		r->in[i] = job->shape[i];
		r->in[i].values = r->values[i];
		r->in[i].value_count = r->count[i];
		r->in[i].seq = r->seq[i];
		r->in[i].confirm_values = r->confirm[i];
		r->in[i].confirm_count = r->confirm_count[i];
		r->in[i].confirm_seq = r->confirm_seq[i];
	}
	s->commits = r->in;
	s->open = r->open;
	s->open_count = r->plan.request_count;
	s->arrival = job->arrival ? r->arrival : NULL;
	for (i = 0; i < r->plan.request_count; i++)
		r->open[i] = r->plan.requests[i].commit;
	return s;
}

static void run_once(struct job *job, size_t m, size_t commit, bool confirm)
{
	struct machine_runs *r = &job->machines[m];
	double level =
	    1000.0 * r->offset * (commit >= job->culprit ? job->change : 1.0);
	double kpi = level + gsl_ran_gaussian(job->rng, level * job->sd / 100);
	size_t *n = confirm ? &r->confirm_count[commit] : &r->count[commit];

	assert_true(*n < RUNS_CAP);
	(confirm ? r->confirm : r->values)[commit][*n] = kpi;
	(confirm ? r->confirm_seq : r->seq)[commit][*n] = ++job->seq;
	(*n)++;
	job->runs++;
}

/* Ten runs of each endpoint on every machine, alternately: endpoints
 * that clearly differ (a change of 3% against 1% noise). */
static void endpoints_measured(struct job *job)
{
	size_t m, q;

	for (m = 0; m < job->machine_count; m++)
		for (q = 0; q < 10; q++) {
			run_once(job, m, 0, false);
			run_once(job, m, job->count - 1, false);
		}
}

/* Makes the runs of a plan on machine m, alternately when asked. */
static void run_plan(struct job *job, size_t m, const struct spread_plan *plan)
{
	size_t done[BISECT_MAX_REQUESTS] = {0}, q, k;
	bool more = true;

	while (more) {
		more = false;
		for (q = 0; q < plan->request_count; q++) {
			const struct bisect_request *rq = &plan->requests[q];
			size_t burst = plan->interleave ? 1 : rq->runs;

			for (k = 0; k < burst && done[q] < rq->runs; k++) {
				run_once(job, m, rq->commit,
					 rq->purpose == BISECT_CONFIRM);
				done[q]++;
				more = true;
			}
		}
	}
}

/* spread_step over the job's machines as they are now. */
static void step(struct job *job, struct spread_result *res)
{
	size_t m;

	for (m = 0; m < job->machine_count; m++)
		view(job, m);
	assert_int_equal(spread_step(res, job->shape, job->count, job->spread,
				     job->machine_count, &job->opts),
			 0);
}

/* How many machines have confirmation runs planned. */
static size_t confirming_machines(const struct job *job)
{
	size_t m, q, n = 0;

	for (m = 0; m < job->machine_count; m++) {
		const struct spread_plan *p = &job->machines[m].plan;

		for (q = 0; q < p->request_count; q++)
			if (p->requests[q].purpose == BISECT_CONFIRM) {
				n++;
				break;
			}
	}
	return n;
}

/*
 * Drives the k-section until it settles, the machines' planned runs made
 * one machine at a time in turn; returns the machine it settled on and
 * counts the rounds into *rounds.
 */
static size_t spread_until_settled(struct job *job, struct spread_result *res,
				   size_t *rounds)
{
	size_t m, next = 0, guard;

	for (guard = 0; guard < 10000; guard++) {
		step(job, res);
		if (res->settle)
			return res->settle_on;
		for (m = 0; m < job->machine_count; m++) {
			if (job->machines[m].plan.request_count == 0)
				job->machines[m].plan = res->plans[m];
			else
				/* a busy machine is planned nothing */
				assert_int_equal(res->plans[m].request_count,
						 0);
		}
		/* one machine confirms at a time */
		assert_true(confirming_machines(job) <= 1);
		/* the next busy machine in turn makes its runs */
		for (m = 0; m < job->machine_count; m++) {
			size_t k = (next + m) % job->machine_count;
			struct machine_runs *r = &job->machines[k];

			if (r->plan.request_count == 0)
				continue;
			run_plan(job, k, &r->plan);
			memset(&r->plan, 0, sizeof(r->plan));
			next = k + 1;
			break;
		}
		assert_true(m < job->machine_count);
		(*rounds)++;
	}
	fail_msg("the k-section did not settle");
	return SPREAD_NONE;
}

/* The ordinary engine over machine m's runs of the whole range. */
static void alone(struct job *job, size_t m, struct bisect_result *res)
{
	struct bisect_options opts = job->opts;
	size_t guard;

	/* as the server's scheduler has it for a job that was spread */
	opts.prefer_measured = true;
	for (guard = 0; guard < 1000; guard++) {
		struct spread_plan plan = {0};
		size_t q;

		view(job, m);
		assert_int_equal(bisect_step(res, NULL, job->machines[m].in,
					     job->count, &opts),
				 0);
		if (res->verdict != BISECT_PENDING)
			return;
		for (q = 0; q < res->request_count; q++)
			plan.requests[q] = res->requests[q];
		plan.request_count = res->request_count;
		plan.interleave = res->interleave;
		run_plan(job, m, &plan);
	}
	fail_msg("the engine did not end");
}

static void four_machines_find_the_culprit_and_settle_on_one(void **state)
{
	unsigned long seed;
	size_t after = 0;

	(void)state;
	for (seed = 1; seed <= 6; seed++) {
		struct job *job = job_new(200, 37 + 23 * seed, 0.98, 4, seed);
		struct spread_result res;
		struct bisect_result verdict;
		size_t rounds = 0, m, runs_before, others = 0;

		m = spread_until_settled(job, &res, &rounds);
		assert_true(m < 4);
		assert_string_equal(res.reason,
				    "one machine confirmed the culprit");
		/* every machine took part */
		for (size_t k = 0; k < 4; k++)
			if (k != m && job->machines[k].count[0] > 0)
				others++;
		assert_int_equal(others, 3);
		runs_before = job->runs;
		alone(job, m, &verdict);
		print_message("seed %lu: %zu runs, %zu after settling\n", seed,
			      runs_before, job->runs - runs_before);
		after += job->runs - runs_before;
		assert_int_equal(verdict.verdict, BISECT_REGRESSION);
		assert_int_equal(verdict.culprit_count, 1);
		assert_int_equal(verdict.culprits[0].commit, job->culprit);
		assert_true(verdict.culprits[0].confirmed);
		job_free(job);
	}
	/* The settled machine's engine goes on from the commits it
	 * measured (prefer_measured): without, 6 to 32 runs each, 104 in
	 * all; with, mostly none. */
	assert_true(after <= 30);
}

static void free_machines_split_the_range_evenly(void **state)
{
	struct job *job = job_new(101, 60, 0.97, 4, 7);
	struct spread_result res;
	size_t m, q, tested[MACHINES], n = 0;

	(void)state;
	/* every machine measures its endpoints first */
	step(job, &res);
	assert_false(res.settle);
	for (m = 0; m < 4; m++) {
		assert_int_equal(res.plans[m].request_count, 2);
		assert_int_equal(res.plans[m].requests[0].commit, 0);
		assert_int_equal(res.plans[m].requests[1].commit, 100);
		assert_true(res.plans[m].interleave);
	}
	assert_int_equal(res.join.request_count, 2);
	/* endpoints that clearly differ on each (3% against 1% noise) */
	endpoints_measured(job);
	step(job, &res);
	assert_false(res.settle);
	/* four free machines at once: five equal parts of 99 commits */
	for (m = 0; m < 4; m++) {
		for (q = 0; q < res.plans[m].request_count; q++) {
			size_t c = res.plans[m].requests[q].commit;

			if (c != 0 && c != 100)
				tested[n++] = c;
		}
	}
	assert_int_equal(n, 4);
	assert_int_equal(tested[0], 20);
	assert_int_equal(tested[1], 40);
	assert_int_equal(tested[2], 60);
	assert_int_equal(tested[3], 80);
	assert_int_equal(res.room, 95);
	job_free(job);
}

static void a_commit_under_test_is_not_given_twice(void **state)
{
	struct job *job = job_new(101, 60, 0.97, 2, 8);
	struct spread_result res;
	size_t q;

	(void)state;
	endpoints_measured(job);
	/* machine 0 is busy testing 50, with no run of it in yet */
	job->machines[0].plan.request_count = 1;
	job->machines[0].plan.requests[0].commit = 50;
	job->machines[0].plan.requests[0].runs = 3;
	step(job, &res);
	assert_false(res.settle);
	assert_int_equal(res.plans[0].request_count, 0);
	assert_true(res.plans[1].request_count > 0);
	for (q = 0; q < res.plans[1].request_count; q++)
		assert_int_not_equal(res.plans[1].requests[q].commit, 50);
	assert_int_equal(res.plans[1].requests[0].commit % 100 != 0 ? 1 : 0,
			 1);
	job_free(job);
}

static void an_answer_the_range_has_left_is_not_used(void **state)
{
	struct job *job = job_new(41, 30, 0.97, 2, 9);
	struct spread_result res;
	size_t q;

	(void)state;
	endpoints_measured(job);
	/* machine 1 puts 10 at bad's level, then machine 0 20 at good's */
	job->culprit = 10;
	for (q = 0; q < 8; q++)
		run_once(job, 1, 10, false);
	job->culprit = 30;
	for (q = 0; q < 8; q++)
		run_once(job, 0, 20, false);
	/* 10 came first: 20, outside (0, 10) by then, is not used (the
	 * confirmation on one machine would find the change elsewhere) */
	step(job, &res);
	assert_false(res.settle);
	assert_int_equal(res.lo, 0);
	assert_int_equal(res.hi, 10);
	/* The same runs, but the server says machine 0's answer came first
	 * (its seq counts each machine's runs apart): 10 is the one left
	 * out. */
	job->arrival = true;
	job->machines[0].arrival[20] = 1;
	job->machines[1].arrival[10] = 2;
	step(job, &res);
	assert_false(res.settle);
	assert_int_equal(res.lo, 20);
	assert_int_equal(res.hi, 40);
	job_free(job);
}

static void same_endpoints_settle_on_the_first_machine(void **state)
{
	struct job *job = job_new(41, 30, 1.0, 3, 10);
	struct spread_result res;
	size_t rounds = 0;

	(void)state;
	assert_int_equal(spread_until_settled(job, &res, &rounds), 0);
	assert_string_equal(res.reason,
			    "a machine did not find the endpoints different");
	job_free(job);
}

/*
 * One machine finds the endpoints different, another (by chance, as a
 * change near min_change_pct often is) the same: the job is the first
 * machine's, whose endpoints decide as they would alone.  Settling on
 * whichever machine said "same" first would give a job on K machines K
 * chances to miss a change one machine finds.
 */
static void
a_machine_finding_the_endpoints_same_settles_on_the_first(void **state)
{
	struct job *job = job_new(41, 30, 0.97, 2, 13);
	struct spread_result res;
	size_t q, guard;

	(void)state;
	/* machine 0: 3% against 1% noise, clearly different */
	for (q = 0; q < 10; q++) {
		run_once(job, 0, 0, false);
		run_once(job, 0, 40, false);
	}
	for (guard = 0; guard < 100; guard++) {
		step(job, &res);
		if (res.settle)
			break;
		/* machine 0 goes on to a commit and stays busy with it */
		if (job->machines[0].plan.request_count == 0)
			job->machines[0].plan = res.plans[0];
		/* machine 1 sees no change between the endpoints */
		assert_true(res.plans[1].request_count > 0);
		job->change = 1.0;
		run_plan(job, 1, &res.plans[1]);
		job->change = 0.97;
	}
	assert_true(res.settle);
	assert_true(job->machines[0].plan.request_count > 0);
	assert_string_equal(res.reason,
			    "a machine did not find the endpoints different");
	assert_int_equal(res.settle_on, 0);
	job_free(job);
}

static void merges_and_no_machine_yet(void **state)
{
	struct job *job = job_new(41, 30, 0.97, 0, 11);
	static const size_t two[2] = {3, 4};
	struct spread_result res;

	(void)state;
	/* a job no machine has claimed yet: the endpoints for the first */
	step(job, &res);
	assert_false(res.settle);
	assert_int_equal(res.join.request_count, 2);
	assert_int_equal(res.room, 39);
	/* a merge: the job is one machine's from the start */
	job->shape[5].parents = two;
	job->shape[5].parent_count = 2;
	step(job, &res);
	assert_true(res.settle);
	assert_int_equal(res.settle_on, SPREAD_NONE);
	assert_string_equal(res.reason, "the range has merges");
	job_free(job);
}

static void one_machine_confirms_and_a_free_one_begins(void **state)
{
	struct job *job = job_new(5, 2, 0.97, 2, 13);
	struct spread_result res;
	size_t q;

	(void)state;
	endpoints_measured(job);
	/* machine 0 found 1 good-like, machine 1 found 2 bad-like */
	for (q = 0; q < 8; q++) {
		run_once(job, 0, 1, false);
		run_once(job, 1, 2, false);
	}
	/* machine 1 is still busy with 3, which the range has left */
	job->machines[1].plan.request_count = 1;
	job->machines[1].plan.requests[0].commit = 3;
	job->machines[1].plan.requests[0].runs = 3;
	step(job, &res);
	assert_false(res.settle);
	assert_int_equal(res.lo, 1);
	assert_int_equal(res.hi, 2);
	/* machine 0, free, confirms: it measures 2 on itself first */
	assert_true(res.plans[0].request_count > 0);
	assert_int_equal(res.plans[1].request_count, 0);
	job->machines[0].plan = res.plans[0];
	/* machine 1 done with 3 and free: machine 0 confirms alone */
	memset(&job->machines[1].plan, 0, sizeof(job->machines[1].plan));
	step(job, &res);
	assert_false(res.settle);
	assert_int_equal(res.plans[1].request_count, 0);
	job_free(job);
}

static void bad_input_is_refused(void **state)
{
	struct job *job = job_new(41, 30, 0.97, 1, 12);
	struct spread_result res;

	(void)state;
	view(job, 0);
	assert_int_equal(
	    spread_step(&res, job->shape, 1, job->spread, 1, &job->opts), -1);
	assert_int_equal(spread_step(&res, job->shape, 41, job->spread,
				     SPREAD_MACHINES_MAX + 1, &job->opts),
			 -1);
	assert_int_equal(
	    spread_step(&res, job->shape, 41, NULL, 1, &job->opts), -1);
	job_free(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(four_machines_find_the_culprit_and_settle_on_one),
	    cmocka_unit_test(free_machines_split_the_range_evenly),
	    cmocka_unit_test(a_commit_under_test_is_not_given_twice),
	    cmocka_unit_test(an_answer_the_range_has_left_is_not_used),
	    cmocka_unit_test(same_endpoints_settle_on_the_first_machine),
	    cmocka_unit_test(
		a_machine_finding_the_endpoints_same_settles_on_the_first),
	    cmocka_unit_test(merges_and_no_machine_yet),
	    cmocka_unit_test(one_machine_confirms_and_a_free_one_begins),
	    cmocka_unit_test(bad_input_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
