"""The worker's build cache (issue 10): a build is reused only for the
same build inputs (commit, build command, testcase parameters, worker
environment), several builds are kept, so that no commit is built twice
in a job, and the job says how many builds it cost."""
import os

import harness
from harness import bench_repo, check, eq, test

P = "builds-"


def kpi_values(job):
    return [v for c in job["commits"] for v in c["runs"] + c["confirm_runs"]]


@test
def a_build_of_one_testcase_is_not_measured_for_another(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "two"), 10, owner=__name__)
    # A: the repository's own build, mean 1000 at every commit.
    svc.register(P + "two", repo, P + "own")
    # B: another build of the same commits, mean 2000.
    svc.api.ok("POST", "/api/v1/testcases", {
        "name": P + "other", "build": "cc -O2 -DMEAN=2000.0 -o bench bench.c -lm",
        "run": "./bench", "kpi": "bench.score", "higher_is_better": True,
        "min_change_pct": 1.0})
    # C: a build that always fails.
    svc.api.ok("POST", "/api/v1/testcases", {
        "name": P + "false", "build": "false", "run": "./bench",
        "kpi": "bench.score", "higher_is_better": True, "min_change_pct": 1.0})
    a = svc.wait(svc.submit({"repo": P + "two", "testcase": P + "own",
                             "good": shas[0], "bad": shas[-1]})["id"])
    eq((a["state"], a["verdict"]), ("done", "no-change"), "job A")
    check(a["runs"] > 0 and all(900 < v < 1100 for v in kpi_values(a)),
          "job A measured its own build (mean 1000): %r" % kpi_values(a))

    b = svc.wait(svc.submit({"repo": P + "two", "testcase": P + "other",
                             "good": shas[0], "bad": shas[-1]})["id"])
    eq((b["state"], b["verdict"]), ("done", "no-change"), "job B")
    values = kpi_values(b)
    check(values and all(1900 < v < 2100 for v in values),
          "job B measured its own build (mean 2000), not A's: %r" % values)

    c = svc.wait(svc.submit({"repo": P + "two", "testcase": P + "false",
                             "good": shas[0], "bad": shas[-1]})["id"])
    eq(kpi_values(c), [], "no run of a testcase whose build always fails")
    check(c["commits"] and all(x["build_failed"] for x in c["commits"]),
          "every commit job C tested failed its own build: %r" % c["commits"])
    check(c["state"] == "failed" or c["verdict"] != "no-change",
          "job C is not a verdict on A's binaries: %r" % (c,))


@test
def no_commit_is_built_twice_in_a_job(env):
    svc = env.svc
    culprit = harness.rand_index(8, 30)
    repo, shas = bench_repo(os.path.join(env.root, P + "count"), 40, {culprit: 950.0},
                            owner=__name__)
    ledger = os.path.join(env.root, P + "count-builds.txt")
    svc.register(P + "count", repo, P + "count-tc",
                 build='echo "$STATBISECT_COMMIT" >> "%s"; sh build.sh' % ledger)
    body = {"repo": P + "count", "testcase": P + "count-tc", "good": shas[0],
            "bad": shas[-1]}
    done = svc.wait(svc.submit(body)["id"])
    eq((done["verdict"], done["culprit"]), ("regression", shas[culprit]), "verdict")
    with open(ledger) as f:
        built = f.read().split()
    tested = {c["commit"] for c in done["commits"]}
    dups = sorted({s[:10] for s in built if built.count(s) > 1})
    eq(dups, [], "commits built more than once in the job")
    eq(set(built), tested, "the commits built are the commits tested")
    eq(done.get("builds"), len(tested), "the job's builds")

    # The same job again: every commit the first job tested is in the cache.
    # Noise may lead the rerun's search through a commit the first one did
    # not test; only those are built.
    again = svc.wait(svc.submit(body)["id"])
    eq(again["culprit"], shas[culprit], "culprit of the rerun")
    fresh = {c["commit"] for c in again["commits"]} - tested
    with open(ledger) as f:
        rebuilt = f.read().split()[len(built):]
    eq(sorted(rebuilt), sorted(fresh), "the rerun built only commits new to it")
    eq(again.get("builds"), len(fresh), "the rerun's builds")

    # Build trees deleted behind the worker's back are built again.
    builds = os.path.join(env.root, "main-box-1", "builds")
    for name in os.listdir(builds):
        if name.isdigit():
            harness.rmtree(os.path.join(builds, name))
    third = svc.wait(svc.submit(body)["id"])
    eq((third["state"], third["culprit"]), ("done", shas[culprit]),
       "a job after the trees were deleted")
    eq(third.get("builds"), len({c["commit"] for c in third["commits"]}),
       "its builds")


@test
def uploads_say_how_many_builds_they_cost(env):
    # A database of its own and no worker: the test is the worker.
    svc = harness.Service(env.root, env.cluster, "builds-up", worker=False,
                          conninfo=env.cluster.database("builds_up"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, P + "up"), 4, owner=__name__)
        svc.register(P + "up", repo, P + "up-tc", params={"threads": 8, "mode": "fast"})
        job = svc.submit({"repo": P + "up", "testcase": P + "up-tc", "good": shas[0],
                          "bad": shas[-1]})
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["builds"], 0,
           "builds of a job not started")
        w = harness.Api(svc.url, svc.worker_token)
        wid = w.ok("POST", "/api/v1/workers", {"name": "manual", "machine": "box"})["id"]
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        eq(task["testcase"]["params"], {"threads": 8, "mode": "fast"},
           "the task carries the testcase's parameters (a build input)")
        eq(len(task["commits"]), 2, "the endpoints in one task")
        run = {"exit_code": 0, "wall_s": 0.1, "metrics": {"bench.score": 1000.0}}
        runs = [dict(run, commit_index=c["index"]) for c in task["commits"]
                for _ in range(c["runs"])]
        path = "/api/v1/tasks/%d/result" % task["id"]
        for builds in (-1, 3, "2", 1.5, True):
            status, reply = w.call("POST", path, {"lease": task["lease"], "runs": runs,
                                                  "builds": builds})
            eq((status, reply["error"]["code"]), (400, "invalid_field"),
               "builds %r refused" % (builds,))
        eq(svc.psql("select count(*) from runs where job_id = %d" % job["id"]), "0",
           "a refused upload stores nothing")
        eq(w.call("POST", path, {"lease": task["lease"], "runs": runs, "builds": 2})[0],
           200, "upload with builds")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["builds"], 2,
           "the job's builds")
        # The endpoints are the same: the commits between are probed
        # (opposite changes could cancel) before the job ends.
        for _ in range(10):
            if svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["state"] == "done":
                break
            probe = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
            eq(probe["job"], job["id"], "a probe of the first job")
            eq(w.call("POST", "/api/v1/tasks/%d/result" % probe["id"],
                      {"lease": probe["lease"], "builds": 0,
                       "runs": [dict(run, commit_index=c["index"])
                                for c in probe["commits"] for _ in range(c["runs"])]})[0],
               200, "probe upload")
        # An older worker says nothing: its task counts no build.
        older = svc.submit({"repo": P + "up", "testcase": P + "up-tc", "good": shas[1],
                            "bad": shas[-1]})
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        eq(task["job"], older["id"], "a task of the second job")
        runs = [dict(run, commit_index=c["index"]) for c in task["commits"]
                for _ in range(c["runs"])]
        eq(w.call("POST", "/api/v1/tasks/%d/result" % task["id"],
                  {"lease": task["lease"], "runs": runs})[0], 200, "upload without builds")
        eq(svc.psql("select builds is null from tasks where id = %d" % task["id"]), "t",
           "unknown, not 0")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % older["id"])["builds"], 0,
           "the builds of a job whose uploads did not say")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["builds"], 2,
           "the first job's builds")
    finally:
        svc.stop()
