#include "watch.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "remote.h"

#define WATCH_EXIT_OK 0
#define WATCH_EXIT_TROUBLE 2
#define WATCH_DEFAULT_SERVER "http://127.0.0.1:8080"

struct watch_options {
	const char *server, *token;
	const char *repo, *branch, *testcase_filter;
	json_t *testcases, *notify; /* arrays of strings */
	long long interval_s;	    /* 0: the server's default */
	bool regressions_only, paused, json, csv;
	const char *sub;
	const char *arg; /* the watch id or repository name */
};

static int watch_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int watch_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("statbisect: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return WATCH_EXIT_TROUBLE;
}

static void watch_usage(FILE *out)
{
	fprintf(out, "usage: statbisect watch add --repo NAME --branch BRANCH"
		     " --testcase NAME [--testcase NAME]...\n"
		     "                            [--interval SECONDS]"
		     " [--regressions-only] [--notify ADDRESS]... [--paused]\n"
		     "       statbisect watch list [--json]\n"
		     "       statbisect watch show|pause|resume|delete WATCH\n"
		     "       statbisect watch history WATCH [--testcase NAME]"
		     " [--csv | --json]\n"
		     "       statbisect watch push REPO\n"
		     "with --server URL (STATBISECT_SERVER) and --token TOKEN "
		     "(STATBISECT_TOKEN) as for every command.\n");
}

/* Server text on the terminal: control characters become '?'. */
static void put_text(const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		fputc((unsigned char)*s < ' ' && *s != '\t' ? '?' : *s,
		      stdout);
}

static const char *text_of(json_t *object, const char *key)
{
	const char *s = json_string_value(json_object_get(object, key));

	return s != NULL ? s : "";
}

static int parse_watch_args(struct watch_options *o, int argc, char **argv)
{
	enum {
		OPT_REPO = 256,
		OPT_BRANCH,
		OPT_TESTCASE,
		OPT_INTERVAL,
		OPT_REGRESSIONS_ONLY,
		OPT_NOTIFY,
		OPT_PAUSED,
		OPT_JSON,
		OPT_CSV,
		OPT_SERVER,
		OPT_TOKEN
	};
	static const struct option options[] = {
	    {"repo", required_argument, NULL, OPT_REPO},
	    {"branch", required_argument, NULL, OPT_BRANCH},
	    {"testcase", required_argument, NULL, OPT_TESTCASE},
	    {"interval", required_argument, NULL, OPT_INTERVAL},
	    {"regressions-only", no_argument, NULL, OPT_REGRESSIONS_ONLY},
	    {"notify", required_argument, NULL, OPT_NOTIFY},
	    {"paused", no_argument, NULL, OPT_PAUSED},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"csv", no_argument, NULL, OPT_CSV},
	    {"server", required_argument, NULL, OPT_SERVER},
	    {"token", required_argument, NULL, OPT_TOKEN},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (opt) {
		case OPT_REPO:
			o->repo = optarg;
			break;
		case OPT_BRANCH:
			o->branch = optarg;
			break;
		case OPT_TESTCASE:
			o->testcase_filter = optarg;
			json_array_append_new(o->testcases,
					      json_string(optarg));
			break;
		case OPT_INTERVAL:
			o->interval_s = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' ||
			    o->interval_s <= 0)
				return watch_fail("--interval takes seconds, "
						  "not '%s'",
						  optarg);
			break;
		case OPT_REGRESSIONS_ONLY:
			o->regressions_only = true;
			break;
		case OPT_NOTIFY:
			json_array_append_new(o->notify, json_string(optarg));
			break;
		case OPT_PAUSED:
			o->paused = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_CSV:
			o->csv = true;
			break;
		case OPT_SERVER:
			o->server = optarg;
			break;
		case OPT_TOKEN:
			o->token = optarg;
			break;
		case 'h':
			watch_usage(stdout);
			return WATCH_EXIT_OK;
		case ':':
			return watch_fail("%s needs a value (see --help)",
					  argv[optind - 1]);
		default:
			return watch_fail("unknown option '%s' (see --help)",
					  argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		watch_usage(stderr);
		return WATCH_EXIT_TROUBLE;
	}
	o->sub = argv[optind++];
	if (strcmp(o->sub, "add") != 0 && strcmp(o->sub, "list") != 0) {
		if (optind + 1 != argc)
			return watch_fail("watch %s takes one argument",
					  o->sub);
		o->arg = argv[optind];
	} else if (optind != argc) {
		return watch_fail("watch %s takes no argument '%s'", o->sub,
				  argv[optind]);
	}
	if (strcmp(o->sub, "add") == 0 &&
	    (o->repo == NULL || o->branch == NULL ||
	     json_array_size(o->testcases) == 0))
		return watch_fail("watch add needs --repo, --branch and "
				  "--testcase");
	if (o->server == NULL) {
		const char *env = getenv("STATBISECT_SERVER");

		o->server =
		    env != NULL && env[0] != '\0' ? env : WATCH_DEFAULT_SERVER;
	}
	if (o->token == NULL) {
		o->token = getenv("STATBISECT_TOKEN");
		if (o->token == NULL || o->token[0] == '\0')
			return watch_fail("no token: pass --token TOKEN or "
					  "set STATBISECT_TOKEN");
	}
	return -1;
}

/* Calls the server; answers the exit status of a failure, or -1 when
 * the reply has status `want`. */
static int watch_call(struct remote *remote, const char *method,
		      const char *path, json_t *body, long want,
		      struct remote_reply *reply)
{
	char *err = NULL, *message;
	int status;

	memset(reply, 0, sizeof(*reply));
	if (remote_call(remote, method, path, body, reply, &err) < 0) {
		status = watch_fail("%s", err != NULL ? err : "out of memory");
		free(err);
		return status;
	}
	if (reply->status == want)
		return -1;
	message = remote_error_message(reply);
	status = watch_fail("%s", message != NULL ? message : "failed");
	free(message);
	remote_reply_clear(reply);
	return status;
}

static void print_watch_line(json_t *w)
{
	json_t *v;
	size_t i;

	printf("%lld\t",
	       (long long)json_integer_value(json_object_get(w, "id")));
	put_text(text_of(w, "repo"));
	fputc('\t', stdout);
	put_text(text_of(w, "branch"));
	fputc('\t', stdout);
	json_array_foreach(json_object_get(w, "testcases"), i, v)
	{
		if (i > 0)
			fputc(',', stdout);
		put_text(json_string_value(v));
	}
	printf("\tevery %llds\t%s\n",
	       (long long)json_integer_value(json_object_get(w, "interval_s")),
	       json_is_true(json_object_get(w, "paused")) ? "paused"
							  : "watching");
}

static int watch_add(struct remote *remote, const struct watch_options *o)
{
	struct remote_reply reply;
	json_t *body;
	int status;

	body = json_pack("{s:s,s:s,s:O,s:b,s:b,s:O}", "repo", o->repo,
			 "branch", o->branch, "testcases", o->testcases,
			 "regressions_only", o->regressions_only, "paused",
			 o->paused, "notify", o->notify);
	if (body == NULL)
		return watch_fail("the arguments must be UTF-8 text");
	if (o->interval_s > 0)
		json_object_set_new(body, "interval_s",
				    json_integer(o->interval_s));
	status =
	    watch_call(remote, "POST", "/api/v1/watches", body, 201, &reply);
	json_decref(body);
	if (status >= 0)
		return status;
	if (o->json)
		json_dumpf(reply.json, stdout,
			   JSON_INDENT(2) | JSON_SORT_KEYS);
	else
		print_watch_line(reply.json);
	remote_reply_clear(&reply);
	return WATCH_EXIT_OK;
}

static void print_history(json_t *points)
{
	json_t *p;
	size_t i;

	printf(
	    "head          runs  median        outcome       job  subject\n");
	json_array_foreach(points, i, p)
	{
		json_t *median = json_object_get(p, "median");
		json_t *job = json_object_get(p, "job");

		printf(
		    "%.12s  %4lld  ", text_of(p, "sha"),
		    (long long)json_integer_value(json_object_get(p, "runs")));
		if (json_is_number(median))
			printf("%-12.6g  ", json_number_value(median));
		else
			printf("%-12s  ", "-");
		printf("%-12s  ", json_is_string(json_object_get(p, "outcome"))
				      ? text_of(p, "outcome")
				      : text_of(p, "state"));
		if (json_is_integer(job))
			printf("%4lld  ", (long long)json_integer_value(job));
		else
			printf("%4s  ", "-");
		put_text(text_of(p, "subject"));
		fputc('\n', stdout);
	}
}

static int watch_history(struct remote *remote, const struct watch_options *o)
{
	struct remote_reply reply;
	char path[512];
	char *name = NULL;
	int status;

	if (strspn(o->arg, "0123456789") != strlen(o->arg))
		return watch_fail("'%s' is not a watch id", o->arg);
	if (o->testcase_filter != NULL)
		name = curl_easy_escape(NULL, o->testcase_filter, 0);
	snprintf(path, sizeof(path),
		 "/api/v1/watches/%s/history?format=%s%s%s", o->arg,
		 o->csv ? "csv" : "json", name != NULL ? "&testcase=" : "",
		 name != NULL ? name : "");
	curl_free(name);
	status = watch_call(remote, "GET", path, NULL, 200, &reply);
	if (status >= 0)
		return status;
	if (o->csv)
		fwrite(reply.body, 1, reply.len, stdout);
	else if (o->json)
		json_dumpf(reply.json, stdout,
			   JSON_INDENT(2) | JSON_SORT_KEYS);
	else
		print_history(json_object_get(reply.json, "points"));
	remote_reply_clear(&reply);
	return WATCH_EXIT_OK;
}

/* list, show, pause, resume, delete and push. */
static int watch_simple(struct remote *remote, const struct watch_options *o)
{
	struct remote_reply reply;
	const char *method = "GET";
	char path[512], *escaped = NULL;
	json_t *body;
	long want = 200;
	int status;

	if (strcmp(o->sub, "list") == 0) {
		snprintf(path, sizeof(path), "/api/v1/watches");
	} else if (strcmp(o->sub, "push") == 0) {
		escaped = curl_easy_escape(NULL, o->arg, 0);
		snprintf(path, sizeof(path), "/api/v1/repos/%s/push",
			 escaped != NULL ? escaped : "");
		curl_free(escaped);
		method = "POST";
		want = 202;
	} else {
		if (strspn(o->arg, "0123456789") != strlen(o->arg))
			return watch_fail("'%s' is not a watch id", o->arg);
		snprintf(path, sizeof(path), "/api/v1/watches/%s%s%s", o->arg,
			 strcmp(o->sub, "pause") == 0 ||
				 strcmp(o->sub, "resume") == 0
			     ? "/"
			     : "",
			 strcmp(o->sub, "pause") == 0 ||
				 strcmp(o->sub, "resume") == 0
			     ? o->sub
			     : "");
		if (strcmp(o->sub, "delete") == 0)
			method = "DELETE";
		else if (strcmp(o->sub, "show") != 0)
			method = "POST";
	}
	body = strcmp(method, "POST") == 0 ? json_object() : NULL;
	status = watch_call(remote, method, path, body, want, &reply);
	json_decref(body);
	if (status >= 0)
		return status;
	if (o->json || strcmp(o->sub, "show") == 0) {
		json_dumpf(reply.json, stdout,
			   JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
	} else if (strcmp(o->sub, "list") == 0) {
		json_t *w;
		size_t i;

		json_array_foreach(json_object_get(reply.json, "watches"), i,
				   w) print_watch_line(w);
	} else if (strcmp(o->sub, "push") == 0) {
		printf("%lld watch(es) of %s will fetch now\n",
		       (long long)json_integer_value(
			   json_object_get(reply.json, "watches")),
		       o->arg);
	} else if (strcmp(o->sub, "delete") == 0) {
		printf("watch %s deleted\n", o->arg);
	} else {
		print_watch_line(reply.json);
	}
	remote_reply_clear(&reply);
	return WATCH_EXIT_OK;
}

int watch_main(int argc, char **argv)
{
	struct watch_options o = {0};
	struct remote *remote = NULL;
	char *err = NULL;
	int status;

	o.testcases = json_array();
	o.notify = json_array();
	status = parse_watch_args(&o, argc, argv);
	if (status >= 0)
		goto out;
	if (strcmp(o.sub, "add") != 0 && strcmp(o.sub, "list") != 0 &&
	    strcmp(o.sub, "show") != 0 && strcmp(o.sub, "pause") != 0 &&
	    strcmp(o.sub, "resume") != 0 && strcmp(o.sub, "delete") != 0 &&
	    strcmp(o.sub, "history") != 0 && strcmp(o.sub, "push") != 0) {
		status = watch_fail("unknown watch command '%s' (see "
				    "statbisect watch --help)",
				    o.sub);
		goto out;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		status = watch_fail("cannot initialise libcurl");
		goto out;
	}
	if (remote_new(&remote, o.server, o.token, &err) < 0)
		status = watch_fail("%s", err != NULL ? err : "out of memory");
	else if (strcmp(o.sub, "add") == 0)
		status = watch_add(remote, &o);
	else if (strcmp(o.sub, "history") == 0)
		status = watch_history(remote, &o);
	else
		status = watch_simple(remote, &o);
	remote_free(remote);
	curl_global_cleanup();
out:
	free(err);
	json_decref(o.testcases);
	json_decref(o.notify);
	return status;
}
