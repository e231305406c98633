"""What happened to each tested commit, and why a job ended as it did:
every commit's outcome (built, build failed, run crashed, timed out,
printed no KPI, ran) in the job, a job whose KPI no run prints failing at
once with the metrics the runs did print, and the build log and last run
output of each commit served by GET /api/v1/jobs/{id}/commits/{sha}/log."""
import glob
import os
import time

from harness import bench_repo, check, eq, test
from test_web import Browser

P = "causes-"


def mails_about(svc, sha):
    """The bodies of the reports in the Maildir that name commit `sha`."""
    found = []
    for path in glob.glob(os.path.join(svc.mail, "new", "*")):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if sha[:10] in text:
            found.append(text)
    return found


def delivered(svc, job_id, timeout=60):
    """Waits until the job's report is in the Maildir (the job must name
    a recipient: a report with nobody to tell is not mailed)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=svc.read_token)
        if (job.get("report") or {}).get("state") == "sent":
            return job
        time.sleep(0.2)
    raise AssertionError("the report of job %d was not delivered: %r" % (job_id, job))


def commit_of(job, index):
    for c in job["commits"]:
        if c["index"] == index:
            return c
    raise AssertionError("commit %d was not tested: %r" % (index, job["commits"]))


@test
def misspelt_kpi_fails_at_once_naming_the_metrics_seen(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "kpi"), 6, {4: 950.0},
                            owner=__name__ + ".kpi")
    svc.register(P + "kpi", repo, P + "kpi-tc", kpi="bench.scor", runs_min=3)
    job = svc.submit({"repo": P + "kpi", "testcase": P + "kpi-tc",
                      "good": shas[0], "bad": shas[-1],
                      "notify": ["dev@example.org"]})
    done = svc.wait(job["id"])
    eq((done["state"], done["verdict"], done["culprit"]), ("failed", None, None),
       "a KPI that no run prints fails the job")
    message = done["message"] or ""
    for word in ("bench.scor'", "bench.score", "aux.constant"):
        check(word in message, "message names %r: %r" % (word, message))
    check("does not build" not in message, "no build blamed: %r" % message)
    eq(sorted(c["index"] for c in done["commits"]), [0, 6], "only the endpoints ran")
    eq(done["runs"], 6, "failed after the endpoints' first runs_min runs a side")
    for index in (0, 6):
        outcome = commit_of(done, index)["outcome"]
        eq(outcome["status"], "no_kpi", "outcome of commit %d" % index)
        check({"bench.score", "aux.constant"} <= set(outcome["metrics_seen"]),
              "metrics seen at %d: %r" % (index, outcome["metrics_seen"]))
    delivered(svc, job["id"])
    mails = mails_about(svc, shas[0])
    check(mails, "a report was mailed for the failed job")
    for text in mails:
        check("bench.score" in text and "quieter machine" not in text,
              "the mail names the real cause: %s" % text[:2000])
    status, _, page = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % job["id"])
    eq(status, 200, "job page")
    check("bench.score" in page and "aux.constant" in page,
          "the page names the metrics seen")


@test
def crashing_runs_are_named_not_blamed_on_the_build(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "crash"), 4,
                            owner=__name__ + ".crash")
    svc.register(P + "crash", repo, P + "crash-tc", runs_min=2,
                 run="./bench; printf '\\074em\\076segfault\\074/em\\076 at 0\\n' >&2;"
                 " exit 3")
    job = svc.submit({"repo": P + "crash", "testcase": P + "crash-tc",
                      "good": shas[0], "bad": shas[-1]})
    done = svc.wait(job["id"])
    message = done["message"] or ""
    check("does not build" not in message, "no build blamed: %r" % message)
    check("exit status 3" in message, "message names the exit status: %r" % message)
    outcome = commit_of(done, 0)["outcome"]
    eq((outcome["status"], outcome["exit_code"]), ("crashed", 3), "outcome of good")
    status, log = svc.api.call("GET", "/api/v1/jobs/%d/commits/%s/log" % (job["id"], shas[0]),
                               token=svc.read_token)
    eq(status, 200, "log of the good commit")
    check("<em>segfault</em> at 0" in log["run_output"], "run output kept: %r" % log)
    status, _, page = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % job["id"])
    eq(status, 200, "job page")
    check("&lt;em&gt;segfault&lt;/em&gt; at 0" in page and "<em>segfault" not in page,
          "the page shows the run output, escaped")


@test
def timed_out_runs_are_named(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "slow"), 3,
                            owner=__name__ + ".slow")
    svc.register(P + "slow", repo, P + "slow-tc", runs_min=2, timeout_s=1,
                 run="sleep 30")
    job = svc.submit({"repo": P + "slow", "testcase": P + "slow-tc",
                      "good": shas[0], "bad": shas[-1]})
    done = svc.wait(job["id"])
    message = done["message"] or ""
    check("timed out" in message and "does not build" not in message,
          "message names the time-out: %r" % message)
    eq(commit_of(done, 0)["outcome"]["status"], "timed_out", "outcome of good")


@test
def build_log_and_run_output_are_served_per_commit(env):
    svc = env.svc
    # Every commit between the ends fails to build: the search must try
    # one, and the culprit is ambiguous among them.
    repo, shas = bench_repo(os.path.join(env.root, P + "log"), 4, {4: 950.0},
                            broken={1, 2, 3}, owner=__name__ + ".log")
    svc.register(P + "log", repo, P + "log-tc", runs_min=3)
    job = svc.submit({"repo": P + "log", "testcase": P + "log-tc",
                      "good": shas[0], "bad": shas[-1],
                      "notify": ["dev@example.org"]})
    done = svc.wait(job["id"])
    jid = done["id"]
    failed = [c for c in done["commits"] if c["build_failed"]]
    check(failed, "a commit that does not build was tested: %r" % done["commits"])
    base = "/api/v1/jobs/%d/commits/" % jid
    for c in failed:
        eq(c["outcome"]["status"], "build_failed", "outcome of %d" % c["index"])
        log = svc.api.ok("GET", base + c["commit"] + "/log", token=svc.read_token)
        eq((log["job"], log["commit"], log["index"]), (jid, c["commit"], c["index"]),
           "the log names its commit")
        eq(log["outcome"]["status"], "build_failed", "outcome in the log")
        check("this commit does not compile" in (log["build_log"] or ""),
              "the build output is served: %r" % log)
    good = svc.api.ok("GET", base + shas[0] + "/log", token=svc.read_token)
    eq(good["outcome"]["status"], "ran", "the good commit ran")
    check("bench.score:" in (good["run_output"] or "") and
          "warming up" in good["run_output"], "its last run's output: %r" % good)
    check(good["build_log"] is not None, "a built commit keeps its build log")
    # Short SHAs name the same commit; others are 404 or 400 with a JSON error.
    eq(svc.api.ok("GET", base + shas[0][:12] + "/log", token=svc.read_token)["commit"],
       shas[0], "a unique SHA prefix")
    for path, want in ((base + "0" * 40 + "/log", 404),
                       ("/api/v1/jobs/999999/commits/%s/log" % shas[0], 404),
                       (base + "zz-not-hex/log", 400)):
        status, reply = svc.api.call("GET", path, token=svc.read_token)
        eq(status, want, path)
        check(isinstance(reply, dict) and "error" in reply, "JSON error for %s" % path)
    # A commit of the repository that this job did not consider.
    status, reply = svc.api.call("GET", "/api/v1/jobs/%d/commits/%s/log" % (jid, "f" * 40),
                                 token=svc.read_token)
    eq(status, 404, "a commit not in the job")
    status, _ = svc.api.call("GET", base + shas[0] + "/log", token="")
    eq(status, 401, "the log needs a token")
    # The report of a job whose tested commits failed to build links their log.
    delivered(svc, jid)
    for text in mails_about(svc, shas[4]) + mails_about(svc, shas[0]):
        if "/commits/" in text:
            break
    else:
        raise AssertionError("no report links a build log")
    browser = Browser(svc.url).sign_in(svc.read_token)
    status, _, page = browser.get("/jobs/%d" % jid)
    eq(status, 200, "job page")
    check("this commit does not compile" in page, "the job page shows the build log")
    check("/jobs/%d/commits/%s/log" % (jid, failed[0]["commit"]) in page,
          "the job page links each commit's logs")
    status, _, page = browser.get("/jobs/%d/commits/%s/log" % (jid, failed[0]["commit"]))
    eq(status, 200, "log page")
    check("this commit does not compile" in page and "build failed" in page,
          "the log page shows the build log and the outcome")
    status, _, page = browser.get("/jobs/%d/commits/%s/log" % (jid, shas[0]))
    check(status == 200 and "bench.score:" in page, "the log page shows the run output")
    status, _, page = browser.get("/jobs/%d/commits/%s/log" % (jid, "0" * 40))
    eq(status, 404, "log page of a commit not in the job")
