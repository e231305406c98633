#include "task.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gitrepo.h"
#include "log.h"
#include "metrics.h"
#include "runner.h"

#define TASK_BUILD_LOG_MAX (64u * 1024)

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

static int prepare_tree(const struct task_env *env, const char *repo_name,
			const char *url, const char *sha, char *tree,
			size_t tree_size, char **err)
{
	git_repository *repo = NULL;
	char mirror[4096], dir[4096];
	int error = -1;

	snprintf(dir, sizeof(dir), "%s/mirrors", env->work_dir);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/trees", env->work_dir);
	mkdir(dir, 0755);
	snprintf(mirror, sizeof(mirror), "%s/mirrors/%s.git", env->work_dir,
		 repo_name);
	snprintf(tree, tree_size, "%s/trees/%s", env->work_dir, repo_name);
	if (gitrepo_open(&repo, mirror, err) == 0 && has_commit(repo, sha)) {
		free(*err);
		*err = NULL;
	} else {
		git_repository_free(repo);
		repo = NULL;
		free(*err);
		*err = NULL;
		if (gitrepo_mirror(&repo, mirror, url, err) < 0)
			goto out;
	}
	if (gitrepo_checkout(repo, tree, sha, err) < 0)
		goto out;
	error = 0;
out:
	git_repository_free(repo);
	return error;
}

/* The worktree remembers which commit it built last, so that further
 * tasks on the same commit reuse the build. */
static bool already_built(const char *tree, const char *sha)
{
	char path[4200], built[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s.built", tree);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(built, sizeof(built), f) == NULL)
		built[0] = '\0';
	fclose(f);
	built[strcspn(built, "\n")] = '\0';
	return strcmp(built, sha) == 0;
}

static void mark_built(const char *tree, const char *sha)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s.built", tree);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fprintf(f, "%s\n", sha);
	fclose(f);
}

static void forget_build(const char *tree)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s.built", tree);
	unlink(path);
}

static json_t *run_once(const char *tree, const char *command,
			double timeout_s, const char *const *envv,
			const char *kpi, char **err)
{
	struct runner_result result;
	struct metrics *metrics = NULL;
	json_t *values, *run;
	size_t i;

	if (runner_run(&result, &(struct runner_spec){.command = command,
						      .cwd = tree,
						      .env = envv,
						      .timeout_s = timeout_s},
		       err) < 0)
		return NULL;
	values = json_object();
	if (metrics_parse(&metrics, result.out, result.out_len, NULL) == 0) {
		for (i = 0; i < metrics->count; i++)
			json_object_set_new(
				values, metrics->entries[i].name,
				json_real(metrics->entries[i].value));
	}
	metrics_free(metrics);
	if (result.timed_out)
		log_warn("run timed out after %.0f s", timeout_s);
	else if (result.exit_code != 0)
		log_warn("run exited with %d%s", result.exit_code,
			 result.term_signal ? " (signal)" : "");
	else if (json_object_get(values, kpi) == NULL)
		log_warn("run printed no '%s: value' line", kpi);
	run = json_pack("{s:i,s:f,s:f,s:f,s:b,s:o}", "exit_code",
			result.timed_out ? 124 : result.exit_code, "wall_s",
			result.wall_s, "user_s", result.user_s, "sys_s",
			result.sys_s, "timed_out", result.timed_out, "metrics",
			values);
	runner_result_clear(&result);
	return run;
}

int task_execute(json_t **out, json_t *task, const struct task_env *env,
		 char **err)
{
	const char *sha, *repo_name, *url, *build, *run, *kpi;
	char tree[4096], env_commit[80], env_run[40], env_job[40];
	const char *envv[4] = {env_commit, env_run, env_job, NULL};
	json_t *repo, *tc, *runs = NULL;
	long long count, i, timeout_s;
	struct runner_result result;

	repo = json_object_get(task, "repo");
	tc = json_object_get(task, "testcase");
	sha = json_string_value(json_object_get(task, "commit"));
	repo_name = json_string_value(json_object_get(repo, "name"));
	url = json_string_value(json_object_get(repo, "url"));
	build = json_string_value(json_object_get(tc, "build"));
	run = json_string_value(json_object_get(tc, "run"));
	kpi = json_string_value(json_object_get(tc, "kpi"));
	count = json_integer_value(json_object_get(task, "runs"));
	timeout_s = json_integer_value(json_object_get(tc, "timeout_s"));
	if (sha == NULL || strlen(sha) != GITREPO_SHA_LEN ||
	    !safe_component(repo_name) || url == NULL || build == NULL ||
	    run == NULL || kpi == NULL || count <= 0 || count > 100000 ||
	    timeout_s <= 0) {
		*err = strdup("the server sent a malformed task");
		return -1;
	}
	if (prepare_tree(env, repo_name, url, sha, tree, sizeof(tree), err) <
	    0)
		return -1;
	snprintf(env_commit, sizeof(env_commit), "STATBISECT_COMMIT=%s", sha);
	snprintf(env_run, sizeof(env_run), "STATBISECT_RUN=0");
	snprintf(env_job, sizeof(env_job), "STATBISECT_JOB=%lld",
		 (long long)json_integer_value(json_object_get(task, "job")));

	if (!already_built(tree, sha)) {
		forget_build(tree);
		log_info("building %.12s", sha);
		if (runner_run(&result,
			       &(struct runner_spec){.command = build,
						     .cwd = tree,
						     .env = envv,
						     .timeout_s = (double)timeout_s},
			       err) < 0)
			return -1;
		if (result.exit_code != 0 || result.timed_out) {
			char *log = task_tail(result.out, result.out_len,
					      result.err, result.err_len,
					      TASK_BUILD_LOG_MAX);

			log_warn("build of %.12s failed (exit %d%s)", sha,
				 result.exit_code,
				 result.timed_out ? ", timed out" : "");
			*out = json_pack("{s:[],s:b,s:s}", "runs",
					 "build_failed", 1, "build_log",
					 log != NULL ? log : "");
			free(log);
			runner_result_clear(&result);
			return 0;
		}
		runner_result_clear(&result);
		mark_built(tree, sha);
	}

	runs = json_array();
	for (i = 0; i < count; i++) {
		json_t *one;

		if (*env->stop || atomic_load(env->lease_lost)) {
			json_decref(runs);
			*err = strdup(*env->stop ? "stopping"
						 : "the lease was lost");
			return -1;
		}
		snprintf(env_run, sizeof(env_run), "STATBISECT_RUN=%lld", i + 1);
		one = run_once(tree, run, (double)timeout_s, envv, kpi, err);
		if (one == NULL) {
			json_decref(runs);
			return -1;
		}
		json_array_append_new(runs, one);
	}
	*out = json_pack("{s:o,s:b}", "runs", runs, "build_failed", 0);
	return 0;
}
