/*
 * listcache: the pages of jobs that the dashboard and GET /api/v1/jobs
 * show (store_jobs_list), kept per filter, so that a view costs no
 * database time while nothing it shows has changed.
 *
 * It keeps what jobcache.h keeps its answers by: the notifications on
 * 'statbisect_jobs' (sql/170_job_notify.sql).  A notification naming a
 * job makes the pages that show that job stale; the notification 'list'
 * (sql/180_job_list_notify.sql: a job added, removed, or moved between
 * the filters by its state, verdict, group, repository or testcase) and
 * one naming no job make every page stale, since which jobs a filter
 * selects, and their count, may have changed.  Nothing is kept or given
 * while the listening connection is down, and reconnecting forgets
 * everything.  A request that may have written forgets every page once
 * it is answered (http.c), so its client reads its own write at once.
 *
 * A page is made from a snapshot taken after the lookup that missed, and
 * is given to later lookups only while none of its jobs, and no list,
 * was notified since that lookup.  Lookups that miss a page another
 * request is already making, with nothing notified since it began, wait
 * for it rather than each asking the database the same.
 */
#ifndef STATBISECT_LISTCACHE_H
#define STATBISECT_LISTCACHE_H

#include <libpq-fe.h>

#include "notify.h"
#include "store/store_jobs.h"

/*
 * The page of jobs `filter` selects into *out, kept or read with `conn`
 * (store_jobs_list; free it with store_jobs_page_clear).  Its jobs' ages
 * are brought up to now.  STORE_FAILED when it had to be read and the
 * database failed.
 */
int listcache_list(struct store_jobs_page *out, PGconn *conn,
		   const struct store_jobs_filter *filter);

/* Forgets every page (a request that may have written any job). */
void listcache_forget_all(void);

/*
 * The handlers of the listener on STORE_CHANNEL_JOBS: this cache's,
 * then jobcache's (jobcache_listener), so that a page never shows a job
 * older than its answer does (arg unused).
 */
extern const struct notify_handlers listcache_listener;

/* What the cache did since the server started (GET /metrics). */
struct listcache_stats {
	unsigned long long hits;   /* pages given from the cache */
	unsigned long long joined; /* of them, waited for another's fill */
	unsigned long long misses; /* pages read from the database */
};

void listcache_stats(struct listcache_stats *out);

/* Frees what is kept (at exit). */
void listcache_clear(void);

#endif
