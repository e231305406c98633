/*
 * DAG helpers of the bisection engine (internal to lib/bisect.c): sets of
 * candidates as bitsets, ancestor closures inside a set, and git bisect's
 * best split.  Commits are indexed in topological order; every parent index
 * is below its child's.
 */
#ifndef STATBISECT_BISECT_DAG_H
#define STATBISECT_BISECT_DAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bisect.h"

struct bisect_set {
	uint64_t *words;
	size_t nwords;
};

int bisect_set_init(struct bisect_set *s, size_t n);
void bisect_set_clear(struct bisect_set *s);
int bisect_set_copy(struct bisect_set *out, const struct bisect_set *from);

static inline bool bisect_set_has(const struct bisect_set *s, size_t i)
{
	return (s->words[i >> 6] >> (i & 63)) & 1;
}

static inline void bisect_set_add(struct bisect_set *s, size_t i)
{
	s->words[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline void bisect_set_del(struct bisect_set *s, size_t i)
{
	s->words[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

size_t bisect_set_count(const struct bisect_set *s);

/* The lowest and highest members, or false when the set is empty. */
bool bisect_set_bounds(const struct bisect_set *s, size_t *lo, size_t *hi);

/*
 * Fills `out` (sized for the DAG, contents replaced) with the ancestors of
 * `start`, itself included, that lie in `within`.  Because candidate sets
 * are closed ("every commit between two members is a member"), walking
 * parents only inside `within` finds them all.
 */
void bisect_dag_ancestors(struct bisect_set *out,
			  const struct bisect_commit *commits,
			  const struct bisect_set *within, size_t start);

/*
 * git bisect's choice: the member of `cand` (not `exclude`, not a failed
 * build) whose ancestors inside `cand` are closest to half of `cand`; of
 * equally good ones, the lowest index.  *found is false when no member can
 * be tested.  Returns 0, or -2 when out of memory.
 */
int bisect_dag_best_split(size_t *out, const struct bisect_commit *commits,
			  const struct bisect_set *cand, size_t exclude,
			  bool *found);

#endif
