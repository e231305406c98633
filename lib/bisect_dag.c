#include "bisect_dag.h"

#include <stdlib.h>
#include <string.h>

/* Bits set in a word, without a library call on machines whose compiler
 * targets no popcount instruction. */
static inline size_t popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (size_t)((x * 0x0101010101010101ULL) >> 56);
}

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
	out->words =
	    malloc((from->nwords != 0 ? from->nwords : 1) * sizeof(uint64_t));
	if (out->words == NULL)
		return -2;
	memcpy(out->words, from->words, from->nwords * sizeof(uint64_t));
	return 0;
}

size_t bisect_set_count(const struct bisect_set *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nwords; i++)
		n += popcount64(s->words[i]);
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
			*hi =
			    i * 64 + 63 - (size_t)__builtin_clzll(s->words[i]);
			break;
		}
	}
	return true;
}

/*
 * Parents have lower indices than their children, so one sweep down the
 * members of `within` from `start` meets every ancestor after all of its
 * children.  The sweep goes by the members of `within` rather than by the
 * ancestors found, so that the next commit to read does not depend on the
 * one being read: nearly every member below `start` is an ancestor anyway.
 * It stops below the lowest ancestor found.
 */
void bisect_dag_ancestors(struct bisect_set *out,
			  const struct bisect_commit *commits,
			  const struct bisect_set *within, size_t start)
{
	size_t word, lowest = start, k;
	uint64_t todo;

	memset(out->words, 0, out->nwords * sizeof(uint64_t));
	if (!bisect_set_has(within, start))
		return;
	bisect_set_add(out, start);
	word = start / 64;
	todo = within->words[word] & (~(uint64_t)0 >> (63 - start % 64));
	for (;;) {
		while (todo != 0) {
			size_t bit = 63 - (size_t)__builtin_clzll(todo);
			size_t v = word * 64 + bit;

			todo &= ~((uint64_t)1 << bit);
			if (!bisect_set_has(out, v))
				continue;
			for (k = 0; k < commits[v].parent_count; k++) {
				size_t p = commits[v].parents[k];

				if (bisect_set_has(within, p)) {
					bisect_set_add(out, p);
					if (p < lowest)
						lowest = p;
				}
			}
		}
		if (word * 64 <= lowest)
			break; /* no ancestor in the words below */
		todo = within->words[--word];
	}
}

/*
 * Best split.  A member's weight is the number of its ancestors in the
 * set, itself included; they are computed in index order, so a member's
 * parents are weighed before it.  A member with one parent in the set
 * weighs its parent's weight plus one; only a merge (two or more parents
 * in the set) needs a real union of ancestor sets.  Those unions are kept
 * per merge, compactly (struct aset), so that a later merge ORs in the
 * union of the merge before it instead of walking the whole history again.
 */

#define NONE ((size_t)-1) /* no such member or union */

/*
 * The ancestors of a merge: every member of the set below `prefix`, plus
 * the members marked in nwords words from word `first` on (stored in the
 * pool at `offset`).  Histories are mostly "everything before, but a few
 * open branches", so the explicit part stays a few words long.
 */
struct aset {
	size_t prefix;
	size_t first, nwords;
	size_t offset;
};

/* What best_split knows of a member of the set. */
struct member {
	size_t weight; /* its ancestors in the set, itself included */
	size_t parent; /* its only parent in the set, or NONE */
	size_t set;    /* a merge's entry in split->sets, or NONE */
};

/* One best_split call's state; the bitsets cover the whole DAG. */
struct split {
	const struct bisect_commit *commits;
	const struct bisect_set *cand;
	size_t lo;		/* the lowest member */
	struct member *members; /* indexed by commit - lo */
	size_t *below;		/* members in the words below each word */
	/* Members whose ancestors are all the members up to them. */
	uint64_t *whole;
	/* The union being built: marked members, the words touched
	 * (first > last when none), and `prefix`: every member below it
	 * is in the union too. */
	uint64_t *scratch;
	size_t first, last, prefix;
	/* Every merge's union so far, their explicit words in one pool. */
	struct aset *sets;
	size_t set_count, set_room;
	uint64_t *pool;
	size_t pool_used, pool_room;
};

/* The members with an index below i. */
static size_t members_below(const struct split *sp, size_t i)
{
	size_t n = sp->below[i / 64];

	if ((i & 63) != 0)
		n += popcount64(sp->cand->words[i / 64] &
				(((uint64_t)1 << (i & 63)) - 1));
	return n;
}

static void scratch_touch(struct split *sp, size_t from, size_t to)
{
	if (sp->first > sp->last) {
		sp->first = from;
		sp->last = to;
		return;
	}
	if (from < sp->first)
		sp->first = from;
	if (to > sp->last)
		sp->last = to;
}

static void scratch_mark(struct split *sp, size_t v)
{
	sp->scratch[v / 64] |= (uint64_t)1 << (v & 63);
	scratch_touch(sp, v / 64, v / 64);
}

static void scratch_or(struct split *sp, const struct aset *a)
{
	size_t k;

	if (a->prefix > sp->prefix)
		sp->prefix = a->prefix;
	if (a->nwords == 0)
		return;
	for (k = 0; k < a->nwords; k++)
		sp->scratch[a->first + k] |= sp->pool[a->offset + k];
	scratch_touch(sp, a->first, a->first + a->nwords - 1);
}

/*
 * Marks the ancestors of member v in the scratch: v and the members up its
 * single-parent links, until a merge (whose union is stored), a root, a
 * member whose ancestors are all the members up to it (a prefix), or a
 * member in the scratch already.  The scratch holds every ancestor of each
 * member in it, so the walk can stop there: a branch's walk ends at its
 * fork point when the mainline's walk came first.
 */
static void mark_ancestors(struct split *sp, size_t v)
{
	for (;;) {
		const struct member *m = &sp->members[v - sp->lo];

		if (v < sp->prefix ||
		    (sp->scratch[v / 64] >> (v & 63) & 1) != 0)
			return;
		if (m->set != NONE) {
			scratch_or(sp, &sp->sets[m->set]);
			return;
		}
		if ((sp->whole[v / 64] >> (v & 63) & 1) != 0) {
			sp->prefix = v + 1;
			return;
		}
		scratch_mark(sp, v);
		if (m->parent == NONE)
			return;
		v = m->parent;
	}
}

/* Makes room for `need` elements of `size` bytes in *p, doubling. */
static int grow(void **p, size_t *room, size_t need, size_t size)
{
	size_t r = *room;
	void *q;

	if (need <= r)
		return 0;
	while (r < need)
		r *= 2;
	q = realloc(*p, r * size);
	if (q == NULL)
		return -2;
	*p = q;
	*room = r;
	return 0;
}

/*
 * Stores the scratch as merge v's union and returns its member count in
 * *count; clears the scratch.  The prefix is pushed, a word at a time,
 * past every member already marked (no further than v, the newest
 * possible ancestor); the marked words from there on are kept.
 */
static int scratch_store(struct split *sp, size_t v, size_t *count)
{
	const uint64_t *cand = sp->cand->words;
	struct aset *a;
	size_t prefix = sp->prefix, from, k, ones = 0;

	while (prefix <= v) {
		size_t word = prefix / 64;
		uint64_t missing = cand[word] & ~sp->scratch[word] &
				   (~(uint64_t)0 << (prefix & 63));

		if (missing != 0) {
			prefix = word * 64 + (size_t)__builtin_ctzll(missing);
			break;
		}
		prefix = (word + 1) * 64;
	}
	if (prefix > v + 1)
		prefix = v + 1;
	if (grow((void **)&sp->sets, &sp->set_room, sp->set_count + 1,
		 sizeof(*sp->sets)) < 0)
		return -2;
	a = &sp->sets[sp->set_count];
	a->prefix = prefix;
	a->first = 0;
	a->nwords = 0;
	a->offset = sp->pool_used;
	from = prefix / 64 > sp->first ? prefix / 64 : sp->first;
	if (sp->first <= sp->last && from <= sp->last) {
		/* The marks below the prefix are counted in it already. */
		sp->scratch[prefix / 64] &=
		    ~(((uint64_t)1 << (prefix & 63)) - 1);
		while (from <= sp->last && sp->scratch[from] == 0)
			from++;
	}
	if (sp->first <= sp->last && from <= sp->last) {
		a->first = from;
		a->nwords = sp->last - from + 1;
		if (grow((void **)&sp->pool, &sp->pool_room,
			 sp->pool_used + a->nwords, sizeof(*sp->pool)) < 0)
			return -2;
		for (k = 0; k < a->nwords; k++) {
			sp->pool[a->offset + k] = sp->scratch[from + k];
			ones += popcount64(sp->scratch[from + k]);
		}
		sp->pool_used += a->nwords;
	}
	*count = members_below(sp, prefix) + ones;
	if (sp->first <= sp->last)
		memset(&sp->scratch[sp->first], 0,
		       (sp->last - sp->first + 1) * sizeof(uint64_t));
	sp->first = 1;
	sp->last = 0;
	sp->prefix = 0;
	sp->set_count++;
	return 0;
}

/* The union of a merge's ancestors, stored; its size is the weight. */
static int weigh_merge(struct split *sp, size_t v, struct member *m)
{
	const struct bisect_commit *c = &sp->commits[v];
	size_t k;

	for (k = 0; k < c->parent_count; k++) {
		if (bisect_set_has(sp->cand, c->parents[k]))
			mark_ancestors(sp, c->parents[k]);
	}
	scratch_mark(sp, v);
	m->set = sp->set_count;
	return scratch_store(sp, v, &m->weight);
}

/* Fills in member v, whose parents are filled in already; `rank` members
 * come before it. */
static int weigh(struct split *sp, size_t v, size_t rank)
{
	const struct bisect_commit *c = &sp->commits[v];
	struct member *m = &sp->members[v - sp->lo];
	size_t inside = 0, parent = NONE, k;

	for (k = 0; k < c->parent_count; k++) {
		if (bisect_set_has(sp->cand, c->parents[k])) {
			inside++;
			parent = c->parents[k];
		}
	}
	m->set = NONE;
	m->parent = inside == 1 ? parent : NONE;
	if (inside == 0) {
		m->weight = 1;
	} else if (inside == 1) {
		m->weight = sp->members[parent - sp->lo].weight + 1;
	} else if (weigh_merge(sp, v, m) < 0) {
		return -2;
	}
	if (m->weight == rank + 1)
		sp->whole[v / 64] |= (uint64_t)1 << (v & 63);
	return 0;
}

int bisect_dag_best_split(size_t *out, const struct bisect_commit *commits,
			  const struct bisect_set *cand, size_t exclude,
			  bool *found)
{
	struct split sp;
	size_t lo, hi, span, nwords = cand->nwords, total, word, rank = 0, i;
	size_t best = 0, best_score = 0;
	char *arena;
	int error = -2;

	*found = false;
	if (!bisect_set_bounds(cand, &lo, &hi))
		return 0;
	span = hi - lo + 1;
	memset(&sp, 0, sizeof(sp));
	sp.commits = commits;
	sp.cand = cand;
	sp.lo = lo;
	sp.first = 1;
	sp.last = 0;
	/* One block for the arrays sized by the range; the members are
	 * written before they are read, so only the bitsets need zeroing. */
	arena = malloc(span * sizeof(*sp.members) +
		       (nwords + 1) * sizeof(*sp.below) +
		       2 * nwords * sizeof(uint64_t));
	sp.set_room = span / 16 + 16;
	sp.sets = malloc(sp.set_room * sizeof(*sp.sets));
	sp.pool_room = span / 16 + 16;
	sp.pool = malloc(sp.pool_room * sizeof(*sp.pool));
	if (arena == NULL || sp.sets == NULL || sp.pool == NULL)
		goto out;
	sp.members = (struct member *)arena;
	sp.below = (size_t *)(sp.members + span);
	sp.scratch = (uint64_t *)(sp.below + nwords + 1);
	sp.whole = sp.scratch + nwords;
	memset(sp.scratch, 0, 2 * nwords * sizeof(uint64_t));
	sp.below[0] = 0;
	for (i = 0; i < nwords; i++)
		sp.below[i + 1] = sp.below[i] + popcount64(cand->words[i]);
	total = sp.below[nwords];

	/* No member scores above total / 2: the first one that does is the
	 * first with the best score, and the later ones need no weights. */
	for (word = lo / 64; word <= hi / 64; word++) {
		uint64_t bits = cand->words[word];

		while (bits != 0) {
			size_t v = word * 64 + (size_t)__builtin_ctzll(bits);
			size_t weight, score;

			bits &= bits - 1;
			if (weigh(&sp, v, rank++) < 0)
				goto out;
			if (v == exclude || commits[v].build_failed)
				continue;
			weight = sp.members[v - lo].weight;
			score =
			    weight < total - weight ? weight : total - weight;
			if (!*found || score > best_score) {
				best = v;
				best_score = score;
				*found = true;
				if (best_score == total / 2)
					goto done;
			}
		}
	}
done:
	*out = best;
	error = 0;
out:
	if (error < 0)
		*found = false;
	free(arena);
	free(sp.sets);
	free(sp.pool);
	return error;
}
