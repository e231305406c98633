#include "dag.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#define BRANCH_PROBABILITY 0.15
#define BRANCH_LENGTH_MAX 8
#define FORK_WINDOW 10 /* branches fork from the last ten mainline commits */
#define OPEN_BRANCHES_MAX 32

struct branch {
	size_t tip;	  /* fork point until its first commit */
	size_t remaining; /* commits still to make before the merge */
};

int dag_topology_parse(enum dag_topology *out, const char *name)
{
	if (strcmp(name, "linear") == 0)
		*out = DAG_LINEAR;
	else if (strcmp(name, "merges") == 0)
		*out = DAG_MERGES;
	else
		return -1;
	return 0;
}

const char *dag_topology_name(enum dag_topology topology)
{
	return topology == DAG_MERGES ? "merges" : "linear";
}

static int dag_alloc(struct dag *out, size_t count)
{
	memset(out, 0, sizeof(*out));
	out->count = count;
	out->parents = malloc(2 * count * sizeof(*out->parents));
	out->parent_first = calloc(count + 1, sizeof(*out->parent_first));
	out->build_failed = calloc(count, sizeof(*out->build_failed));
	out->words = (count + 63) / 64;
	if (out->parents == NULL || out->parent_first == NULL ||
	    out->build_failed == NULL) {
		dag_free(out);
		return -2;
	}
	return 0;
}

/* Appends commit `made` with parents p[0..n); returns made + 1. */
static size_t dag_append(struct dag *dag, size_t made, const size_t *p,
			 size_t n)
{
	size_t first = dag->parent_first[made], k;

	for (k = 0; k < n; k++)
		dag->parents[first + k] = p[k];
	dag->parent_first[made + 1] = first + n;
	return made + 1;
}

static void dag_make_linear(struct dag *dag)
{
	size_t i, made = 1;

	for (i = 1; i < dag->count; i++) {
		size_t parent = i - 1;

		made = dag_append(dag, made, &parent, 1);
	}
}

static int dag_make_merges(struct dag *dag, gsl_rng *rng)
{
	struct branch open[OPEN_BRANCHES_MAX];
	size_t open_count = 0, made = 1, mainline_count = 1;
	size_t *mainline = malloc(dag->count * sizeof(*mainline));

	if (mainline == NULL)
		return -2;
	mainline[0] = 0;
	while (made < dag->count) {
		size_t left = dag->count - made, owed = 0, k, pick, p[2];

		/* Each open branch still owes its commits and its merge. */
		for (k = 0; k < open_count; k++)
			owed += open[k].remaining + 1;
		if (left > owed + 2 && open_count < OPEN_BRANCHES_MAX &&
		    gsl_rng_uniform(rng) < BRANCH_PROBABILITY) {
			size_t room = left - owed - 2, window;

			if (room > BRANCH_LENGTH_MAX)
				room = BRANCH_LENGTH_MAX;
			window = mainline_count < FORK_WINDOW ? mainline_count
							      : FORK_WINDOW;
			open[open_count].tip =
			    mainline[mainline_count - 1 -
				     gsl_rng_uniform_int(rng, window)];
			open[open_count].remaining =
			    1 + gsl_rng_uniform_int(rng, room);
			open_count++;
			continue;
		}
		/* Slot 0 is the mainline, unless only the debts fit. */
		if (left > owed)
			pick = gsl_rng_uniform_int(rng, open_count + 1);
		else
			pick = 1 + gsl_rng_uniform_int(rng, open_count);
		if (pick == 0) {
			p[0] = mainline[mainline_count - 1];
			made = dag_append(dag, made, p, 1);
			mainline[mainline_count++] = made - 1;
			continue;
		}
		k = pick - 1;
		if (open[k].remaining > 0) {
			p[0] = open[k].tip;
			made = dag_append(dag, made, p, 1);
			open[k].tip = made - 1;
			open[k].remaining--;
			continue;
		}
		p[0] = mainline[mainline_count - 1];
		p[1] = open[k].tip;
		made = dag_append(dag, made, p, 2);
		mainline[mainline_count++] = made - 1;
		open[k] = open[--open_count];
	}
	free(mainline);
	return 0;
}

int dag_generate(struct dag *out, enum dag_topology topology, size_t count,
		 gsl_rng *rng)
{
	int error;

	if (count < 2)
		return -1;
	if ((error = dag_alloc(out, count)) < 0)
		return error;
	if (topology == DAG_LINEAR) {
		dag_make_linear(out);
		return 0;
	}
	if ((error = dag_make_merges(out, rng)) < 0)
		dag_free(out);
	return error;
}

int dag_index(struct dag *dag)
{
	size_t i, k, w;

	free(dag->ancestors);
	dag->ancestors = calloc(dag->count * dag->words, sizeof(uint64_t));
	if (dag->ancestors == NULL)
		return -2;
	for (i = 0; i < dag->count; i++) {
		uint64_t *row = dag->ancestors + i * dag->words;
		const size_t *p = dag_parents_of(dag, i);

		for (k = 0; k < dag_parent_count(dag, i); k++) {
			const uint64_t *from = dag_ancestors_of(dag, p[k]);

			for (w = 0; w < dag->words; w++)
				row[w] |= from[w];
		}
		dag_set_add(row, i);
	}
	return 0;
}

void dag_free(struct dag *dag)
{
	if (dag == NULL)
		return;
	free(dag->parents);
	free(dag->parent_first);
	free(dag->build_failed);
	free(dag->ancestors);
	memset(dag, 0, sizeof(*dag));
}

size_t dag_candidates(uint64_t *out, const struct dag *dag, size_t high,
		      const uint64_t *excluded)
{
	const uint64_t *anc = dag_ancestors_of(dag, high);
	size_t w, total = 0;

	for (w = 0; w < dag->words; w++) {
		out[w] = anc[w] & ~excluded[w];
		total += (size_t)__builtin_popcountll(out[w]);
	}
	return total;
}

bool dag_best_split(size_t *out, const struct dag *dag, const uint64_t *cand,
		    size_t total, size_t high)
{
	size_t w, best_score = 0;
	bool found = false;

	for (w = 0; w < dag->words; w++) {
		uint64_t bits = cand[w];

		while (bits != 0) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
			const uint64_t *anc;
			size_t below = 0, score, v;

			bits &= bits - 1;
			if (i == high || dag->build_failed[i])
				continue;
			anc = dag_ancestors_of(dag, i);
			for (v = 0; v <= w; v++)
				below += (size_t)__builtin_popcountll(anc[v] &
								      cand[v]);
			score = below < total - below ? below : total - below;
			if (!found || score > best_score) {
				*out = i;
				best_score = score;
				found = true;
			}
		}
	}
	return found;
}

size_t dag_set_members(size_t *out, const struct dag *dag, const uint64_t *set)
{
	size_t w, n = 0;

	for (w = 0; w < dag->words; w++) {
		uint64_t bits = set[w];

		while (bits != 0) {
			out[n++] = w * 64 + (size_t)__builtin_ctzll(bits);
			bits &= bits - 1;
		}
	}
	return n;
}
