#include "resolver.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>
#include <malloc.h>

#include "db.h"
#include "gitrepo.h"
#include "jobs.h"
#include "log.h"
#include "mirror.h"
#include "scheduler.h"
#include "server.h"
#include "store/store_jobs.h"
#include "store/store_resolving.h"
#include "webhooks.h"

/* How often the resolver looks for work it was not woken for (another
 * server's submissions, a job left by a server that died). */
#define RESOLVER_TICK_S 5

static pthread_mutex_t resolver_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t resolver_cond = PTHREAD_COND_INITIALIZER;
static bool resolver_woken;
static atomic_bool resolver_stopping;
static bool resolver_running;
static pthread_t resolver_thread;

void resolver_wake(void)
{
	pthread_mutex_lock(&resolver_lock);
	resolver_woken = true;
	pthread_cond_signal(&resolver_cond);
	pthread_mutex_unlock(&resolver_lock);
}

/*
 * Lists the range of `job` from its mirror as it is on disk (the
 * submission fetched it); NULL with *err set when it cannot.  It reads
 * only objects the mirror had when the job was stored, by their ids, and
 * a fetch only adds objects (new packs appear whole) and moves refs, so
 * it does not take mirror_lock: a submission to the same repository,
 * which fetches under it, would otherwise wait seconds for the listing.
 */
static struct gitrepo_commit *
list_range(size_t *count, const struct store_resolving *job, char **err)
{
	struct gitrepo_commit *commits = NULL;
	git_repository *repo = NULL;
	git_oid good, bad;
	char path[4096];

	*count = 0;
	mirror_path(path, sizeof(path), job->repo);
	if (git_repository_open_bare(&repo, path) < 0 ||
	    git_oid_fromstr(&good, job->good_sha) < 0 ||
	    git_oid_fromstr(&bad, job->bad_sha) < 0) {
		if (asprintf(err, "repository '%s' cannot be read",
			     job->repo) < 0)
			*err = NULL;
	} else if (gitrepo_range(&commits, count, repo, &good, &bad,
				 JOBS_RANGE_LIMIT, err) < 0) {
		commits = NULL;
		*count = 0;
	}
	git_repository_free(repo);
	return commits;
}

/*
 * Claims one job and resolves it in one transaction: its candidates
 * stored and its first tasks queued, or the job failed with why.
 * Returns 1 when it did one, 0 when there was none, -1 on a database
 * error.
 */
static int resolve_one(PGconn *conn)
{
	struct store_resolving job;
	struct gitrepo_commit *commits = NULL;
	size_t count = 0;
	char state[16], *err = NULL, message[600];
	int rc;

	if (db_begin(conn) < 0)
		return -1;
	rc = store_resolving_claim(&job, conn);
	if (rc != STORE_OK) {
		db_rollback(conn);
		return rc == STORE_NOT_FOUND ? 0 : -1;
	}
	commits = list_range(&count, &job, &err);
	if (commits == NULL)
		snprintf(message, sizeof(message),
			 "the range cannot be listed: %s",
			 err != NULL ? err : "out of memory");
	rc = -1;
	if (store_jobs_lock(conn, job.job_id, state) != STORE_OK)
		goto out;
	if (strcmp(state, "resolving") != 0 || commits == NULL) {
		/* Cancelled meanwhile, or failed: off the queue. */
		if (store_resolving_end(conn, job.job_id,
					commits == NULL ? message : NULL) <
			0 ||
		    webhooks_job_ended(conn, job.job_id,
				       server_config.base_url) < 0)
			goto out;
	} else if (store_jobs_add_commits(conn, job.job_id, commits, count) <
		       0 ||
		   store_resolving_end(conn, job.job_id, NULL) < 0 ||
		   sched_advance(conn, job.job_id, server_config.base_url) <
		       0) {
		goto out;
	}
	if (db_commit(conn) < 0)
		goto out;
	if (commits == NULL)
		log_info("job %lld failed: %s", job.job_id, message);
	else
		log_info("job %lld: %zu candidates listed in the background",
			 job.job_id, count);
	rc = 1;
out:
	if (rc < 0)
		db_rollback(conn);
	gitrepo_commits_free(commits, count);
	store_resolving_clear(&job);
	free(err);
	/* A long range's listing is a few hundred MB of small blocks; give
	 * them back to the system rather than keep the peak for good. */
	malloc_trim(0);
	return rc;
}

static void *resolver_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&resolver_stopping)) {
		PGconn *conn = db_conn();
		struct timespec until;

		while (conn != NULL && !atomic_load(&resolver_stopping) &&
		       resolve_one(conn) > 0)
			;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += RESOLVER_TICK_S;
		pthread_mutex_lock(&resolver_lock);
		while (!resolver_woken && !atomic_load(&resolver_stopping) &&
		       pthread_cond_timedwait(&resolver_cond, &resolver_lock,
					      &until) == 0)
			;
		resolver_woken = false;
		pthread_mutex_unlock(&resolver_lock);
	}
	db_disconnect();
	return NULL;
}

int resolver_start(void)
{
	atomic_store(&resolver_stopping, false);
	if (pthread_create(&resolver_thread, NULL, resolver_main, NULL) != 0) {
		log_error("cannot start the resolver thread");
		return -1;
	}
	resolver_running = true;
	return 0;
}

void resolver_stop(void)
{
	if (!resolver_running)
		return;
	atomic_store(&resolver_stopping, true);
	resolver_wake();
	pthread_join(resolver_thread, NULL);
	resolver_running = false;
}
