/*
 * The pieces every strategy shares: runs, culprits and search segments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void out_of_memory(void)
{
	fputs("statbisect-sim: out of memory\n", stderr);
	exit(1);
}

static void series_grow(struct sim_series *s)
{
	if (s->count == s->capacity) {
		size_t capacity = s->capacity ? 2 * s->capacity : 16;
		double *values = realloc(s->values, capacity * sizeof(double));
		size_t *order;

		if (values == NULL)
			out_of_memory();
		s->values = values;
		order = realloc(s->order, capacity * sizeof(size_t));
		if (order == NULL)
			out_of_memory();
		s->order = order;
		s->capacity = capacity;
	}
}

/* Machine `m`'s clock: a run, and a build before a commit's first. */
static void machine_tick(struct sim_trial *trial, size_t m, size_t commit)
{
	struct sim_machine *mc = &trial->machines[m];

	if (!mc->built[commit]) {
		mc->built[commit] = true;
		mc->clock += trial->config->build_seconds;
	}
	mc->clock += trial->config->run_seconds;
}

double sim_run(struct sim_trial *trial, size_t commit, bool confirm)
{
	struct sim_series *s =
	    confirm ? &trial->confirm[commit] : &trial->search[commit];
	double v;

	series_grow(s);
	if (trial->machines != NULL)
		machine_tick(trial, 0, commit);
	v = noise_sample(&trial->noise, trial->level[commit]);
	/* the noise counts every run of the trial, this one included */
	s->order[s->count] = (size_t)trial->noise.runs;
	if (trial->machine_count > 1)
		s->order[s->count] = ++trial->job_runs;
	s->values[s->count++] = v;
	return v;
}

double sim_machine_run(struct sim_trial *trial, size_t machine, size_t commit,
		       bool confirm)
{
	struct sim_machine *mc;
	struct sim_series *s;
	double v;

	if (machine == 0)
		return sim_run(trial, commit, confirm);
	mc = &trial->machines[machine];
	s = confirm ? &mc->confirm[commit] : &mc->search[commit];
	series_grow(s);
	machine_tick(trial, machine, commit);
	v = noise_sample(&mc->noise, trial->level[commit] * mc->factor);
	/* the job's run order, over all its machines */
	s->order[s->count] = ++trial->job_runs;
	s->values[s->count++] = v;
	return v;
}

struct sim_series *sim_series_of(struct sim_trial *trial, size_t machine,
				 size_t commit, bool confirm)
{
	if (machine == 0)
		return confirm ? &trial->confirm[commit]
			       : &trial->search[commit];
	return confirm ? &trial->machines[machine].confirm[commit]
		       : &trial->machines[machine].search[commit];
}

int sim_outcome_add(struct sim_outcome *out, size_t commit,
		    const size_t *ambiguous, size_t count)
{
	struct sim_culprit *c;

	if (out->culprit_count == SIM_CULPRITS_MAX)
		return 0; /* more than any trial plants: all wrong anyway */
	c = &out->culprits[out->culprit_count++];
	c->commit = commit;
	c->confidence = NAN;
	c->ambiguous_first = out->ambiguous_used;
	c->ambiguous_count = count > 1 ? count : 0;
	if (count <= 1)
		return 0;
	if (out->ambiguous_used + count > out->ambiguous_capacity) {
		size_t capacity = 2 * (out->ambiguous_used + count);
		size_t *grown =
		    realloc(out->ambiguous, capacity * sizeof(size_t));

		if (grown == NULL)
			return -2;
		out->ambiguous = grown;
		out->ambiguous_capacity = capacity;
	}
	memcpy(out->ambiguous + out->ambiguous_used, ambiguous,
	       count * sizeof(size_t));
	out->ambiguous_used += count;
	return 0;
}

int sim_segments_push(struct sim_segments *stack, const struct dag *dag,
		      const uint64_t *excluded, size_t also_excluded,
		      size_t ref, size_t high)
{
	struct sim_segment *seg;
	size_t w;

	if (stack->count == stack->capacity) {
		size_t capacity = stack->capacity ? 2 * stack->capacity : 16;
		struct sim_segment *grown =
		    realloc(stack->items, capacity * sizeof(*grown));

		if (grown == NULL)
			return -2;
		stack->items = grown;
		stack->capacity = capacity;
	}
	seg = &stack->items[stack->count];
	memset(seg, 0, sizeof(*seg));
	seg->excluded = malloc(stack->words * sizeof(uint64_t));
	if (seg->excluded == NULL)
		return -2;
	memcpy(seg->excluded, excluded, stack->words * sizeof(uint64_t));
	if (also_excluded != SIZE_MAX) {
		const uint64_t *anc = dag_ancestors_of(dag, also_excluded);

		for (w = 0; w < stack->words; w++)
			seg->excluded[w] |= anc[w];
	}
	seg->ref = ref;
	seg->high = high;
	stack->count++;
	return 0;
}

void sim_segments_free(struct sim_segments *stack)
{
	size_t i;

	for (i = 0; i < stack->count; i++)
		free(stack->items[i].excluded);
	free(stack->items);
	memset(stack, 0, sizeof(*stack));
}
