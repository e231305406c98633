/*
 * statbisect-worker: runs on a benchmark machine, talks to the server over
 * HTTP only.  Registers, then claims tasks one at a time, carries each out
 * (checkout and build, unless the build cache holds the build; runs) while a
 * second thread renews the lease, and uploads the runs.
 */
#include <curl/curl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buildcache.h"
#include "client.h"
#include "contain.h"
#include "gitrepo.h"
#include "log.h"
#include "runner.h"
#include "task.h"

static volatile sig_atomic_t stop_requested;

/* The environment variable `name`, NULL when unset or empty. */
static const char *env_get(const char *name)
{
	const char *value = getenv(name);

	return value != NULL && value[0] != '\0' ? value : NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Sleeps up to `seconds`, waking early when a stop is requested. */
static void nap(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	if (!stop_requested)
		nanosleep(&ts, NULL);
}

/* "8 threads 1 sockets Intel(R) Xeon(R) ... with 16G memory", as the
 * kernel robot describes its test machines. */
static char *machine_description(void)
{
	char line[512], model[256] = "unknown CPU", *desc = NULL;
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	long long mem_kb = 0;
	int sockets = 0, seen[64] = {0};
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');
		int id;

		if (colon == NULL)
			continue;
		if (strncmp(line, "model name", 10) == 0) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
		} else if (strncmp(line, "physical id", 11) == 0) {
			id = atoi(colon + 1);
			if (id >= 0 && id < 64 && !seen[id]) {
				seen[id] = 1;
				sockets++;
			}
		}
	}
	if (f != NULL)
		fclose(f);
	f = fopen("/proc/meminfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "MemTotal: %lld kB", &mem_kb) == 1)
			break;
	}
	if (f != NULL)
		fclose(f);
	if (asprintf(&desc, "%ld threads %d sockets %s with %lldG memory",
		     threads, sockets > 0 ? sockets : 1, model,
		     (mem_kb + 512 * 1024) / (1024 * 1024)) < 0)
		return NULL;
	return desc;
}

struct heartbeat {
	pthread_t thread;
	const char *server, *token;
	long long task_id, lease;
	unsigned interval_s;
	atomic_bool done;
	atomic_bool lease_lost;
	/* What the task does now: sent at least every interval, and within
	 * two seconds of a change (issue 15). */
	struct task_activity activity;
};

/* Whether to send a heartbeat after `waited` tenths of a second since the
 * last: the interval has passed, or the activity changed and two seconds
 * have (a run every tenth of a second is not a request every tenth). */
static bool heartbeat_due(struct heartbeat *hb, unsigned waited,
			  unsigned long long sent_changes, char *text,
			  size_t size, unsigned long long *changes)
{
	*changes = task_activity_get(&hb->activity, text, size);
	return waited >= hb->interval_s * 10 ||
	       (*changes != sent_changes && waited >= 20);
}

static void *heartbeat_main(void *arg)
{
	struct heartbeat *hb = arg;
	struct client *c = client_new(hb->server, hb->token);
	unsigned long long sent_changes = 0, changes = 0;
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/tasks/%lld/heartbeat",
		 hb->task_id);
	while (c != NULL && !atomic_load(&hb->done)) {
		char text[sizeof(hb->activity.text)];
		json_t *body, *reply = NULL;
		char *err = NULL;
		long status = 0;
		unsigned waited;

		for (waited = 0; !heartbeat_due(hb, waited, sent_changes, text,
						sizeof(text), &changes) &&
				 !atomic_load(&hb->done);
		     waited++)
			usleep(100 * 1000);
		if (atomic_load(&hb->done))
			break;
		body = json_pack("{s:I}", "lease", (json_int_t)hb->lease);
		if (text[0] != '\0')
			json_object_set_new(body, "activity",
					    json_string(text));
		sent_changes = changes;
		if (client_post(c, path, body, &status, &reply, &err) < 0) {
			log_warn("heartbeat failed: %s", err);
			free(err);
		} else if (status == 409 || status == 404 || status == 403) {
			log_warn("task %lld: %s", hb->task_id,
				 client_error_message(reply));
			atomic_store(&hb->lease_lost, true);
		}
		json_decref(body);
		json_decref(reply);
	}
	client_free(c);
	return NULL;
}

struct worker {
	const char *server, *token, *work_dir, *name, *group;
	unsigned long long build_cache_max;
	struct client *client;
	long long id;
};

static int register_worker(struct worker *w)
{
	char *machine = machine_description();
	json_t *body, *reply = NULL;
	double backoff = 0.5;
	int error = -1;

	body = json_pack("{s:s,s:s,s:s}", "name", w->name, "group", w->group,
			 "machine", machine != NULL ? machine : "unknown");
	while (!stop_requested) {
		char *err = NULL;
		long status = 0;

		if (client_post(w->client, "/api/v1/workers", body, &status,
				&reply, &err) < 0) {
			log_warn("server %s unreachable (%s); retrying",
				 w->server, err);
			free(err);
			nap(backoff);
			backoff = backoff < 8 ? backoff * 2 : backoff;
			continue;
		}
		if (status == 200 || status == 201) {
			w->id =
			    json_integer_value(json_object_get(reply, "id"));
			log_info("registered as worker %lld on %s", w->id,
				 machine != NULL ? machine : "?");
			error = 0;
		} else {
			log_error("registration refused (%ld): %s", status,
				  client_error_message(reply));
		}
		break;
	}
	json_decref(reply);
	json_decref(body);
	free(machine);
	return error;
}

static void upload(struct worker *w, long long task_id, long long lease,
		   json_t *result)
{
	char path[128];
	double backoff = 1;
	int attempt;

	snprintf(path, sizeof(path), "/api/v1/tasks/%lld/result", task_id);
	json_object_set_new(result, "lease", json_integer(lease));
	/* A server that is briefly away must not cost the runs. */
	for (attempt = 0; attempt < 8; attempt++) {
		json_t *reply = NULL;
		char *err = NULL;
		long status = 0;

		if (client_post(w->client, path, result, &status, &reply,
				&err) < 0) {
			log_warn("upload of task %lld failed: %s; retrying",
				 task_id, err);
			free(err);
			nap(backoff);
			backoff *= 2;
			continue;
		}
		if (status == 200)
			log_info("task %lld uploaded", task_id);
		else
			log_warn("task %lld upload refused (%ld): %s", task_id,
				 status, client_error_message(reply));
		json_decref(reply);
		if (status < 500)
			return;
		nap(backoff);
		backoff *= 2;
	}
}

static void do_task(struct worker *w, json_t *task)
{
	struct heartbeat hb = {.activity = TASK_ACTIVITY_INIT};
	struct task_env env;
	json_t *result = NULL;
	char *err = NULL;
	long long lease_s;

	hb.server = w->server;
	hb.token = w->token;
	hb.task_id = json_integer_value(json_object_get(task, "id"));
	hb.lease = json_integer_value(json_object_get(task, "lease"));
	lease_s = json_integer_value(json_object_get(task, "lease_seconds"));
	hb.interval_s = lease_s >= 6 ? (unsigned)(lease_s / 3) : 2;
	atomic_init(&hb.done, false);
	atomic_init(&hb.lease_lost, false);
	log_info("task %lld: %lld runs of %.12s (job %lld)", hb.task_id,
		 (long long)json_integer_value(json_object_get(task, "runs")),
		 json_string_value(json_object_get(task, "commit")),
		 (long long)json_integer_value(json_object_get(task, "job")));
	if (pthread_create(&hb.thread, NULL, heartbeat_main, &hb) != 0) {
		log_error("cannot start the heartbeat thread");
		return;
	}
	env.work_dir = w->work_dir;
	env.build_cache_max = w->build_cache_max;
	env.stop = &stop_requested;
	env.lease_lost = &hb.lease_lost;
	env.activity = &hb.activity;
	if (task_execute(&result, task, &env, &err) < 0) {
		log_warn("task %lld not done: %s", hb.task_id, err);
		free(err);
	}
	atomic_store(&hb.done, true);
	pthread_join(hb.thread, NULL);
	if (result != NULL && !atomic_load(&hb.lease_lost))
		upload(w, hb.task_id, hb.lease, result);
	json_decref(result);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Claims tasks and carries them out until a stop is asked for.  A claim
 * waits up to `wait_s` on the server for a task to be queued (issue 14:
 * the server answers as soon as one is); one that came back empty sooner
 * than `poll_s` (an older server, or one holding too many claims) is
 * followed by a nap, so the worker never asks faster than that.
 */
static void claim_loop(struct worker *w, double poll_s, unsigned wait_s)
{
	char path[128];

	while (!stop_requested) {
		json_t *reply = NULL, *task;
		char *err = NULL;
		double started = now_s();
		long status = 0;
		int rc;

		snprintf(path, sizeof(path),
			 "/api/v1/workers/%lld/claim?wait=%u", w->id, wait_s);
		/* A stop need not wait for the claim's wait to end. */
		client_set_cancel(w->client, &stop_requested);
		rc = client_post(w->client, path, NULL, &status, &reply, &err);
		client_set_cancel(w->client, NULL);
		if (rc < 0) {
			if (!stop_requested)
				log_warn("claim failed: %s", err);
			free(err);
			nap(poll_s * 2);
			continue;
		}
		task = json_object_get(reply, "task");
		if (status == 200 && json_is_object(task)) {
			do_task(w, task);
		} else {
			if (status == 404)
				register_worker(w);
			else if (status != 200)
				log_warn("claim refused (%ld): %s", status,
					 client_error_message(reply));
			if (status != 200 || now_s() - started < poll_s)
				nap(poll_s);
		}
		json_decref(reply);
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: statbisect-worker --server URL --token TOKEN"
		" --work-dir DIR\n"
		"           [--name NAME] [--group GROUP] [--poll SECONDS]\n"
		"           [--claim-wait SECONDS (0-30; 20)]\n"
		"           [--build-cache-max SIZE (bytes, or with K, M, G"
		" or T; 10G)]\n"
		"           [--containment auto|cgroup|sweep]\n"
		"Each option is also the environment variable STATBISECT_"
		" and its name\n"
		"in capitals with '_' for '-' (--work-dir:"
		" STATBISECT_WORK_DIR); an option\n"
		"given wins over the environment.\n");
}

/*
 * Chooses how builds and runs are contained (worker/contain.h) and says
 * so in the log; -1 when `mode` is unknown or "cgroup" is not to be had.
 */
static int containment_start(const char *mode)
{
	char *note = NULL, *cause = NULL;

	if (contain_setup(mode, &note, &cause) < 0) {
		log_error("containment: %s", cause);
		free(cause);
		return -1;
	}
	if (note != NULL)
		log_info("containment: sweep of inherited processes (no "
			 "cgroup: %s)",
			 note);
	else
		log_info("containment: %s",
			 contain_mode() == CONTAIN_CGROUP
			     ? "cgroup per build and run"
			     : "sweep of inherited processes");
	free(note);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"server", required_argument, NULL, 's'},
	    {"token", required_argument, NULL, 't'},
	    {"work-dir", required_argument, NULL, 'w'},
	    {"name", required_argument, NULL, 'n'},
	    {"group", required_argument, NULL, 'g'},
	    {"poll", required_argument, NULL, 'p'},
	    {"claim-wait", required_argument, NULL, 'W'},
	    {"build-cache-max", required_argument, NULL, 'b'},
	    {"containment", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct worker w = {0};
	struct sigaction sa;
	char host[256] = "worker";
	double poll_s = 1.0;
	const char *cache_max = env_get("STATBISECT_BUILD_CACHE_MAX");
	const char *containment = env_get("STATBISECT_CONTAINMENT");
	const char *claim_wait = env_get("STATBISECT_CLAIM_WAIT");
	long claim_wait_s = 20;
	char *end = NULL;
	int opt;

	w.server = env_get("STATBISECT_SERVER");
	w.token = env_get("STATBISECT_TOKEN");
	w.work_dir = env_get("STATBISECT_WORK_DIR");
	w.name = env_get("STATBISECT_NAME");
	w.group = env_get("STATBISECT_GROUP");
	if (w.group == NULL)
		w.group = "default";
	if (env_get("STATBISECT_POLL") != NULL)
		poll_s = atof(env_get("STATBISECT_POLL"));
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			w.server = optarg;
			break;
		case 't':
			w.token = optarg;
			break;
		case 'w':
			w.work_dir = optarg;
			break;
		case 'n':
			w.name = optarg;
			break;
		case 'g':
			w.group = optarg;
			break;
		case 'p':
			poll_s = atof(optarg);
			break;
		case 'W':
			claim_wait = optarg;
			break;
		case 'b':
			cache_max = optarg;
			break;
		case 'c':
			containment = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (claim_wait != NULL) {
		claim_wait_s = strtol(claim_wait, &end, 10);
		if (end == claim_wait || *end != '\0')
			claim_wait_s = -1;
	}
	if (w.server == NULL || w.token == NULL || w.work_dir == NULL ||
	    !(poll_s > 0) || claim_wait_s < 0 || claim_wait_s > 30) {
		usage(stderr);
		return 2;
	}
	w.build_cache_max = TASK_BUILD_CACHE_MAX_DEFAULT;
	if (cache_max != NULL &&
	    buildcache_parse_size(&w.build_cache_max, cache_max) < 0) {
		fprintf(stderr,
			"statbisect-worker: --build-cache-max '%s' is not a "
			"size (bytes, or a number with K, M, G or T)\n",
			cache_max);
		return 2;
	}
	if (w.name == NULL) {
		gethostname(host, sizeof(host) - 1);
		w.name = host;
	}
	log_init("statbisect-worker", LOG_INFO);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (mkdir(w.work_dir, 0755) < 0 && access(w.work_dir, W_OK) < 0) {
		log_error("cannot use work dir %s", w.work_dir);
		return 1;
	}
	/* Nothing a build or run starts outlives it, and orphans are
	 * reaped here, not by an init that may be slow to do it. */
	if (containment_start(containment) < 0)
		return 1;
	if (gitrepo_global_init() < 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("cannot initialise libgit2 or libcurl");
		return 1;
	}
	w.client = client_new(w.server, w.token);
	if (w.client == NULL || register_worker(&w) < 0) {
		client_free(w.client);
		return stop_requested ? 0 : 1;
	}
	claim_loop(&w, poll_s, (unsigned)claim_wait_s);
	log_info("stopping");
	contain_shutdown();
	client_free(w.client);
	curl_global_cleanup();
	git_libgit2_shutdown();
	return 0;
}
