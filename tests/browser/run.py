#!/usr/bin/python3
"""The browser test's real parts: a private PostgreSQL cluster, the server
and a worker (tests/integration/harness.py), and a git repository with a
regression planted at a random commit.  Runs test.mjs (headless Chromium
through playwright-core) against them, then stops everything and prints
'browser: N passed, N failed'.

Usage: tests/browser/run.py [--keep]
"""
import os
import random
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402


def watched_branch(svc, root):
    """A watched repository whose branch gets one push with a regression
    in the middle; waits until the watcher bisected it.  Returns the
    watch's id and the culprit."""
    repo, shas = harness.bench_repo(os.path.join(root, "watched-repo"), 1)
    svc.api.ok("POST", "/api/v1/repos", {"name": "watched-repo", "url": repo.path,
                                         "web_url": "https://git.example.org/w/{sha}"})
    svc.api.ok("POST", "/api/v1/testcases", {
        "name": "watch-tc", "build": "sh build.sh", "run": "./bench",
        "kpi": "bench.score", "higher_is_better": True, "min_change_pct": 2.0})
    watch = svc.api.ok("POST", "/api/v1/watches", {
        "repo": "watched-repo", "branch": "main", "testcases": ["watch-tc"],
        "interval_s": 3600}, expect=(201,))
    wid = watch["id"]

    def state():
        return svc.api.ok("GET", "/api/v1/watches/%d" % wid)

    deadline = time.time() + 60
    while not state()["heads"] and time.time() < deadline:
        time.sleep(0.2)
    culprit = None
    for i in range(3):
        if i == 1:
            repo.write("mean", "900.0\n")
        repo.write("watched%d.txt" % i, "change %d\n" % i)
        sha = repo.commit("net: watched change %d" % i)
        culprit = sha if i == 1 else culprit
    svc.api.ok("POST", "/api/v1/repos/watched-repo/push", {}, expect=(202,))
    deadline = time.time() + 240
    while time.time() < deadline:
        jobs = [j for j in state()["jobs"] if j["role"] == "bisect"]
        if jobs and jobs[0]["state"] == "done":
            return wid, culprit
        time.sleep(0.5)
    raise RuntimeError("the watcher did not bisect the push: " + svc.log("server"))


def main():
    keep = "--keep" in sys.argv
    root = harness.workdir()
    out = os.path.join(HERE, "out")
    os.makedirs(out, exist_ok=True)
    passed = failed = 0
    env = None
    try:
        env = harness.Env(root)
        svc = env.svc
        commits = 40
        culprit = random.randint(5, commits - 3)
        repo, shas = harness.bench_repo(os.path.join(root, "browser-repo"), commits,
                                        {culprit: 950.0})
        # Slow runs, so the job page is seen while the job runs.
        svc.register("browser-repo", repo, "browser-tc", run="sleep 0.3 && ./bench")
        watch_id, watch_culprit = watched_branch(svc, root)
        test_env = dict(os.environ, SB_WATCH_ID=str(watch_id),
                        SB_WATCH_TESTCASE="watch-tc", SB_WATCH_CULPRIT=watch_culprit,
                        SB_URL=svc.url, SB_ADMIN_TOKEN=harness.ADMIN,
                        SB_SUBMIT_TOKEN=svc.submit_token, SB_REPO="browser-repo",
                        SB_TESTCASE="browser-tc", SB_GOOD=shas[0], SB_BAD=shas[-1],
                        SB_CULPRIT=shas[culprit], SB_OUT=out)
        print("browser: culprit planted at %d of %d (%s)" % (culprit, commits,
                                                             shas[culprit][:12]), flush=True)
        proc = subprocess.run(["node", os.path.join(HERE, "test.mjs")], env=test_env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=600)
        for line in proc.stdout.splitlines():
            print(line, flush=True)
            if line.startswith("PASS "):
                passed += 1
            elif line.startswith("FAIL "):
                failed += 1
        if proc.returncode != 0 and failed == 0:
            print("FAIL test.mjs exited %d" % proc.returncode)
            failed += 1
        if passed + failed == 0:
            failed += 1
    except Exception:
        failed += 1
        print("FAIL setup")
        traceback.print_exc()
    finally:
        if env is not None:
            codes = env.close()
            if any(c != 0 for c in codes):
                print("FAIL processes exited with %r on SIGTERM" % codes)
                failed += 1
        if keep or failed:
            print("kept", root)
        else:
            harness.rmtree(root)
    print("browser: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
