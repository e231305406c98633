"""Core end-to-end cases: bisection verdicts, reports, bad input, leases,
restarts."""
import email
import email.policy
import glob
import os
import re
import time

import harness
from harness import Api, Service, bench_repo, check, eq, test  # noqa: F401

@test
def bisection_finds_planted_regression_and_reports_it(env):
    svc = env.svc
    culprit_idx = harness.rand_index(3, 37)
    repo, shas = bench_repo(os.path.join(env.root, "regr"), 40, {culprit_idx: 950.0})
    svc.register("regr", repo, "regr-tc")
    job = svc.submit({"repo": "regr", "testcase": "regr-tc", "good": shas[0],
                      "bad": "main", "notify": ["dev@example.org"]})
    eq(job["state"], "queued", "state at submission")
    eq(job["good"], shas[0], "good resolved")
    eq(job["bad"], shas[-1], "bad resolved from a branch name")
    eq(job["candidates"], 41, "candidate count")
    done = svc.wait(job["id"])
    eq(done["state"], "done", "state")
    eq(done["verdict"], "regression", "verdict")
    eq(done["culprit"], shas[culprit_idx], "culprit")
    eq(done["parent"], shas[culprit_idx - 1], "parent")
    eq([c["commit"] for c in done["culprits"]], [shas[culprit_idx]], "culprits")
    check(-7.5 < done["change_pct"] < -2.5, "change_pct %r near -5%%" % done["change_pct"])
    tested = {c["commit"]: c for c in done["commits"]}
    for i, sha in enumerate(shas):
        if sha in tested and tested[sha]["classification"] in ("good", "bad"):
            want = "bad" if i >= culprit_idx else "good"
            eq(tested[sha]["classification"], want, "class of commit %d" % i)
    eq(done["runs"], sum(len(c["runs"]) + len(c["confirm_runs"]) + c["failed_runs"]
                         for c in done["commits"]), "runs counted")
    culprit = done["culprits"][0]
    check(culprit["confirmed"], "culprit confirmed by fresh runs")
    check(0.9 < culprit["confidence"] <= 1, "confidence %r" % culprit["confidence"])
    by_sha = {c["commit"]: c for c in done["commits"]}
    check(len(by_sha[shas[culprit_idx]]["confirm_runs"]) >= 4 and
          len(by_sha[shas[culprit_idx - 1]]["confirm_runs"]) >= 4,
          "culprit and parent got confirmation runs")
    check(done["commits_tested"] >= 3, "commits tested")

    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                token=svc.read_token)
    eq(status, 200, "report status")
    msg = email.message_from_string(text, policy=email.policy.default)
    subject = str(msg["Subject"])
    check(shas[culprit_idx][:10] in subject and "regression" in subject,
          "subject names culprit and kind: %r" % subject)
    check(subject.startswith("[regr:main] ["), "subject tree/branch: %r" % subject)
    eq(str(msg["To"]), "dev@example.org", "To")
    check(msg["Message-ID"] and msg["Date"], "Message-ID and Date present")
    body = msg.get_content()
    check(("commit: %s" % shas[culprit_idx]) in body, "body names the culprit")
    check("https://git.example.org/c/%s" % shas[culprit_idx] in body, "commit link")
    row = [l for l in body.splitlines() if l.endswith("  bench.score")]
    eq(len(row), 1, "one KPI row")
    check(row[0][16:28].strip().startswith("-"), "KPI row shows a drop: %r" % row[0])
    check("| Reported-by:" in body and "| Closes:" in body, "regression tags")

    # The Maildir got exactly this message, once.
    deadline = time.time() + 20
    files = []
    while time.time() < deadline:
        files = [f for f in glob.glob(os.path.join(svc.mail, "new", "*"))
                 if shas[culprit_idx][:10] in open(f).read()]
        if files:
            break
        time.sleep(0.2)
    eq(len(files), 1, "maildir copies of the report")
    delivered = email.message_from_binary_file(open(files[0], "rb"),
                                               policy=email.policy.default)
    eq(delivered["Message-ID"], msg["Message-ID"], "delivered Message-ID")
    # Maildir wants LF line ends; CRLF is SMTP's.
    raw = open(files[0], "rb").read()
    check(b"\r" not in raw and raw.count(b"\n") > 20,
          "maildir file has LF line ends: %r" % raw[:120])
    eq(env.cluster.psql("select count(*) from outbox where job_id = %d and sent_at is not null"
                        % job["id"]), "1", "outbox row marked sent")


@test
def lower_is_better_drop_is_an_improvement(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "impr"), 24, {17: 940.0})
    svc.register("impr", repo, "impr-tc", higher_is_better=False)
    job = svc.submit({"repo": "impr", "testcase": "impr-tc", "good": shas[0], "bad": shas[-1]})
    done = svc.wait(job["id"])
    eq((done["verdict"], done["culprit"]), ("improvement", shas[17]), "verdict and culprit")
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"])
    msg = email.message_from_string(text, policy=email.policy.default)
    check("improvement" in str(msg["Subject"]), "subject says improvement")
    check("Reported-by" not in msg.get_content(), "no Reported-by for an improvement")


@test
def flat_range_is_no_change(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "flat"), 15)
    svc.register("flat", repo, "flat-tc")
    job = svc.submit({"repo": "flat", "testcase": "flat-tc", "good": shas[0], "bad": shas[-1]})
    done = svc.wait(job["id"])
    eq((done["state"], done["verdict"], done["culprit"], done["culprits"]),
       ("done", "no-change", None, []), "no change")
    # the endpoints, and commits between them probed (opposite changes
    # could cancel at the endpoints), the middle and quarters first;
    # nothing confirmed
    tested = sorted(c["index"] for c in done["commits"])
    check({0, 2, 4, 8, 12, 15} <= set(tested),
          "the endpoints and the first probes are measured: %r" % tested)
    check(all(not c["confirm_runs"] for c in done["commits"]), "no confirmation runs")
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"])
    eq(status, 200, "a no-change job has a report")
    msg = email.message_from_string(text, policy=email.policy.default)
    # Submitted by SHA: the subject names the branch that holds it, as
    # the robot's "[tree:branch]" does, not the SHA again.
    eq(str(msg["Subject"]), "[flat:main] no change of bench.score in %s..%s"
       % (shas[0][:10], shas[-1][:10]), "no-change subject")
    # Nobody to tell: no mail goes out, and the job says so.
    for _ in range(15):
        report = svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["report"]
        eq((report["state"], report["recipients"], report["sent_at"]),
           ("none", [], None), "delivery of a report with no recipients")
        time.sleep(0.2)
    mid = msg["Message-ID"]
    mailed = [f for f in glob.glob(os.path.join(svc.mail, "new", "*"))
              if mid in open(f).read()]
    eq(mailed, [], "maildir copies of a report with no recipients")
    from test_web import Browser
    status, _, page = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % job["id"])
    eq(status, 200, "job page")
    check("Email delivery: <strong>none</strong>: the job, its testcase and its culprit"
          " name nobody to tell, so no mail was sent" in page,
          "the page says no mail was sent: %r" % re.findall(r'<p class="delivery[^\n]*', page))


@test
def commits_that_do_not_build_are_skipped_not_blamed(env):
    svc = env.svc
    broken = {9, 10, 11, 12, 13, 14, 15, 16}
    repo, shas = bench_repo(os.path.join(env.root, "brk"), 32, {25: 950.0}, broken)
    svc.register("brk", repo, "brk-tc")
    job = svc.submit({"repo": "brk", "testcase": "brk-tc", "good": shas[0], "bad": shas[-1]})
    done = svc.wait(job["id"])
    eq((done["verdict"], done["culprit"]), ("regression", shas[25]), "verdict and culprit")
    failed = [c["index"] for c in done["commits"] if c["build_failed"]]
    check(failed and set(failed) <= broken, "broken commits tested were marked: %r" % failed)
    for c in done["commits"]:
        if c["build_failed"]:
            eq((c["runs"], c["classification"]), ([], "skipped"), "skipped commit %d" % c["index"])
    log = env.cluster.psql("select build_log from job_commits where job_id = %d and build_failed"
                           " limit 1" % job["id"])
    check("does not compile" in log, "build log kept: %r" % log)


@test
def bad_requests_are_refused_and_change_nothing(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "badreq"), 5)
    svc.register("badreq", repo, "badreq-tc")
    other = harness.Repo(os.path.join(env.root, "other"))
    other.write("README", "an unrelated history\n")
    other_sha = other.commit("other: first")
    before = env.cluster.psql("select count(*) from jobs")
    base = {"repo": "badreq", "testcase": "badreq-tc", "good": shas[0], "bad": shas[-1]}
    cases = [
        (dict(base, good="0" * 40), 422, "unknown_revision"),
        (dict(base, good="v1.0-missing"), 422, "unknown_revision"),
        (dict(base, good=other_sha), 422, "unknown_revision"),
        (dict(base, good=shas[-1], bad=shas[0]), 422, "invalid_range"),
        (dict(base, good=shas[2], bad=shas[2]), 422, "invalid_range"),
        (dict(base, good="--upload-pack=evil"), 422, "unknown_revision"),
        (dict(base, repo="nope"), 404, "unknown_repo"),
        (dict(base, testcase="nope"), 404, "unknown_testcase"),
        ({k: v for k, v in base.items() if k != "bad"}, 400, "missing_field"),
        (dict(base, repo=5), 400, "invalid_field"),
        (dict(base, notify="dev@example.org"), 400, "invalid_field"),
        (dict(base, notify=["a@example.org\r\nBcc: evil@example.org"]), 400, "invalid_email"),
        (dict(base, notify=["not an address"]), 400, "invalid_email"),
        ([1, 2], 400, "invalid_json"),
    ]
    for body, status, code in cases:
        got, reply = svc.api.call("POST", "/api/v1/jobs", body, token=svc.submit_token)
        eq((got, reply.get("error", {}).get("code") if isinstance(reply, dict) else reply),
           (status, code), "POST /jobs %r" % (body,))
        check(reply["error"]["message"], "error message for %r" % (body,))
    got, reply = svc.api.call("POST", "/api/v1/jobs", raw_body=b'{"repo": "badreq", ',
                              token=svc.submit_token)
    eq((got, reply["error"]["code"]), (400, "invalid_json"), "malformed JSON")
    eq(svc.api.call("POST", "/api/v1/jobs", base, token="")[0], 401, "no token")
    eq(svc.api.call("POST", "/api/v1/jobs", base, token="sb_wrong")[0], 401, "unknown token")
    eq(svc.api.call("POST", "/api/v1/jobs", base, token=svc.read_token)[0], 403, "read token")
    eq(svc.api.call("POST", "/api/v1/jobs", base, token=svc.worker_token)[0], 403,
       "worker token on a people's route")
    eq(svc.api.call("POST", "/api/v1/repos", {"name": "x", "url": "/etc"},
                    token=svc.submit_token)[0], 403, "submit token registering a repo")
    eq(svc.api.call("POST", "/api/v1/workers", {"name": "w"}, token=svc.submit_token)[0], 403,
       "submit token on a worker route")
    eq(svc.api.call("POST", "/api/v1/repos", {"name": "badreq", "url": repo.path})[0], 409,
       "duplicate repo")
    eq(svc.api.call("POST", "/api/v1/repos", {"name": "../x", "url": repo.path})[0], 400,
       "repo name with a path")
    eq(svc.api.call("POST", "/api/v1/repos", {"name": "gone", "url": "/nonexistent/repo"})[0],
       422, "unreachable repo")
    eq(svc.api.call("POST", "/api/v1/testcases", {"name": "t", "build": "", "run": "x",
                                                   "kpi": "a b", "higher_is_better": True})[0],
       400, "kpi with a space")
    eq(svc.api.call("POST", "/api/v1/testcases", {"name": "t", "build": "", "run": "x",
                                                   "kpi": "k", "higher_is_better": True,
                                                   "runs_min": 9, "runs_max": 3})[0],
       400, "runs_max below runs_min")
    eq(svc.api.call("GET", "/api/v1/jobs/999999")[0], 404, "unknown job")
    eq(svc.api.call("GET", "/api/v1/jobs/abc")[0], 404, "non-numeric job id")
    eq(svc.api.call("GET", "/api/v1/nothing")[0], 404, "unknown route")
    eq(svc.api.call("PUT", "/api/v1/jobs")[0], 405, "wrong method")
    eq(env.cluster.psql("select count(*) from jobs"), before, "no job was created")
    eq(svc.api.call("GET", "/healthz", token="")[0], 200, "healthy after bad input")


@test
def upload_under_a_lapsed_lease_is_refused(env):
    # A database of its own: the main worker must not take these tasks.
    svc = Service(env.root, env.cluster, "lease", worker=False, lease_seconds=2,
                  conninfo=env.cluster.database("lease"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, "lease"), 4)
        svc.register("lease", repo, "lease-tc")
        job = svc.submit({"repo": "lease", "testcase": "lease-tc", "good": shas[0],
                          "bad": shas[-1]})
        w = Api(svc.url, svc.worker_token)
        wid = w.ok("POST", "/api/v1/workers", {"name": "manual", "machine": "test box"})["id"]
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        eq((task["job"], task["commit"], task["runs"]), (job["id"], shas[0], 5), "first task")
        eq(([(c["index"], c["commit"], c["runs"], c["purpose"]) for c in task["commits"]],
            task["interleave"]),
           ([(0, shas[0], 5, "search"), (4, shas[-1], 5, "search")], True),
           "the endpoints run interleaved in one task")
        eq(w.ok("POST", "/api/v1/tasks/%d/heartbeat" % task["id"], {"lease": task["lease"]})
           ["status"], "ok", "heartbeat within the lease")
        time.sleep(2.5)
        run = {"exit_code": 0, "wall_s": 0.1, "metrics": {"bench.score": 1000.0}}
        both = [dict(run, commit_index=i) for i in (0, 4) for _ in range(5)]
        status, reply = w.call("POST", "/api/v1/tasks/%d/result" % task["id"],
                               {"lease": task["lease"], "runs": both})
        eq((status, reply["error"]["code"]), (409, "lease_lost"), "late upload")
        eq(w.call("POST", "/api/v1/tasks/%d/heartbeat" % task["id"],
                  {"lease": task["lease"]})[0], 409, "late heartbeat")
        eq(svc.psql("select count(*) from runs where job_id = %d" % job["id"]), "0",
           "no run counted")
        # The lapsed task goes back to the queue and is claimed again.
        renewed = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        eq(renewed["id"], task["id"], "the lapsed task, claimed again")
        eq(renewed["lease"] != task["lease"], True, "under a new lease")
        eq(w.call("POST", "/api/v1/tasks/%d/result" % task["id"],
                  {"lease": task["lease"], "runs": both})[0], 409, "old lease refused")
        bad = {"exit_code": "zero", "metrics": {}}
        for runs, what in (([bad], "malformed run"),
                           ([dict(run, commit_index=2)], "a commit the task does not run"),
                           ([dict(run, commit_index=4)] * 6, "more runs than asked")):
            eq(w.call("POST", "/api/v1/tasks/%d/result" % task["id"],
                      {"lease": renewed["lease"], "runs": runs})[0], 400, what)
        eq(svc.psql("select count(*) from runs where job_id = %d" % job["id"]), "0",
           "a refused upload stores nothing")
        # Only the good endpoint's runs: the bad one's are asked for again.
        good_runs = [dict(run, commit_index=0)] * 5
        eq(w.call("POST", "/api/v1/tasks/%d/result" % task["id"],
                  {"lease": renewed["lease"], "runs": good_runs})[0], 200, "current lease")
        eq(svc.psql("select count(*) from runs where job_id = %d" % job["id"]), "5",
           "runs counted once")
        eq(w.call("POST", "/api/v1/tasks/%d/result" % task["id"],
                  {"lease": renewed["lease"], "runs": good_runs})[0], 409, "second upload")
        eq(svc.psql("select count(*) from runs where job_id = %d" % job["id"]), "5",
           "a repeated upload counts nothing")
        other = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        eq([(c["index"], c["runs"]) for c in other["commits"]], [(4, 5)],
           "the missing runs of the bad endpoint")

        # Cancelling stops the job; its open tasks are no longer handed out.
        status, cancelled = svc.api.call("DELETE", "/api/v1/jobs/%d" % job["id"],
                                         token=svc.submit_token)
        eq((status, cancelled["state"]), (200, "cancelled"), "cancel")
        eq(w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"], None, "nothing to claim")
        eq(w.call("POST", "/api/v1/tasks/%d/heartbeat" % other["id"],
                  {"lease": other["lease"]})[1]["error"]["code"], "cancelled",
           "heartbeat of a cancelled job")
        eq(svc.api.call("DELETE", "/api/v1/jobs/%d" % job["id"], token=svc.submit_token)[0],
           409, "cancel twice")
    finally:
        svc.stop()


@test
def restarted_server_keeps_jobs_and_migrates_once(env):
    svc = Service(env.root, env.cluster, "restart", worker=False)
    first = svc.api.ok("GET", "/api/v1/jobs/1")
    codes = svc.stop()
    eq(codes[0], 0, "server exit status on SIGTERM")
    svc = Service(env.root, env.cluster, "restart2", worker=False)
    try:
        eq(svc.api.ok("GET", "/api/v1/jobs/1")["culprit"], first["culprit"], "job survived")
        eq(env.cluster.psql("select count(*) from schema_migrations"),
           str(len(glob.glob(os.path.join(harness.ROOT, "sql", "*.sql")))),
           "each migration recorded once")
    finally:
        svc.stop()


@test
def runs_limits_given_with_a_job_override_the_testcases(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "limits"), 20, {11: 950.0})
    svc.register("limits", repo, "limits-tc")
    base = {"repo": "limits", "testcase": "limits-tc", "good": shas[0], "bad": shas[-1]}
    status, reply = svc.api.call("POST", "/api/v1/jobs", dict(base, runs_min=9, runs_max=4),
                                 token=svc.submit_token)
    eq((status, reply["error"]["code"]), (400, "invalid_field"), "runs_max below runs_min")
    job = svc.submit(dict(base, runs_min=7, runs_max=12))
    eq((job["runs_min"], job["runs_max"]), (7, 12), "limits of the job")
    done = svc.wait(job["id"])
    eq((done["verdict"], done["culprit"]), ("regression", shas[11]), "verdict and culprit")
    by_index = {c["index"]: c for c in done["commits"]}
    check(len(by_index[0]["runs"]) >= 7 and len(by_index[20]["runs"]) >= 7,
          "endpoints got runs_min runs")
    check(all(len(c["runs"]) <= 12 for c in done["commits"]), "no commit beyond runs_max")


@test
def a_change_on_a_merged_side_branch_is_found_on_the_dag(env):
    svc = env.svc
    repo = harness.Repo(os.path.join(env.root, "dag"))
    repo.write("bench.c", harness.BENCH_C)
    repo.write("build.sh", harness.BUILD_SH)
    repo.write("mean", "1000.0\n")
    root = repo.commit("bench: add the benchmark")
    for i in range(1, 6):
        repo.write("main.txt", "main %d\n" % i)
        repo.commit("core: main change %d" % i)
    harness.sh("git checkout -q -b side", cwd=repo.path, env=repo.env)
    side = []
    for i in range(1, 5):
        if i == 3:
            repo.write("mean", "950.0\n")
        repo.write("side.txt", "side %d\n" % i)
        side.append(repo.commit("feature: side change %d" % i))
    harness.sh("git checkout -q main", cwd=repo.path, env=repo.env)
    for i in range(6, 9):
        repo.write("main.txt", "main %d\n" % i)
        repo.commit("core: main change %d" % i)
    repo.n += 1
    stamp = "@%d +0000" % (1767225600 + 60 * repo.n)
    harness.sh(["git", "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side"],
               cwd=repo.path, env=dict(repo.env, GIT_AUTHOR_DATE=stamp,
                                       GIT_COMMITTER_DATE=stamp))
    for i in range(9, 12):
        repo.write("main.txt", "main %d\n" % i)
        repo.commit("core: main change %d" % i)
    svc.register("dag", repo, "dag-tc")
    job = svc.submit({"repo": "dag", "testcase": "dag-tc", "good": root, "bad": "main"})
    # every commit after root: 11 on main, 4 on the side branch, the merge
    eq(job["candidates"], 1 + 11 + 4 + 1, "side-branch commits are candidates")
    done = svc.wait(job["id"])
    eq((done["verdict"], [c["commit"] for c in done["culprits"]]),
       ("regression", [side[2]]), "the culprit on the side branch")
    eq(done["culprits"][0]["parent"], side[1], "its parent on the branch")


@test
def report_links_open_the_job_page_with_a_read_key(env):
    """The culprit's author, told by mail, has no account: the report's
    links carry a key that opens this job's pages, read-only, and nothing
    else, until the job's keys are revoked."""
    from test_web import Browser
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "keys"), 8, {5: 950.0})
    svc.register("keys", repo, "keys-tc")
    job = svc.submit({"repo": "keys", "testcase": "keys-tc", "good": shas[0],
                      "bad": shas[-1], "notify": ["dev@example.org"]})
    jid = job["id"]
    done = svc.wait(jid)
    eq((done["verdict"], done["culprit"]), ("regression", shas[5]), "verdict")
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % jid, token=svc.read_token)
    eq(status, 200, "report")
    body = email.message_from_string(text, policy=email.policy.default).get_content()
    check("/api/" not in body, "the report links pages, not the API")
    keys = set(re.findall(r"/jobs/%d[^\s?]*\?key=([0-9a-f]+)\s" % jid, body))
    eq(len(keys), 1, "one key in every link: %r" % keys)
    key = keys.pop()
    eq(len(key), 64, "a 256-bit key")
    links = re.findall(r"https?://\S+(/jobs/%d\S*)" % jid, body)
    eq(sorted(links), sorted(["/jobs/%d?key=%s" % (jid, key),
                              "/jobs/%d/runs.csv?key=%s" % (jid, key),
                              "/jobs/%d/runs.json?key=%s" % (jid, key),
                              "/jobs/%d/report?key=%s" % (jid, key)]),
       "the job page, raw runs and the Closes: tag carry the key")
    check([l for l in body.splitlines() if l.startswith("| Closes: ") and
           l.endswith("/jobs/%d/report?key=%s" % (jid, key))],
          "Closes: names the report page")

    anyone = Browser(svc.url)  # no session, no token
    status, _, page = anyone.get("/jobs/%d?key=%s" % (jid, key))
    eq(status, 200, "the job page opens with the key")
    check(shas[5] in page, "it shows the culprit")
    check('data-live-url="/jobs/%d/live?key=%s"' % (jid, key) in page,
          "the page's live part keeps the key")
    check("/cancel" not in page and "/rerun" not in page, "nothing to change on it")
    for path in ("/live", "/report", "/runs.csv", "/runs.json",
                 "/commits/%s/log" % shas[5]):
        status, _, _ = anyone.get("/jobs/%d%s?key=%s" % (jid, path, key))
        eq(status, 200, "%s with the key" % path)
    status, hdrs, _ = anyone.get("/jobs/%d" % jid)
    check(status == 303 and hdrs["Location"].startswith("/signin"),
          "without the key the page asks to sign in: %d" % status)
    for path, what in (("/jobs/%d?key=%s" % (jid, "0" * 64), "a wrong key"),
                       ("/jobs/%d?key=%s" % (jid + 1, key), "another job"),
                       ("/jobs/%d/report?key=%s" % (jid + 1000, key), "no such job")):
        status, _, _ = anyone.get(path)
        eq(status, 403, what)
    status, _ = svc.api.call("GET", "/api/v1/jobs/%d" % jid, token=key)
    eq(status, 401, "the key is no API token")
    status, _, _ = anyone.post("/jobs/%d/cancel?key=%s" % (jid, key), {})
    check(status in (303, 401, 403), "the key cannot act on the job: %d" % status)

    status, _ = svc.api.call("DELETE", "/api/v1/jobs/%d/keys" % jid, token=svc.read_token)
    eq(status, 403, "revoking needs the submit role")
    eq(svc.api.ok("DELETE", "/api/v1/jobs/%d/keys" % jid, token=svc.submit_token),
       {"job": jid, "revoked": 1}, "revoked")
    status, _, _ = anyone.get("/jobs/%d?key=%s" % (jid, key))
    eq(status, 403, "a revoked key opens nothing")
    status, _, _ = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % jid)
    eq(status, 200, "people with an account still read the job")
    status, _ = svc.api.call("DELETE", "/api/v1/jobs/999999/keys", token=svc.submit_token)
    eq(status, 404, "no such job")
