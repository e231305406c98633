/*
 * The `engine` strategy: bisect_step() in a loop, fed the runs it asks
 * for, until it gives a verdict.  Runs asked for together with
 * `interleave` set are made alternately (A B A B ...), so the drift model
 * sees the order a worker would run them in.
 */
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>

#include "bisect.h"
#include "sim.h"

/* A trial that needs more decisions or runs than this is a looping
 * engine, not a slow one. */
#define ENGINE_CALLS_MAX 100000
#define ENGINE_RUNS_MAX 10000000
#define ENGINE_BAD_REQUESTS_MAX 100
#define ENGINE_REQUEST_MAX 100000

static void engine_feed(struct bisect_commit *in, struct sim_trial *trial,
			size_t machine)
{
	size_t i;

	for (i = 0; i < trial->dag.count; i++) {
		const struct sim_series *s =
		    sim_series_of(trial, machine, i, false);
		const struct sim_series *c =
		    sim_series_of(trial, machine, i, true);

		in[i].values = s->values;
		in[i].value_count = s->count;
		in[i].confirm_values = c->values;
		in[i].confirm_count = c->count;
		in[i].confirm_seq = c->order;
		in[i].seq = s->order;
	}
}

/*
 * Checks the requests: a failed build or an index out of range is a bad
 * request (not run); more runs than any commit may get is an engine bug
 * that ends the trial (returns false).
 */
static bool engine_check(struct sim_trial *trial, size_t machine,
			 const struct bisect_result *res, bool *valid)
{
	size_t q;

	for (q = 0; q < res->request_count; q++) {
		const struct bisect_request *r = &res->requests[q];

		valid[q] = r->commit < trial->dag.count &&
			   !trial->dag.build_failed[r->commit];
		if (!valid[q]) {
			trial->bad_requests++;
			continue;
		}
		if (r->runs > ENGINE_REQUEST_MAX) {
			snprintf(trial->detail, sizeof(trial->detail),
				 "engine asked for %zu %s runs of commit %zu "
				 "which has %zu",
				 r->runs,
				 r->purpose == BISECT_CONFIRM ? "confirm"
							      : "search",
				 r->commit,
				 sim_series_of(trial, machine, r->commit,
					       r->purpose == BISECT_CONFIRM)
				     ->count);
			return false;
		}
		if (r->purpose == BISECT_SEARCH &&
		    sim_series_of(trial, machine, r->commit, false)->count +
			    r->runs >
			trial->config->runs_max)
			trial->over_runs_max++;
	}
	return true;
}

/* Makes the runs of the valid requests; returns how many. */
static size_t engine_run(struct sim_trial *trial, size_t machine,
			 const struct bisect_result *res, const bool *valid)
{
	size_t done[BISECT_MAX_REQUESTS] = {0}, made = 0, q;
	bool more = true;

	while (more) {
		more = false;
		for (q = 0; q < res->request_count; q++) {
			const struct bisect_request *r = &res->requests[q];
			size_t k, burst;

			if (!valid[q] || done[q] >= r->runs)
				continue;
			/* interleaved: one run, then the next request */
			burst = res->interleave ? 1 : r->runs - done[q];
			for (k = 0; k < burst; k++)
				sim_machine_run(trial, machine, r->commit,
						r->purpose == BISECT_CONFIRM);
			done[q] += burst;
			made += burst;
			more = true;
		}
	}
	return made;
}

static int engine_outcome(struct sim_outcome *out,
			  const struct bisect_result *res)
{
	size_t c;
	bool confirmed = false;
	int error;

	switch (res->verdict) {
	case BISECT_NO_CHANGE:
		out->verdict = SIM_NO_CHANGE;
		break;
	case BISECT_INCONCLUSIVE:
		out->verdict = SIM_INCONCLUSIVE;
		break;
	case BISECT_IMPROVEMENT:
		/* the oldest simulated change is always a regression */
		out->verdict = SIM_CHANGE;
		out->wrong_direction = true;
		break;
	default:
		out->verdict = SIM_CHANGE;
		break;
	}
	for (c = 0; c < res->culprit_count && c < BISECT_MAX_CULPRITS; c++)
		confirmed |= res->culprits[c].confirmed;
	/* A verdict names a confirmed culprit, or it is inconclusive. */
	out->unbacked = out->verdict == SIM_CHANGE && !confirmed;
	/* The suspects of an inconclusive verdict are named by nobody. */
	for (c = 0; out->verdict == SIM_CHANGE && c < res->culprit_count &&
		    c < BISECT_MAX_CULPRITS;
	     c++) {
		const struct bisect_culprit *cu = &res->culprits[c];
		const size_t *amb = NULL;
		size_t amb_count = 0;

		if (cu->ambiguous_count > 1 &&
		    cu->ambiguous_first + cu->ambiguous_count <=
			res->ambiguous_used) {
			amb = res->ambiguous + cu->ambiguous_first;
			amb_count = cu->ambiguous_count;
		}
		if ((error =
			 sim_outcome_add(out, cu->commit, amb, amb_count)) < 0)
			return error;
		if (out->culprit_count > 0)
			out->culprits[out->culprit_count - 1].confidence =
			    cu->confidence;
	}
	return 0;
}

/* One line per trial on stderr (--trace): the planted changes, then the
 * verdict and each culprit named, to see what a wrong trial did. */
static void engine_trace(struct sim_trial *trial, size_t machine,
			 const struct bisect_result *res,
			 const enum bisect_class *classes, size_t trial_runs)
{
	size_t i, endpoints, confirm = 0;

	for (i = 0; trial->config->trace_commits && i < trial->dag.count;
	     i++) {
		const struct sim_series *s =
		    sim_series_of(trial, machine, i, false);
		const struct sim_series *c =
		    sim_series_of(trial, machine, i, true);

		if (s->count + c->count == 0)
			continue;
		fprintf(
		    stderr,
		    "  commit %zu level %.1f: %s, %zu runs mean "
		    "%.2f, %zu confirm mean %.2f\n",
		    i, trial->level[i], bisect_class_name(classes[i]),
		    s->count,
		    s->count ? gsl_stats_mean(s->values, 1, s->count) : 0.0,
		    c->count,
		    c->count ? gsl_stats_mean(c->values, 1, c->count) : 0.0);
	}

	endpoints =
	    sim_series_of(trial, machine, 0, false)->count +
	    sim_series_of(trial, machine, trial->dag.count - 1, false)->count;
	for (i = 0; i < trial->dag.count; i++)
		confirm += sim_series_of(trial, machine, i, true)->count;
	fprintf(stderr, "trial changes");
	for (i = 0; i < trial->change_count; i++)
		fprintf(stderr, " %zu", trial->changes[i]);
	fprintf(stderr, " | %s runs %zu (endpoints %zu, confirm %zu) |",
		bisect_verdict_name(res->verdict), trial_runs, endpoints,
		confirm);
	for (i = 0; i < res->culprit_count; i++) {
		const struct bisect_culprit *c = &res->culprits[i];

		fprintf(stderr,
			" %zu<-%zu %s p=%.2g %+.2f%% (%zu/%zu runs) "
			"confidence %.6f",
			c->commit, c->parent,
			c->confirmed ? "confirmed" : "unconfirmed", c->p_value,
			c->change_pct,
			sim_series_of(trial, machine, c->commit, true)->count,
			sim_series_of(trial, machine, c->parent, true)->count,
			c->confidence);
	}
	if (res->reason != NULL)
		fprintf(stderr, " (%s)", res->reason);
	fputc('\n', stderr);
}

int sim_engine(struct sim_outcome *out, struct sim_trial *trial)
{
	return sim_engine_on(out, trial, 0);
}

int sim_engine_on(struct sim_outcome *out, struct sim_trial *trial,
		  size_t machine)
{
	const struct sim_config *cfg = trial->config;
	size_t count = trial->dag.count, i, calls, runs = 0, made;
	bool valid[BISECT_MAX_REQUESTS];
	struct bisect_commit *in = calloc(count, sizeof(*in));
	struct bisect_options opts;
	enum bisect_class *classes = calloc(count, sizeof(*classes));
	struct bisect_result res;
	int error = 0, rc;

	if (in == NULL || classes == NULL) {
		free(in);
		free(classes);
		return -2;
	}
	for (i = 0; i < count; i++) {
		in[i].parents = dag_parents_of(&trial->dag, i);
		in[i].parent_count = dag_parent_count(&trial->dag, i);
		in[i].build_failed = trial->dag.build_failed[i];
	}
	bisect_options_init(&opts, cfg->higher_is_better);
	opts.min_change_pct = cfg->min_change_pct;
	opts.runs_max = cfg->runs_max;
	/* as high a bound on a confirmation: the engine sizes it by the
	 * change found */
	opts.confirm_max = cfg->runs_max;
	/* as the server's scheduler has it for a job that may use several
	 * machines: after the k-section, from the commits measured */
	opts.prefer_measured = trial->machine_count > 1;
	for (calls = 0;; calls++) {
		engine_feed(in, trial, machine);
		rc = bisect_step(&res, classes, in, count, &opts);
		if (rc < 0) {
			out->verdict = SIM_FAILED;
			out->failure = rc == -2 ? "engine out of memory"
						: "engine refused the input";
			goto out;
		}
		if (res.verdict != BISECT_PENDING)
			break;
		if (calls >= ENGINE_CALLS_MAX || runs >= ENGINE_RUNS_MAX ||
		    trial->bad_requests >= ENGINE_BAD_REQUESTS_MAX) {
			out->verdict = SIM_FAILED;
			out->failure = "engine did not finish";
			goto out;
		}
		if (res.request_count == 0 ||
		    res.request_count > BISECT_MAX_REQUESTS) {
			out->verdict = SIM_FAILED;
			out->failure = "engine pending without requests";
			goto out;
		}
		if (!engine_check(trial, machine, &res, valid)) {
			out->verdict = SIM_FAILED;
			out->failure = "engine asked for absurdly many runs";
			goto out;
		}
		if (cfg->trace_commits) {
			fprintf(stderr,
				"  ask segment %zu..%zu left %zu:", res.lo,
				res.hi, res.candidates_left);
			for (i = 0; i < res.request_count; i++)
				fprintf(stderr, " %zu x%zu%s",
					res.requests[i].commit,
					res.requests[i].runs,
					res.requests[i].purpose ==
						BISECT_CONFIRM
					    ? " confirm"
					    : "");
			fputc('\n', stderr);
		}
		made = engine_run(trial, machine, &res, valid);
		if (made == 0) {
			out->verdict = SIM_FAILED;
			out->failure = "engine asked only for runs that "
				       "cannot be made";
			goto out;
		}
		runs += made;
	}
	if (cfg->trace)
		engine_trace(trial, machine, &res, classes, runs);
	error = engine_outcome(out, &res);
out:
	free(in);
	free(classes);
	return error;
}
