/*
 * dag: the simulated commit ranges of statbisect-sim, and the git bisect
 * arithmetic the baseline strategies use on them.
 *
 * A range is `count` commits in topological order: index 0 is `good` (the
 * root), index count-1 is `bad`, every parent index is below its child's
 * and every commit is an ancestor of `bad`, as the engine wants them
 * (bisect.h).  Two shapes:
 *
 *  linear  commit i has the single parent i-1.
 *  merges  a mainline with side branches.  At each step a new branch is
 *          opened with probability 0.15: it forks from one of the last
 *          ten mainline commits and gets 1-8 commits, which are made
 *          interleaved with new mainline commits (each open branch and
 *          the mainline are equally likely to get the next commit).  A
 *          finished branch is merged back later by a merge commit on the
 *          mainline whose first parent is the mainline head and second
 *          the branch tip.  `bad` is the last mainline commit or merge.
 *
 * Sets of commits are bitsets of dag_set_words() 64-bit words.  This
 * module is the simulator's own: it must not share code with the engine
 * it measures.
 */
#ifndef STATBISECT_SIM_DAG_H
#define STATBISECT_SIM_DAG_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dag_topology {
	DAG_LINEAR = 0,
	DAG_MERGES,
};

struct dag {
	size_t count;
	size_t *parents;      /* all parent indices, commit by commit */
	size_t *parent_first; /* commit i's parents are parents[first[i] ..
				 first[i + 1]) */
	bool *build_failed;   /* set by the caller; all false at first */
	size_t words;	      /* 64-bit words of one set */
	uint64_t *ancestors;  /* count rows of `words`: ancestors-or-self,
				 filled by dag_index() */
};

/* "linear" or "merges" into *out; -1 for anything else. */
int dag_topology_parse(enum dag_topology *out, const char *name);
const char *dag_topology_name(enum dag_topology topology);

/*
 * Makes a range of `count` (>= 2) commits of the given shape into *out.
 * The merges shape draws from `rng` (which the linear one does not touch).
 * Ancestor sets are not computed (see dag_index()).  Returns 0, -1 for
 * count < 2 or -2 when out of memory (then *out holds nothing to free).
 */
int dag_generate(struct dag *out, enum dag_topology topology, size_t count,
		 gsl_rng *rng);

/*
 * Computes the ancestors-or-self set of every commit, O(count^2 / 64)
 * time and memory.  Returns 0 or -2 when out of memory.
 */
int dag_index(struct dag *dag);

/* Frees what the dag holds (not the struct); NULL is a no-op. */
void dag_free(struct dag *dag);

static inline size_t dag_parent_count(const struct dag *dag, size_t i)
{
	return dag->parent_first[i + 1] - dag->parent_first[i];
}

static inline const size_t *dag_parents_of(const struct dag *dag, size_t i)
{
	return dag->parents + dag->parent_first[i];
}

static inline const uint64_t *dag_ancestors_of(const struct dag *dag, size_t i)
{
	return dag->ancestors + i * dag->words;
}

static inline bool dag_set_has(const uint64_t *set, size_t i)
{
	return (set[i >> 6] >> (i & 63)) & 1;
}

static inline void dag_set_add(uint64_t *set, size_t i)
{
	set[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* Is `a` an ancestor of `b` (or `b` itself)?  Needs dag_index(). */
static inline bool dag_is_ancestor(const struct dag *dag, size_t a, size_t b)
{
	return dag_set_has(dag_ancestors_of(dag, b), a);
}

/*
 * The bisection candidates of a segment into `out` (dag->words words):
 * the ancestors of `high` that are not in `excluded` (the ancestors of
 * the commits known to be on the older side, as a set).  Returns how many
 * there are.  Needs dag_index().
 */
size_t dag_candidates(uint64_t *out, const struct dag *dag, size_t high,
		      const uint64_t *excluded);

/*
 * git bisect's best split of the candidate set `cand` (`total` members):
 * the member other than `high`, and not a failed build, whose number of
 * ancestors inside `cand` (itself included) w maximises min(w, total - w),
 * the lowest index among equals.  Like `git bisect skip`, a failed build
 * is passed over for the best buildable commit (git picks a commit near
 * the best split with a pseudo-random offset instead).  Returns false when
 * no member other than `high` can be built.
 */
bool dag_best_split(size_t *out, const struct dag *dag, const uint64_t *cand,
		    size_t total, size_t high);

/* The members of `set`, ascending, into out[0..]; returns how many. */
size_t dag_set_members(size_t *out, const struct dag *dag,
		       const uint64_t *set);

#endif
