#!/usr/bin/python3
"""Builds per job, measured on the real worker (no simulator).

Starts a private PostgreSQL cluster, the server and one worker per variant
(tests/integration/harness.py), bisects the same generated ranges with each
variant, and counts the builds the worker really did: the build command
appends "$STATBISECT_JOB $STATBISECT_COMMIT" to a ledger before it builds,
so the count does not depend on what the worker reports.  Each range has a
planted 5% regression at a random commit (the harness's C benchmark, 1%
noise); each job is followed by a rerun of the first job, which a worker
that keeps its builds finishes without building.

Variants: `new` (this tree's worker, default build-cache budget), `new-0`
(--build-cache-max 0: one build tree per configuration, rebuilt in place),
and with --old-rev REV `old`, the worker of revision REV built in a
temporary git worktree.

    bench/worker_builds.py [--commits 48] [--jobs 4] [--seed 1]
                           [--build-seconds 0.2] [--old-rev REV] [--json]

Prints one row per variant: jobs, commits tested, builds, commits built
more than once in their job, the most builds of one commit in one job,
seconds spent building (builds x --build-seconds, the modelled cost of a
build), the mean job time, and the builds of the rerun.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402


def build_old_worker(rev, tmp):
    """bin/statbisect-worker of revision `rev`, built in a worktree."""
    tree = os.path.join(tmp, "old-tree")
    harness.sh(["git", "-C", ROOT, "worktree", "add", "--detach", tree, rev])
    try:
        harness.sh(["make", "-C", tree, "-j2", "bin/statbisect-worker"])
        dest = os.path.join(tmp, "statbisect-worker-old")
        harness.sh(["cp", os.path.join(tree, "bin", "statbisect-worker"), dest])
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return dest


def run_variant(root, cluster, label, worker, extra, ranges, build_seconds):
    svc = harness.Service(root, cluster, "v-" + label, worker=False,
                          conninfo=cluster.database("v_" + label.replace("-", "_")))
    ledger = os.path.join(root, label + "-ledger.txt")
    open(ledger, "w").close()
    try:
        svc._spawn([worker, "--server", svc.url, "--token", svc.worker_token,
                    "--work-dir", os.path.join(root, label + "-work"), "--name", label]
                   + extra, svc.name + "-worker.log")
        build = ('echo "$STATBISECT_JOB $STATBISECT_COMMIT" >> "%s"; sleep %g; '
                 'sh build.sh' % (ledger, build_seconds))
        jobs = []
        for k, (repo, shas, culprit) in enumerate(ranges):
            name = "r%d" % k
            svc.register(name, repo, name + "-tc", build=build)
            t0 = time.time()
            job = svc.submit({"repo": name, "testcase": name + "-tc",
                              "good": shas[0], "bad": shas[-1]})
            done = svc.wait(job["id"], timeout=900)
            jobs.append((done, time.time() - t0, shas[culprit]))
        first = ranges[0]
        rerun = svc.wait(svc.submit({"repo": "r0", "testcase": "r0-tc",
                                     "good": first[1][0], "bad": first[1][-1]})["id"],
                         timeout=900)
    finally:
        svc.stop()
    with open(ledger) as f:
        lines = [tuple(line.split()) for line in f if line.strip()]
    row = {"variant": label, "jobs": len(jobs), "tested": 0, "builds": 0,
           "twice": 0, "most": 0, "correct": 0, "job_s": 0.0,
           "api_builds": 0, "rerun_builds": 0}
    for done, seconds, culprit in jobs:
        mine = [c for j, c in lines if int(j) == done["id"]]
        row["tested"] += done["commits_tested"]
        row["builds"] += len(mine)
        row["twice"] += sum(1 for c in set(mine) if mine.count(c) > 1)
        row["most"] = max([row["most"]] + [mine.count(c) for c in set(mine)])
        row["correct"] += done["culprit"] == culprit
        row["job_s"] += seconds / len(jobs)
        row["api_builds"] += done.get("builds", 0)
    row["rerun_builds"] = sum(1 for j, c in lines if int(j) == rerun["id"])
    row["build_s"] = row["builds"] * build_seconds
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=48)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build-seconds", type=float, default=0.2)
    ap.add_argument("--old-rev")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    root = harness.workdir()
    rng = random.Random(a.seed)
    cluster = None
    rows = []
    try:
        variants = []
        if a.old_rev:
            variants.append(("old", build_old_worker(a.old_rev, root), []))
        worker = os.path.join(ROOT, "bin", "statbisect-worker")
        variants += [("new", worker, []), ("new-0", worker, ["--build-cache-max", "0"])]
        ranges = []
        for k in range(a.jobs):
            culprit = rng.randint(2, a.commits - 1)
            repo, shas = harness.bench_repo(os.path.join(root, "range%d" % k), a.commits,
                                            {culprit: 950.0}, owner="bench%d" % k)
            ranges.append((repo, shas, culprit))
        cluster = harness.Cluster(root)
        for label, worker, extra in variants:
            rows.append(run_variant(root, cluster, label, worker, extra, ranges,
                                    a.build_seconds))
            print("done: %s" % label, file=sys.stderr, flush=True)
    finally:
        if cluster is not None:
            cluster.stop()
        harness.rmtree(root)
    if a.json:
        print(json.dumps({"commits": a.commits, "jobs": a.jobs, "seed": a.seed,
                          "build_seconds": a.build_seconds, "rows": rows}, indent=1))
        return 0
    print("%d jobs of %d commits (seed %d), a build modelled as %g s"
          % (a.jobs, a.commits, a.seed, a.build_seconds))
    print("%-8s %7s %7s %7s %6s %8s %8s %7s %7s %6s" % (
        "variant", "culprit", "tested", "builds", "twice", "max/com", "build_s",
        "job_s", "api", "rerun"))
    for r in rows:
        print("%-8s %3d/%-3d %7d %7d %6d %8d %8.1f %7.1f %7d %6d" % (
            r["variant"], r["correct"], r["jobs"], r["tested"], r["builds"], r["twice"],
            r["most"], r["build_s"], r["job_s"], r["api_builds"], r["rerun_builds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
