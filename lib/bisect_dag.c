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

static inline size_t popcount64(uint64_t x);

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
/* Bits set in a word, without a library call on machines whose compiler
 * targets no popcount instruction. */
static inline size_t popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (size_t)((x * 0x0101010101010101ULL) >> 56);
}

/*
 * The ancestors of a merge, stored compactly: every member of the set
 * whose index (relative to the span's start) is below `prefix`, plus the
 * members marked in w[0..nwords), which cover relative indices from
 * base_word * 64 on.  Histories are mostly "everything before, but a few
 * open branches", so the explicit part stays a few words long.
 */
struct aset {
	size_t prefix;
	size_t base_word;
	size_t nwords;
	uint64_t *w;
};

/* A dense scratch bitset over the span, and the range of words in use. */
struct scratch {
	uint64_t *w;
	size_t first, last; /* touched words; first > last when none */
	size_t prefix;      /* members below it are all ancestors */
};

static void scratch_touch(struct scratch *sc, size_t word)
{
	if (sc->first == (size_t)-1 || word < sc->first)
		sc->first = word;
	if (sc->last == (size_t)-1 || word > sc->last)
		sc->last = word;
}

static void scratch_mark(struct scratch *sc, size_t rel)
{
	sc->w[rel / 64] |= (uint64_t)1 << (rel & 63);
	scratch_touch(sc, rel / 64);
}

static void scratch_or(struct scratch *sc, const struct aset *a)
{
	size_t k;

	if (a->prefix > sc->prefix)
		sc->prefix = a->prefix;
	for (k = 0; k < a->nwords; k++) {
		if (a->w[k] == 0)
			continue;
		sc->w[a->base_word + k] |= a->w[k];
		scratch_touch(sc, a->base_word + k);
	}
}

/*
 * Marks in `sc` every member of the set that is an ancestor of chain X's
 * tail: the members of X and of the chains up its single-parent links,
 * until a chain whose union is stored (a merge) or the set's start.
 */
static void mark_ancestors(struct scratch *sc, size_t x, size_t lo,
			   const size_t *chain, const size_t *heads,
			   const size_t *ipc, const size_t *ip,
			   const struct aset *stored, const size_t *offs,
			   const size_t *bychain)
{
	for (;;) {
		size_t h = heads[x], k;

		/* a merge's set is never empty: it holds the merge */
		if (stored[x].w != NULL || stored[x].prefix != 0) {
			scratch_or(sc, &stored[x]);
			return;
		}
		for (k = offs[x]; k < offs[x + 1]; k++)
			scratch_mark(sc, bychain[k] - lo);
		if (ipc[h - lo] != 1)
			return; /* the start (a merge always has a union) */
		x = chain[ip[h - lo] - lo];
	}
}

/*
 * Turns the scratch into a stored set and its member count: the prefix is
 * pushed past every member already marked, the rest kept as words.  `rank`
 * counts the members below each relative index.  Clears the scratch.
 */
static int scratch_store(struct aset *out, size_t *count, struct scratch *sc,
			 const struct bisect_set *cand, size_t lo, size_t span,
			 const size_t *rank)
{
	size_t prefix = sc->prefix, k, ones = 0;

	while (prefix < span &&
	       (!bisect_set_has(cand, lo + prefix) ||
		(sc->w[prefix / 64] >> (prefix & 63) & 1)))
		prefix++;
	memset(out, 0, sizeof(*out));
	out->prefix = prefix;
	if (sc->last != (size_t)-1 && sc->last >= prefix / 64) {
		size_t from = prefix / 64 > sc->first ? prefix / 64 : sc->first;

		out->base_word = from;
		out->nwords = sc->last - from + 1;
		out->w = malloc(out->nwords * sizeof(uint64_t));
		if (out->w == NULL)
			return -2;
		for (k = 0; k < out->nwords; k++) {
			uint64_t word = sc->w[from + k];

			if (from + k == prefix / 64 && (prefix & 63) != 0)
				word &= ~(((uint64_t)1 << (prefix & 63)) - 1);
			out->w[k] = word;
			ones += popcount64(word);
		}
	}
	*count = rank[prefix] + ones;
	if (sc->last != (size_t)-1)
		memset(&sc->w[sc->first], 0,
		       (sc->last - sc->first + 1) * sizeof(uint64_t));
	sc->first = (size_t)-1;
	sc->last = (size_t)-1;
	sc->prefix = 0;
	return 0;
}

int bisect_dag_best_split(size_t *out, const struct bisect_commit *commits,
			  const struct bisect_set *cand, size_t exclude,
			  bool *found)
{
	size_t *chain = NULL, *pos = NULL, *children = NULL, *heads = NULL;
	size_t *size = NULL, *members = NULL, *cnt = NULL, *offs = NULL;
	size_t *bychain = NULL, *rank = NULL, *ipc = NULL, *ip = NULL;
	struct aset *stored = NULL;
	struct scratch sc = {NULL, 0, 0, 0};
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
	ipc = malloc(span * sizeof(*ipc));
	ip = malloc(span * sizeof(*ip));
	if (chain == NULL || pos == NULL || children == NULL || heads == NULL ||
	    size == NULL || members == NULL || ipc == NULL || ip == NULL)
		goto out;
	/* One pass over the parents: how many of each member's parents are
	 * in the set, the last of them, and the children counts. */
	for (i = lo; i <= hi; i++) {
		size_t inside = 0, parent = 0;

		if (!bisect_set_has(cand, i))
			continue;
		members[n++] = i;
		for (k = 0; k < commits[i].parent_count; k++) {
			size_t p = commits[i].parents[k];

			if (p >= lo && bisect_set_has(cand, p)) {
				children[p - lo]++;
				inside++;
				parent = p;
			}
		}
		ipc[i - lo] = inside;
		ip[i - lo] = parent;
	}
	for (i = 0; i < n; i++) {
		size_t v = members[i], inside = ipc[v - lo], parent = ip[v - lo];

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
	/* Ancestor counts per chain.  A chain whose head has one parent in
	 * the set counts its parent chain's ancestors plus its own members;
	 * only a chain headed by a merge needs a real union, stored compactly
	 * (struct aset) for the merges after it. */
	words = (span + 63) / 64;
	cnt = malloc(m * sizeof(*cnt));
	stored = calloc(m, sizeof(*stored));
	offs = calloc(m + 1, sizeof(*offs));
	bychain = malloc((n != 0 ? n : 1) * sizeof(*bychain));
	rank = malloc((span + 1) * sizeof(*rank));
	sc.w = calloc(words, sizeof(uint64_t));
	sc.first = sc.last = (size_t)-1;
	sc.prefix = 0;
	if (cnt == NULL || stored == NULL || offs == NULL || bychain == NULL ||
	    rank == NULL || sc.w == NULL)
		goto out;
	rank[0] = 0;
	for (i = 0; i < span; i++)
		rank[i + 1] = rank[i] + bisect_set_has(cand, lo + i);
	for (i = 0; i < n; i++)
		offs[chain[members[i] - lo] + 1]++;
	for (i = 0; i < m; i++)
		offs[i + 1] += offs[i];
	for (i = 0; i < n; i++) {
		size_t v = members[i], K = chain[v - lo];

		bychain[offs[K] + pos[v - lo]] = v;
	}
	for (i = 0; i < m; i++) {
		size_t h = heads[i], inside = ipc[h - lo], parent = ip[h - lo];

		if (inside == 0) {
			cnt[i] = size[i];
		} else if (inside == 1) {
			cnt[i] = cnt[chain[parent - lo]] + size[i];
		} else {
			for (k = 0; k < commits[h].parent_count; k++) {
				size_t p = commits[h].parents[k];

				if (p >= lo && bisect_set_has(cand, p))
					mark_ancestors(&sc, chain[p - lo], lo,
						       chain, heads, ipc, ip,
						       stored, offs, bychain);
			}
			for (k = offs[i]; k < offs[i + 1]; k++)
				scratch_mark(&sc, bychain[k] - lo);
			if (scratch_store(&stored[i], &cnt[i], &sc, cand, lo,
					  span, rank) < 0)
				goto out;
		}
	}
	for (i = 0; i < m; i++)
		heads[i] = cnt[i] - size[i];
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
	*out = best;
	error = 0;
out:
	free(chain);
	free(pos);
	free(children);
	free(heads);
	free(size);
	free(members);
	if (stored != NULL) {
		for (i = 0; i < m; i++)
			free(stored[i].w);
	}
	free(stored);
	free(rank);
	free(sc.w);
	free(ipc);
	free(ip);
	free(cnt);
	free(offs);
	free(bychain);
	return error;
}
