#!/usr/bin/python3
"""The demo behind `make demo`: generates a git repository of a small C
benchmark whose real run time grows by about 5% at one commit chosen at
random, registers it and a testcase through the REST API, bisects the whole
range, and prints the culprit and the emailed report.  Exits 0 when the
culprit found is the planted commit."""
import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request

BENCH_C = r'''/*
 * The demo benchmark: WORK rounds of xorshift per operation.  It times
 * REPEAT passes and reports the fastest, as careful benchmarks do, so that
 * a burst of load on a shared machine does not become the result.
 */
#include <stdio.h>
#include <time.h>
#include "work.h"

#define OPS 100000L
#define REPEAT 7

static volatile unsigned long long sink;

static double one_pass(void)
{
	struct timespec a, b;
	unsigned long long x = 88172645463325252ULL;
	long i;
	int k;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < OPS; i++) {
		for (k = 0; k < WORK; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	}
	sink = x;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
}

int main(void)
{
	double best = one_pass(), t;
	int r;

	for (r = 1; r < REPEAT; r++) {
		t = one_pass();
		if (t < best)
			best = t;
	}
	printf("demo.ops_per_sec: %.1f\n", OPS / best);
	printf("demo.best_pass_s: %.6f\n", best);
	return 0;
}
'''


def git(repo, *args, env=None):
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def make_repo(path, commits, planted, rng):
    os.makedirs(path)
    env = dict(os.environ, GIT_AUTHOR_NAME="Demo Developer",
               GIT_AUTHOR_EMAIL="dev@example.org",
               GIT_COMMITTER_NAME="Demo Developer",
               GIT_COMMITTER_EMAIL="dev@example.org")
    git(path, "-c", "init.defaultBranch=main", "init", "-q", ".")
    with open(os.path.join(path, "bench.c"), "w") as f:
        f.write(BENCH_C)
    with open(os.path.join(path, "work.h"), "w") as f:
        f.write("#define WORK 100\n")
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "-m", "bench: add the demo benchmark", env=env)
    areas = ["net", "mm", "sched", "fs", "lib", "docs"]
    shas = [git(path, "rev-parse", "HEAD")]
    for i in range(1, commits + 1):
        if i == planted:
            # Five more rounds of work per operation: about 5% slower.
            with open(os.path.join(path, "work.h"), "w") as f:
                f.write("#define WORK 105\n")
            subject = "lib: harden the mixing step"
        else:
            name = "notes/%s.txt" % areas[i % len(areas)]
            os.makedirs(os.path.join(path, "notes"), exist_ok=True)
            with open(os.path.join(path, name), "a") as f:
                f.write("note %d: %08x\n" % (i, rng.getrandbits(32)))
            subject = "%s: tidy up, step %d" % (areas[i % len(areas)], i)
        git(path, "add", "-A", env=env)
        git(path, "commit", "-q", "-m", subject, env=env)
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


def api(url, method, path, body=None):
    req = urllib.request.Request(url + path, method=method,
                                 data=json.dumps(body).encode() if body else None)
    req.add_header("Authorization", "Bearer " + os.environ["STATBISECT_ADMIN_TOKEN"])
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            text = r.read().decode()
            return json.loads(text) if "json" in r.headers.get("Content-Type", "") else text
    except urllib.error.HTTPError as e:
        sys.exit("demo: %s %s failed: %s %s" % (method, path, e.code, e.read().decode()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--var", default="var")
    ap.add_argument("--commits", type=int, default=240)
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    planted = rng.randint(2, a.commits - 1)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.abspath(os.path.join(a.var, "demo", "repo-" + stamp))
    print("demo: generating %d commits in %s" % (a.commits + 1, path), flush=True)
    shas = make_repo(path, a.commits, planted, rng)
    print("demo: planted the slowdown at commit %d of %d: %s" %
          (planted, a.commits, shas[planted]), flush=True)
    name = "demo-" + stamp
    api(a.url, "POST", "/api/v1/repos", {"name": name, "url": path})
    api(a.url, "POST", "/api/v1/testcases", {
        "name": name, "build": "cc -O2 -o demo-bench bench.c", "run": "./demo-bench",
        "kpi": "demo.ops_per_sec", "higher_is_better": True, "min_change_pct": 2.0,
        "runs_min": 5, "runs_max": 40, "timeout_s": 60,
        "params": {"ops": 100000, "repeat": 7}})
    job = api(a.url, "POST", "/api/v1/jobs", {"repo": name, "testcase": name,
                                              "good": shas[0], "bad": "main",
                                              "notify": ["you@example.org"]})
    print("demo: job %d submitted: %d candidates" % (job["id"], job["candidates"]), flush=True)
    seen = -1
    while job["state"] not in ("done", "failed", "cancelled"):
        time.sleep(1)
        job = api(a.url, "GET", "/api/v1/jobs/%d" % job["id"])
        if job["commits_tested"] != seen:
            seen = job["commits_tested"]
            print("demo: %d commits tested, %d runs, culprit in %s..%s" % (
                seen, job["runs"], job["range"]["after"][:10],
                job["range"]["through"][:10]), flush=True)
    print("demo: verdict %s, culprit %s" % (job["verdict"], job["culprit"]))
    print()
    print(api(a.url, "GET", "/api/v1/jobs/%d/report" % job["id"]))
    if job["culprit"] == shas[planted]:
        print("demo: the culprit is the planted commit %s" % shas[planted][:12])
        return 0
    print("demo: MISSED: planted %s, found %s" % (shas[planted][:12], job["culprit"]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
