#include "watcher.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>
#include <jansson.h>

#include "db.h"
#include "fields.h"
#include "gitrepo.h"
#include "jobs.h"
#include "log.h"
#include "mirror.h"
#include "rechecks.h"
#include "reportjob.h"
#include "server.h"
#include "store/store_jobs.h"
#include "store/store_watches.h"

/* Branches of one watch taken up per poll (a glob may match more). */
#define WATCHER_BRANCHES_MAX 64
/* Seconds between looks at the due watches when nobody wakes us. */
#define WATCHER_TICK_S 1

struct watcher_branch {
	char name[256];
	char sha[41];
	char subject[256];
};

static pthread_mutex_t watcher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watcher_cond = PTHREAD_COND_INITIALIZER;
static bool watcher_woken;
static atomic_bool watcher_stopping;
static bool watcher_running;
static pthread_t watcher_thread;

void watcher_wake(void)
{
	pthread_mutex_lock(&watcher_lock);
	watcher_woken = true;
	pthread_cond_signal(&watcher_cond);
	pthread_mutex_unlock(&watcher_lock);
}

/* The branches of `repo` that `pattern` names, with their heads. */
static int list_branches(struct watcher_branch *out, size_t *count,
			 git_repository *repo, const char *pattern, char **err)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	char glob[300];

	*count = 0;
	snprintf(glob, sizeof(glob), "refs/heads/%s", pattern);
	if (git_reference_iterator_glob_new(&it, repo, glob) < 0) {
		gitrepo_set_error(err, "cannot list branches");
		return -1;
	}
	while (*count < WATCHER_BRANCHES_MAX &&
	       git_reference_next(&ref, it) == 0) {
		git_object *obj = NULL;
		struct watcher_branch *b = &out[*count];

		if (git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) == 0) {
			const char *summary =
			    git_commit_summary((git_commit *)obj);

			snprintf(b->name, sizeof(b->name), "%s",
				 git_reference_name(ref) +
				     strlen("refs/heads/"));
			git_oid_tostr(b->sha, sizeof(b->sha),
				      git_object_id(obj));
			snprintf(b->subject, sizeof(b->subject), "%s",
				 summary != NULL ? summary : "");
			(*count)++;
		}
		git_object_free(obj);
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	return 0;
}

/* Fetches the watch's repository and lists its watched branches. */
static int fetch_branches(struct watcher_branch *out, size_t *count,
			  const struct store_watch *watch, char **err)
{
	git_repository *repo = NULL;
	struct mirrorlock *held;
	int rc;

	held = mirror_lock(watch->repo);
	rc = mirror_fetch(&repo, watch->repo, watch->repo_url, err);
	if (rc == 0)
		rc = list_branches(out, count, repo, watch->branch, err);
	git_repository_free(repo);
	mirror_unlock(held);
	return rc;
}

/* The HTTP status the first error of a refused job answers with. */
static unsigned refused_status(const struct field_errors *errors)
{
	return errors->count > 0 ? errors->items[0].status : 0;
}

/* What links a measuring job to its watch and head. */
struct head_link {
	long long watch_id, head_id;
	const char *branch;
};

/* jobs_request.within: the link, in the job's own transaction. */
static int link_job(PGconn *conn, long long job_id, void *arg)
{
	const struct head_link *link = arg;

	return store_watches_link_job(conn, link->watch_id, link->head_id,
				      job_id, link->branch);
}

/*
 * Makes the job measuring head `head_id` (base_sha..branch->sha) through
 * the jobs service, as an admin would submit it, linked to the head in
 * the transaction that stores it.  A range the service refuses as such (422:
 * the branch was rewritten, or the range is too long) makes the head a
 * baseline; any other failure forgets the head, to be taken up again.
 */
static int measure_head(PGconn *conn, const struct store_watch *watch,
			size_t tc, const struct watcher_branch *branch,
			const char *base_sha, long long head_id)
{
	struct jobs_request request = {0};
	struct head_link link = {watch->id, head_id, branch->name};
	struct field_errors errors;
	json_t *notify = json_loads(watch->notify, 0, NULL);
	long long job_id = 0;
	int rc, error = -1;

	fields_init(&errors);
	request.repo = watch->repo;
	request.testcase = watch->testcase_names[tc];
	request.good = base_sha;
	request.bad = branch->sha;
	request.notify = json_array_size(notify) > 0 ? notify : NULL;
	request.within = link_job;
	request.within_arg = &link;
	rc = jobs_create(&job_id, conn, &request, 0, &errors);
	json_decref(notify);
	if (rc == 0) {
		error = 0;
		log_info(
		    "watch %lld: %s %.12s..%.12s measured by job %lld (%s)",
		    watch->id, branch->name, base_sha, branch->sha, job_id,
		    watch->testcase_names[tc]);
	} else if (rc == JOBS_REFUSED && refused_status(&errors) == 422) {
		log_warn("watch %lld: %s %.12s..%.12s cannot be measured "
			 "(%s); the head is the new baseline",
			 watch->id, branch->name, base_sha, branch->sha,
			 errors.items[0].message);
		error = store_watches_rebase_head(conn, head_id);
	} else {
		log_warn("watch %lld: no job for %s %.12s (%s)", watch->id,
			 branch->name, branch->sha,
			 errors.count > 0 ? errors.items[0].message
					  : "database failure");
		store_watches_drop_head(conn, head_id);
	}
	return error;
}

/* Takes up the head of one branch for testcase `tc` of the watch. */
static int consider_head(PGconn *conn, const struct store_watch *watch,
			 size_t tc, const struct watcher_branch *branch)
{
	struct store_head base = {0};
	bool measuring = false;
	long long head_id;
	int rc;

	rc = store_watches_base_head(&base, &measuring, conn, watch->id,
				     watch->testcase_ids[tc], branch->name);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		/* The first head of the branch: nothing to compare with. */
		if (!measuring &&
		    store_watches_add_head(
			conn, watch->id, watch->testcase_ids[tc], branch->name,
			branch->sha, branch->subject, "baseline", 0,
			&head_id) < 0)
			return -1;
		return 0;
	}
	if (measuring || strcmp(base.sha, branch->sha) == 0) {
		free(base.subject);
		return 0;
	}
	rc = store_watches_add_head(conn, watch->id, watch->testcase_ids[tc],
				    branch->name, branch->sha, branch->subject,
				    "measuring", base.id, &head_id);
	if (rc == 0)
		rc = measure_head(conn, watch, tc, branch, base.sha, head_id);
	else if (rc > 0)
		rc = 0; /* taken up before (the branch went back to it) */
	free(base.subject);
	return rc;
}

static void poll_watch(PGconn *conn, const struct store_watch *watch)
{
	struct watcher_branch *branches;
	size_t count = 0, i, tc;
	char *err = NULL;

	branches = calloc(WATCHER_BRANCHES_MAX, sizeof(*branches));
	if (branches == NULL)
		return;
	if (fetch_branches(branches, &count, watch, &err) < 0) {
		log_warn("watch %lld: %s", watch->id, err);
		store_watches_polled(conn, watch->id, err);
		goto out;
	}
	for (i = 0; i < count; i++)
		for (tc = 0; tc < watch->testcase_count; tc++)
			if (consider_head(conn, watch, tc, &branches[i]) < 0)
				log_warn("watch %lld: %s: head %.12s not "
					 "taken up this time",
					 watch->id, branches[i].name,
					 branches[i].sha);
	store_watches_polled(conn, watch->id,
			     count == 0 ? "no branch matches" : NULL);
out:
	free(err);
	free(branches);
}

static void send_held(PGconn *conn);

/* One look at the watches: ends measurements whose job died, sends the
 * held reports that may go, then polls every due watch. */
static void watcher_tick(PGconn *conn)
{
	struct store_watch watch;
	size_t ended = 0;

	if (store_watches_reconcile(conn, &ended) == 0 && ended > 0)
		log_info("watcher: %zu measurement(s) ended with their job",
			 ended);
	send_held(conn);
	rechecks_schedule(conn);
	while (!atomic_load(&watcher_stopping) &&
	       store_watches_claim_due(&watch, conn) == 0) {
		poll_watch(conn, &watch);
		store_watch_clear(&watch);
	}
}

static void *watcher_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&watcher_stopping)) {
		PGconn *conn = db_conn();
		struct timespec until;

		if (conn != NULL)
			watcher_tick(conn);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += WATCHER_TICK_S;
		pthread_mutex_lock(&watcher_lock);
		while (!watcher_woken && !atomic_load(&watcher_stopping) &&
		       pthread_cond_timedwait(&watcher_cond, &watcher_lock,
					      &until) == 0)
			;
		watcher_woken = false;
		pthread_mutex_unlock(&watcher_lock);
	}
	db_disconnect();
	return NULL;
}

int watcher_start(void)
{
	atomic_store(&watcher_stopping, false);
	if (pthread_create(&watcher_thread, NULL, watcher_main, NULL) != 0) {
		log_error("cannot start the watcher thread");
		return -1;
	}
	watcher_running = true;
	return 0;
}

void watcher_stop(void)
{
	if (!watcher_running)
		return;
	atomic_store(&watcher_stopping, true);
	watcher_wake();
	pthread_join(watcher_thread, NULL);
	watcher_running = false;
}

/*
 * The engine's endpoint test alone on the job's two ends: the same
 * options, without probes between them and without a confirmation (a
 * measurement, not a bisection).
 */
static int endpoint_test(struct bisect_result *out,
			 const struct sched_job *job)
{
	static const size_t first = 0;
	struct bisect_commit ends[2];
	struct bisect_options opts = job->opts;

	ends[0] = job->input[0];
	ends[0].parents = NULL;
	ends[0].parent_count = 0;
	ends[1] = job->input[job->count - 1];
	ends[1].parents = &first;
	ends[1].parent_count = 1;
	opts.confirm = false;
	opts.probes = 0;
	return bisect_step(out, NULL, ends, 2, &opts);
}

/* A head measured the same as the last: an open regression of the
 * branch is still there, which is noted on its job, not reported. */
static int note_still_regression(PGconn *conn,
				 const struct store_watch_job *wj,
				 const struct sched_job *job)
{
	long long regression_job;
	char note[400];
	int rc;

	if (wj->watch_id == 0)
		return 0;
	rc = store_watches_open_regression(conn, wj->watch_id, wj->testcase_id,
					   wj->branch, &regression_job);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	snprintf(note, sizeof(note), "still regression on %s/%.10s",
		 wj->branch, job->commits[job->count - 1].sha);
	return store_watches_note(conn, regression_job, note);
}

/* The measurement decided (verdict not pending): records the head and,
 * unless the endpoints differ in a direction the watch reports, ends the
 * job.  Returns 1 (ended), 0 (the job bisects on) or -1. */
static int measurement_done(PGconn *conn, const struct store_watch_job *wj,
			    struct sched_job *job,
			    const struct bisect_result *view)
{
	bool changed = view->verdict == BISECT_REGRESSION ||
		       view->verdict == BISECT_IMPROVEMENT;
	const char *outcome = changed ? "changed"
			      : view->verdict == BISECT_NO_CHANGE
				  ? "same"
				  : "inconclusive";
	const char *message = view->reason;

	if (store_watches_measured(conn, wj, outcome, view->change_pct,
				   job->count - 1) < 0)
		return -1;
	log_info("job %lld: head %.12s of %s measured: %s (%+.1f%%)", job->id,
		 job->commits[job->count - 1].sha, wj->branch, outcome,
		 view->change_pct);
	if (changed &&
	    !(wj->regressions_only && view->verdict == BISECT_IMPROVEMENT)) {
		snprintf(job->watched_branch, sizeof(job->watched_branch),
			 "%s", wj->branch);
		return store_watches_promote(conn, job->id) < 0 ? -1 : 0;
	}
	if (changed)
		message = "an improvement; the watch reports regressions only";
	if (view->verdict == BISECT_NO_CHANGE &&
	    note_still_regression(conn, wj, job) < 0)
		return -1;
	if (store_watches_finish_job(
		conn, job->id, bisect_verdict_name(view->verdict),
		view->change_pct, view->p_value, message) < 0)
		return -1;
	return 1;
}

int watcher_advance(PGconn *conn, struct sched_job *job)
{
	struct store_watch_job wj;
	struct bisect_result view;
	size_t i;
	int rc;

	rc = store_watches_job(&wj, conn, job->id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (strcmp(wj.role, "bisect") == 0) {
		snprintf(job->watched_branch, sizeof(job->watched_branch),
			 "%s", wj.branch);
		return 0;
	}
	if (endpoint_test(&view, job) < 0)
		return -1;
	if (view.verdict != BISECT_PENDING)
		return measurement_done(conn, &wj, job, &view);
	/* More runs of the two ends, interleaved: commit 1 of the view is
	 * the job's last. */
	job->result.verdict = BISECT_PENDING;
	job->result.request_count = view.request_count;
	job->result.interleave = view.interleave;
	for (i = 0; i < view.request_count; i++) {
		job->result.requests[i] = view.requests[i];
		if (view.requests[i].commit == 1)
			job->result.requests[i].commit = job->count - 1;
	}
	return 0;
}

/* Holds the report while other testcases of the same head have jobs:
 * 0 (held) or 1 (send it now). */
static int hold_if_siblings(PGconn *conn, const struct sched_job *job,
			    size_t which, const char *sha)
{
	bool siblings = false;

	if (store_watches_has_siblings(conn, job->id, &siblings) < 0)
		return -1;
	if (!siblings)
		return 1;
	if (store_watches_hold(conn, job->id, which, sha) < 0)
		return -1;
	log_info("job %lld: the report of %.12s waits for the other "
		 "testcases of the head",
		 job->id, sha);
	return 0;
}

int watcher_report_samples(PGconn *conn, const struct sched_job *job,
			   size_t which, size_t base_idx, size_t new_idx,
			   struct report_samples *samples)
{
	return store_watches_held_samples(samples, conn, job->id, which,
					  base_idx, new_idx);
}

/*
 * Sends the held reports rows[0..n) (one head, one culprit) as one: the
 * first job's report, with the KPI of the others as further rows.
 */
static int send_held_group(PGconn *conn, const struct store_watch_held *rows,
			   size_t n)
{
	struct store_watch_job wj;
	struct sched_job job;
	char note[200];
	size_t i;
	int rc;

	if (db_begin(conn) < 0)
		return -1;
	rc = store_jobs_lock(conn, rows[0].job_id, NULL);
	if (rc == 0)
		rc = sched_load(&job, conn, rows[0].job_id);
	if (rc != 0) {
		db_rollback(conn);
		return -1;
	}
	if (store_watches_job(&wj, conn, job.id) == 0)
		snprintf(job.watched_branch, sizeof(job.watched_branch), "%s",
			 wj.branch);
	rc =
	    reportjob_queue(conn, &job, server_config.base_url, rows[0].which);
	snprintf(note, sizeof(note),
		 "culprit %.10s reported in one email with job %lld's",
		 rows[0].culprit, job.id);
	for (i = 0; i < n && rc == 0; i++) {
		rc = store_watches_unhold(conn, rows[i].job_id, rows[i].which);
		if (rc == 0 && i > 0)
			rc = store_watches_note(conn, rows[i].job_id, note);
	}
	sched_job_clear(&job);
	if (rc < 0 || db_commit(conn) < 0) {
		db_rollback(conn);
		return -1;
	}
	log_info("job %lld: report of %.12s sent for %zu testcase(s)",
		 rows[0].job_id, rows[0].culprit, n);
	return 0;
}

/* Sends the held reports of heads whose jobs all ended. */
static void send_held(PGconn *conn)
{
	struct store_watch_held *held = NULL;
	size_t count = 0, i, k;

	if (store_watches_held_ready(&held, &count, conn) < 0)
		return;
	for (i = 0; i < count; i = k) {
		for (k = i + 1;
		     k < count && strcmp(held[k].group, held[i].group) == 0 &&
		     strcmp(held[k].culprit, held[i].culprit) == 0;
		     k++)
			;
		if (send_held_group(conn, &held[i], k - i) < 0)
			log_warn("job %lld: held report not sent this time",
				 held[i].job_id);
	}
	free(held);
}

int watcher_report_wanted(PGconn *conn, const struct sched_job *job,
			  size_t which)
{
	const struct bisect_culprit *culprit;
	struct store_watch_job wj;
	long long earlier = 0;
	char note[400];
	const char *sha;
	int rc;

	if (which >= job->result.culprit_count)
		return 1;
	rc = store_watches_job(&wj, conn, job->id);
	if (rc != 0)
		return rc < 0 ? -1 : 1;
	culprit = &job->result.culprits[which];
	sha = job->commits[culprit->commit].sha;
	if (wj.regressions_only && !culprit->regression) {
		snprintf(note, sizeof(note),
			 "improvement at %.10s not reported: the watch "
			 "reports regressions only",
			 sha);
		return store_watches_note(conn, job->id, note) < 0 ? -1 : 0;
	}
	rc = store_watches_claim_report(conn, wj.testcase_id, sha, job->id,
					&earlier);
	if (rc == 0)
		return hold_if_siblings(conn, job, which, sha);
	if (rc < 0)
		return -1;
	snprintf(note, sizeof(note),
		 "culprit %.10s was reported by job %lld already, not again",
		 sha, earlier);
	log_info("job %lld: %s", job->id, note);
	return store_watches_note(conn, job->id, note) < 0 ? -1 : 0;
}
