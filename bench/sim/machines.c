/*
 * The engine on several machines at once (--machines K), a k-section
 * search in which no comparison ever mixes two machines' runs
 * (docs/BISECTION.md, "Several machines per job"):
 *
 *  1. Endpoints: every machine measures `good` and `bad` on itself, the
 *     production engine deciding on that machine's runs alone (a range of
 *     the two commits, run until it wants to confirm `bad`: different).
 *     A machine that does not find them different hands the job to
 *     machine 0, alone with the whole range, as one machine would.
 *  2. Search: a free machine is given a commit of the current range
 *     (lo, hi): the commits under test cut it into gaps and the free
 *     machines split the widest evenly (K free at once: K + 1 parts).  It
 *     tests the commit against its own endpoint runs (the engine on the
 *     range good, x, bad of that machine's runs, until it classifies x);
 *     each answer narrows the range when its machine is done.  Machines
 *     do not wait for each other; an answer about a commit the range has
 *     left is not needed.
 *  3. Confirmation: a machine that tested lo or hi runs the engine on
 *     good, lo, hi, bad: it measures the other, names hi and confirms it
 *     against lo on fresh runs, as on one machine.  When it puts hi or lo
 *     at the other level instead, the search goes on past it.
 *
 * Anything the search cannot settle (a third level that both its parts
 * confirm, answers out of order, an undecided commit, a DAG with merges,
 * a confirmation that names nothing of the four) hands the job to
 * machine 0, which runs the production engine over the whole range from
 * the runs it has: slower, never less sound.  The wall clock is when the
 * verdict was known (t->wall).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "sim.h"

#define VIEW_COMMITS_MAX 4
#define VIEW_CALLS_MAX 100000
/* searches a job may start over after a confirmation disagreed */
#define MACHINES_ATTEMPTS 4

enum view_end {
	VIEW_VERDICT,	 /* the engine gave its verdict */
	VIEW_DECIDED,	 /* the target commit is classified */
	VIEW_CONFIRMING, /* the engine asked for confirmation runs */
	VIEW_FAILED,	 /* the engine erred or looped */
};

/* The series of `commit` on machine m. */
static struct sim_series *machine_series(struct sim_trial *t, size_t m,
					 size_t commit, bool confirm)
{
	if (m == 0)
		return confirm ? &t->confirm[commit] : &t->search[commit];
	return confirm ? &t->machines[m].confirm[commit]
		       : &t->machines[m].search[commit];
}

/* Makes the runs *res asks for on machine m, interleaved when asked
 * (A B A B), as engine.c does. */
static void view_run(struct sim_trial *t, size_t m, const size_t *view,
		     const struct bisect_result *res)
{
	size_t done[BISECT_MAX_REQUESTS] = {0}, q, k;
	bool more = true;

	while (more) {
		more = false;
		for (q = 0; q < res->request_count; q++) {
			const struct bisect_request *r = &res->requests[q];
			size_t burst;

			if (done[q] >= r->runs)
				continue;
			burst = res->interleave ? 1 : r->runs - done[q];
			for (k = 0; k < burst; k++)
				sim_machine_run(t, m, view[r->commit],
						r->purpose == BISECT_CONFIRM);
			done[q] += burst;
			more = true;
		}
	}
}

/*
 * Runs the production engine on machine m's runs of the linear range
 * view[0..n) (oldest first), making the runs it asks for on machine m,
 * until its verdict, until view[target] is classified (target < n), or
 * until it asks for confirmation runs (when stop_at_confirm).  *res and
 * classes[] hold its last answer.
 */
static enum view_end view_engine(struct bisect_result *res,
				 enum bisect_class *classes,
				 struct sim_trial *t, size_t m,
				 const size_t *view, size_t n, size_t target,
				 bool stop_at_confirm,
				 const struct bisect_options *opts)
{
	static const size_t chain[VIEW_COMMITS_MAX] = {0, 1, 2, 3};
	struct bisect_commit in[VIEW_COMMITS_MAX];
	size_t calls, i, q;

	for (calls = 0; calls < VIEW_CALLS_MAX; calls++) {
		bool confirming = false;

		memset(in, 0, sizeof(in));
		for (i = 0; i < n; i++) {
			struct sim_series *s =
			    machine_series(t, m, view[i], false);
			struct sim_series *c =
			    machine_series(t, m, view[i], true);

			in[i].values = s->values;
			in[i].value_count = s->count;
			in[i].seq = s->order;
			in[i].confirm_values = c->values;
			in[i].confirm_count = c->count;
			in[i].confirm_seq = c->order;
			in[i].parents = i > 0 ? &chain[i - 1] : NULL;
			in[i].parent_count = i > 0;
		}
		if (bisect_step(res, classes, in, n, opts) < 0)
			return VIEW_FAILED;
		if (res->verdict != BISECT_PENDING)
			return VIEW_VERDICT;
		if (target < n && (classes[target] == BISECT_GOOD_LIKE ||
				   classes[target] == BISECT_BAD_LIKE))
			return VIEW_DECIDED;
		if (res->request_count == 0 ||
		    res->request_count > BISECT_MAX_REQUESTS)
			return VIEW_FAILED;
		for (q = 0; q < res->request_count; q++) {
			if (res->requests[q].commit >= n ||
			    res->requests[q].runs > 100000)
				return VIEW_FAILED;
			confirming |=
			    res->requests[q].purpose == BISECT_CONFIRM;
		}
		if (confirming && stop_at_confirm)
			return VIEW_CONFIRMING;
		view_run(t, m, view, res);
	}
	return VIEW_FAILED;
}

/* Machine 0 alone, over the whole range, from the runs it has, from
 * `now` on; the wall clock is when it is done. */
static int machines_alone(struct sim_outcome *out, struct sim_trial *t,
			  double now)
{
	int error;

	memset(out->culprits, 0, sizeof(out->culprits));
	out->culprit_count = 0;
	out->ambiguous_used = 0;
	out->verdict = SIM_NO_CHANGE;
	if (t->machines[0].clock < now)
		t->machines[0].clock = now;
	error = sim_engine(out, t);
	t->wall = t->machines[0].clock;
	return error;
}

/* Whether commit i is under test on some machine. */
static bool under_test(const struct sim_trial *t, const size_t *task, size_t i)
{
	size_t m;

	for (m = 0; m < t->machine_count; m++)
		if (task[m] == i)
			return true;
	return false;
}

/*
 * The commits for `want` free machines (a k-section): the commits under
 * test cut (lo, hi) into gaps; each new commit goes to the gap whose
 * parts would be widest (in buildable commits), and a gap's new commits
 * split it evenly.  Fills points[] oldest first; returns how many (fewer
 * when the gaps have no more commits).
 */
static size_t next_commits(size_t *points, const struct sim_trial *t,
			   const size_t *task, size_t lo, size_t hi,
			   size_t want)
{
	size_t from[SIM_MACHINES_MAX + 1], width[SIM_MACHINES_MAX + 1];
	size_t parts[SIM_MACHINES_MAX + 1], gaps = 0, i, g, j, used = 0;

	from[0] = lo;
	width[0] = 0;
	for (i = lo + 1; i < hi; i++) {
		if (under_test(t, task, i)) {
			from[++gaps] = i;
			width[gaps] = 0;
		} else if (!t->dag.build_failed[i]) {
			width[gaps]++;
		}
	}
	gaps++;
	for (g = 0; g < gaps; g++)
		parts[g] = 0;
	for (j = 0; j < want; j++) {
		size_t best = SIZE_MAX;

		for (g = 0; g < gaps; g++)
			if (width[g] > parts[g] &&
			    (best == SIZE_MAX ||
			     width[g] * (parts[best] + 1) >
				 width[best] * (parts[g] + 1)))
				best = g;
		if (best == SIZE_MAX)
			break;
		parts[best]++;
	}
	for (g = 0; g < gaps; g++) {
		size_t seen = 0, k = 1;

		for (i = from[g] + 1; k <= parts[g]; i++) {
			if (t->dag.build_failed[i] || under_test(t, task, i))
				continue;
			/* the k-th of parts[g] evenly spread commits */
			if (seen++ ==
			    k * (width[g] + 1) / (parts[g] + 1) - 1) {
				points[used++] = i;
				k++;
			}
		}
	}
	return used;
}

/* Whether the search is over: no buildable commit inside (lo, hi) is
 * untested, and none is under test. */
static bool search_closed(const struct sim_trial *t, const size_t *task,
			  size_t lo, size_t hi)
{
	size_t m;

	size_t point;

	if (next_commits(&point, t, task, lo, hi, 1) > 0)
		return false;
	for (m = 0; m < t->machine_count; m++)
		if (task[m] > lo && task[m] < hi)
			return false;
	return true;
}

/*
 * Machine m's answer on view[1] against its own runs of good and bad
 * (view[0], view[2]): good- or bad-like, or undecided.  A commit the
 * engine first finds at a third level splits the view in two, each part
 * of which must show a change: when only one does, its culprit says
 * where the commit is (x itself: bad-like; bad: good-like).
 */
static enum bisect_class machine_test(struct sim_trial *t, size_t m,
				      const size_t *view,
				      const struct bisect_options *opts)
{
	enum bisect_class classes[VIEW_COMMITS_MAX];
	struct bisect_result res;

	switch (view_engine(&res, classes, t, m, view, 3, 1, true, opts)) {
	case VIEW_DECIDED:
		return classes[1];
	case VIEW_CONFIRMING:
		if (res.culprit_count != 1)
			return BISECT_UNDECIDED;
		return res.culprits[0].commit == 1 ? BISECT_BAD_LIKE
						   : BISECT_GOOD_LIKE;
	default:
		return BISECT_UNDECIDED;
	}
}

/*
 * Phase 1 (when `endpoints`) and 2 as events: each machine measures its
 * endpoints, then is given a commit whenever it is free; an answer
 * counts when its machine is done (a machine's runs depend on no other
 * machine's, so its whole task is run when it starts, and its answer
 * read at its clock).  Narrows (*lo, *hi) until no buildable commit is
 * left between them; answers[] keeps every answer, tester[] who gave it;
 * *now is when the last answer needed arrived.  False when the machines
 * cannot settle it (see the file's comment).
 */
static bool machines_search(struct sim_trial *t, size_t *lo, size_t *hi,
			    size_t *tester, enum bisect_class *answers,
			    bool endpoints, double *now,
			    const struct bisect_options *opts)
{
	size_t count = t->dag.count, task[SIM_MACHINES_MAX], m, best, j;
	size_t points[SIM_MACHINES_MAX], free_machines[SIM_MACHINES_MAX];
	size_t free_count;
	size_t ends[2] = {0, count - 1}, view[3] = {0, 0, count - 1};
	enum bisect_class classes[VIEW_COMMITS_MAX];
	enum bisect_class answer[SIM_MACHINES_MAX];
	bool measuring[SIM_MACHINES_MAX], inside;
	struct bisect_result res;

	for (m = 0; m < t->machine_count; m++) {
		measuring[m] = endpoints;
		task[m] = SIZE_MAX;
		if (endpoints)
			answer[m] =
			    view_engine(&res, classes, t, m, ends, 2, 2, true,
					opts) == VIEW_CONFIRMING
				? BISECT_BAD_LIKE
				: BISECT_UNDECIDED;
	}
	for (;;) {
		/* every free machine gets a commit */
		for (m = 0, free_count = 0; m < t->machine_count; m++)
			if (!measuring[m] && task[m] == SIZE_MAX)
				free_machines[free_count++] = m;
		free_count =
		    next_commits(points, t, task, *lo, *hi, free_count);
		for (j = 0; j < free_count; j++) {
			m = free_machines[j];
			if (t->machines[m].clock < *now)
				t->machines[m].clock = *now;
			task[m] = points[j];
			tester[points[j]] = m;
			view[1] = points[j];
			answer[m] = machine_test(t, m, view, opts);
		}
		if (search_closed(t, task, *lo, *hi))
			return true;
		/* the next answer to arrive */
		best = SIZE_MAX;
		for (m = 0; m < t->machine_count; m++)
			if ((measuring[m] || task[m] != SIZE_MAX) &&
			    (best == SIZE_MAX ||
			     t->machines[m].clock < t->machines[best].clock))
				best = m;
		if (best == SIZE_MAX)
			return false;
		*now = t->machines[best].clock;
		/* a commit the range has left: its answer is not needed */
		inside =
		    measuring[best] || (task[best] > *lo && task[best] < *hi);
		if (!measuring[best])
			answers[task[best]] = answer[best];
		if (inside && answer[best] == BISECT_UNDECIDED)
			return false;
		if (!measuring[best] && inside &&
		    answer[best] == BISECT_GOOD_LIKE)
			*lo = task[best];
		if (!measuring[best] && inside &&
		    answer[best] == BISECT_BAD_LIKE)
			*hi = task[best];
		measuring[best] = false;
		task[best] = SIZE_MAX;
	}
}

/*
 * When the confirming machine put hi at good's level (it named `bad`,
 * or a commit above hi) or lo at bad's: the range moves past the
 * commit it disagrees about, to the nearest answers of the other
 * machines beyond it.
 */
static void search_reopen(const struct sim_trial *t,
			  const enum bisect_class *answers, size_t named,
			  size_t *lo, size_t *hi)
{
	size_t count = t->dag.count, i;

	if (named > *hi) {
		*lo = *hi;
		*hi = count - 1;
	} else {
		*hi = *lo;
		*lo = 0;
	}
	for (i = *lo + 1; i < *hi; i++) {
		if (answers[i] == BISECT_BAD_LIKE) {
			*hi = i;
			break;
		}
		if (answers[i] == BISECT_GOOD_LIKE)
			*lo = i;
	}
}

/*
 * Phase 3, from `now`: the engine on good, lo, hi, bad of one machine
 * (the one that tested lo or hi and is free first) names hi over lo and
 * confirms it.  Returns 1 when it did (out filled, t->wall set); 0 when
 * it did not (*now: when that was known), with *lo and *hi moved when it
 * confirmed another commit of the four (the search goes on there), else
 * unchanged; or -2.
 */
static int machines_confirm(struct sim_outcome *out, struct sim_trial *t,
			    const size_t *tester,
			    const enum bisect_class *answers, size_t *lo,
			    size_t *hi, double *now,
			    const struct bisect_options *opts)
{
	size_t count = t->dag.count, view[VIEW_COMMITS_MAX], n = 0, i, m = 0;
	size_t ambiguous[SIM_CULPRITS_MAX], amb = 0, ends[2] = {*lo, *hi};
	enum bisect_class classes[VIEW_COMMITS_MAX];
	struct bisect_result res;
	const struct bisect_culprit *c = &res.culprits[0];
	int error;

	for (i = 0; i < 2; i++)
		if (tester[ends[i]] != SIZE_MAX &&
		    (m == 0 || t->machines[tester[ends[i]]].clock <
				   t->machines[m].clock))
			m = tester[ends[i]];
	if (t->machines[m].clock < *now)
		t->machines[m].clock = *now;
	view[n++] = 0;
	if (*lo != 0)
		view[n++] = *lo;
	if (*hi != count - 1)
		view[n++] = *hi;
	view[n++] = count - 1;
	error = view_engine(&res, classes, t, m, view, n, n, false, opts);
	*now = t->machines[m].clock;
	if (error != VIEW_VERDICT || res.verdict != BISECT_REGRESSION ||
	    res.culprit_count != 1 || !c->confirmed ||
	    *hi - *lo > SIM_CULPRITS_MAX)
		return 0;
	if (view[c->commit] != *hi) {
		search_reopen(t, answers, view[c->commit], lo, hi);
		return 0;
	}
	out->verdict = SIM_CHANGE;
	/* failed builds between lo and hi hide which of them it is */
	for (i = *lo + 1; *hi - *lo > 1 && i <= *hi; i++)
		ambiguous[amb++] = i;
	if ((error = sim_outcome_add(out, *hi, ambiguous, amb)) < 0)
		return error;
	out->culprits[0].confidence = c->confidence;
	t->wall = *now;
	return 1;
}

int sim_engine_machines(struct sim_outcome *out, struct sim_trial *t)
{
	size_t count = t->dag.count, i, lo = 0, hi = count - 1, *tester;
	size_t attempt, was_lo, was_hi;
	enum bisect_class *answers;
	struct bisect_options opts;
	double now = 0;
	int done = 0;

	if (t->machine_count < 2 || t->config->topology != DAG_LINEAR)
		return machines_alone(out, t, 0);
	bisect_options_init(&opts, t->config->higher_is_better);
	opts.min_change_pct = t->config->min_change_pct;
	opts.runs_max = t->config->runs_max;
	opts.confirm_max = t->config->runs_max;
	tester = malloc(count * sizeof(size_t));
	answers = calloc(count, sizeof(*answers));
	if (tester == NULL || answers == NULL) {
		free(tester);
		free(answers);
		return -2;
	}
	for (i = 0; i < count; i++)
		tester[i] = SIZE_MAX;
	/* a confirmation that disagrees sends the search on, a few times */
	for (attempt = 0; attempt < MACHINES_ATTEMPTS; attempt++) {
		if (!machines_search(t, &lo, &hi, tester, answers,
				     attempt == 0, &now, &opts))
			break;
		was_lo = lo;
		was_hi = hi;
		done = machines_confirm(out, t, tester, answers, &lo, &hi,
					&now, &opts);
		if (done != 0 || (lo == was_lo && hi == was_hi))
			break;
	}
	free(tester);
	free(answers);
	if (done == 0)
		return machines_alone(out, t, now);
	return done < 0 ? done : 0;
}
