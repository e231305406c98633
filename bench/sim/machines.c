/*
 * The engine on several machines at once (--machines K): lib/spread.c's
 * k-section, the code the server runs after every upload, on the
 * simulator's clock (docs/BISECTION.md, "Several machines per job").
 *
 * Events: spread_step() is given every machine's runs so far and the
 * commits each busy machine has open, and plans runs for the free ones.
 * A planned machine is busy until its clock has passed the plan's runs
 * and the builds they need; then its runs are made (interleaved when
 * asked, numbered in the job's order over all machines), it is free, and
 * spread_step() is asked again.  When it settles on a machine, that
 * machine runs the ordinary engine over the whole range of its own runs,
 * from its clock, to the verdict; the wall clock is when the verdict is
 * known.  Runs other machines have under way then are not made: nothing
 * waits for them.  A range with merges (or no machine to settle on) is
 * machine 0's alone from the start, as with one machine.
 */
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "sim.h"
#include "spread.h"

/* more calls than this is a k-section that does not settle */
#define MACHINES_STEPS_MAX 100000

struct machines_job {
	struct sim_trial *t;
	size_t count;
	struct bisect_options opts;
	struct bisect_commit *shape;			/* the range */
	struct bisect_commit *runs[SIM_MACHINES_MAX];	/* per machine */
	struct spread_machine spread[SIM_MACHINES_MAX]; /* their views */
	size_t open[SIM_MACHINES_MAX][BISECT_MAX_REQUESTS];
	struct spread_plan plan[SIM_MACHINES_MAX]; /* under way */
	double finish[SIM_MACHINES_MAX];	   /* when it is done */
};

/* What spread_step sees of machine m: its runs, its open commits. */
static void machines_view(struct machines_job *job, size_t m)
{
	struct bisect_commit *in = job->runs[m];
	const struct spread_plan *plan = &job->plan[m];
	size_t i;

	for (i = 0; i < job->count; i++) {
		const struct sim_series *s =
		    sim_series_of(job->t, m, i, false);
		const struct sim_series *c = sim_series_of(job->t, m, i, true);

		in[i] = job->shape[i];
		in[i].values = s->values;
		in[i].value_count = s->count;
		in[i].seq = s->order;
		in[i].confirm_values = c->values;
		in[i].confirm_count = c->count;
		in[i].confirm_seq = c->order;
	}
	for (i = 0; i < plan->request_count; i++)
		job->open[m][i] = plan->requests[i].commit;
	job->spread[m].commits = in;
	job->spread[m].open = job->open[m];
	job->spread[m].open_count = plan->request_count;
}

/* Whether machine m can make the runs of request r (a failed build or
 * an index out of range is a bad request, not run, as engine.c does). */
static bool machines_valid(struct machines_job *job,
			   const struct bisect_request *r)
{
	if (r->commit < job->count && !job->t->dag.build_failed[r->commit])
		return true;
	job->t->bad_requests++;
	return false;
}

/* Machine m starts `plan` at `now` (or when it is idle, if later);
 * returns when it will be done: its runs, and a build before a
 * commit's first run on it. */
static double machines_start(struct machines_job *job, size_t m,
			     const struct spread_plan *plan, double now)
{
	const struct sim_config *cfg = job->t->config;
	struct sim_machine *mc = &job->t->machines[m];
	bool building[BISECT_MAX_REQUESTS] = {false};
	double seconds = 0;
	size_t q, p;

	if (mc->clock < now)
		mc->clock = now;
	job->plan[m] = *plan;
	for (q = 0; q < plan->request_count; q++) {
		const struct bisect_request *r = &plan->requests[q];

		if (r->commit >= job->count ||
		    job->t->dag.build_failed[r->commit])
			continue;
		seconds += (double)r->runs * cfg->run_seconds;
		building[q] = !mc->built[r->commit];
		for (p = 0; p < q; p++)
			building[q] = building[q] &&
				      plan->requests[p].commit != r->commit;
		if (building[q])
			seconds += cfg->build_seconds;
	}
	return mc->clock + seconds;
}

/* Makes the runs of machine m's plan (A B A B when interleaved), which
 * moves its clock to the plan's end; the machine is free again.
 * Returns how many runs it made. */
static size_t machines_finish(struct machines_job *job, size_t m)
{
	struct spread_plan *plan = &job->plan[m];
	size_t done[BISECT_MAX_REQUESTS] = {0}, q, k, made = 0;
	bool valid[BISECT_MAX_REQUESTS], more = true;

	for (q = 0; q < plan->request_count; q++)
		valid[q] = machines_valid(job, &plan->requests[q]);
	while (more) {
		more = false;
		for (q = 0; q < plan->request_count; q++) {
			const struct bisect_request *r = &plan->requests[q];
			size_t burst;

			if (!valid[q] || done[q] >= r->runs)
				continue;
			burst = plan->interleave ? 1 : r->runs - done[q];
			for (k = 0; k < burst; k++)
				sim_machine_run(job->t, m, r->commit,
						r->purpose == BISECT_CONFIRM);
			done[q] += burst;
			made += burst;
			more = true;
		}
	}
	memset(plan, 0, sizeof(*plan));
	return made;
}

/*
 * The k-section as events, until spread_step settles: returns the
 * machine it settled on (its plan under way finished, *now when it is
 * free), SIZE_MAX when the k-section planned nothing yet did not
 * settle, or -2 / -1 as spread_step's errors in *error.
 */
static size_t machines_ksection(struct machines_job *job, double *now,
				int *error, const char **reason)
{
	struct sim_trial *t = job->t;
	struct spread_result res;
	size_t steps, m, next;

	for (steps = 0; steps < MACHINES_STEPS_MAX; steps++) {
		for (m = 0; m < t->machine_count; m++)
			machines_view(job, m);
		*error = spread_step(&res, job->shape, job->count, job->spread,
				     t->machine_count, &job->opts);
		if (*error < 0)
			return SIZE_MAX;
		if (res.settle) {
			*reason = res.reason;
			break;
		}
		for (m = 0; m < t->machine_count; m++)
			if (job->plan[m].request_count == 0 &&
			    res.plans[m].request_count > 0)
				job->finish[m] = machines_start(
				    job, m, &res.plans[m], *now);
		/* the machine done first */
		next = SIZE_MAX;
		for (m = 0; m < t->machine_count; m++)
			if (job->plan[m].request_count > 0 &&
			    (next == SIZE_MAX ||
			     job->finish[m] < job->finish[next]))
				next = m;
		if (next == SIZE_MAX) {
			*reason = "planned nothing and did not settle";
			return SIZE_MAX;
		}
		*now = job->finish[next];
		if (machines_finish(job, next) == 0) {
			/* it would plan the same again */
			*reason = "asked only for runs that cannot be made";
			return SIZE_MAX;
		}
	}
	if (steps == MACHINES_STEPS_MAX) {
		*reason = "did not settle";
		return SIZE_MAX;
	}
	m = res.settle_on == SPREAD_NONE ? 0 : res.settle_on;
	if (m >= t->machine_count)
		return SIZE_MAX;
	/* its runs under way are its job's: it makes them first */
	if (job->plan[m].request_count > 0) {
		if (*now < job->finish[m])
			*now = job->finish[m];
		machines_finish(job, m);
	}
	return m;
}

static void machines_job_free(struct machines_job *job)
{
	size_t m;

	free(job->shape);
	for (m = 0; m < SIM_MACHINES_MAX; m++)
		free(job->runs[m]);
}

int sim_engine_machines(struct sim_outcome *out, struct sim_trial *t)
{
	struct machines_job job;
	const char *reason = NULL;
	double now = 0;
	size_t i, m;
	int error = 0;

	if (t->machine_count < 2) {
		error = sim_engine(out, t);
		t->wall = t->machines[0].clock;
		return error;
	}
	memset(&job, 0, sizeof(job));
	job.t = t;
	job.count = t->dag.count;
	bisect_options_init(&job.opts, t->config->higher_is_better);
	job.opts.min_change_pct = t->config->min_change_pct;
	job.opts.runs_max = t->config->runs_max;
	job.opts.confirm_max = t->config->runs_max;
	job.opts.prefer_measured = true; /* as the server's */
	job.shape = calloc(job.count, sizeof(*job.shape));
	for (m = 0; m < t->machine_count; m++)
		if ((job.runs[m] = calloc(job.count, sizeof(**job.runs))) ==
		    NULL)
			error = -2;
	if (job.shape == NULL || error < 0) {
		machines_job_free(&job);
		return -2;
	}
	for (i = 0; i < job.count; i++) {
		job.shape[i].parents = dag_parents_of(&t->dag, i);
		job.shape[i].parent_count = dag_parent_count(&t->dag, i);
		job.shape[i].build_failed = t->dag.build_failed[i];
	}
	m = machines_ksection(&job, &now, &error, &reason);
	machines_job_free(&job);
	if (error < 0 && error != -1)
		return error;
	if (m == SIZE_MAX) {
		out->verdict = SIM_FAILED;
		out->failure = error == -1 ? "spread_step refused the input"
					   : "the k-section did not settle";
		snprintf(t->detail, sizeof(t->detail), "k-section: %s",
			 reason != NULL ? reason : "no machine");
		t->wall = now;
		return 0;
	}
	if (t->config->trace)
		fprintf(stderr,
			"k-section settled on machine %zu at %.0f s "
			"(%s)\n",
			m, now, reason);
	if (t->machines[m].clock < now)
		t->machines[m].clock = now;
	t->settled_at = t->machines[m].clock;
	t->settled_runs = t->job_runs;
	error = sim_engine_on(out, t, m);
	t->wall = t->machines[m].clock;
	return error;
}
