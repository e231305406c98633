/*
 * statbisect-sim: runs the production bisection engine (lib/bisect.h)
 * against simulated commit ranges with a planted change, and prints how
 * often it named the right culprit and how many runs that cost.
 *
 * This first version simulates a linear range with Gaussian noise and
 * compares the engine with `git bisect run` (one run per commit, threshold
 * halfway between the endpoints).
 */
#include <getopt.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"

enum strategy { STRATEGY_ENGINE, STRATEGY_GIT_BISECT };

struct sim_options {
	size_t commits;
	double effect;   /* change in units of the noise's sd */
	double sd_pct;   /* noise sd in percent of the mean */
	size_t trials;
	unsigned long seed;
	enum strategy strategy;
	bool json;
	bool higher_is_better;
};

struct sim_commit {
	double *values;
	size_t count, capacity;
};

struct trial_result {
	bool correct;
	bool false_alarm;
	bool inconclusive;
	size_t runs;
};

static double sample(gsl_rng *rng, double mean, double sd)
{
	return mean + gsl_ran_gaussian(rng, sd);
}

static void add_run(struct sim_commit *c, double value)
{
	if (c->count == c->capacity) {
		c->capacity = c->capacity ? c->capacity * 2 : 16;
		c->values = realloc(c->values, c->capacity * sizeof(double));
		if (c->values == NULL) {
			perror("statbisect-sim");
			exit(1);
		}
	}
	c->values[c->count++] = value;
}

/* The true mean of commit i with the change planted at `culprit`
 * (0: no change). */
static double true_mean(const struct sim_options *o, size_t i, size_t culprit)
{
	double base = 1000.0, sd = base * o->sd_pct / 100.0;

	if (culprit != 0 && i >= culprit)
		return base - o->effect * sd; /* a slowdown of the score */
	return base;
}

static struct trial_result run_engine(const struct sim_options *o,
				      gsl_rng *rng, size_t culprit)
{
	size_t n = o->commits + 1, i, k;
	struct sim_commit *commits = calloc(n, sizeof(*commits));
	struct bisect_commit *input = calloc(n, sizeof(*input));
	struct trial_result tr = {0};
	struct bisect_options opts;
	struct bisect_result res;
	double sd = 1000.0 * o->sd_pct / 100.0;

	bisect_options_init(&opts, o->higher_is_better);
	/* The smallest change that matters: half the planted one, or the
	 * noise's sd when nothing is planted. */
	opts.min_change_pct = o->effect > 0 ? o->effect * o->sd_pct / 2
					    : o->sd_pct;
	for (;;) {
		for (i = 0; i < n; i++) {
			input[i].values = commits[i].values;
			input[i].value_count = commits[i].count;
		}
		if (bisect_step(&res, NULL, input, n, &opts) < 0) {
			fprintf(stderr, "statbisect-sim: invalid options\n");
			exit(2);
		}
		if (res.verdict != BISECT_PENDING)
			break;
		for (i = 0; i < res.request_count; i++) {
			struct bisect_request *r = &res.requests[i];

			for (k = 0; k < r->runs; k++)
				add_run(&commits[r->commit],
					sample(rng,
					       true_mean(o, r->commit, culprit),
					       sd));
			tr.runs += r->runs;
		}
	}
	tr.inconclusive = res.verdict == BISECT_INCONCLUSIVE;
	if (culprit == 0) {
		tr.false_alarm = res.verdict == BISECT_REGRESSION ||
				 res.verdict == BISECT_IMPROVEMENT;
		tr.correct = res.verdict == BISECT_NO_CHANGE;
	} else {
		tr.correct = res.verdict == (o->higher_is_better
						     ? BISECT_REGRESSION
						     : BISECT_IMPROVEMENT) &&
			     res.culprit == culprit;
	}
	for (i = 0; i < n; i++)
		free(commits[i].values);
	free(commits);
	free(input);
	return tr;
}

/* git bisect run: one run per commit, a fixed threshold halfway between
 * one run of each endpoint. */
static struct trial_result run_git_bisect(const struct sim_options *o,
					  gsl_rng *rng, size_t culprit)
{
	double sd = 1000.0 * o->sd_pct / 100.0;
	double good = sample(rng, true_mean(o, 0, culprit), sd);
	double bad = sample(rng, true_mean(o, o->commits, culprit), sd);
	double threshold = (good + bad) / 2;
	size_t lo = 0, hi = o->commits;
	struct trial_result tr = {0};

	tr.runs = 2;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		double v = sample(rng, true_mean(o, mid, culprit), sd);

		tr.runs++;
		if ((v < threshold) == (bad < good))
			hi = mid;
		else
			lo = mid;
	}
	tr.correct = culprit != 0 && hi == culprit;
	tr.false_alarm = culprit == 0; /* it always names a commit */
	return tr;
}

static int compare_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: statbisect-sim [--commits N] [--effect E]"
		     " [--noise gaussian]\n"
		     "           [--trials T] [--seed S]"
		     " [--strategy engine|git-bisect] [--json]\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"commits", required_argument, NULL, 'n'},
		{"effect", required_argument, NULL, 'e'},
		{"noise", required_argument, NULL, 'N'},
		{"trials", required_argument, NULL, 't'},
		{"seed", required_argument, NULL, 's'},
		{"strategy", required_argument, NULL, 'S'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct sim_options o = {.commits = 1024, .effect = 2, .sd_pct = 1,
				.trials = 1000, .seed = 1,
				.strategy = STRATEGY_ENGINE,
				.higher_is_better = true};
	size_t correct = 0, alarms = 0, inconclusive = 0, i;
	double runs_total = 0;
	size_t *runs;
	gsl_rng *rng;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'n':
			o.commits = (size_t)strtoul(optarg, NULL, 10);
			break;
		case 'e':
			o.effect = atof(optarg);
			break;
		case 'N':
			if (strcmp(optarg, "gaussian") != 0) {
				fprintf(stderr, "statbisect-sim: noise '%s' "
						"is not simulated yet\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			o.trials = (size_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			o.seed = strtoul(optarg, NULL, 10);
			break;
		case 'S':
			if (strcmp(optarg, "engine") == 0)
				o.strategy = STRATEGY_ENGINE;
			else if (strcmp(optarg, "git-bisect") == 0)
				o.strategy = STRATEGY_GIT_BISECT;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.commits < 2 || o.trials < 1 || o.effect < 0) {
		usage(stderr);
		return 2;
	}
	runs = calloc(o.trials, sizeof(*runs));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, o.seed);
	for (i = 0; i < o.trials; i++) {
		size_t culprit = o.effect > 0
					 ? 1 + gsl_rng_uniform_int(rng, o.commits)
					 : 0;
		struct trial_result tr = o.strategy == STRATEGY_ENGINE
						 ? run_engine(&o, rng, culprit)
						 : run_git_bisect(&o, rng, culprit);

		correct += tr.correct;
		alarms += tr.false_alarm;
		inconclusive += tr.inconclusive;
		runs[i] = tr.runs;
		runs_total += (double)tr.runs;
	}
	qsort(runs, o.trials, sizeof(*runs), compare_size);
	{
		json_t *out = json_pack(
			"{s:s,s:I,s:f,s:I,s:I,s:f,s:f,s:I,s:f,s:f}",
			"strategy",
			o.strategy == STRATEGY_ENGINE ? "engine" : "git-bisect",
			"commits", (json_int_t)o.commits, "effect", o.effect,
			"trials", (json_int_t)o.trials, "seed",
			(json_int_t)o.seed, "accuracy",
			(double)correct / (double)o.trials, "runs_mean",
			runs_total / (double)o.trials, "runs_p95",
			(json_int_t)runs[(size_t)(0.95 * (double)(o.trials - 1))],
			"false_alarm", (double)alarms / (double)o.trials,
			"inconclusive",
			(double)inconclusive / (double)o.trials);
		char *text = json_dumps(out, o.json ? JSON_COMPACT
						    : JSON_INDENT(2));

		puts(text);
		free(text);
		json_decref(out);
	}
	free(runs);
	gsl_rng_free(rng);
	return 0;
}
