/*
 * The SQL of patch jobs (issue 13): a job whose candidates are a base
 * commit and one commit per patch of a mailed series (sql/015).  Every
 * function runs on the caller's connection and, where it writes, inside
 * the caller's transaction; 0 on success, -1 on a database error (logged).
 */
#ifndef STATBISECT_STORE_PATCHES_H
#define STATBISECT_STORE_PATCHES_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One patch as stored: its commit and the email it came in. */
struct store_patch {
	const char *sha; /* the commit the server made for it */
	const char *message_id, *in_reply_to; /* or NULL */
	const char *subject, *title;	      /* email subject, commit title */
	const char *author_name, *author_email;
	int64_t date;
	int date_offset;
	json_t *recipients; /* To and Cc, plain addresses (borrowed) */
	const char *message;
	const char *diff;
	size_t diff_len;
	const char *link; /* archive URL, or NULL */
};

/* What creating a patch job stores besides its patches. */
struct store_patch_job {
	long long repo_id, testcase_id, token_id; /* token 0: none */
	const char *base_rev, *base_sha, *base_subject;
	const char *base_author_name, *base_author_email;
	json_t *notify;		      /* borrowed, or NULL */
	long long runs_min, runs_max; /* 0: the testcase's */
};

/*
 * The repository (id, url) and testcase (id) named; *found false when
 * either is unknown, with *which "repo" or "testcase".
 */
int store_patches_lookup(PGconn *conn, const char *repo, const char *testcase,
			 long long *repo_id, char **repo_url,
			 long long *testcase_id, bool *found,
			 const char **which);

/*
 * Inserts a job of kind 'patch' with the base as candidate 0 and patch i
 * as candidate i + 1 (parent i), and the patches' emails; *job_id
 * receives its id.
 */
int store_patches_insert_job(PGconn *conn, const struct store_patch_job *job,
			     const struct store_patch *patches, size_t count,
			     long long *job_id);

/*
 * The series a worker rebuilds a patch job's commits from, as the task it
 * claims carries it: {"base": sha, "patches": [{"commit", "diff" (hex),
 * "message", "author_name", "author_email", "date", "date_offset"}]};
 * *out NULL when the job is not a patch job.
 */
int store_patches_series_json(json_t **out, PGconn *conn, long long job_id);

/*
 * What a report on candidate `idx` of a patch job needs: {"message_id",
 * "in_reply_to", "subject", "link", "recipients", "base", "repo_url",
 * "number"}; for idx 0 (the base) the last patch's.  *out NULL when the job
 * is not a patch job.
 */
int store_patches_reply_json(json_t **out, PGconn *conn, long long job_id,
			     size_t idx);

/* The patches of a job for the API: [{"index", "commit", "subject",
 * "message_id" (or null), "author_name", "author_email"}], an empty array
 * for other jobs. */
int store_patches_list_json(json_t **out, PGconn *conn, long long job_id);

/* The names of the registered testcases (or repositories), sorted, as a
 * JSON array of strings, for the patch form's choices. */
int store_patches_names(json_t **out, PGconn *conn, bool testcases);

#endif
