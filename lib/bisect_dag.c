#include "bisect_dag.h"

#include <stdlib.h>
#include <string.h>

int bisect_set_init(struct bisect_set *s, size_t n)
{
	s->nwords = (n + 63) / 64;
	s->words = calloc(s->nwords != 0 ? s->nwords : 1, sizeof(uint64_t));
	return s->words == NULL ? -2 : 0;
}

void bisect_set_clear(struct bisect_set *s)
{
	free(s->words);
	s->words = NULL;
	s->nwords = 0;
}

int bisect_set_copy(struct bisect_set *out, const struct bisect_set *from)
{
	out->nwords = from->nwords;
	out->words = malloc((from->nwords != 0 ? from->nwords : 1) *
			    sizeof(uint64_t));
	if (out->words == NULL)
		return -2;
	memcpy(out->words, from->words, from->nwords * sizeof(uint64_t));
	return 0;
}

size_t bisect_set_count(const struct bisect_set *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nwords; i++)
		n += (size_t)__builtin_popcountll(s->words[i]);
	return n;
}

bool bisect_set_bounds(const struct bisect_set *s, size_t *lo, size_t *hi)
{
	size_t i;
	bool any = false;

	for (i = 0; i < s->nwords; i++) {
		if (s->words[i] != 0) {
			*lo = i * 64 + (size_t)__builtin_ctzll(s->words[i]);
			any = true;
			break;
		}
	}
	if (!any)
		return false;
	for (i = s->nwords; i-- > 0;) {
		if (s->words[i] != 0) {
			*hi = i * 64 + 63 - (size_t)__builtin_clzll(s->words[i]);
			break;
		}
	}
	return true;
}

void bisect_dag_ancestors(struct bisect_set *out,
			  const struct bisect_commit *commits,
			  const struct bisect_set *within, size_t start,
			  size_t *stack)
{
	size_t top = 0, k;

	memset(out->words, 0, out->nwords * sizeof(uint64_t));
	if (!bisect_set_has(within, start))
		return;
	bisect_set_add(out, start);
	stack[top++] = start;
	while (top > 0) {
		size_t v = stack[--top];

		for (k = 0; k < commits[v].parent_count; k++) {
			size_t p = commits[v].parents[k];

			if (bisect_set_has(within, p) && !bisect_set_has(out, p)) {
				bisect_set_add(out, p);
				stack[top++] = p;
			}
		}
	}
}

/*
 * Weights by chains: a chain is a maximal path whose inner links join a
 * commit with a single parent in the set to a parent with a single child in
 * the set.  A linear range is one chain, and a DAG with merges has far
 * fewer chains than commits, so the ancestor sets are kept per chain:
 * full[K] = every member of the set that is an ancestor of K's tail.  The
 * weight of the commit at position i of chain K is then
 * |full[K]| - size(K) + i + 1.
 */
int bisect_dag_best_split(size_t *out, const struct bisect_commit *commits,
			  size_t count, const struct bisect_set *cand,
			  size_t exclude, bool *found)
{
	size_t *chain = NULL, *pos = NULL, *children = NULL, *heads = NULL;
	size_t *size = NULL, *members = NULL;
	uint64_t *full = NULL;
	size_t n = 0, m = 0, i, k, lo, hi, span, words, total;
	size_t best = 0, best_score = 0;
	int error = -2;

	*found = false;
	if (!bisect_set_bounds(cand, &lo, &hi))
		return 0;
	span = hi - lo + 1;
	total = bisect_set_count(cand);
	chain = malloc(span * sizeof(*chain));
	pos = malloc(span * sizeof(*pos));
	children = calloc(span, sizeof(*children));
	heads = malloc(span * sizeof(*heads));
	size = calloc(span, sizeof(*size));
	members = malloc(span * sizeof(*members));
	if (chain == NULL || pos == NULL || children == NULL || heads == NULL ||
	    size == NULL || members == NULL)
		goto out;
	for (i = lo; i <= hi; i++) {
		if (!bisect_set_has(cand, i))
			continue;
		members[n++] = i;
		for (k = 0; k < commits[i].parent_count; k++) {
			size_t p = commits[i].parents[k];

			if (p >= lo && bisect_set_has(cand, p))
				children[p - lo]++;
		}
	}
	for (i = 0; i < n; i++) {
		size_t v = members[i], inside = 0, parent = 0;

		for (k = 0; k < commits[v].parent_count; k++) {
			size_t p = commits[v].parents[k];

			if (p >= lo && bisect_set_has(cand, p)) {
				inside++;
				parent = p;
			}
		}
		if (inside == 1 && children[parent - lo] == 1) {
			chain[v - lo] = chain[parent - lo];
			pos[v - lo] = pos[parent - lo] + 1;
		} else {
			chain[v - lo] = m;
			pos[v - lo] = 0;
			heads[m++] = v;
		}
		size[chain[v - lo]]++;
	}
	/* Bitsets over the members' index span, one per chain. */
	words = (span + 63) / 64;
	full = calloc(m * words, sizeof(uint64_t));
	if (full == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		size_t v = members[i];

		full[chain[v - lo] * words + (v - lo) / 64] |=
			(uint64_t)1 << ((v - lo) & 63);
	}
	for (i = 0; i < m; i++) {
		size_t h = heads[i];
		uint64_t *dst = &full[i * words];

		for (k = 0; k < commits[h].parent_count; k++) {
			size_t p = commits[h].parents[k], w;
			const uint64_t *src;

			if (p < lo || !bisect_set_has(cand, p))
				continue;
			src = &full[chain[p - lo] * words];
			for (w = 0; w < words; w++)
				dst[w] |= src[w];
		}
	}
	for (i = 0; i < m; i++) {
		size_t ones = 0, w;

		for (w = 0; w < words; w++)
			ones += (size_t)__builtin_popcountll(full[i * words + w]);
		/* reuse heads[] for the weight below the chain */
		heads[i] = ones - size[i];
	}
	for (i = 0; i < n; i++) {
		size_t v = members[i], weight, score;

		if (v == exclude || commits[v].build_failed)
			continue;
		weight = heads[chain[v - lo]] + pos[v - lo] + 1;
		score = weight < total - weight ? weight : total - weight;
		if (!*found || score > best_score) {
			best = v;
			best_score = score;
			*found = true;
		}
	}
	(void)count;
	*out = best;
	error = 0;
out:
	free(chain);
	free(pos);
	free(children);
	free(heads);
	free(size);
	free(members);
	free(full);
	return error;
}
