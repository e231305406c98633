"""Where the benchmark lives (issue 15): a testcase names the benchmark's
own repository and revision; the worker fetches it once, checks it out
beside the tree, exposes it as $STATBISECT_BENCH_DIR to the build and the
runs, keys builds on the bench commit, and the job and its report say
which bench commit ran and how to get it."""
import os

import harness
from harness import Repo, bench_repo, check, eq, test
from test_web import Browser

P = "benchdir-"

# The benchmark's runner: the tree's build made ./bench; the version the
# build copied from the bench checkout says which bench commit the build
# saw, the one read at run time which one the run saw.
RUN_SH = """#!/bin/sh
set -e
./bench
echo "bench.built_with: $(cat bench-version)"
echo "bench.run_with: $(cat "$STATBISECT_BENCH_DIR/version")"
"""


def make_bench(path, version):
    bench = Repo(path)
    bench.write("run.sh", RUN_SH)
    os.chmod(os.path.join(path, "run.sh"), 0o755)
    bench.write("version", "%d\n" % version)
    return bench, bench.commit("bench: runner version %d" % version)


def runs_of(svc, job_id):
    return svc.api.ok("GET", "/api/v1/jobs/%d/runs" % job_id,
                      token=svc.read_token)["runs"]


def built(ledger):
    with open(ledger) as f:
        return [line.split() for line in f.read().splitlines()]


@test
def a_job_runs_the_benchmark_from_its_own_repository(env):
    svc = env.svc
    culprit = harness.rand_index(3, 9)
    repo, shas = bench_repo(os.path.join(env.root, P + "tree"), 12,
                            {culprit: 950.0}, owner=__name__)
    bench, v1 = make_bench(os.path.join(env.root, P + "bench"), 1)
    ledger = os.path.join(env.root, P + "builds.txt")
    svc.register(P + "tree", repo, P + "tc",
                 build='cp "$STATBISECT_BENCH_DIR/version" bench-version && '
                       'echo "$STATBISECT_COMMIT $(cat bench-version)" >> "%s" && '
                       'sh build.sh' % ledger,
                 run='"$STATBISECT_BENCH_DIR/run.sh"',
                 bench_repo=bench.path, bench_rev="main")
    tc = svc.api.ok("GET", "/api/v1/testcases/" + P + "tc")
    eq((tc["bench_repo"], tc["bench_rev"]), (bench.path, "main"), "testcase's bench")
    body = {"repo": P + "tree", "testcase": P + "tc", "good": shas[0],
            "bad": shas[-1]}

    first = svc.wait(svc.submit(body)["id"])
    eq((first["state"], first["verdict"], first["culprit"]),
       ("done", "regression", shas[culprit]), "the bench script finds the culprit")
    eq(first["bench"], {"repo": bench.path, "rev": "main", "commit": v1},
       "the job records the bench commit it ran")
    runs = runs_of(svc, first["id"])
    check(runs and all(r["metrics"].get("bench.run_with") == 1 and
                       r["metrics"].get("bench.built_with") == 1 for r in runs),
          "every run used bench version 1: %r" % [r["metrics"] for r in runs][:3])
    report = svc.api.call("GET", "/api/v1/jobs/%d/report" % first["id"],
                          token=svc.read_token)[1].replace("\r\n", "\n")
    check("\tgit clone %s bench && git -C bench checkout %s\n" % (bench.path, v1)
          in report, "the reproduce section fetches the bench:\n" + report)
    check("\texport STATBISECT_BENCH_DIR=$PWD/bench\n" in report,
          "the reproduce section exports the bench dir:\n" + report)
    check(report.index("STATBISECT_BENCH_DIR") < report.index("\tgit clone " + repo.path),
          "the bench comes before the tree's clone and cd")
    _, _, page = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % first["id"])
    check(v1 in page and 'id="bench"' in page, "the job page names the bench commit")
    tested_first = {c["commit"] for c in first["commits"]}
    eq(sorted({b for _, b in built(ledger)}), ["1"], "builds of job 1 saw bench 1")

    # The bench moves on; the next job fetches it, runs the new commit and
    # builds again (the bench commit is part of the build's key).
    bench.write("version", "2\n")
    v2 = bench.commit("bench: runner version 2")
    second = svc.wait(svc.submit(body)["id"])
    eq((second["state"], second["culprit"]), ("done", shas[culprit]), "job 2")
    eq(second["bench"]["commit"], v2, "job 2 runs the new bench commit")
    runs = runs_of(svc, second["id"])
    check(runs and all(r["metrics"].get("bench.run_with") == 2 and
                       r["metrics"].get("bench.built_with") == 2 for r in runs),
          "every run of job 2 used bench 2, built with it: %r"
          % [r["metrics"] for r in runs][:3])
    rebuilt = {c for c, b in built(ledger) if b == "2"}
    eq(rebuilt, {c["commit"] for c in second["commits"]},
       "job 2 built every commit it tested again")
    check(tested_first & rebuilt, "commits built for job 1 were built again")
    eq(second.get("builds"), len(rebuilt), "job 2's builds")


@test
def a_missing_bench_revision_ends_the_job_with_a_clear_message(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "tree2"), 4, owner=__name__)
    bench, _ = make_bench(os.path.join(env.root, P + "bench2"), 1)
    svc.register(P + "tree2", repo, P + "norev", run='"$STATBISECT_BENCH_DIR/run.sh"',
                 bench_repo=bench.path, bench_rev="no-such-branch")
    job = svc.wait(svc.submit({"repo": P + "tree2", "testcase": P + "norev",
                               "good": shas[0], "bad": shas[-1]})["id"])
    eq(job["state"], "failed", "the job ends")
    eq(job["message"], "revision 'no-such-branch' not found in benchmark "
       "repository '%s'" % bench.path, "the message names the repository and revision")
    eq(job["bench"]["commit"], None, "no bench commit was run")

    # Without a revision the job takes the bench repository's HEAD.
    bench.write("version", "7\n")
    head = bench.commit("bench: version 7")
    svc.api.ok("PATCH", "/api/v1/testcases/" + P + "norev", {"bench_rev": None})
    job = svc.wait(svc.submit({"repo": P + "tree2", "testcase": P + "norev",
                               "good": shas[0], "bad": shas[-1]})["id"])
    eq((job["state"], job["bench"]), ("done", {"repo": bench.path, "rev": None,
                                                "commit": head}), "HEAD of the bench")

    # A repository that cannot be fetched, with credentials: they never show.
    svc.api.ok("POST", "/api/v1/testcases", {
        "name": P + "gone", "build": "sh build.sh", "run": "./bench",
        "kpi": "bench.score", "higher_is_better": True,
        "bench_repo": "https://robot:s3cret@127.0.0.1:1/bench.git"})
    shown = svc.api.ok("GET", "/api/v1/testcases/" + P + "gone")
    eq(shown["bench_repo"], "https://robot:***@127.0.0.1:1/bench.git", "password masked")
    job = svc.wait(svc.submit({"repo": P + "tree2", "testcase": P + "gone",
                               "good": shas[0], "bad": shas[-1]})["id"])
    eq(job["state"], "failed", "an unreachable bench repository ends the job")
    check(job["message"].startswith("cannot fetch benchmark repository "
                                    "'https://robot:***@127.0.0.1:1/bench.git'"),
          "message: %r" % job["message"])
    check("s3cret" not in str(job), "no password in the job")
    # Sending the masked URL back keeps the stored one.
    svc.api.ok("PATCH", "/api/v1/testcases/" + P + "gone",
               {"bench_repo": shown["bench_repo"], "bench_rev": "main"})
    status, rows = svc.api.call("GET", "/api/v1/testcases/" + P + "gone")
    eq((status, rows["bench_rev"], rows["bench_repo"]),
       (200, "main", shown["bench_repo"]), "PATCH with the masked URL")
    check("s3cret" in svc.psql("SELECT bench_repo FROM testcases WHERE name = '%sgone'" % P),
          "the stored URL keeps its password")


@test
def bad_bench_fields_are_refused(env):
    svc = env.svc
    base = {"name": P + "bad", "build": "", "run": "./bench", "kpi": "k",
            "higher_is_better": True}
    for extra, field in [({"bench_repo": ""}, "bench_repo"),
                         ({"bench_repo": "--upload-pack=evil"}, "bench_repo"),
                         ({"bench_repo": "https://x/\ny"}, "bench_repo"),
                         ({"bench_repo": 5}, "bench_repo"),
                         ({"bench_repo": "/srv/b", "bench_rev": "-x"}, "bench_rev"),
                         ({"bench_repo": "/srv/b", "bench_rev": "a b"}, "bench_rev"),
                         ({"bench_repo": "/srv/b", "bench_rev": ""}, "bench_rev"),
                         ({"bench_rev": "main"}, "bench_rev")]:
        status, reply = svc.api.call("POST", "/api/v1/testcases", dict(base, **extra))
        eq((status, reply["error"]["field"] if status == 400 else reply),
           (400, field), "refused: %r" % extra)
    status, _ = svc.api.call("GET", "/api/v1/testcases/" + P + "bad")
    eq(status, 404, "nothing was stored")
    svc.api.ok("POST", "/api/v1/testcases", base)
    status, reply = svc.api.call("PATCH", "/api/v1/testcases/" + P + "bad",
                                 {"bench_repo": "-bad"})
    eq((status, reply["error"]["field"]), (400, "bench_repo"), "PATCH refused")
    eq(svc.api.ok("GET", "/api/v1/testcases/" + P + "bad")["bench_repo"], None,
       "the refused PATCH changed nothing")


@test
def admin_testcase_pages_take_the_benchmark_repository(env):
    from test_web import error_of, field
    svc = env.svc
    b = Browser(svc.url).sign_in(harness.ADMIN)
    form = {"csrf": b.csrf, "name": P + "web", "build": "", "run": "./bench",
            "kpi": "k", "higher_is_better": "true",
            "bench_repo": "-oops", "bench_rev": "stable"}
    status, _, page = b.post("/admin/testcases", form)
    eq(status, 400, "a bench repository with a leading '-'")
    check(error_of(page, "bench_repo"), "error next to the bench repository")
    eq((field(page, "bench_repo"), field(page, "bench_rev")), ("-oops", "stable"),
       "values kept after the error")
    url = "https://robot:s3cret@git.example/bench.git"
    status, hdrs, _ = b.post("/admin/testcases", dict(form, bench_repo=url))
    eq((status, hdrs.get("Location")), (303, "/admin/testcases"), "created")
    t = svc.api.ok("GET", "/api/v1/testcases/%sweb" % P)
    eq((t["bench_repo"], t["bench_rev"]),
       ("https://robot:***@git.example/bench.git", "stable"), "stored, shown masked")
    status, _, page = b.get("/admin/testcases/%sweb/edit" % P)
    eq((status, field(page, "bench_repo"), field(page, "bench_rev")),
       (200, t["bench_repo"], "stable"), "edit page shows the masked URL")
    check("s3cret" not in page, "no password on the edit page")
    # Saved unchanged, the masked URL keeps the stored one; an empty
    # revision means the repository's HEAD.
    status, _, _ = b.post("/admin/testcases/%sweb/edit" % P,
                          {"csrf": b.csrf, "build": "", "run": "./bench", "kpi": "k",
                           "higher_is_better": "true", "bench_repo": t["bench_repo"],
                           "bench_rev": ""})
    eq(status, 303, "saved")
    eq(svc.api.ok("GET", "/api/v1/testcases/%sweb" % P)["bench_rev"], None, "HEAD")
    check(url in svc.psql("SELECT bench_repo FROM testcases WHERE name = '%sweb'" % P),
          "the stored URL keeps its password")
