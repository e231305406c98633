/*
 * statbisect-sim: runs the production bisection engine (bisect.h), and
 * the published tools it is measured against, on simulated commit ranges
 * with planted changes, and prints one JSON object: how often the right
 * culprits were named and how many benchmark runs that cost.
 *
 * Each trial makes a range of --commits + 1 commits (sim.h has the model,
 * dag.h the shapes, noise.h the noise), plants --changes change commits
 * of --effect standard deviations each, and lets one strategy bisect it.
 * Every run a strategy makes counts: endpoints, steps and confirmation.
 *
 * A trial draws its range, changes, failed builds and drift phase from one
 * generator and its runs from another, both seeded from (--seed, trial
 * number): the output depends only on the options, and every strategy
 * sees the same ranges for the same seed.
 *
 * Scoring: a trial is correct when the culprits named are exactly the
 * change commits (a culprit whose exact commit is hidden by failed builds
 * matches when its ambiguous set contains the change), or with effect 0
 * when no culprit is named.  false_alarm: a culprit named with effect 0.
 * inconclusive: the engine's verdict (the baselines never give it).
 *
 * --machines K (with --machine-offset, --run-seconds, --build-seconds;
 * any of them adds the wall-clock fields) runs the engine on K machines
 * at once (machines.c: lib/spread.c's k-section, then the engine on the
 * machine it settles on) and reports the wall clock to the verdict, and
 * with K > 1 when the k-section settled.
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define SIM_CAL_BINS 7

static const char *const strategy_names[] = {
    "engine", "git-bisect", "lkp", "pinpoint", "oracle",
};

struct totals {
	size_t correct, false_alarm, inconclusive, no_change, all_found;
	size_t skipped_culprit, wrong_direction, failed, bad_requests;
	size_t unbacked; /* change verdicts without a confirmed culprit */
	size_t over_runs_max;
	size_t wrong_verdict; /* a change verdict that is not right */
	size_t runs_max_seen, tested;
	double *wall; /* per trial, seconds, when cfg->clock */
	size_t wall_trials;
	double wall_sum;
	/* more than one machine: when the k-section settled, the runs made
	 * by then (sim_trial.settled_at, settled_runs), summed */
	double settled_sum, settled_runs_sum;
	size_t *runs; /* per trial */
	double runs_sum;
	/* where the runs went: the endpoints' search runs, the other
	 * commits' search runs, and confirmation runs */
	double endpoint_runs, step_runs, confirm_runs;
	const char *failure;
	char detail[200];
	/* Calibration: the culprits named with a confidence, binned by it;
	 * per bin how many, their confidences summed, how many were right
	 * (a change commit, or an ambiguous set holding one). */
	size_t cal_count[SIM_CAL_BINS], cal_right[SIM_CAL_BINS];
	double cal_confidence[SIM_CAL_BINS];
};

/* Lower edges of the calibration bins; the last runs to 1 inclusive. */
static const double cal_edges[SIM_CAL_BINS + 1] = {
    0, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1,
};

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static unsigned long trial_seed(unsigned long seed, size_t trial,
				unsigned stream)
{
	return (unsigned long)splitmix64(splitmix64(seed) ^
					 ((uint64_t)trial << 2 | stream));
}

/* Frees machines 1.. of the trial (machine 0's runs are the trial's). */
static void machines_free(struct sim_trial *t)
{
	size_t m, i;

	for (m = 0; t->machines != NULL && m < t->machine_count; m++) {
		struct sim_machine *mc = &t->machines[m];

		for (i = 0; m > 0 && i < t->dag.count; i++) {
			if (mc->search != NULL) {
				free(mc->search[i].values);
				free(mc->search[i].order);
			}
			if (mc->confirm != NULL) {
				free(mc->confirm[i].values);
				free(mc->confirm[i].order);
			}
		}
		if (m > 0) {
			free(mc->search);
			free(mc->confirm);
		}
		free(mc->built);
	}
	free(t->machines);
	t->machines = NULL;
}

static void trial_free(struct sim_trial *t)
{
	size_t i;

	machines_free(t);
	if (t->search != NULL)
		for (i = 0; i < t->dag.count; i++) {
			free(t->search[i].values);
			free(t->search[i].order);
		}
	if (t->confirm != NULL)
		for (i = 0; i < t->dag.count; i++) {
			free(t->confirm[i].values);
			free(t->confirm[i].order);
		}
	free(t->search);
	free(t->confirm);
	free(t->level);
	free(t->depth);
	dag_free(&t->dag);
}

/*
 * The trial's machines (--machines and friends): machine 0 runs into the
 * trial's own series with the trial's noise; each other machine has its
 * own series, its own noise state (its own drift phase, drawn from
 * `setup`, and run counter) and a level offset uniform in
 * +-machine_offset_pct percent.  Drawn from its own generator, so one
 * machine's trial is the trial without machines.
 */
static int machines_init(struct sim_trial *t, const struct sim_config *cfg,
			 gsl_rng *setup)
{
	size_t count = t->dag.count, m;

	t->machines = calloc(cfg->machines, sizeof(*t->machines));
	if (t->machines == NULL)
		return -2;
	t->machine_count = cfg->machines;
	for (m = 0; m < cfg->machines; m++) {
		struct sim_machine *mc = &t->machines[m];

		mc->factor = 1;
		mc->built = calloc(count, sizeof(bool));
		if (mc->built == NULL)
			return -2;
		if (m == 0) {
			mc->search = t->search;
			mc->confirm = t->confirm;
			continue;
		}
		mc->search = calloc(count, sizeof(struct sim_series));
		mc->confirm = calloc(count, sizeof(struct sim_series));
		if (mc->search == NULL || mc->confirm == NULL)
			return -2;
		mc->noise = t->noise;
		mc->noise.runs = 0;
		mc->noise.drift_phase = 2 * M_PI * gsl_rng_uniform(setup);
		mc->factor = 1 + cfg->machine_offset_pct / 100 *
				     (2 * gsl_rng_uniform(setup) - 1);
	}
	return 0;
}

static int compare_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Makes a trial into *t: its range, changes, failed builds and drift
 * phase drawn from `setup`; its runs will be drawn from `runs`. */
static int trial_init(struct sim_trial *t, const struct sim_config *cfg,
		      gsl_rng *setup, gsl_rng *runs, gsl_rng *machine_setup)
{
	size_t count = cfg->commits + 1, i, k, planted[SIM_CULPRITS_MAX];
	double step = cfg->effect * SIM_SD;
	int error;

	memset(t, 0, sizeof(*t));
	t->config = cfg;
	if ((error = dag_generate(&t->dag, cfg->topology, count, setup)) < 0 ||
	    (error = dag_index(&t->dag)) < 0)
		goto fail;
	for (k = 0; k < cfg->changes; k++) {
		size_t c;
		bool fresh;

		do {
			c = 1 + gsl_rng_uniform_int(setup, count - 1);
			fresh = true;
			for (i = 0; i < k; i++)
				fresh = fresh && planted[i] != c;
		} while (!fresh);
		planted[k] = c;
	}
	qsort(planted, cfg->changes, sizeof(size_t), compare_size);
	if (cfg->skip_rate > 0)
		for (i = 1; i + 1 < count; i++)
			t->dag.build_failed[i] =
			    gsl_rng_uniform(setup) < cfg->skip_rate;
	t->noise.drift_phase = 2 * M_PI * gsl_rng_uniform(setup);
	t->noise.model = cfg->noise;
	t->noise.sd = SIM_SD;
	t->noise.higher_is_better = cfg->higher_is_better;
	t->noise.rng = runs;
	if (cfg->effect > 0) {
		memcpy(t->changes, planted, cfg->changes * sizeof(size_t));
		t->change_count = cfg->changes;
	}
	t->level = malloc(count * sizeof(double));
	t->depth = calloc(count, sizeof(size_t));
	t->search = calloc(count, sizeof(struct sim_series));
	t->confirm = calloc(count, sizeof(struct sim_series));
	error = -2;
	if (t->level == NULL || t->depth == NULL || t->search == NULL ||
	    t->confirm == NULL)
		goto fail;
	for (i = 0; i < count; i++) {
		double moved = 0, size = 1;

		for (k = 0; k < cfg->changes; k++) {
			bool below = dag_is_ancestor(&t->dag, planted[k], i);

			t->depth[i] += below;
			/* --opposite: every other change the other way,
			 * each opposite_ratio times the one before */
			if (below)
				moved += cfg->opposite && k % 2 ? -size : size;
			if (cfg->opposite)
				size *= cfg->opposite_ratio;
		}
		if (!cfg->opposite)
			moved = (double)t->depth[i];
		t->level[i] = SIM_BASE_LEVEL +
			      (cfg->higher_is_better ? -step : step) * moved;
	}
	if (cfg->clock && (error = machines_init(t, cfg, machine_setup)) < 0)
		goto fail;
	return 0;
fail:
	trial_free(t);
	return error;
}

static bool culprit_matches(const struct sim_outcome *out,
			    const struct sim_culprit *c, size_t change)
{
	size_t i;

	if (c->commit == change)
		return true;
	for (i = 0; i < c->ambiguous_count; i++)
		if (out->ambiguous[c->ambiguous_first + i] == change)
			return true;
	return false;
}

static void score(struct totals *tot, const struct sim_trial *t,
		  const struct sim_outcome *out, size_t trial_number)
{
	bool used[SIM_CULPRITS_MAX] = {false}, all = true;
	size_t k, c;

	tot->inconclusive += out->verdict == SIM_INCONCLUSIVE;
	tot->no_change += out->verdict == SIM_NO_CHANGE;
	tot->wrong_direction += out->wrong_direction;
	tot->unbacked += out->unbacked;
	if (out->verdict == SIM_FAILED) {
		tot->failed++;
		if (tot->failure == NULL) {
			tot->failure = out->failure;
			snprintf(tot->detail, sizeof(tot->detail),
				 "trial %zu: %s", trial_number,
				 t->detail[0] ? t->detail : out->failure);
		}
	}
	for (c = 0; c < out->culprit_count; c++) {
		const struct sim_culprit *cu = &out->culprits[c];

		if (cu->ambiguous_count <= 1 && cu->commit < t->dag.count &&
		    t->dag.build_failed[cu->commit]) {
			tot->skipped_culprit++;
			break;
		}
	}
	for (c = 0; c < out->culprit_count; c++) {
		const struct sim_culprit *cu = &out->culprits[c];
		bool right = false;
		size_t bin = 0;

		if (!isfinite(cu->confidence))
			continue;
		for (k = 0; k < t->change_count && !right; k++)
			right = culprit_matches(out, cu, t->changes[k]);
		while (bin + 1 < SIM_CAL_BINS &&
		       cu->confidence >= cal_edges[bin + 1])
			bin++;
		tot->cal_count[bin]++;
		tot->cal_right[bin] += right;
		tot->cal_confidence[bin] += cu->confidence;
	}
	if (t->change_count == 0) {
		if (out->verdict == SIM_CHANGE || out->culprit_count > 0) {
			tot->false_alarm++;
			tot->wrong_verdict++;
		} else if (out->verdict == SIM_NO_CHANGE)
			tot->correct++;
		return;
	}
	for (k = 0; k < t->change_count; k++) {
		bool found = false;

		for (c = 0; c < out->culprit_count && !found; c++) {
			if (!used[c] && culprit_matches(out, &out->culprits[c],
							t->changes[k])) {
				used[c] = true;
				found = true;
			}
		}
		all = all && found;
	}
	tot->all_found += all;
	all = all && out->verdict == SIM_CHANGE && !out->wrong_direction &&
	      out->culprit_count == t->change_count;
	tot->correct += all;
	tot->wrong_verdict += !all && out->verdict == SIM_CHANGE;
}

static int run_strategy(struct sim_outcome *out, struct sim_trial *t)
{
	switch (t->config->strategy) {
	case SIM_ENGINE:
		if (t->machines != NULL)
			return sim_engine_machines(out, t);
		return sim_engine(out, t);
	case SIM_GIT_BISECT:
		return sim_git_bisect(out, t);
	case SIM_LKP:
		return sim_lkp(out, t);
	case SIM_PINPOINT:
		return sim_pinpoint(out, t);
	case SIM_ORACLE:
		return sim_oracle(out, t);
	}
	return -1;
}

/*
 * Adds the runs of machines 1.. to the totals, as run_trials counts
 * machine 0's, and the trial's wall clock (the last machine's); returns
 * their runs and adds the commits they tested to *tested.
 */
static size_t machines_count(struct totals *tot, const struct sim_trial *t,
			     size_t *tested)
{
	size_t m, i, total = 0, trial = (size_t)(tot->wall_trials++);
	double wall = 0;

	for (m = 0; t->machines != NULL && m < t->machine_count; m++) {
		const struct sim_machine *mc = &t->machines[m];

		if (mc->clock > wall)
			wall = mc->clock;
		for (i = 0; m > 0 && i < t->dag.count; i++) {
			total += mc->search[i].count + mc->confirm[i].count;
			tot->confirm_runs += (double)mc->confirm[i].count;
			if (i == 0 || i + 1 == t->dag.count) {
				tot->endpoint_runs +=
				    (double)mc->search[i].count;
			} else {
				tot->step_runs += (double)mc->search[i].count;
				*tested += mc->search[i].count > 0 &&
					   t->search[i].count == 0;
			}
		}
	}
	if (t->wall > 0)
		wall = t->wall;
	tot->settled_sum += t->settled_at;
	tot->settled_runs_sum += (double)t->settled_runs;
	tot->wall[trial] = wall;
	tot->wall_sum += wall;
	return total;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_trials(struct totals *tot, const struct sim_config *cfg)
{
	gsl_rng *setup = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng *runs = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng *machine_setup = gsl_rng_alloc(gsl_rng_mt19937);
	struct sim_outcome out;
	struct sim_trial t;
	size_t trial, i, total, tested;
	int error = -2;

	memset(&out, 0, sizeof(out));
	tot->runs = calloc(cfg->trials, sizeof(size_t));
	tot->wall = calloc(cfg->trials, sizeof(double));
	if (setup == NULL || runs == NULL || machine_setup == NULL ||
	    tot->runs == NULL || tot->wall == NULL)
		goto done;
	for (trial = 0; trial < cfg->trials; trial++) {
		size_t *amb = out.ambiguous,
		       amb_capacity = out.ambiguous_capacity;
		/* --only-trial K: trial K of the full run, alone */
		size_t number = cfg->trace_commits ? cfg->only_trial : trial;

		gsl_rng_set(setup, trial_seed(cfg->seed, number, 0));
		gsl_rng_set(runs, trial_seed(cfg->seed, number, 1));
		gsl_rng_set(machine_setup, trial_seed(cfg->seed, number, 2));
		if ((error = trial_init(&t, cfg, setup, runs, machine_setup)) <
		    0)
			goto done;
		memset(&out, 0, sizeof(out));
		out.ambiguous = amb; /* reused between trials */
		out.ambiguous_capacity = amb_capacity;
		if ((error = run_strategy(&out, &t)) < 0) {
			trial_free(&t);
			goto done;
		}
		score(tot, &t, &out, trial);
		tot->bad_requests += t.bad_requests;
		tot->over_runs_max += t.over_runs_max;
		total = 0;
		tested = 0;
		for (i = 0; i < t.dag.count; i++) {
			total += t.search[i].count + t.confirm[i].count;
			tot->confirm_runs += (double)t.confirm[i].count;
			if (t.search[i].count > tot->runs_max_seen)
				tot->runs_max_seen = t.search[i].count;
			if (i == 0 || i + 1 == t.dag.count) {
				tot->endpoint_runs +=
				    (double)t.search[i].count;
			} else {
				tot->step_runs += (double)t.search[i].count;
				tested += t.search[i].count > 0;
			}
		}
		total += machines_count(tot, &t, &tested);
		tot->runs[trial] = total;
		tot->runs_sum += (double)total;
		tot->tested += tested;
		trial_free(&t);
	}
	error = 0;
done:
	free(out.ambiguous);
	gsl_rng_free(setup);
	gsl_rng_free(runs);
	gsl_rng_free(machine_setup);
	return error;
}

/* The wall-clock fields (--machines and friends). */
static void print_clock(json_t *o, const struct sim_config *cfg,
			struct totals *tot)
{
	double n = (double)cfg->trials;

	qsort(tot->wall, cfg->trials, sizeof(double), compare_double);
	json_object_set_new(o, "machines",
			    json_integer((json_int_t)cfg->machines));
	json_object_set_new(o, "machine_offset_pct",
			    json_real(cfg->machine_offset_pct));
	json_object_set_new(o, "run_seconds", json_real(cfg->run_seconds));
	json_object_set_new(o, "build_seconds", json_real(cfg->build_seconds));
	json_object_set_new(o, "wall_seconds_mean",
			    json_real(tot->wall_sum / n));
	json_object_set_new(o, "wall_seconds_median",
			    json_real(tot->wall[(size_t)ceil(0.5 * n) - 1]));
	json_object_set_new(o, "wall_seconds_p95",
			    json_real(tot->wall[(size_t)ceil(0.95 * n) - 1]));
	json_object_set_new(o, "wrong_verdicts",
			    json_real((double)tot->wrong_verdict / n));
	if (cfg->machines < 2)
		return;
	json_object_set_new(o, "settled_seconds_mean",
			    json_real(tot->settled_sum / n));
	json_object_set_new(o, "runs_settled_mean",
			    json_real(tot->settled_runs_sum / n));
}

static int print_json(const struct sim_config *cfg, struct totals *tot)
{
	double n = (double)cfg->trials;
	json_t *o = json_object();
	char *text;

	if (o == NULL)
		return -2;
	qsort(tot->runs, cfg->trials, sizeof(size_t), compare_size);
	json_object_set_new(o, "strategy",
			    json_string(strategy_names[cfg->strategy]));
	json_object_set_new(o, "commits",
			    json_integer((json_int_t)cfg->commits));
	json_object_set_new(o, "topology",
			    json_string(dag_topology_name(cfg->topology)));
	json_object_set_new(o, "noise", json_string(noise_name(cfg->noise)));
	json_object_set_new(o, "effect", json_real(cfg->effect));
	json_object_set_new(o, "changes",
			    json_integer((json_int_t)cfg->changes));
	json_object_set_new(o, "skip_rate", json_real(cfg->skip_rate));
	json_object_set_new(o, "trials",
			    json_integer((json_int_t)cfg->trials));
	json_object_set_new(o, "seed", json_integer((json_int_t)cfg->seed));
	json_object_set_new(o, "min_change_pct",
			    json_real(cfg->min_change_pct));
	json_object_set_new(o, "runs_max",
			    json_integer((json_int_t)cfg->runs_max));
	json_object_set_new(o, "higher_is_better",
			    json_integer(cfg->higher_is_better));
	if (cfg->strategy == SIM_LKP)
		json_object_set_new(o, "lkp_runs",
				    json_integer((json_int_t)cfg->lkp_runs));
	json_object_set_new(o, "accuracy",
			    json_real((double)tot->correct / n));
	json_object_set_new(o, "runs_mean", json_real(tot->runs_sum / n));
	json_object_set_new(o, "runs_endpoints_mean",
			    json_real(tot->endpoint_runs / n));
	json_object_set_new(o, "runs_steps_mean",
			    json_real(tot->step_runs / n));
	json_object_set_new(o, "runs_confirm_mean",
			    json_real(tot->confirm_runs / n));
	/* nearest rank */
	json_object_set_new(
	    o, "runs_p95",
	    json_integer((json_int_t)tot->runs[(size_t)ceil(0.95 * n) - 1]));
	json_object_set_new(
	    o, "runs_trial_max",
	    json_integer((json_int_t)tot->runs[cfg->trials - 1]));
	json_object_set_new(o, "runs_max_seen",
			    json_integer((json_int_t)tot->runs_max_seen));
	json_object_set_new(o, "tested_mean",
			    json_real((double)tot->tested / n));
	json_object_set_new(o, "false_alarm",
			    json_real((double)tot->false_alarm / n));
	json_object_set_new(o, "inconclusive",
			    json_real((double)tot->inconclusive / n));
	json_object_set_new(o, "no_change",
			    json_real((double)tot->no_change / n));
	if (cfg->changes == 2)
		json_object_set_new(o, "both_found",
				    json_real((double)tot->all_found / n));
	json_object_set_new(o, "all_found",
			    json_real((double)tot->all_found / n));
	json_object_set_new(o, "skipped_culprit",
			    json_integer((json_int_t)tot->skipped_culprit));
	json_object_set_new(o, "bad_requests",
			    json_integer((json_int_t)tot->bad_requests));
	json_object_set_new(o, "over_runs_max",
			    json_integer((json_int_t)tot->over_runs_max));
	json_object_set_new(o, "wrong_direction",
			    json_integer((json_int_t)tot->wrong_direction));
	if (cfg->opposite)
		json_object_set_new(o, "opposite_ratio",
				    json_real(cfg->opposite_ratio));
	if (cfg->clock)
		print_clock(o, cfg, tot);
	json_object_set_new(o, "unbacked_verdicts",
			    json_integer((json_int_t)tot->unbacked));
	json_object_set_new(o, "failed",
			    json_integer((json_int_t)tot->failed));
	if (tot->failure != NULL)
		json_object_set_new(o, "first_failure",
				    json_string(tot->detail));
	{
		/* Per confidence bin of the culprits named: how many, their
		 * mean confidence, and the fraction that was right. */
		json_t *bins = json_array();
		size_t b, named = 0;

		for (b = 0; b < SIM_CAL_BINS; b++) {
			size_t k = tot->cal_count[b];

			named += k;
			json_array_append_new(
			    bins,
			    json_pack("{s:f,s:f,s:I,s:o,s:o}", "lo",
				      cal_edges[b], "hi", cal_edges[b + 1],
				      "culprits", (json_int_t)k,
				      "confidence_mean",
				      k ? json_real(tot->cal_confidence[b] /
						    (double)k)
					: json_null(),
				      "right",
				      k ? json_real((double)tot->cal_right[b] /
						    (double)k)
					: json_null()));
		}
		if (named > 0)
			json_object_set_new(o, "calibration", bins);
		else
			json_decref(bins);
	}
	text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6) |
				 (cfg->json ? JSON_COMPACT : JSON_INDENT(2)));
	json_decref(o);
	if (text == NULL)
		return -2;
	puts(text);
	free(text);
	return 0;
}

static void usage(FILE *out)
{
	fputs(
	    "usage: statbisect-sim [--commits N] [--topology linear|merges]\n"
	    "         [--noise gaussian|lognormal|bimodal|outliers|drift|"
	    "t3|quantized|modes]\n"
	    "         [--effect E] [--changes K [--opposite"
	    " [--opposite-ratio Q]]] [--skip-rate R]"
	    " [--trials T] [--seed S]\n"
	    "         [--strategy engine|git-bisect|lkp|pinpoint|oracle]\n"
	    "         [--min-change PCT] [--runs-max N]"
	    " [--higher-is-better 0|1]\n"
	    "         [--lkp-runs N] [--json] [--trace [--only-trial K]]\n"
	    "         [--machines K] [--machine-offset PCT]"
	    " [--run-seconds S] [--build-seconds S]\n"
	    "       statbisect-sim --pinpoint-table\n",
	    out);
}

/* Parses a whole number into *out; -1 unless all of `text` is one. */
static int parse_size(size_t *out, const char *text)
{
	char *end;
	unsigned long long v;

	if (*text == '-' || *text == '\0')
		return -1;
	v = strtoull(text, &end, 10);
	if (*end != '\0')
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_double(double *out, const char *text)
{
	char *end;

	*out = strtod(text, &end);
	return *text != '\0' && *end == '\0' && isfinite(*out) ? 0 : -1;
}

static int parse_strategy(enum sim_strategy *out, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(strategy_names) / sizeof(strategy_names[0]);
	     i++) {
		if (strcmp(name, strategy_names[i]) == 0) {
			*out = (enum sim_strategy)i;
			return 0;
		}
	}
	return -1;
}

/* Fills *cfg from the command line; -1 with a message on stderr. */
static int parse_options(struct sim_config *cfg, bool *table, int argc,
			 char **argv)
{
	static const struct option options[] = {
	    {"commits", required_argument, NULL, 'n'},
	    {"topology", required_argument, NULL, 'T'},
	    {"noise", required_argument, NULL, 'N'},
	    {"effect", required_argument, NULL, 'e'},
	    {"changes", required_argument, NULL, 'k'},
	    {"opposite", no_argument, NULL, 'o'},
	    {"opposite-ratio", required_argument, NULL, 'R'},
	    {"skip-rate", required_argument, NULL, 'r'},
	    {"trials", required_argument, NULL, 't'},
	    {"seed", required_argument, NULL, 's'},
	    {"strategy", required_argument, NULL, 'S'},
	    {"min-change", required_argument, NULL, 'm'},
	    {"runs-max", required_argument, NULL, 'M'},
	    {"higher-is-better", required_argument, NULL, 'H'},
	    {"lkp-runs", required_argument, NULL, 'L'},
	    {"json", no_argument, NULL, 'j'},
	    {"trace", no_argument, NULL, 'x'},
	    {"only-trial", required_argument, NULL, 'O'},
	    {"pinpoint-table", no_argument, NULL, 'P'},
	    {"machines", required_argument, NULL, 'K'},
	    {"machine-offset", required_argument, NULL, 'F'},
	    {"run-seconds", required_argument, NULL, 'U'},
	    {"build-seconds", required_argument, NULL, 'B'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	size_t seed, higher_is_better;
	int opt, bad, which = 0;

	while ((opt = getopt_long(argc, argv, "h", options, &which)) != -1) {
		switch (opt) {
		case 'n':
			bad = parse_size(&cfg->commits, optarg);
			break;
		case 'T':
			bad = dag_topology_parse(&cfg->topology, optarg);
			break;
		case 'N':
			bad = noise_parse(&cfg->noise, optarg);
			break;
		case 'e':
			bad = parse_double(&cfg->effect, optarg) ||
			      cfg->effect < 0;
			break;
		case 'k':
			bad = parse_size(&cfg->changes, optarg);
			break;
		case 'o':
			cfg->opposite = true;
			bad = 0;
			break;
		case 'R':
			bad = parse_double(&cfg->opposite_ratio, optarg) ||
			      cfg->opposite_ratio <= 0;
			break;
		case 'r':
			bad = parse_double(&cfg->skip_rate, optarg) ||
			      cfg->skip_rate < 0 || cfg->skip_rate >= 1;
			break;
		case 't':
			bad = parse_size(&cfg->trials, optarg);
			break;
		case 's':
			bad = parse_size(&seed, optarg);
			cfg->seed = (unsigned long)seed;
			break;
		case 'S':
			bad = parse_strategy(&cfg->strategy, optarg);
			break;
		case 'm':
			bad = parse_double(&cfg->min_change_pct, optarg) ||
			      cfg->min_change_pct < 0;
			break;
		case 'M':
			bad = parse_size(&cfg->runs_max, optarg);
			break;
		case 'H':
			bad = parse_size(&higher_is_better, optarg) ||
			      higher_is_better > 1;
			cfg->higher_is_better = higher_is_better == 1;
			break;
		case 'L':
			bad = parse_size(&cfg->lkp_runs, optarg);
			break;
		case 'j':
			cfg->json = true;
			bad = 0;
			break;
		case 'x':
			cfg->trace = true;
			bad = 0;
			break;
		case 'O':
			bad = parse_size(&cfg->only_trial, optarg);
			cfg->trials = 1;
			cfg->trace = true;
			cfg->trace_commits = true;
			break;
		case 'P':
			*table = true;
			bad = 0;
			break;
		case 'K':
			bad = parse_size(&cfg->machines, optarg) ||
			      cfg->machines < 1 ||
			      cfg->machines > SIM_MACHINES_MAX;
			cfg->clock = true;
			break;
		case 'F':
			bad = parse_double(&cfg->machine_offset_pct, optarg) ||
			      cfg->machine_offset_pct < 0 ||
			      cfg->machine_offset_pct >= 50;
			cfg->clock = true;
			break;
		case 'U':
			bad = parse_double(&cfg->run_seconds, optarg) ||
			      cfg->run_seconds < 0;
			cfg->clock = true;
			break;
		case 'B':
			bad = parse_double(&cfg->build_seconds, optarg) ||
			      cfg->build_seconds < 0;
			cfg->clock = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		if (bad) {
			fprintf(
			    stderr,
			    "statbisect-sim: invalid value '%s' for --%s\n",
			    optarg, options[which].name);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "statbisect-sim: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (cfg->commits < 2 || cfg->trials < 1 || cfg->changes < 1 ||
	    cfg->changes > SIM_CULPRITS_MAX || cfg->changes >= cfg->commits ||
	    cfg->runs_max < 2 || cfg->lkp_runs < 1) {
		fputs(
		    "statbisect-sim: need --commits >= 2, --trials >= 1, "
		    "1 <= --changes < --commits (at most 64), --runs-max >= 2"
		    " and --lkp-runs >= 1\n",
		    stderr);
		return -1;
	}
	if (cfg->machines > 1 && cfg->strategy != SIM_ENGINE) {
		fputs("statbisect-sim: --machines above 1 is for --strategy "
		      "engine (the baselines run on one machine)\n",
		      stderr);
		return -1;
	}
	if (cfg->opposite && cfg->strategy != SIM_ENGINE) {
		fputs("statbisect-sim: --opposite is for --strategy engine "
		      "(the baselines assume changes in one direction)\n",
		      stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sim_config cfg = {
	    .commits = 1024,
	    .topology = DAG_LINEAR,
	    .noise = NOISE_GAUSSIAN,
	    .effect = 2,
	    .changes = 1,
	    .trials = 1000,
	    .seed = 1,
	    .strategy = SIM_ENGINE,
	    .min_change_pct = 0.25,
	    .runs_max = 1000,
	    .higher_is_better = true,
	    .lkp_runs = 5,
	    .opposite_ratio = 1.0,
	    .machines = 1,
	    .machine_offset_pct = 3,
	    .run_seconds = 60,
	    .build_seconds = 300,
	};
	struct totals tot;
	bool table = false;
	int error;

	memset(&tot, 0, sizeof(tot));
	if (parse_options(&cfg, &table, argc, argv) < 0)
		return 2;
	if (table) {
		error = sim_pinpoint_print_table(stdout);
		sim_pinpoint_cleanup();
		return error < 0 ? 1 : 0;
	}
	error = run_trials(&tot, &cfg);
	if (error == 0)
		error = print_json(&cfg, &tot);
	free(tot.runs);
	free(tot.wall);
	sim_pinpoint_cleanup();
	if (error < 0) {
		fputs("statbisect-sim: out of memory\n", stderr);
		return 1;
	}
	if (tot.unbacked > 0) {
		/* an engine bug: a verdict names a confirmed culprit or is
		 * inconclusive */
		fprintf(stderr,
			"statbisect-sim: %zu regression or improvement "
			"verdict(s) without a confirmed culprit\n",
			tot.unbacked);
		return 3;
	}
	return 0;
}
