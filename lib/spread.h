/*
 * Several machines for one job (issue 14; docs/BISECTION.md, "Several
 * machines per job"): a k-section in which no comparison ever mixes two
 * machines' runs, since two "identical" machines differ by more than the
 * changes looked for.  Pure and replayable, like the engine it calls:
 * from each machine's own runs and what each has outstanding,
 * spread_step() says what every free machine runs next, or which machine
 * the job settles on.  From then on the job is that machine's alone: the
 * engine over the whole range of its runs, as for any job.
 *
 *  1. Endpoints on every machine: the engine on `good` and `bad` of that
 *     machine's runs, until it wants to confirm `bad` (they differ).
 *  2. A free machine whose endpoints differ is given a commit of the
 *     range (lo, hi): the commits under test cut it into gaps, and the
 *     free machines split the widest evenly (k free at once: k + 1
 *     parts).  Its answer about commit x is the engine on good, x, bad of
 *     its own search runs.  lo is the newest commit any machine found
 *     good-like, hi the oldest any found bad-like.
 *  3. When no buildable commit inside (lo, hi) is left untested or under
 *     test, the machine that tested hi (else lo) runs the engine on good,
 *     lo, hi, bad of its runs until its verdict, and the job settles on
 *     that machine: the engine over the whole range of its runs then has
 *     both sides of the culprit and their confirmation.
 *
 * Anything the k-section cannot settle settles the job at once on one
 * machine: endpoints a machine does not find different (on the first
 * machine, whose own endpoints then decide), answers that contradict
 * each other, an undecided commit inside the range, a range with
 * merges.  Slower, never less sound.
 */
#ifndef STATBISECT_SPREAD_H
#define STATBISECT_SPREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "bisect.h"

#define SPREAD_MACHINES_MAX 8
#define SPREAD_NONE ((size_t)-1)

/* One machine of the job, in the order the machines joined it. */
struct spread_machine {
	/* The job's `count` commits (parents and build failures as the
	 * job's) with this machine's runs only.  A commit whose runs keep
	 * failing on it has build_failed set. */
	const struct bisect_commit *commits;
	/* Commits of the runs asked of it and not yet all in (none: the
	 * machine is free). */
	const size_t *open;
	size_t open_count;
	/* When the answers came: for each commit, the place of its last
	 * search run on this machine in the job's order of runs over every
	 * machine (0: none).  NULL: `seq` counts that order already.  The
	 * engine's seq is best dense per machine (it pairs runs a few
	 * places apart), so a server whose machines' uploads interleave
	 * numbers seq per machine and gives the job's order here. */
	const size_t *arrival;
};

/* Runs for one machine; commits are indices into the job's range. */
struct spread_plan {
	struct bisect_request requests[BISECT_MAX_REQUESTS];
	size_t request_count;
	bool interleave;
};

struct spread_result {
	/* The k-section is over: the job goes on as machine settle_on's
	 * alone (SPREAD_NONE: as the first machine to claim it). */
	bool settle;
	size_t settle_on;
	const char *reason; /* static text: why it settled */
	/* For each free machine, what it runs next (no requests: nothing
	 * for it now). */
	struct spread_plan plans[SPREAD_MACHINES_MAX];
	/* What a machine joining now runs first: its endpoints. */
	struct spread_plan join;
	/* Buildable commits inside (lo, hi) neither tested nor under test
	 * once the plans above run: work a further machine could take. */
	size_t room;
	size_t lo, hi; /* the range as the answers so far narrow it */
};

/*
 * The next step of a job over `count` (>= 2) commits, oldest first, whose
 * shape (parents, build failures) `shape` gives, on machine_count (<=
 * SPREAD_MACHINES_MAX) machines.  Returns 0, -1 for invalid input, -2
 * when out of memory.
 */
int spread_step(struct spread_result *out, const struct bisect_commit *shape,
		size_t count, const struct spread_machine *machines,
		size_t machine_count, const struct bisect_options *opts);

#endif
