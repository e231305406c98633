/*
 * The jobs resource: what a job request must hold, and the service
 * functions that create, show, list, cancel and re-run jobs.  The REST
 * handlers (api.c, api_more.c) and the web pages (web_job*.c) are thin
 * adapters over these; the SQL is in store/store_jobs.c.
 *
 * Service functions return 0, JOBS_REFUSED after adding to `errors` why
 * the request cannot be done (each error carries the HTTP status and code
 * the API answers with), or JOBS_DB_FAILED when the database failed
 * (db_last_failure() says whether trying again may help).
 */
#ifndef STATBISECT_JOBS_H
#define STATBISECT_JOBS_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>

#include "fields.h"
#include "store/store_jobs.h"
#include "store/store_repos.h"
#include "timeleft.h"
#include "webhooks.h"

#define JOBS_REFUSED (-1)
#define JOBS_DB_FAILED (-2)

/* The limits of the runs a job may ask for per commit. */
#define JOBS_RUNS_LEAST 2
#define JOBS_RUNS_MIN_MOST 1000
#define JOBS_RUNS_MAX_MOST 10000

/* Retry-After of a submission refused for too many open jobs. */
#define JOBS_OPEN_RETRY_AFTER_S 60

/* Most candidates one job may hold. */
#define JOBS_RANGE_LIMIT 100000

/*
 * A range whose good is within this many first-parent steps of its bad
 * is listed while the request waits and answered 201, its first tasks
 * queued.  A longer one (or one whose good is not on bad's first-parent
 * line) is stored at once in state 'resolving' and answered 202, and the
 * resolver (resolver.h) lists it in the background.  Listing 2,000
 * commits and storing them takes well under a second.
 */
#define JOBS_SYNC_RANGE 2000

/* The most addresses a job may notify. */
#define JOBS_NOTIFY_MOST 50

/* A job request as POST /api/v1/jobs and the submit form give it.
 * Everything is borrowed. */
struct jobs_request {
	const char *repo, *testcase, *good, *bad; /* NULL: not given */
	json_t *notify; /* an array of addresses, or NULL for none */
	long long runs_min, runs_max; /* 0: the testcase's */
	const char *group;  /* the machine group; NULL: the testcase's */
	long long machines; /* most machines at once (spreadjob.h); 0: 1 */
	/*
	 * Run inside the transaction that stores the job, after its first
	 * tasks are queued and before it commits (NULL: nothing); a negative
	 * return rolls the job back and jobs_create answers JOBS_DB_FAILED.
	 * The robot links its measuring jobs to their watch so, and a job is
	 * never stored without its link.
	 */
	int (*within)(PGconn *conn, long long job_id, void *arg);
	void *within_arg;
	/*
	 * A compare job (compare.h): 2 to 4 revisions, measured interleaved,
	 * in place of the range good..bad (which then name the first and the
	 * last).  revision_count 0: a bisection.  `labels` name the columns
	 * (the revisions themselves when NULL); `revision_key` is the field
	 * an unknown revision is blamed on ("revisions" when NULL);
	 * `retest_of` the bisection a fix re-test re-tests (0: none).
	 */
	const char *revisions[4];
	const char *labels[4];
	char label_room[4][16]; /* storage of labels that are not borrowed */
	size_t revision_count;
	const char *revision_key;
	long long retest_of;
	/* The job's own webhook (webhooks.h); given false: none. */
	struct webhooks_request webhook;
};

/*
 * Reads the JSON body of POST /api/v1/jobs into *out (pointing into
 * `body`), adding an error for each field that is missing or not of its
 * type or range.  The values of the other fields are read all the same.
 */
void jobs_request_from_json(struct jobs_request *out, json_t *body,
			    struct field_errors *errors);

/*
 * Checks the request's values that need no lookup (the runs' limits and
 * order, the group as a worker's group is checked, every notify address),
 * adding an error for each that is wrong: code "invalid_field", or
 * "invalid_email" with the address as the value.
 */
void jobs_request_check(const struct jobs_request *request,
			struct field_errors *errors);

/*
 * Checks a runs bound given alone against the testcase's other bound: a
 * runs_min above its runs_max, or a runs_max below its runs_min, is
 * refused (422 "runs_conflict" naming the field and the testcase's
 * bound) instead of moving the other bound with it.  Both bounds given
 * replace the testcase's (jobs_request_check orders them).
 */
void jobs_runs_against_testcase(const struct jobs_request *request,
				const struct store_testcase_fields *testcase,
				struct field_errors *errors);

/*
 * Counts the jobs of token `token_id` against its limits (its own, else
 * server_config's): refused, 429 "too_many_jobs" with retry_after_s set,
 * when it has as many jobs open as it may, or has submitted as many in
 * the last hour.  Run inside the transaction that stores the job: it
 * locks the token's row, so concurrent submissions cannot overshoot.
 * The bootstrap admin (token 0) has no limits.
 */
int jobs_quota_check(PGconn *conn, long long token_id,
		     struct field_errors *errors);

/*
 * Creates the job `request` asks for on behalf of token `token_id` (0:
 * none): checks it (jobs_request_check), looks up its repository and
 * testcase, resolves both revisions in the fetched mirror, stores the job
 * with its candidates and queues its first tasks.  Errors already in
 * `errors` (the adapter's own) refuse the request too, after every check
 * has added its own, so that a form can show them all at once; the API
 * answers the first.  The new job's id goes into *out_id.
 */
int jobs_create(long long *out_id, PGconn *conn,
		const struct jobs_request *request, long long token_id,
		struct field_errors *errors);

/*
 * The job as GET /api/v1/jobs/{id} answers it into *out (new reference).
 * Refused (404) when there is no such job.
 */
int jobs_get(json_t **out, PGconn *conn, long long job_id,
	     struct field_errors *errors);

/*
 * jobs_get for GET /api/v1/jobs/{id}: the answer written with
 * HTTP_JSON_FLAGS into *out (malloc'd; NULL when out of memory), from the
 * job cache (jobcache.h) when it holds it.  A request that has written
 * the job calls jobs_get: the cache may not have heard of its write yet.
 */
int jobs_get_text(char **out, PGconn *conn, long long job_id,
		  struct field_errors *errors);

/* Cancels job `job_id` and its open tasks; the cancelled job into *out.
 * Refused when there is no such job (404) or it has ended (409). */
int jobs_cancel(json_t **out, PGconn *conn, long long job_id,
		struct field_errors *errors);

/* Creates a job of the range of job `job_id` again, as token `token_id`;
 * its id into *out_id.  Refused as jobs_create is, or 404. */
int jobs_rerun(long long *out_id, PGconn *conn, long long job_id,
	       long long token_id, struct field_errors *errors);

/*
 * The report message of job `job_id` into *out (malloc'd; RFC 5322 text
 * with CRLF line ends).  Refused when there is no such job (404) or it
 * has no report yet (409).
 */
int jobs_report(char **out, PGconn *conn, long long job_id,
		struct field_errors *errors);

/* jobs_json.c: the job as the API shows it. */

/*
 * The job as GET /api/v1/jobs/{id} answers it (new reference), or NULL
 * when there is no such job (*failed false) or the database failed
 * (*failed true).
 */
json_t *jobs_json(PGconn *conn, long long job_id, bool *failed);

/* What a job's answer says of time, to bring a kept answer up to date
 * (jobcache.h). */
struct jobs_clock {
	bool ticking;		  /* elapsed_s grows: started, not finished */
	bool estimated;		  /* time_left_s is estimated: running */
	struct timeleft_input in; /* in.elapsed_s: as answered; NaN: null */
};

/* jobs_json, and its clock into `clock`. */
json_t *jobs_json_clocked(PGconn *conn, long long job_id, bool *failed,
			  struct jobs_clock *clock);

/* Sets progress.elapsed_s and progress.time_left_s of `answer`, made
 * with `clock`, as they are `later_s` seconds after it was made. */
void jobs_json_times(json_t *answer, const struct jobs_clock *clock,
		     double later_s);

#endif
