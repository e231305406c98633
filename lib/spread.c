#include "spread.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_MAX 4

/* What one machine's runs say about a commit (or its endpoints). */
enum answer {
	ANSWER_NONE = 0,  /* no search run of the commit on the machine */
	ANSWER_PENDING,	  /* more runs first: the plan says which */
	ANSWER_GOOD,	  /* at good's level (endpoints: the same) */
	ANSWER_BAD,	  /* at bad's level (endpoints: different) */
	ANSWER_UNDECIDED, /* the engine will not say */
};

/* What spread_step knows of the machines while it decides. */
struct state {
	const struct bisect_commit *shape;
	size_t count;
	const struct spread_machine *machines;
	size_t machine_count;
	const struct bisect_options *opts;
	enum answer *answers; /* count rows of machine_count */
	bool *testing;	      /* commits under test */
	size_t lo, hi;
};

static bool linear(const struct bisect_commit *shape, size_t count)
{
	size_t i;

	for (i = 1; i < count; i++)
		if (shape[i].parent_count != 1 || shape[i].parents[0] != i - 1)
			return false;
	return true;
}

/* A commit no machine can measure: its build failed, or its runs keep
 * failing on some machine. */
static bool unbuildable(const struct state *s, size_t i)
{
	size_t m;

	if (s->shape[i].build_failed)
		return true;
	for (m = 0; m < s->machine_count; m++)
		if (s->machines[m].commits[i].build_failed)
			return true;
	return false;
}

/* The engine on machine m's runs of view[0..n) (oldest first, as a chain);
 * search runs only unless `confirm`.  Its requests, if any, go into *plan
 * as commits of the job. */
static int view_step(struct bisect_result *res, enum bisect_class *classes,
		     struct spread_plan *plan, const struct state *s, size_t m,
		     const size_t *view, size_t n, bool confirm)
{
	static const size_t chain[VIEW_MAX] = {0, 1, 2, 3};
	struct bisect_commit in[VIEW_MAX];
	size_t i;
	int rc;

	memset(in, 0, sizeof(in));
	for (i = 0; i < n; i++) {
		const struct bisect_commit *c =
		    m == SPREAD_NONE ? NULL : &s->machines[m].commits[view[i]];

		if (c != NULL) {
			in[i].values = c->values;
			in[i].value_count = c->value_count;
			in[i].seq = c->seq;
		}
		if (c != NULL && confirm) {
			in[i].confirm_values = c->confirm_values;
			in[i].confirm_count = c->confirm_count;
			in[i].confirm_seq = c->confirm_seq;
		}
		in[i].parents = i > 0 ? &chain[i - 1] : NULL;
		in[i].parent_count = i > 0;
	}
	rc = bisect_step(res, classes, in, n, s->opts);
	if (rc < 0)
		return rc;
	memset(plan, 0, sizeof(*plan));
	if (res->verdict != BISECT_PENDING)
		return 0;
	for (i = 0; i < res->request_count; i++) {
		if (res->requests[i].commit >= n)
			return -1;
		plan->requests[i] = res->requests[i];
		plan->requests[i].commit = view[res->requests[i].commit];
	}
	plan->request_count = res->request_count;
	plan->interleave = res->interleave;
	return 0;
}

static bool asks_confirmation(const struct bisect_result *res)
{
	size_t i;

	for (i = 0; i < res->request_count; i++)
		if (res->requests[i].purpose == BISECT_CONFIRM)
			return true;
	return false;
}

/* Machine m's endpoints: different (ANSWER_BAD) once the engine on the
 * two wants to confirm bad; the same or unknown (ANSWER_GOOD) on its
 * verdict. */
static int endpoints(enum answer *out, struct spread_plan *plan,
		     const struct state *s, size_t m)
{
	const size_t view[2] = {0, s->count - 1};
	struct bisect_result res;
	int rc = view_step(&res, NULL, plan, s, m, view, 2, false);

	if (rc < 0)
		return rc;
	if (res.verdict != BISECT_PENDING)
		*out = ANSWER_GOOD;
	else if (asks_confirmation(&res))
		*out = ANSWER_BAD;
	else
		*out = plan->request_count > 0 ? ANSWER_PENDING
					       : ANSWER_UNDECIDED;
	if (*out != ANSWER_PENDING)
		memset(plan, 0, sizeof(*plan));
	return 0;
}

/*
 * Machine m's answer about commit x, from the engine on good, x, bad of
 * its search runs.  A commit the engine finds at a third level splits the
 * view, and the part that shows the change says where x is: the engine
 * wants to confirm x (bad-like) or bad (good-like).
 */
static int commit_answer(enum answer *out, struct spread_plan *plan,
			 const struct state *s, size_t m, size_t x)
{
	const size_t view[3] = {0, x, s->count - 1};
	enum bisect_class classes[3];
	struct bisect_result res;
	int rc = view_step(&res, classes, plan, s, m, view, 3, false);

	if (rc < 0)
		return rc;
	if (res.verdict != BISECT_PENDING)
		*out = ANSWER_UNDECIDED;
	else if (classes[1] == BISECT_GOOD_LIKE)
		*out = ANSWER_GOOD;
	else if (classes[1] == BISECT_BAD_LIKE)
		*out = ANSWER_BAD;
	else if (asks_confirmation(&res))
		*out = res.culprit_count != 1	     ? ANSWER_UNDECIDED
		       : res.culprits[0].commit == 1 ? ANSWER_BAD
						     : ANSWER_GOOD;
	else
		*out = plan->request_count > 0 ? ANSWER_PENDING
					       : ANSWER_UNDECIDED;
	if (*out != ANSWER_PENDING)
		memset(plan, 0, sizeof(*plan));
	return 0;
}

static bool is_open(const struct spread_machine *machine, size_t x)
{
	size_t i;

	for (i = 0; i < machine->open_count; i++)
		if (machine->open[i] == x)
			return true;
	return false;
}

static int settle(struct spread_result *out, size_t machine,
		  const char *reason)
{
	memset(out->plans, 0, sizeof(out->plans));
	out->settle = true;
	out->settle_on = machine;
	out->reason = reason;
	return 0;
}

/*
 * The commits for `want` free machines: the commits under test cut
 * (lo, hi) into gaps; each new commit goes to the gap whose parts would
 * be widest (in buildable commits), and a gap's new commits split it
 * evenly.  Fills points[] oldest first and marks them under test; returns
 * how many (fewer when the gaps have no more commits).
 */
static size_t next_commits(size_t *points, struct state *s, size_t want)
{
	size_t from[SPREAD_MACHINES_MAX + 1] = {0};
	size_t width[SPREAD_MACHINES_MAX + 1] = {0};
	size_t parts[SPREAD_MACHINES_MAX + 1] = {0};
	size_t gaps = 0, i, g, j, used = 0;

	from[0] = s->lo;
	for (i = s->lo + 1; i < s->hi; i++) {
		if (s->testing[i] && gaps < SPREAD_MACHINES_MAX)
			from[++gaps] = i;
		else if (!s->testing[i] && !unbuildable(s, i))
			width[gaps]++;
	}
	gaps++;
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

		for (i = from[g] + 1; k <= parts[g] && i < s->hi; i++) {
			if (s->testing[i] || unbuildable(s, i))
				continue;
			/* the k-th of parts[g] evenly spread commits */
			if (seen++ ==
			    k * (width[g] + 1) / (parts[g] + 1) - 1) {
				points[used++] = i;
				k++;
			}
		}
	}
	for (j = 0; j < used; j++)
		s->testing[points[j]] = true;
	return used;
}

/* Every machine's endpoints into ends[], and, where they differ, its
 * answer about each commit it measured into s->answers. */
static int collect(struct spread_result *out, struct state *s,
		   enum answer *ends, size_t *answered)
{
	size_t m, x;
	int rc;

	*answered = 0;
	for (m = 0; m < s->machine_count; m++) {
		rc = endpoints(&ends[m], &out->plans[m], s, m);
		if (rc < 0)
			return rc;
		if (ends[m] != ANSWER_BAD)
			continue;
		for (x = 1; x + 1 < s->count; x++) {
			struct spread_plan unused;

			if (s->machines[m].commits[x].value_count == 0 ||
			    unbuildable(s, x))
				continue;
			rc = commit_answer(&s->answers[m * s->count + x],
					   &unused, s, m, x);
			if (rc < 0)
				return rc;
			(*answered)++;
		}
	}
	return 0;
}

/* An answer, and when it came: after the last run it rests on. */
struct arrival {
	size_t seq, machine, commit;
};

static int by_arrival(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	return x->commit < y->commit ? -1 : x->commit > y->commit;
}

/* When machine m's answer about commit x came (spread_machine.arrival). */
static size_t last_run(const struct spread_machine *machine, size_t x)
{
	const struct bisect_commit *c = &machine->commits[x];
	size_t i, last = 0;

	if (machine->arrival != NULL)
		return machine->arrival[x];
	for (i = 0; c->seq != NULL && i < c->value_count; i++)
		if (c->seq[i] > last)
			last = c->seq[i];
	return last;
}

/*
 * Narrows (lo, hi) by the answers in the order they came, as the machines
 * gave them: an answer about a commit the range had already left when it
 * came was not needed and is not used.  Returns 1 when an answer inside
 * the range is undecided, 0, or -2.
 */
static int narrow(struct state *s, size_t answered)
{
	struct arrival *list =
	    malloc((answered ? answered : 1) * sizeof(*list));
	size_t m, x, n = 0, i;
	int rc = 0;

	if (list == NULL)
		return -2;
	for (m = 0; m < s->machine_count; m++)
		for (x = 1; x + 1 < s->count; x++)
			if (s->answers[m * s->count + x] != ANSWER_NONE &&
			    n < answered)
				list[n++] = (struct arrival){
				    last_run(&s->machines[m], x), m, x};
	qsort(list, n, sizeof(*list), by_arrival);
	for (i = 0; i < n && rc == 0; i++) {
		enum answer a =
		    s->answers[list[i].machine * s->count + list[i].commit];

		x = list[i].commit;
		if (x <= s->lo || x >= s->hi)
			continue;
		if (a == ANSWER_GOOD)
			s->lo = x;
		else if (a == ANSWER_BAD)
			s->hi = x;
		else if (a == ANSWER_UNDECIDED)
			rc = 1;
	}
	free(list);
	return rc;
}

/* A machine that answered `x` (bad-like when `bad`), free when `idle`;
 * SPREAD_NONE when none did. */
static size_t tester(const struct state *s, size_t x, bool bad, bool idle)
{
	size_t m;

	for (m = 0; m < s->machine_count; m++)
		if (s->answers[m * s->count + x] ==
			(bad ? ANSWER_BAD : ANSWER_GOOD) &&
		    (!idle || s->machines[m].open_count == 0))
			return m;
	return SPREAD_NONE;
}

/* The machine that began the confirmation: runs of lo or hi asked of it
 * are out, or it has fresh runs of either; SPREAD_NONE when none did. */
static size_t confirming(const struct state *s)
{
	size_t m;

	for (m = 0; m < s->machine_count; m++) {
		const struct spread_machine *machine = &s->machines[m];

		/* (the endpoints are open on a machine that joins) */
		if ((s->lo > 0 && is_open(machine, s->lo)) ||
		    (s->hi + 1 < s->count && is_open(machine, s->hi)) ||
		    machine->commits[s->lo].confirm_count > 0 ||
		    machine->commits[s->hi].confirm_count > 0)
			return m;
	}
	return SPREAD_NONE;
}

/* Phase 3: machine c runs the engine on good, lo, hi, bad until its
 * verdict; then the job settles on it. */
static int confirm(struct spread_result *out, const struct state *s)
{
	size_t c = confirming(s), view[VIEW_MAX], n = 0;
	struct bisect_result res;
	int rc;

	/* else a machine free now that measured hi, else lo, else one busy */
	if (c == SPREAD_NONE)
		c = tester(s, s->hi, true, true);
	if (c == SPREAD_NONE)
		c = tester(s, s->lo, false, true);
	if (c == SPREAD_NONE)
		c = tester(s, s->hi, true, false);
	if (c == SPREAD_NONE)
		c = tester(s, s->lo, false, false);
	if (c == SPREAD_NONE)
		return settle(out, 0, "no machine measured the culprit");
	if (s->machines[c].open_count > 0)
		return 0; /* its answer comes first */
	view[n++] = 0;
	if (s->lo != 0)
		view[n++] = s->lo;
	if (s->hi != s->count - 1)
		view[n++] = s->hi;
	view[n++] = s->count - 1;
	rc = view_step(&res, NULL, &out->plans[c], s, c, view, n, true);
	if (rc < 0)
		return rc;
	if (res.verdict == BISECT_PENDING && out->plans[c].request_count > 0)
		return 0;
	return settle(out, c,
		      res.culprit_count == 1 && res.culprits[0].confirmed &&
			      view[res.culprits[0].commit] == s->hi
			  ? "one machine confirmed the culprit"
			  : "the confirming machine saw otherwise");
}

/* Phase 2: what each free machine tests, once the answers are in. */
static int search(struct spread_result *out, struct state *s,
		  const enum answer *ends)
{
	size_t m, x, points[SPREAD_MACHINES_MAX], want = 0, j;
	size_t free_machines[SPREAD_MACHINES_MAX];
	int rc;

	for (m = 0; m < s->machine_count; m++) {
		const struct spread_machine *machine = &s->machines[m];
		bool going_on = false;

		for (x = s->lo + 1; x < s->hi; x++) {
			if (is_open(machine, x))
				s->testing[x] = true;
			/* a free machine goes on with a test not yet
			 * decided */
			if (machine->open_count == 0 && !going_on &&
			    s->answers[m * s->count + x] == ANSWER_PENDING) {
				rc = commit_answer(
				    &s->answers[m * s->count + x],
				    &out->plans[m], s, m, x);
				if (rc < 0)
					return rc;
				s->testing[x] = going_on = true;
			}
		}
		if (machine->open_count == 0 && !going_on &&
		    ends[m] == ANSWER_BAD)
			free_machines[want++] = m;
	}
	want = next_commits(points, s, want);
	for (j = 0; j < want; j++) {
		enum answer a;

		m = free_machines[j];
		rc = commit_answer(&a, &out->plans[m], s, m, points[j]);
		if (rc < 0)
			return rc;
		if (a != ANSWER_PENDING)
			return settle(out, m,
				      "the engine would not test a commit");
	}
	return 0;
}

/* Buildable commits inside (lo, hi) neither tested nor under test, and
 * into *busy those under test. */
static size_t room_in_range(const struct state *s, size_t *busy)
{
	size_t x, room = 0;

	*busy = 0;
	for (x = s->lo + 1; x < s->hi; x++) {
		if (s->testing[x])
			(*busy)++;
		else if (!unbuildable(s, x))
			room++;
	}
	return room;
}

static int decide(struct spread_result *out, struct state *s)
{
	enum answer ends[SPREAD_MACHINES_MAX] = {ANSWER_NONE};
	size_t m, answered, busy;
	int rc = collect(out, s, ends, &answered);

	if (rc < 0)
		return rc;
	/* on the first machine, whatever the others found: its endpoints
	 * decide as they would alone (the machine that said "same" first
	 * would give K machines K chances to miss a change) */
	for (m = 0; m < s->machine_count; m++)
		if (ends[m] == ANSWER_GOOD || ends[m] == ANSWER_UNDECIDED)
			return settle(out, 0,
				      "a machine did not find the endpoints "
				      "different");
	rc = narrow(s, answered);
	if (rc != 0)
		return rc < 0
			   ? rc
			   : settle(out, 0,
				    "a commit inside the range is undecided");
	out->lo = s->lo;
	out->hi = s->hi;
	rc = search(out, s, ends);
	if (rc < 0 || out->settle)
		return rc;
	out->room = room_in_range(s, &busy);
	/* nothing left to test inside (lo, hi) */
	if (out->room == 0 && busy == 0)
		rc = confirm(out, s);
	/* plans are for free machines only */
	for (m = 0; m < s->machine_count && !out->settle; m++)
		if (s->machines[m].open_count > 0)
			memset(&out->plans[m], 0, sizeof(out->plans[m]));
	return rc;
}

int spread_step(struct spread_result *out, const struct bisect_commit *shape,
		size_t count, const struct spread_machine *machines,
		size_t machine_count, const struct bisect_options *opts)
{
	struct state s;
	enum answer unused;
	size_t busy;
	int rc;

	memset(out, 0, sizeof(*out));
	out->settle_on = SPREAD_NONE;
	if (shape == NULL || opts == NULL || count < 2 ||
	    machine_count > SPREAD_MACHINES_MAX ||
	    (machine_count > 0 && machines == NULL))
		return -1;
	memset(&s, 0, sizeof(s));
	s.shape = shape;
	s.count = count;
	s.machines = machines;
	s.machine_count = machine_count;
	s.opts = opts;
	s.hi = out->hi = count - 1;
	rc = endpoints(&unused, &out->join, &s, SPREAD_NONE);
	if (rc < 0)
		return rc;
	if (!linear(shape, count))
		return settle(out, machine_count > 0 ? 0 : SPREAD_NONE,
			      "the range has merges");
	s.answers = calloc(machine_count * count + 1, sizeof(*s.answers));
	s.testing = calloc(count, sizeof(*s.testing));
	if (s.answers == NULL || s.testing == NULL)
		rc = -2;
	else if (machine_count == 0) /* no machine yet: the whole range */
		out->room = room_in_range(&s, &busy);
	else
		rc = decide(out, &s);
	free(s.answers);
	free(s.testing);
	return rc;
}
