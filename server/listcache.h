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
 * for it rather than each asking the database the same.  What each
 * caller makes of a page (the API's JSON, the dashboard's HTML) is kept
 * with it (listcache_text).
 */
#ifndef STATBISECT_LISTCACHE_H
#define STATBISECT_LISTCACHE_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "notify.h"
#include "store/store_jobs.h"

/* The views of a page kept with it. */
enum listcache_view {
	LISTCACHE_API = 0, /* GET /api/v1/jobs's answer */
	/* The dashboard of a reader; + 1 of a submitter, + 2 of an admin. */
	LISTCACHE_DASHBOARD = 1,
	LISTCACHE_VIEWS = 4 /* a view kept nowhere */
};

/* A view of `page`, the page of `filter`, made with `arg` (malloc'd
 * text; NULL when it cannot be made). */
typedef char *listcache_render(const struct store_jobs_page *page,
			       const struct store_jobs_filter *filter,
			       const void *arg);

/* A view of a page, with what a caller shows around it. */
struct listcache_text {
	char *text; /* malloc'd */
	long long total;
	size_t count;
};

/*
 * View `view` of the page of jobs `filter` selects into *out: the text
 * `render` made of it with `arg`, kept with the page (while the page is
 * kept and, unless `timeless`, within the same whole second of its
 * ages; never for LISTCACHE_VIEWS).  A kept view is the same for every
 * caller: `arg` must hold nothing that differs between the callers of
 * one view.  STORE_FAILED when the database failed or the view could
 * not be made.
 */
int listcache_text(struct listcache_text *out, PGconn *conn,
		   const struct store_jobs_filter *filter, int view,
		   bool timeless, listcache_render *render, const void *arg);

/*
 * The names of the live repositories (testcases: of the testcases) that
 * the filters offer, as a JSON array (a new reference), kept until any
 * list changes (sql/180_job_list_notify.sql notifies a repository or
 * testcase added, renamed or deleted); `load` reads them (NULL when the
 * database failed, then NULL is returned).
 */
json_t *listcache_names(bool testcases, json_t *(*load)(bool testcases));

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
