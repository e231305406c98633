#include "bench.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cause.h"
#include "log.h"
#include "url.h"

static bool is_full_sha(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return i == GITREPO_SHA_LEN;
}

static bool mirror_has(git_repository *repo, const char *sha)
{
	git_commit *commit = NULL;
	git_oid oid;

	if (repo == NULL || git_oid_fromstr(&oid, sha) < 0 ||
	    git_commit_lookup(&commit, repo, &oid) < 0)
		return false;
	git_commit_free(commit);
	return true;
}

/* WORK_DIR/bench/<hash of the URL>.git: one mirror per URL, whatever
 * testcase names it. */
static int mirror_path(char *path, size_t size, const char *work_dir,
		       const char *url, char **err)
{
	char hex[GITREPO_SHA_LEN + 1];
	git_oid oid;

	snprintf(path, size, "%s/bench", work_dir);
	mkdir(path, 0755);
	if (git_odb_hash(&oid, url, strlen(url), GIT_OBJECT_BLOB) < 0) {
		cause_set(err, "cannot hash the benchmark URL");
		return -1;
	}
	git_oid_tostr(hex, sizeof(hex), &oid);
	if ((size_t)snprintf(path, size, "%s/bench/%s.git", work_dir, hex) >=
	    size) {
		cause_set(err, "the work directory's path is too long");
		return -1;
	}
	return 0;
}

/* Fetches the mirror at `path`: 0, or 1 with why in *err. */
static int fetch(struct bench *b, const char *path, const char *shown,
		 char **err)
{
	char *why = NULL;

	git_repository_free(b->mirror);
	b->mirror = NULL;
	log_info("fetching benchmark repository %s", shown);
	if (gitrepo_mirror(&b->mirror, path, b->url, &why) == 0)
		return 0;
	cause_set(err, "cannot fetch benchmark repository '%s' (%s)", shown,
		  why != NULL ? why : "unknown error");
	free(why);
	return 1;
}

/* The commit `rev` names (a full SHA the mirror holds, else after a
 * fetch): 0, or 1 with why in *err. */
static int resolve(struct bench *b, const char *path, const char *rev,
		   const char *shown, char **err)
{
	git_oid oid;
	char *why = NULL;

	if (!(is_full_sha(rev) && mirror_has(b->mirror, rev)) &&
	    fetch(b, path, shown, err) != 0)
		return 1;
	if (gitrepo_resolve(&oid, b->mirror, rev, shown, &why) < 0) {
		free(why);
		cause_set(err,
			  "revision '%s' not found in benchmark repository "
			  "'%s'",
			  rev, shown);
		return 1;
	}
	git_oid_tostr(b->commit, sizeof(b->commit), &oid);
	return 0;
}

/* The job's pinned commit `sha`, fetched only when the mirror lacks it:
 * 0, 1 (not to be had) or -1, with why in *err. */
static int open_pinned(struct bench *b, const char *path, const char *sha,
		       const char *shown, char **err)
{
	if (!is_full_sha(sha)) {
		cause_set(err, "the server sent a malformed task");
		return -1;
	}
	if (!mirror_has(b->mirror, sha) && fetch(b, path, shown, err) != 0)
		return 1;
	if (!mirror_has(b->mirror, sha)) {
		cause_set(err,
			  "commit %s of the job is no longer in benchmark "
			  "repository '%s'",
			  sha, shown);
		return 1;
	}
	snprintf(b->commit, sizeof(b->commit), "%s", sha);
	return 0;
}

int bench_open(struct bench *out, json_t *task, const char *work_dir,
	       char **err)
{
	json_t *tc = json_object_get(task, "testcase");
	const char *rev = json_string_value(json_object_get(tc, "bench_rev"));
	const char *pinned =
	    json_string_value(json_object_get(task, "bench_commit"));
	char path[4200], *shown = NULL, *why = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->url = json_string_value(json_object_get(tc, "bench_repo"));
	if (out->url == NULL)
		return 0;
	if (url_redact(&shown, out->url) < 0) {
		cause_set(err, "out of memory");
		return -1;
	}
	if (mirror_path(path, sizeof(path), work_dir, out->url, err) < 0)
		goto out;
	if (gitrepo_open(&out->mirror, path, &why) < 0)
		out->mirror = NULL;
	free(why);
	if (pinned != NULL) {
		rc = open_pinned(out, path, pinned, shown, err);
		goto out;
	}
	rc = resolve(out, path, rev != NULL ? rev : "HEAD", shown, err);
	if (rc == 0)
		log_info("benchmark %s at %s is commit %.12s", shown,
			 rev != NULL ? rev : "HEAD", out->commit);
out:
	free(shown);
	if (rc != 0)
		bench_close(out);
	return rc;
}

int bench_checkout(const struct bench *bench, const char *tree, char *env_var,
		   size_t size, char **err)
{
	char dir[4200], absolute[PATH_MAX];

	if (bench->mirror == NULL)
		return 0;
	snprintf(dir, sizeof(dir), "%s.bench", tree);
	if (gitrepo_checkout(bench->mirror, dir, bench->commit, err) < 0)
		return -1;
	if (realpath(dir, absolute) == NULL) {
		cause_set(err, "cannot find the benchmark's checkout %s", dir);
		return -1;
	}
	if ((size_t)snprintf(env_var, size, "STATBISECT_BENCH_DIR=%s",
			     absolute) >= size) {
		cause_set(err, "the benchmark's path is too long");
		return -1;
	}
	return 0;
}

void bench_close(struct bench *bench)
{
	if (bench == NULL)
		return;
	git_repository_free(bench->mirror);
	memset(bench, 0, sizeof(*bench));
}
