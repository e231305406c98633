#include "task.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench.h"
#include "buildcache.h"
#include "gitrepo.h"
#include "log.h"
#include "metrics.h"
#include "monitor.h"
#include "outcome.h"
#include "runner.h"
#include "series.h"

#define TASK_BUILD_LOG_MAX (64u * 1024)
#define TASK_RUN_OUTPUT_MAX (16u * 1024)
/* Below this many free bytes a failed build or run is the disk's fault. */
#define TASK_DISK_FREE_MIN (1u << 20)

char *task_tail(const char *out, size_t out_len, const char *err,
		size_t err_len, size_t max)
{
	size_t total = out_len + err_len, skip = total > max ? total - max : 0;
	char *log = malloc(total - skip + 1), *p = log;

	if (log == NULL)
		return NULL;
	if (skip < out_len) {
		memcpy(p, out + skip, out_len - skip);
		p += out_len - skip;
		skip = 0;
	} else {
		skip -= out_len;
	}
	memcpy(p, err + skip, err_len - skip);
	p += err_len - skip;
	*p = '\0';
	/* Output may hold NULs or invalid bytes; keep the log printable. */
	for (p = log; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
			*p = '?';
		else if ((unsigned char)*p >= 0x80)
			*p = '?';
	}
	return log;
}

/* A repository name is used in paths: the server validated it, but a
 * worker trusts no path element it did not check itself. */
static bool safe_component(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || s[0] == '.' || strlen(s) > 64)
		return false;
	for (i = 0; s[i] != '\0'; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return false;
	}
	return true;
}

/* Has the mirror got this commit already (no fetch needed)? */
static bool has_commit(git_repository *repo, const char *sha)
{
	git_commit *commit = NULL;
	git_oid oid;

	if (git_oid_fromstr(&oid, sha) < 0 ||
	    git_commit_lookup(&commit, repo, &oid) < 0)
		return false;
	git_commit_free(commit);
	return true;
}

/* Brings commit `sha` into the build tree `tree`, fetching it into the
 * repository's mirror first when the mirror lacks it.  A commit of a patch
 * job's `series` (or NULL) is made from it on its base (series.h). */
void task_activity_set(struct task_activity *activity, const char *fmt, ...)
{
	char text[sizeof(activity->text)];
	va_list ap;

	if (activity == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&activity->lock);
	if (strcmp(text, activity->text) != 0) {
		memcpy(activity->text, text, sizeof(text));
		activity->changes++;
	}
	pthread_mutex_unlock(&activity->lock);
}

unsigned long long task_activity_get(struct task_activity *activity, char *buf,
				     size_t size)
{
	unsigned long long changes;

	pthread_mutex_lock(&activity->lock);
	snprintf(buf, size, "%s", activity->text);
	changes = activity->changes;
	pthread_mutex_unlock(&activity->lock);
	return changes;
}

static int prepare_tree(const struct task_env *env, const char *repo_name,
			const char *url, const char *sha, const char *tree,
			json_t *series, char **err)
{
	const char *base = json_string_value(json_object_get(series, "base"));
	git_repository *repo = NULL;
	char mirror[4096], dir[4096];
	int error = -1;

	snprintf(dir, sizeof(dir), "%s/mirrors", env->work_dir);
	mkdir(dir, 0755);
	snprintf(mirror, sizeof(mirror), "%s/mirrors/%s.git", env->work_dir,
		 repo_name);
	if (gitrepo_open(&repo, mirror, err) == 0 &&
	    (has_commit(repo, sha) ||
	     (base != NULL && has_commit(repo, base)))) {
		free(*err);
		*err = NULL;
	} else {
		git_repository_free(repo);
		repo = NULL;
		free(*err);
		*err = NULL;
		task_activity_set(env->activity,
				  access(mirror, F_OK) == 0
				      ? "fetching %s"
				      : "fetching %s for the first time on "
					"this machine (all of its history)",
				  repo_name);
		if (gitrepo_mirror(&repo, mirror, url, err) < 0)
			goto out;
	}
	task_activity_set(env->activity, "checking out %.12s", sha);
	if (base != NULL && !has_commit(repo, sha) &&
	    series_build(repo, series, sha, err) < 0)
		goto out;
	if (gitrepo_checkout(repo, tree, sha, err) < 0)
		goto out;
	error = 0;
out:
	git_repository_free(repo);
	return error;
}

/*
 * What one run did, for the commit's outcome: {"status", "exit_code",
 * "signal", "metrics_seen": names the command printed, "run_output": the
 * tail of its output}.
 */
static json_t *run_outcome(const struct runner_result *result, json_t *seen,
			   bool has_kpi)
{
	enum outcome_status status;
	json_t *outcome;
	char *output;

	status = outcome_of_run(result->exit_code, result->term_signal,
				result->timed_out, has_kpi);
	output = task_tail(result->out, result->out_len, result->err,
			   result->err_len, TASK_RUN_OUTPUT_MAX);
	outcome = json_pack(
	    "{s:s,s:i,s:i,s:o,s:s}", "status", outcome_status_name(status),
	    "exit_code", result->exit_code, "signal", result->term_signal,
	    "metrics_seen", seen, "run_output", output != NULL ? output : "");
	free(output);
	return outcome;
}

/*
 * One run of `command`, with the testcase's `monitors` (a JSON array of
 * names, or NULL) beside it: its metrics are the command's output (lines
 * or JSON, see metrics_parse_output()) and the monitors' (see monitor.h).
 * What the run did goes to *outcome (see run_outcome()).
 */
static json_t *run_once(const char *tree, const char *command,
			double timeout_s, const char *const *env_vars,
			const char *kpi, char **err, json_t *monitors,
			json_t **outcome)
{
	struct runner_result result;
	struct metrics *metrics = NULL;
	struct monitor_run *monitoring = NULL;
	enum metrics_format format = METRICS_FORMAT_LINES;
	const char *names[8], **run_env;
	const char *const *extra;
	size_t i, n = 0, names_count = 0, env_count = 0, extra_count = 0;
	char *cause = NULL;
	json_t *values, *run, *name, *seen;

	json_array_foreach(monitors, i, name)
	{
		if (json_is_string(name) && names_count < 8)
			names[names_count++] = json_string_value(name);
	}
	if (names_count > 0 && monitor_begin(&monitoring, names, names_count,
					     command, NULL, &cause) < 0) {
		log_warn("monitors not started: %s",
			 cause != NULL ? cause : "out of memory");
		free(cause);
		monitoring = NULL;
	}
	/* The task's environment, then what the monitors' wrapper needs. */
	while (env_vars != NULL && env_vars[env_count] != NULL)
		env_count++;
	extra = monitor_env(monitoring);
	while (extra != NULL && extra[extra_count] != NULL)
		extra_count++;
	run_env = calloc(env_count + extra_count + 1, sizeof(*run_env));
	if (run_env == NULL) {
		monitor_free(monitoring);
		*err = strdup("out of memory");
		return NULL;
	}
	for (i = 0; i < env_count; i++)
		run_env[n++] = env_vars[i];
	for (i = 0; i < extra_count; i++)
		run_env[n++] = extra[i];
	if (runner_run(&result,
		       &(struct runner_spec){
			   .command = monitoring != NULL
					  ? monitor_command(monitoring)
					  : command,
			   .cwd = tree,
			   .env = run_env,
			   .timeout_s = timeout_s},
		       err) < 0) {
		monitor_free(monitoring);
		free(run_env);
		return NULL;
	}
	free(run_env);
	values = json_object();
	if (metrics_parse_output(&metrics, result.out, result.out_len, NULL,
				 &format) < 0)
		metrics = NULL;
	/* The command's own metrics, before the monitors add theirs. */
	seen = json_array();
	for (i = 0; metrics != NULL && i < metrics->count; i++)
		json_array_append_new(seen,
				      json_string(metrics->entries[i].name));
	if (metrics != NULL) {
		if (monitoring != NULL && monitor_end(monitoring, metrics) < 0)
			log_warn("monitors: out of memory");
		for (i = 0; i < metrics->count; i++)
			json_object_set_new(
			    values, metrics->entries[i].name,
			    json_real(metrics->entries[i].value));
	}
	metrics_free(metrics);
	monitor_free(monitoring);
	*outcome =
	    run_outcome(&result, seen, json_object_get(values, kpi) != NULL);
	if (result.timed_out)
		log_warn("run timed out after %.0f s", timeout_s);
	else if (result.exit_code != 0)
		log_warn("run exited with %d%s", result.exit_code,
			 result.term_signal ? " (signal)" : "");
	else if (json_object_get(values, kpi) == NULL)
		log_warn("run printed no metric '%s' (output read as %s)", kpi,
			 metrics_format_name(format));
	run = json_pack("{s:i,s:f,s:f,s:f,s:b,s:o}", "exit_code",
			result.timed_out ? 124 : result.exit_code, "wall_s",
			result.wall_s, "user_s", result.user_s, "sys_s",
			result.sys_s, "timed_out", result.timed_out, "metrics",
			values);
	runner_result_clear(&result);
	return run;
}

/* One commit of a task, with its build tree. */
struct task_commit {
	long long index;
	const char *sha;
	long long runs, done;
	bool rebuild; /* asked to build it again, not take the cache's */
	char tree[4096];
	char key[BUILDCACHE_HASH_LEN + 1]; /* its build's, buildcache.h */
	char bench_env[4300]; /* STATBISECT_BENCH_DIR=..., bench.h */
	unsigned long long tree_id;
	bool failed;
	/* What happened to it, as uploaded in "outcomes" (see
	 * keep_outcome()), and its build log when this task built it. */
	json_t *outcome;
	char *build_log;
};

/* The run that explains a commit best: the last that failed, else the
 * last. */
static void keep_outcome(struct task_commit *c, json_t *run)
{
	const char *now = json_string_value(json_object_get(run, "status"));
	const char *kept =
	    json_string_value(json_object_get(c->outcome, "status"));

	if (run == NULL)
		return;
	if (c->outcome == NULL || strcmp(now, "ran") != 0 || kept == NULL ||
	    strcmp(kept, "ran") == 0 || strcmp(kept, "built") == 0) {
		json_decref(c->outcome);
		c->outcome = run;
	} else {
		json_decref(run);
	}
}

/* The "outcomes" of an upload: one entry per commit the task got to. */
static json_t *outcomes_json(struct task_commit *commits, size_t n)
{
	json_t *list = json_array(), *o;
	size_t i;

	for (i = 0; i < n; i++) {
		if (commits[i].outcome == NULL)
			continue;
		o = json_deep_copy(commits[i].outcome);
		json_object_set_new(o, "commit_index",
				    json_integer(commits[i].index));
		if (commits[i].build_log != NULL)
			json_object_set_new(o, "build_log",
					    json_string(commits[i].build_log));
		json_array_append_new(list, o);
	}
	return list;
}

/*
 * Finds the build of `c` in the cache, or the tree to build it in: the key
 * is made of the repository, the commit, the build command, the testcase's
 * parameters, the environment the build inherits and the bench commit.
 * *built tells which.
 */
static int find_build(struct task_commit *c, bool *built,
		      struct buildcache *cache, const char *repo_name,
		      const char *build, const char *params,
		      const struct bench *bench, char **err)
{
	char config[BUILDCACHE_HASH_LEN + 1];
	struct buildcache_inputs in = {
	    .repo = repo_name,
	    .commit = c->sha,
	    .build = build,
	    .params = params,
	    .environ = (const char *const *)environ,
	    .bench = bench->commit[0] != '\0' ? bench->commit : NULL,
	};

	if (buildcache_key(c->key, config, &in, err) < 0 ||
	    buildcache_acquire(c->tree, sizeof(c->tree), built, &c->tree_id,
			       cache, c->key, config, err) < 0)
		return -1;
	if (*built && access(c->tree, F_OK) < 0) {
		/* Deleted behind the cache's back: build it again. */
		log_warn("%.12s: build tree %s is gone", c->sha, c->tree);
		*built = false;
		return buildcache_done(cache, c->tree_id, c->key, false, err);
	}
	if (*built && c->rebuild) {
		/* A retry asked for a fresh build (issue 15). */
		log_info("%.12s: building again from a clean tree, as the "
			 "task asks",
			 c->sha);
		*built = false;
		return buildcache_discard(cache, c->tree_id, c->key, err);
	}
	if (*built)
		log_info("%.12s: built before, in %s", c->sha, c->tree);
	return 0;
}

static bool mentions_full_disk(const char *text, size_t len)
{
	return text != NULL &&
	       memmem(text, len, "No space left on device", 23) != NULL;
}

/*
 * Whether a build or run that failed in `dir` may have failed because the
 * disk is full (issue 11): less than TASK_DISK_FREE_MIN bytes free there
 * now, or its output says so.  Such a failure says nothing of the commit:
 * the task is given up (not uploaded), its lease lapses and it is run
 * again, here once there is room or on another worker, rather than the
 * commit being judged broken.  Sets *err when true.
 */
static bool disk_full(const char *dir, const struct runner_result *result,
		      char **err)
{
	struct statvfs fs;
	unsigned long long free_bytes = ~0ULL;

	if (statvfs(dir, &fs) == 0)
		free_bytes = (unsigned long long)fs.f_bavail * fs.f_frsize;
	if (free_bytes >= TASK_DISK_FREE_MIN &&
	    (result == NULL ||
	     (!mentions_full_disk(result->out, result->out_len) &&
	      !mentions_full_disk(result->err, result->err_len))))
		return false;
	free(*err);
	if (asprintf(err,
		     "the disk of %s is full (%llu bytes free): the failure "
		     "is not held against the commit; the task will run "
		     "again",
		     dir, free_bytes) < 0)
		*err = NULL;
	return true;
}

/* Builds `tc` in its build tree.  0 when built, 1 when the build failed
 * (the log appended to `failures`), -1 when it could not be attempted. */
static int build_commit(struct task_commit *tc, const char *build,
			long long timeout_s, const char *const *env_vars,
			json_t *failures, char **err)
{
	struct runner_result result;

	log_info("building %.12s in %s", tc->sha, tc->tree);
	if (runner_run(&result,
		       &(struct runner_spec){.command = build,
					     .cwd = tc->tree,
					     .env = env_vars,
					     .timeout_s = (double)timeout_s},
		       err) < 0)
		return -1;
	if ((result.exit_code != 0 || result.timed_out) &&
	    disk_full(tc->tree, &result, err)) {
		log_warn("build of %.12s failed: %s", tc->sha, *err);
		runner_result_clear(&result);
		return -1;
	}
	if (result.exit_code != 0 || result.timed_out) {
		char *log = task_tail(result.out, result.out_len, result.err,
				      result.err_len, TASK_BUILD_LOG_MAX);

		log_warn("build of %.12s failed (exit %d%s)", tc->sha,
			 result.exit_code,
			 result.timed_out ? ", timed out" : "");
		json_array_append_new(failures,
				      json_pack("{s:I,s:s}", "commit_index",
						(json_int_t)tc->index, "log",
						log != NULL ? log : ""));
		tc->build_log = log;
		tc->outcome = json_pack(
		    "{s:s,s:i,s:i}", "status", "build_failed", "exit_code",
		    result.exit_code, "signal", result.term_signal);
		runner_result_clear(&result);
		tc->failed = true;
		return 1;
	}
	tc->build_log = task_tail(result.out, result.out_len, result.err,
				  result.err_len, TASK_BUILD_LOG_MAX);
	tc->outcome = json_pack("{s:s}", "status", "built");
	runner_result_clear(&result);
	return 0;
}

/* The upload of a task whose benchmark cannot be had: no runs, and why
 * in "bench_error", which ends the job (server/bench.h). */
static int bench_failed(json_t **out, char **err)
{
	log_warn("%s", *err);
	*out = json_pack("{s:[],s:[],s:i,s:[],s:s}", "runs", "build_failures",
			 "builds", 0, "outcomes", "bench_error", *err);
	free(*err);
	*err = NULL;
	if (*out != NULL)
		return 0;
	*err = strdup("out of memory");
	return -1;
}

int task_execute(json_t **out, json_t *task, const struct task_env *env,
		 char **err)
{
	const char *repo_name, *url, *build, *run, *kpi;
	char env_commit[80], env_run[40], env_job[40], cache_dir[4200];
	char *params = NULL;
	struct buildcache *cache = NULL;
	long long builds = 0;
	const char *env_vars[5] = {env_commit, env_run, env_job, NULL, NULL};
	struct bench bench = {0};
	json_t *repo, *tc, *plan, *entry, *runs = NULL, *failures = NULL;
	struct task_commit *commits = NULL;
	long long timeout_s, total = 0, run_no = 0;
	bool interleave;
	size_t n, i;
	int error = -1, rc;

	repo = json_object_get(task, "repo");
	tc = json_object_get(task, "testcase");
	plan = json_object_get(task, "commits");
	repo_name = json_string_value(json_object_get(repo, "name"));
	url = json_string_value(json_object_get(repo, "url"));
	build = json_string_value(json_object_get(tc, "build"));
	run = json_string_value(json_object_get(tc, "run"));
	kpi = json_string_value(json_object_get(tc, "kpi"));
	timeout_s = json_integer_value(json_object_get(tc, "timeout_s"));
	interleave = json_is_true(json_object_get(task, "interleave"));
	n = json_array_size(plan);
	if (!safe_component(repo_name) || url == NULL || build == NULL ||
	    run == NULL || kpi == NULL || timeout_s <= 0 || n == 0 || n > 8)
		goto malformed;
	commits = calloc(n, sizeof(*commits));
	if (commits == NULL) {
		*err = strdup("out of memory");
		return -1;
	}
	json_array_foreach(plan, i, entry)
	{
		struct task_commit *c = &commits[i];

		c->index = json_integer_value(json_object_get(entry, "index"));
		c->sha = json_string_value(json_object_get(entry, "commit"));
		c->runs = json_integer_value(json_object_get(entry, "runs"));
		c->rebuild = json_is_true(json_object_get(entry, "rebuild"));
		if (c->sha == NULL || strlen(c->sha) != GITREPO_SHA_LEN ||
		    c->runs <= 0 || c->runs > 100000)
			goto malformed;
		total += c->runs;
	}
	snprintf(env_run, sizeof(env_run), "STATBISECT_RUN=0");
	snprintf(env_job, sizeof(env_job), "STATBISECT_JOB=%lld",
		 (long long)json_integer_value(json_object_get(task, "job")));
	failures = json_array();
	if (json_is_object(json_object_get(tc, "params")))
		params = json_dumps(json_object_get(tc, "params"),
				    JSON_COMPACT | JSON_SORT_KEYS);
	rc = bench_open(&bench, task, env->work_dir, err);
	if (rc != 0) {
		error = rc > 0 ? bench_failed(out, err) : -1;
		goto out;
	}
	snprintf(cache_dir, sizeof(cache_dir), "%s/builds", env->work_dir);
	if (buildcache_open(&cache, cache_dir, env->build_cache_max, err) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		bool built;

		snprintf(env_commit, sizeof(env_commit),
			 "STATBISECT_COMMIT=%s", commits[i].sha);
		if (find_build(&commits[i], &built, cache, repo_name, build,
			       params, &bench, err) < 0 ||
		    bench_checkout(&bench, commits[i].tree,
				   commits[i].bench_env,
				   sizeof(commits[i].bench_env), err) < 0)
			goto out;
		if (bench.mirror != NULL)
			env_vars[3] = commits[i].bench_env;
		if (built) {
			commits[i].outcome =
			    json_pack("{s:s}", "status", "built");
			continue;
		}
		if (prepare_tree(env, repo_name, url, commits[i].sha,
				 commits[i].tree,
				 json_object_get(task, "series"), err) < 0)
			goto out;
		task_activity_set(env->activity, "building %.12s",
				  commits[i].sha);
		if ((rc = build_commit(&commits[i], build, timeout_s, env_vars,
				       failures, err)) < 0)
			goto out;
		builds++;
		if (buildcache_done(cache, commits[i].tree_id, commits[i].key,
				    rc == 0, err) < 0)
			goto out;
	}

	/* Interleaved: one run of each commit in turn (A B A B ...), so slow
	 * drift of the machine falls on all of them alike; else in order. */
	runs = json_array();
	while (run_no < total) {
		bool ran = false;

		for (i = 0; i < n; i++) {
			struct task_commit *c = &commits[i];
			long long batch = interleave ? 1 : c->runs;
			json_t *one, *outcome = NULL;

			while (batch-- > 0 && c->done < c->runs &&
			       !c->failed) {
				if (*env->stop ||
				    atomic_load(env->lease_lost)) {
					*err = strdup(
					    *env->stop ? "stopping"
						       : "the lease was lost");
					goto out;
				}
				snprintf(env_commit, sizeof(env_commit),
					 "STATBISECT_COMMIT=%s", c->sha);
				snprintf(env_run, sizeof(env_run),
					 "STATBISECT_RUN=%lld", c->done + 1);
				if (bench.mirror != NULL)
					env_vars[3] = c->bench_env;
				task_activity_set(env->activity,
						  "running %.12s: run %lld of "
						  "%lld of this task",
						  c->sha, run_no + 1, total);
				one = run_once(c->tree, run, (double)timeout_s,
					       env_vars, kpi, err,
					       json_object_get(tc, "monitors"),
					       &outcome);
				if (one == NULL)
					goto out;
				if (json_integer_value(json_object_get(
					one, "exit_code")) != 0 &&
				    disk_full(c->tree, NULL, err)) {
					json_decref(one);
					json_decref(outcome);
					goto out;
				}
				keep_outcome(c, outcome);
				json_object_set_new(one, "commit_index",
						    json_integer(c->index));
				json_array_append_new(runs, one);
				c->done++;
				run_no++;
				ran = true;
			}
			if (c->failed && c->done < c->runs) {
				run_no += c->runs - c->done;
				c->done = c->runs;
			}
		}
		if (!ran)
			break;
	}
	*out =
	    json_pack("{s:o,s:o,s:I,s:o,s:s?}", "runs", runs, "build_failures",
		      failures, "builds", (json_int_t)builds, "outcomes",
		      outcomes_json(commits, n), "bench_commit",
		      bench.commit[0] != '\0' ? bench.commit : NULL);
	runs = failures = NULL;
	error = 0;
	goto out;
malformed:
	*err = strdup("the server sent a malformed task");
out:
	json_decref(runs);
	json_decref(failures);
	buildcache_free(cache);
	bench_close(&bench);
	free(params);
	for (i = 0; commits != NULL && i < n; i++) {
		json_decref(commits[i].outcome);
		free(commits[i].build_log);
	}
	free(commits);
	return error;
}
