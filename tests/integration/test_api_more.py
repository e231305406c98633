"""The REST API beyond the core contract: job lists with filters and pages,
runs as JSON and CSV, the lists of repositories, testcases and workers,
token listing and revocation, re-runs, and the OpenAPI document."""
import csv
import hashlib
import io
import os
import re
import time
import urllib.error
import urllib.request

import yaml

import harness
from harness import Api, Service, bench_repo, check, eq, test

P = "api_more-"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_made = {}


def made(env):
    """What the module's cases share, made once: a regression job (A), a
    no-change job (B) and a cancelled one (C) on two repositories."""
    if _made:
        return _made
    svc = env.svc
    culprit = harness.rand_index(3, 10)
    repo, shas = bench_repo(os.path.join(env.root, P + "regr"), 12, {culprit: 950.0},
                            owner=__name__)
    svc.register(P + "regr", repo, P + "regr-tc")
    flat, flat_shas = bench_repo(os.path.join(env.root, P + "flat"), 6, owner=__name__)
    svc.register(P + "flat", flat, P + "flat-tc")
    a = svc.submit({"repo": P + "regr", "testcase": P + "regr-tc", "good": shas[0],
                    "bad": "main", "notify": ["dev@example.org"]})
    b = svc.submit({"repo": P + "flat", "testcase": P + "flat-tc", "good": flat_shas[0],
                    "bad": flat_shas[-1]})
    c = svc.submit({"repo": P + "flat", "testcase": P + "flat-tc", "good": flat_shas[1],
                    "bad": flat_shas[-1]})
    # C's tasks queue behind A's and B's: it is cancelled before any run.
    status, cancelled = svc.api.call("DELETE", "/api/v1/jobs/%d" % c["id"],
                                     token=svc.submit_token)
    eq((status, cancelled["state"]), (200, "cancelled"), "cancel C")
    _made.update(shas=shas, culprit=culprit, flat_shas=flat_shas,
                 A=svc.wait(a["id"]), B=svc.wait(b["id"]), C=cancelled)
    eq((_made["A"]["verdict"], _made["A"]["culprit"]), ("regression", shas[culprit]),
       "job A")
    eq(_made["B"]["verdict"], "no-change", "job B")
    return _made


def raw_get(url, token=None):
    """GET with the reply's status, headers and text."""
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def error_code(reply):
    return reply.get("error", {}).get("code") if isinstance(reply, dict) else reply


@test
def jobs_list_filters_pages_and_refuses_bad_filters(env):
    m = made(env)
    svc, A, B, C = env.svc, m["A"], m["B"], m["C"]

    def jobs(query, token=svc.read_token):
        return svc.api.ok("GET", "/api/v1/jobs" + query, token=token)

    got = jobs("?repo=%sregr" % P)
    eq((got["total"], got["limit"], got["offset"], len(got["jobs"])), (1, 50, 0, 1),
       "one regr job, default page")
    j = got["jobs"][0]
    eq(sorted(j), sorted(["id", "state", "verdict", "repo", "testcase", "good", "bad",
                          "culprit", "change_pct", "created_at", "finished_at", "runs",
                          "commits_tested", "group"]),
       "job summary fields")
    eq((j["id"], j["state"], j["verdict"], j["repo"], j["testcase"], j["good"], j["bad"],
        j["culprit"], j["change_pct"]),
       (A["id"], "done", "regression", P + "regr", P + "regr-tc", m["shas"][0],
        m["shas"][-1], m["shas"][m["culprit"]], A["change_pct"]), "job A summarised")
    eq((j["created_at"], j["finished_at"]), (A["created_at"], A["finished_at"]),
       "timestamps as GET /jobs/{id} gives them")
    check(STAMP.match(j["created_at"]) and STAMP.match(j["finished_at"]),
          "ISO 8601 UTC timestamps: %r" % j)

    got = jobs("?repo=%sflat" % P)
    eq((got["total"], [x["id"] for x in got["jobs"]]), (2, [C["id"], B["id"]]),
       "newest first")
    eq([(x["state"], x["verdict"], x["culprit"], x["finished_at"] is None)
        for x in got["jobs"]],
       [("cancelled", None, None, False), ("done", "no-change", None, False)],
       "states and verdicts of the flat jobs")
    eq([x["id"] for x in jobs("?repo=%sflat&state=cancelled" % P)["jobs"]], [C["id"]],
       "state filter")
    eq([x["id"] for x in jobs("?repo=%sflat&verdict=no-change" % P)["jobs"]], [B["id"]],
       "verdict filter")
    eq([x["id"] for x in jobs("?testcase=%sregr-tc&verdict=regression" % P)["jobs"]],
       [A["id"]], "testcase and verdict filters")
    eq(jobs("?testcase=%sregr-tc&state=running" % P), {"jobs": [], "total": 0,
                                                       "limit": 50, "offset": 0},
       "no match")
    eq(jobs("?repo=%snope" % P)["total"], 0, "an unknown repository matches nothing")

    eq(jobs("?repo=%sflat&limit=1" % P),
       {"jobs": jobs("?repo=%sflat" % P)["jobs"][:1], "total": 2, "limit": 1, "offset": 0},
       "first page of one")
    second = jobs("?repo=%sflat&limit=1&offset=1" % P)
    eq(([x["id"] for x in second["jobs"]], second["total"], second["offset"]),
       ([B["id"]], 2, 1), "second page of one")
    eq(jobs("?repo=%sflat&offset=2" % P)["jobs"], [], "past the end")
    eq(jobs("?repo=%sflat&offset=2" % P)["total"], 2, "total past the end")

    everything = jobs("?limit=200")
    ids = [x["id"] for x in everything["jobs"]]
    check(everything["total"] >= 3 and len(ids) == min(200, everything["total"]),
          "unfiltered list: %r" % everything["total"])
    eq(ids, sorted(ids, reverse=True), "unfiltered list newest first")
    check({A["id"], B["id"], C["id"]} <= set(ids), "all three jobs listed")

    bad = ["state=bogus", "state=", "verdict=bad", "verdict=", "verdict=null",
           "limit=0", "limit=201", "limit=abc", "limit=-1", "limit=", "limit=1e2",
           "limit=+5", "limit=%205", "limit=99999999999999999999999", "offset=-1",
           "offset=x", "offset=1000000001", "repo=..%2Fetc", "repo=", "repo=" + "a" * 65,
           "testcase=a%20b", "testcase=%00", "repo=%C3%A9"]
    for query in bad:
        status, reply = svc.api.call("GET", "/api/v1/jobs?" + query, token=svc.read_token)
        eq((status, error_code(reply)), (400, "invalid_query"), "filter %r" % query)
        check(reply["error"]["message"], "message for %r" % query)
    eq(svc.api.call("GET", "/api/v1/jobs", token="")[0], 401, "no token")
    eq(svc.api.call("GET", "/api/v1/jobs", token=svc.worker_token)[0], 403, "worker token")


@test
def runs_as_json_and_csv_agree_with_the_job(env):
    m = made(env)
    svc, A, shas = env.svc, m["A"], m["shas"]
    got = svc.api.ok("GET", "/api/v1/jobs/%d/runs" % A["id"], token=svc.read_token)
    eq(sorted(got), ["job", "runs"], "runs reply fields")
    eq(got["job"], A["id"], "job id")
    runs = got["runs"]
    eq(len(runs), A["runs"], "one entry per run of the job")
    for run in runs:
        eq(sorted(run), sorted(["commit", "commit_index", "worker", "exit_code", "wall_s",
                                "kpi", "metrics", "created_at", "worker_id", "group",
                                "machine", "counted"]), "run fields")
        eq(run["commit"], shas[run["commit_index"]], "commit of index")
        eq((run["worker"], run["exit_code"]), ("box-1", 0), "worker and exit code")
        # Which machine made it; one machine, so every run counts.
        eq((run["group"], run["counted"]), ("default", True), "group and counted")
        check(isinstance(run["worker_id"], int) and run["machine"], "worker id, machine")
        eq(run["metrics"]["bench.score"], run["kpi"], "KPI copied out of the metrics")
        eq(run["metrics"]["aux.constant"], 42, "other metrics kept")
        check(isinstance(run["wall_s"], float) and run["wall_s"] >= 0, "wall_s")
        check(STAMP.match(run["created_at"]), "created_at")
    per_commit = {}
    for run in runs:
        per_commit.setdefault(run["commit_index"], []).append(run["kpi"])
    eq({i: sorted(v) for i, v in per_commit.items()},
       {c["index"]: sorted(c["runs"] + c["confirm_runs"]) for c in A["commits"]},
       "KPI values per commit (search and confirmation runs)")

    status, headers, text = raw_get(svc.url + "/api/v1/jobs/%d/runs.csv" % A["id"],
                                    svc.read_token)
    eq(status, 200, "CSV status")
    check(headers["Content-Type"].startswith("text/csv"), "CSV content type")
    eq(headers["Content-Disposition"], 'attachment; filename="job-%d-runs.csv"' % A["id"],
       "CSV attachment name")
    check(text.endswith("\r\n") and "\n" not in text.replace("\r\n", ""),
          "CRLF line ends")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    names = sorted(set().union(*(r["metrics"] for r in runs)))
    check({"bench.score", "aux.constant"} <= set(names), "metric names %r" % names)
    eq(rows[0], ["job", "commit_index", "commit", "worker", "exit_code", "wall_s", "kpi"]
       + names, "CSV header")
    eq(len(rows) - 1, A["runs"], "one CSV row per run")
    for row, run in zip(rows[1:], runs):
        eq(len(row), len(rows[0]), "row width")
        eq((row[0], int(row[1]), row[2], row[3], int(row[4])),
           (str(A["id"]), run["commit_index"], run["commit"], run["worker"],
            run["exit_code"]), "row keys")
        eq(float(row[5]), run["wall_s"], "wall_s")
        eq(float(row[6]), run["kpi"], "KPI in CSV equals KPI in JSON")
        for name, cell in zip(names, row[7:]):
            want = run["metrics"].get(name)
            eq(float(cell) if cell else None, want, "metric %s" % name)

    # A job without runs: an empty list, and a CSV of the header alone.
    C = m["C"]
    eq(svc.api.ok("GET", "/api/v1/jobs/%d/runs" % C["id"], token=svc.read_token),
       {"job": C["id"], "runs": []}, "no runs")
    status, headers, text = raw_get(svc.url + "/api/v1/jobs/%d/runs.csv" % C["id"],
                                    svc.read_token)
    eq((status, text), (200, "job,commit_index,commit,worker,exit_code,wall_s,kpi\r\n"),
       "CSV of no runs")
    for path in ("/api/v1/jobs/99999999/runs", "/api/v1/jobs/99999999/runs.csv",
                 "/api/v1/jobs/abc/runs", "/api/v1/jobs/0/runs.csv",
                 "/api/v1/jobs/-1/runs", "/api/v1/jobs/99999999999999999999999/runs"):
        status, reply = svc.api.call("GET", path, token=svc.read_token)
        eq((status, error_code(reply)), (404, "not_found"), path)
    eq(svc.api.call("GET", "/api/v1/jobs/%d/runs" % A["id"], token="")[0], 401,
       "runs need a token")
    # An id has one spelling, in the API as on the pages: "0<id>" names
    # no job (lib/id.h), though the job <id> exists.
    for path in ("/api/v1/jobs/0%d" % C["id"], "/api/v1/jobs/0%d/runs" % C["id"],
                 "/api/v1/jobs/+%d" % C["id"]):
        status, reply = svc.api.call("GET", path, token=svc.read_token)
        eq((status, error_code(reply)), (404, "not_found"), path)
    eq(svc.api.call("GET", "/api/v1/jobs/%d" % C["id"], token=svc.read_token)[0], 200,
       "the job by its one spelling")


@test
def lists_of_repos_testcases_and_workers(env):
    m = made(env)
    svc = env.svc
    repos = svc.api.ok("GET", "/api/v1/repos", token=svc.read_token)["repos"]
    eq([r["name"] for r in repos], sorted(r["name"] for r in repos), "repos by name")
    mine = [r for r in repos if r["name"] == P + "regr"]
    eq(len(mine), 1, "the module's repository listed once")
    eq(sorted(mine[0]), ["created_at", "id", "name", "url", "web_url"], "repo fields")
    eq((mine[0]["url"], mine[0]["web_url"]),
       (os.path.join(env.root, P + "regr"), "https://git.example.org/c/{sha}"),
       "repo url and web_url")
    # A password in a repository URL is not shown to readers.
    svc.psql("insert into repos (name, url) values ('%ssecret',"
             " 'https://ci:hunter2@git.example.org/x.git')" % P)
    secret = [r for r in svc.api.ok("GET", "/api/v1/repos", token=svc.read_token)["repos"]
              if r["name"] == P + "secret"]
    eq((secret[0]["url"], secret[0]["web_url"]),
       ("https://ci:***@git.example.org/x.git", None), "password masked")
    # Nor any part of one that holds an '@' (issue 9: "u:***@w@host").
    svc.psql("insert into repos (name, url) values ('%sat',"
             " 'https://u:p@w@git.example.org/x.git')" % P)
    shown = [r["url"] for r in svc.api.ok("GET", "/api/v1/repos", token=svc.read_token)["repos"]
             if r["name"] == P + "at"]
    eq(len(shown), 1, "the repository with '@' in its password listed once")
    check("p@w" not in shown[0] and "@w@" not in shown[0] and ":p" not in shown[0],
          "no part of the password 'p@w' shown: %r" % shown[0])
    check(shown[0].endswith("@git.example.org/x.git"), "the host still shown: %r" % shown[0])

    testcases = svc.api.ok("GET", "/api/v1/testcases", token=svc.read_token)["testcases"]
    tc = [t for t in testcases if t["name"] == P + "regr-tc"]
    eq(len(tc), 1, "the module's testcase listed once")
    del tc[0]["id"]
    check(STAMP.match(tc[0].pop("created_at")), "testcase created_at")
    eq(tc[0], {"name": P + "regr-tc", "build": "sh build.sh", "run": "./bench",
               "kpi": "bench.score", "higher_is_better": True, "min_change_pct": 1.0,
               "runs_min": 5, "runs_max": 50, "timeout_s": 600,
               "params": {"test": "score", "nr_task": 1}, "monitors": [],
               "bench_repo": None, "bench_rev": None, "group": "default"},
       "testcase as registered")

    workers = svc.api.ok("GET", "/api/v1/workers", token=svc.read_token)["workers"]
    box = [w for w in workers if w["name"] == "box-1"]
    eq(len(box), 1, "the harness's worker listed once")
    eq(sorted(box[0]), ["group", "id", "last_seen_at", "machine", "name",
                        "registered_at", "task"], "worker fields")
    eq(box[0]["group"], "default", "worker group")
    check(isinstance(box[0]["machine"], str) and " threads " in box[0]["machine"],
          "machine text: %r" % box[0]["machine"])
    check(STAMP.match(box[0]["registered_at"]) and STAMP.match(box[0]["last_seen_at"]),
          "worker timestamps")
    check(box[0]["last_seen_at"] >= box[0]["registered_at"], "seen after registering")
    eq(svc.api.call("GET", "/api/v1/workers", token=svc.worker_token)[0], 403,
       "a worker token cannot list workers")
    eq(m["A"]["state"], "done", "setup job finished")


@test
def worker_list_shows_the_task_under_a_live_lease(env):
    # A server of its own with no worker, so the test drives the protocol.
    svc = Service(env.root, env.cluster, "api_more", worker=False, lease_seconds=2,
                  conninfo=env.cluster.database("api_more"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, P + "lease"), 3, owner=__name__)
        svc.register(P + "lease", repo, P + "lease-tc")
        job = svc.submit({"repo": P + "lease", "testcase": P + "lease-tc",
                          "good": shas[0], "bad": shas[-1]})
        w = Api(svc.url, svc.worker_token)
        wid = w.ok("POST", "/api/v1/workers", {"name": "api_more-manual", "group": "default",
                                               "machine": 'rack "7", slot 3'})["id"]

        def listed():
            ws = svc.api.ok("GET", "/api/v1/workers", token=svc.read_token)["workers"]
            eq(len(ws), 1, "one worker")
            return ws[0]

        eq((listed()["id"], listed()["machine"], listed()["task"]),
           (wid, 'rack "7", slot 3', None), "idle worker")
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        shown = listed()["task"]
        check(STAMP.match(shown.pop("lease_expires_at")), "lease expiry")
        eq(shown, {"id": task["id"], "job": job["id"], "commit_index": 0,
                   "commit": shas[0]}, "the claimed task")
        # Runs with a metric whose name needs CSV quoting.
        odd = 'odd,name"x'
        runs = [{"exit_code": 0, "wall_s": 0.25 + i, "commit_index": 0,
                 "metrics": {"bench.score": 1000.5 + i, odd: 0.1 * i + 0.05}}
                for i in range(5)]
        w.ok("POST", "/api/v1/tasks/%d/result" % task["id"],
             {"lease": task["lease"], "runs": runs})
        eq(listed()["task"], None, "no task once the result is in")
        again = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        eq(listed()["task"]["id"], again["id"], "the next task")
        time.sleep(2.5)
        eq(listed()["task"], None, "no task once the lease lapsed")

        got = svc.api.ok("GET", "/api/v1/jobs/%d/runs" % job["id"], token=svc.read_token)
        eq([(r["commit_index"], r["worker"], r["kpi"], r["wall_s"], r["metrics"])
            for r in got["runs"]],
           [(0, "api_more-manual", r["metrics"]["bench.score"], r["wall_s"], r["metrics"])
            for r in runs], "uploaded runs in order")
        status, headers, text = raw_get(svc.url + "/api/v1/jobs/%d/runs.csv" % job["id"],
                                        svc.read_token)
        eq(text.split("\r\n")[0],
           'job,commit_index,commit,worker,exit_code,wall_s,kpi,bench.score,"odd,name""x"',
           "quoted header field")
        rows = list(csv.reader(io.StringIO(text, newline="")))
        eq(rows[1:], [[str(job["id"]), "0", shas[0], "api_more-manual", "0",
                       repr(r["wall_s"]), repr(r["metrics"]["bench.score"]),
                       repr(r["metrics"]["bench.score"]), repr(r["metrics"][odd])]
                      for r in runs], "CSV rows, shortest round-trip numbers")
    finally:
        svc.stop()


@test
def tokens_are_listed_without_secrets_and_revoked(env):
    made(env)
    svc = env.svc
    new = svc.api.ok("POST", "/api/v1/tokens", {"name": P + "revoke", "role": "read"})
    secret, tid = new["token"], new["id"]
    eq(svc.api.call("GET", "/api/v1/jobs?limit=1", token=secret)[0], 200, "fresh token works")

    status, headers, text = raw_get(svc.url + "/api/v1/tokens", harness.ADMIN)
    eq(status, 200, "admin lists tokens")
    check(secret not in text and hashlib.sha256(secret.encode()).hexdigest() not in text,
          "neither the secret nor its hash is listed")
    tokens = svc.api.ok("GET", "/api/v1/tokens")["tokens"]
    eq([t["id"] for t in tokens], sorted(t["id"] for t in tokens), "tokens by id")
    for t in tokens:
        eq(sorted(t), ["created_at", "id", "max_jobs_per_hour", "max_open_jobs", "name",
                       "revoked_at", "role"], "token fields")
    mine = [t for t in tokens if t["id"] == tid][0]
    eq((mine["name"], mine["role"], mine["revoked_at"]), (P + "revoke", "read", None),
       "the new token")
    check(STAMP.match(mine["created_at"]), "token created_at")
    for token in (svc.submit_token, svc.read_token, svc.worker_token):
        eq(svc.api.call("GET", "/api/v1/tokens", token=token)[0], 403, "list needs admin")
        eq(svc.api.call("DELETE", "/api/v1/tokens/%d" % tid, token=token)[0], 403,
           "revoke needs admin")

    status, revoked = svc.api.call("DELETE", "/api/v1/tokens/%d" % tid)
    eq((status, revoked["id"], revoked["name"]), (200, tid, P + "revoke"), "revoked")
    check(STAMP.match(revoked["revoked_at"]), "revoked_at set")
    for path in ("/api/v1/jobs?limit=1", "/api/v1/repos", "/api/v1/jobs/1"):
        status, reply = svc.api.call("GET", path, token=secret)
        eq((status, error_code(reply)), (401, "unauthorized"), "revoked token on " + path)
        # Issue 15: a token that was sent but refused is named as such.
        eq(reply["error"]["message"], "token refused: it is unknown or revoked",
           "what a revoked token is told")
    status, reply = svc.api.call("GET", "/api/v1/repos", token="")
    eq((status, reply["error"]["message"]),
       (401, "a valid 'Authorization: Bearer TOKEN' header is required"),
       "what a request without a token is told")
    eq(svc.api.call("GET", "/healthz", token=secret)[0], 200, "public route still public")
    listed = [t for t in svc.api.ok("GET", "/api/v1/tokens")["tokens"] if t["id"] == tid]
    eq(listed[0]["revoked_at"], revoked["revoked_at"], "listed as revoked")

    status, reply = svc.api.call("DELETE", "/api/v1/tokens/%d" % tid)
    eq((status, error_code(reply)), (409, "revoked"), "revoking twice")
    for bad in ("99999999", "0", "abc", "-3", "1e3", "99999999999999999999999"):
        status, reply = svc.api.call("DELETE", "/api/v1/tokens/" + bad)
        eq((status, error_code(reply)), (404, "not_found"), "revoke %s" % bad)
    eq(svc.api.call("GET", "/api/v1/jobs?limit=1", token=svc.read_token)[0], 200,
       "other tokens unaffected")


@test
def rerun_makes_a_new_job_that_finds_the_same_culprit(env):
    m = made(env)
    svc, A = env.svc, m["A"]
    status, job = svc.api.call("POST", "/api/v1/jobs/%d/rerun" % A["id"],
                               token=svc.submit_token)
    eq(status, 201, "rerun status: %r" % (job,))
    check(job["id"] > A["id"], "a new job")
    eq((job["state"], job["repo"], job["testcase"], job["good"], job["bad"],
        job["good_rev"], job["bad_rev"], job["notify"], job["candidates"]),
       ("queued", A["repo"], A["testcase"], A["good"], A["bad"], A["good"], A["bad"],
        ["dev@example.org"], A["candidates"]), "same range, resolved revisions")
    done = svc.wait(job["id"])
    eq((done["state"], done["verdict"], done["culprit"]),
       ("done", "regression", A["culprit"]), "same verdict and culprit")
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % A["id"])["culprit"], A["culprit"],
       "the old job is unchanged")

    for path, want in (("/api/v1/jobs/99999999/rerun", 404), ("/api/v1/jobs/x/rerun", 404)):
        status, reply = svc.api.call("POST", path, token=svc.submit_token)
        eq((status, error_code(reply)), (want, "not_found"), path)
    eq(svc.api.call("POST", "/api/v1/jobs/%d/rerun" % A["id"], token=svc.read_token)[0],
       403, "rerun needs submit")
    eq(svc.api.call("GET", "/api/v1/jobs/%d/rerun" % A["id"], token=svc.read_token)[0],
       405, "rerun is a POST")


@test
def openapi_document_is_served_to_anyone(env):
    svc = env.svc
    status, headers, text = raw_get(svc.url + "/api/v1/openapi.yaml")
    eq(status, 200, "served without a token")
    eq(headers["Content-Type"], "application/yaml", "content type")
    with open(os.path.join(harness.ROOT, "web", "openapi.yaml")) as f:
        eq(text, f.read(), "the document beside the server")
    check(text.startswith("openapi: 3.0."), "an OpenAPI 3.0 document")
    doc = yaml.safe_load(text)  # python3-yaml, from scripts/install-deps
    check("/api/v1/jobs/{id}/runs.csv" in doc["paths"], "runs.csv documented")
    eq(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer",
       "bearer scheme")
    eq(svc.api.call("POST", "/api/v1/openapi.yaml", token="")[0], 405, "GET only")
