"""Hostile input of issue 11, each case reported on main: worker uploads
with values outside their columns' range, id path segments with trailing
garbage, job runs bounds that contradict the testcase's, form posts from
a browser that cannot be read, and bodies declared too large for the
server.  Each refusal must store nothing, which the tests check through
the API."""
import json
import os
import socket
import urllib.parse

from harness import Api, Service, bench_repo, check, eq, test
from test_web import Browser

LARGE = 50 * 1024 * 1024


def raw(port, request, read_until=b"\r\n\r\n", timeout=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(request)
        data = b""
        while read_until not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data
    except (ConnectionResetError, BrokenPipeError):
        return data
    finally:
        s.close()


def port_of(svc):
    return int(svc.url.rsplit(":", 1)[1])


def job_runs(api, job_id):
    return api.ok("GET", "/api/v1/jobs/%d/runs" % job_id)


@test
def hostile_upload_values_out_of_range_are_refused_and_store_nothing(env):
    svc = Service(env.root, env.cluster, "hostile_upload", worker=False,
                  conninfo=env.cluster.database("hostile_upload"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, "hostile-upload"), 2,
                                owner=__name__)
        svc.register("hostile-upload", repo, "hostile-upload")
        job = svc.submit({"repo": "hostile-upload", "testcase": "hostile-upload",
                          "good": shas[0], "bad": shas[-1]})
        w = Api(svc.url, svc.worker_token)
        wid = w.ok("POST", "/api/v1/workers",
                   {"name": "hostile", "group": "default"})["id"]
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        path = "/api/v1/tasks/%d/result" % task["id"]
        first = task["commits"][0]
        index = first["index"]

        def run(**kw):
            r = {"exit_code": 0, "wall_s": 0.1, "commit_index": index,
                 "metrics": {"bench.score": 1000.0}}
            r.update(kw)
            return r

        def outcome(**kw):
            o = {"commit_index": index, "status": "crashed"}
            o.update(kw)
            return o

        big = 9223372036854775807
        bad = {
            "exit_code 2^63-1": {"runs": [run(exit_code=big)]},
            "exit_code -2^31-1": {"runs": [run(exit_code=-2147483649)]},
            "wall_s negative": {"runs": [run(wall_s=-1.0)]},
            "wall_s huge": {"runs": [run(wall_s=1e300)]},
            "wall_s a string": {"runs": [run(wall_s="NaN")]},
            "commit_index huge": {"runs": [run(commit_index=big)]},
            "outcome signal 2^31": {"runs": [],
                                    "outcomes": [outcome(signal=2147483648)]},
            "outcome signal -1": {"runs": [], "outcomes": [outcome(signal=-1)]},
            "outcome exit_code 2^63-1": {"runs": [],
                                         "outcomes": [outcome(exit_code=big)]},
            "builds 2^63-1": {"runs": [], "builds": big},
            "builds negative": {"runs": [], "builds": -1},
        }
        for what, body in bad.items():
            body = dict(body, lease=task["lease"])
            status, reply = w.call("POST", path, body)
            check(status in (400, 422), "%s: got %d %r" % (what, status, reply))
            check(isinstance(reply, dict) and "error" in reply,
                  "%s: a JSON error: %r" % (what, reply))
        # Literal NaN and an overflowing number are no JSON.
        for text in (b'{"lease": %d, "runs": [{"exit_code": 0, "wall_s": NaN,'
                     b' "commit_index": %d, "metrics": {}}]}',
                     b'{"lease": %d, "runs": [{"exit_code": 0, "wall_s": 1e999,'
                     b' "commit_index": %d, "metrics": {}}]}'):
            status, reply = w.call("POST", path, raw_body=text % (task["lease"], index))
            eq((status, reply["error"]["code"]), (400, "invalid_json"),
               "NaN or 1e999: %r" % text)
        runs = job_runs(svc.api, job["id"])
        eq(runs["runs"] if isinstance(runs, dict) else runs, [],
           "nothing stored by the refused uploads")
        got = svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])
        check(all(c.get("outcome") is None for c in got["commits"]),
              "no outcome stored: %r" % got["commits"])
        # The task is still open for a good upload.
        runs = [run() for _ in range(first["runs"])]
        w.ok("POST", path, {"lease": task["lease"], "runs": runs})
    finally:
        svc.stop()


# Ids as a path segment: each names nothing, however it is spelt.
def bad_ids(n):
    return ["%d%%00" % n, "%d%%00x" % n, "%dx" % n, "+%d" % n, "0%d" % n,
            "-%d" % n, "%d%%20" % n, "%%20%d" % n, "%d.0" % n, "%de0" % n,
            "%d%%2F" % n, "99999999999999999999"]


@test
def hostile_id_segments_with_garbage_name_nothing_on_every_route(env):
    svc = Service(env.root, env.cluster, "hostile_ids", worker=False,
                  conninfo=env.cluster.database("hostile_ids"))
    try:
        ids_on_every_route(env, svc)
    finally:
        svc.stop()


def ids_on_every_route(env, svc):
    repo, shas = bench_repo(os.path.join(env.root, "hostile-ids"), 2, owner=__name__)
    svc.register("hostile-ids", repo, "hostile-ids")
    job = svc.submit({"repo": "hostile-ids", "testcase": "hostile-ids",
                      "good": shas[0], "bad": shas[-1]})
    n = job["id"]
    w = Api(svc.url, svc.worker_token)
    wid = w.ok("POST", "/api/v1/workers", {"name": "hostile-ids", "group": "none"})["id"]
    tid = svc.api.ok("POST", "/api/v1/tokens",
                     {"name": "hostile-ids-victim", "role": "read"})["id"]
    watch = svc.api.ok("POST", "/api/v1/watches",
                       {"repo": "hostile-ids", "branch": "main",
                        "testcases": ["hostile-ids"]}, expect=(201,))["id"]
    sha = shas[-1]
    # (method, pattern with {} for the id, token, id that exists)
    api_routes = [
        ("GET", "/api/v1/jobs/{}", None, n),
        ("GET", "/api/v1/jobs/{}/report", None, n),
        ("GET", "/api/v1/jobs/{}/runs", None, n),
        ("GET", "/api/v1/jobs/{}/runs.csv", None, n),
        ("GET", "/api/v1/jobs/{}/commits/%s/log" % sha, None, n),
        ("POST", "/api/v1/jobs/{}/rerun", svc.submit_token, n),
        ("DELETE", "/api/v1/jobs/{}/keys", svc.submit_token, n),
        ("DELETE", "/api/v1/jobs/{}", svc.submit_token, n),
        ("POST", "/api/v1/workers/{}/claim", svc.worker_token, wid),
        ("POST", "/api/v1/tasks/{}/heartbeat", svc.worker_token, 1),
        ("POST", "/api/v1/tasks/{}/result", svc.worker_token, 1),
        ("DELETE", "/api/v1/tokens/{}", None, tid),
        ("GET", "/api/v1/watches/{}", None, watch),
        ("GET", "/api/v1/watches/{}/history", None, watch),
        ("POST", "/api/v1/watches/{}/pause", None, watch),
        ("POST", "/api/v1/watches/{}/resume", None, watch),
        ("DELETE", "/api/v1/watches/{}", None, watch),
    ]
    jobs_before = svc.api.ok("GET", "/api/v1/jobs?repo=hostile-ids")["total"]
    for method, pattern, token, good in api_routes:
        for bad in bad_ids(good):
            path = pattern.replace("{}", bad)
            body = {"lease": 1, "runs": []} if "tasks" in path else (
                {} if method == "POST" else None)
            status, reply = svc.api.call(method, path, body, token=token)
            check(status in (400, 404), "%s %s: got %d %r" % (method, path, status,
                                                              reply))
            check(isinstance(reply, dict) and "error" in reply,
                  "%s %s: a JSON error: %r" % (method, path, reply))
    # Nothing was cancelled, re-run, revoked or deleted.
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % n)["state"] in ("queued", "running"),
       True, "the job is still open")
    eq(svc.api.ok("GET", "/api/v1/jobs?repo=hostile-ids")["total"], jobs_before,
       "no job re-run")
    eq(svc.api.ok("GET", "/api/v1/watches/%d" % watch)["id"], watch, "the watch is kept")
    status, _ = svc.api.call("DELETE", "/api/v1/tokens/%d" % tid)
    eq(status, 200, "the token was not revoked by a garbage id")
    b = Browser(svc.url).sign_in(svc.api.token)
    web_routes = [
        ("GET", "/jobs/{}", n), ("GET", "/jobs/{}/live", n),
        ("GET", "/jobs/{}/report", n), ("GET", "/jobs/{}/runs.csv", n),
        ("GET", "/jobs/{}/runs.json", n),
        ("GET", "/jobs/{}/commits/%s/log" % sha, n),
        ("POST", "/jobs/{}/cancel", n), ("POST", "/jobs/{}/rerun", n),
        ("GET", "/watches/{}", watch),
        ("GET", "/watches/{}/testcases/hostile-ids", watch),
        ("POST", "/watches/{}/pause", watch), ("POST", "/watches/{}/resume", watch),
        ("POST", "/watches/{}/delete", watch),
    ]
    for method, pattern, good in web_routes:
        for bad in bad_ids(good):
            path = pattern.replace("{}", bad)
            if method == "POST":
                status, hdrs, page = b.post(path, {"csrf": b.csrf})
            else:
                status, hdrs, page = b.get(path)
            check(status in (400, 404), "%s %s: got %d" % (method, path, status))
            check("text/html" in hdrs.get("Content-Type", "") and "</html>" in page,
                  "%s %s: an HTML page: %r" % (method, path, page[:200]))
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % n)["state"] in ("queued", "running"),
       True, "the job is still open after the web posts")
    eq(svc.api.ok("GET", "/api/v1/jobs?repo=hostile-ids")["total"], jobs_before,
       "no job re-run from the web")
    eq(svc.api.ok("GET", "/api/v1/watches/%d" % watch)["id"], watch,
       "the watch is kept after the web posts")
    svc.api.call("DELETE", "/api/v1/watches/%d" % watch)
    svc.api.call("DELETE", "/api/v1/jobs/%d" % n, token=svc.submit_token)


@test
def hostile_runs_bounds_that_contradict_the_testcase_are_refused(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "hostile-runs"), 2, owner=__name__)
    svc.register("hostile-runs", repo, "hostile-runs", runs_min=5, runs_max=40)
    base = {"repo": "hostile-runs", "testcase": "hostile-runs",
            "good": shas[0], "bad": shas[-1]}

    def total():
        return svc.api.ok("GET", "/api/v1/jobs?testcase=hostile-runs")["total"]

    before = total()
    status, reply = svc.api.call("POST", "/api/v1/jobs", dict(base, runs_min=60),
                                 token=svc.submit_token)
    eq((status, reply["error"]["code"]), (422, "runs_conflict"), "runs_min above: %r" % reply)
    check("runs_min" in reply["error"]["message"] and "40" in reply["error"]["message"],
          "the message names the field and the testcase's runs_max: %r" % reply)
    eq(reply["error"].get("field"), "runs_min", "the field at fault")
    status, reply = svc.api.call("POST", "/api/v1/jobs", dict(base, runs_max=3),
                                 token=svc.submit_token)
    eq((status, reply["error"]["code"]), (422, "runs_conflict"), "runs_max below: %r" % reply)
    check("runs_max" in reply["error"]["message"] and "5" in reply["error"]["message"],
          "the message names the field and the testcase's runs_min: %r" % reply)
    eq(reply["error"].get("field"), "runs_max", "the field at fault")
    eq(total(), before, "nothing stored for the refused requests")
    # What does not contradict is taken, and the answer says where each
    # bound came from.
    for extra, want in (({"runs_min": 10}, (10, 40, "job", "testcase")),
                        ({"runs_max": 6}, (5, 6, "testcase", "job")),
                        ({"runs_min": 60, "runs_max": 80}, (60, 80, "job", "job")),
                        ({}, (5, 40, "testcase", "testcase"))):
        job = svc.submit(dict(base, **extra))
        got = svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])
        eq((got["runs_min"], got["runs_max"], got["runs_from"]["runs_min"],
            got["runs_from"]["runs_max"]), want, "bounds applied for %r" % extra)
        svc.api.call("DELETE", "/api/v1/jobs/%d" % job["id"], token=svc.submit_token)
    # The web form says the same next to the field.
    b = Browser(svc.url).sign_in(svc.submit_token)
    form = {"csrf": b.csrf, "repo": "hostile-runs", "testcase": "hostile-runs",
            "good": shas[0], "bad": shas[-1], "runs_min": "60"}
    status, _, page = b.post("/jobs/new", form)
    eq(status, 422, "the form with runs_min above the testcase's runs_max")
    check("is above the runs_max 40 of testcase" in page,
          "the form says the testcase's bound: %r" % page[-2000:])
    status, _, page = b.post("/jobs/new", dict(form, runs_min="", runs_max="3"))
    eq(status, 422, "the form with runs_max below the testcase's runs_min")
    check("is below the runs_min 5 of testcase" in page,
          "the form says the testcase's bound: %r" % page[-2000:])
    eq(total(), before + 4, "nothing stored for the refused forms")


def multipart(fields):
    boundary = "hostileboundary"
    parts = []
    for k, v in fields.items():
        parts.append("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                     % (boundary, k, v))
    body = ("".join(parts) + "--%s--\r\n" % boundary).encode()
    return body, "multipart/form-data; boundary=" + boundary


@test
def hostile_form_posts_from_a_browser_get_html_pages(env):
    svc = env.svc
    port = port_of(svc)
    b = Browser(svc.url).sign_in(svc.submit_token)
    before = svc.api.ok("GET", "/api/v1/jobs")["total"]
    cookie = "; ".join("%s=%s" % kv for kv in b.cookies.items())

    def post(path, body, ctype, extra=b""):
        data = raw(port, b"POST %s HTTP/1.1\r\nHost: x\r\nCookie: %s\r\n"
                   b"Content-Type: %s\r\nContent-Length: %d\r\n%s"
                   b"Connection: close\r\n\r\n%s"
                   % (path.encode(), cookie.encode(), ctype.encode(), len(body),
                      extra, body), b"</html>")
        head, _, page = data.partition(b"\r\n\r\n")
        return head, page

    cases = [
        ("/jobs/new", b"csrf=" + b.csrf.encode() + b"&repo=%zz", "application/x-www-form-urlencoded"),
        ("/jobs/new", b"csrf=" + b.csrf.encode() + b"&repo=%e2%82", "application/x-www-form-urlencoded"),
        ("/jobs/new", b"repo=x&good=a&bad=b", "application/x-www-form-urlencoded"),
        ("/jobs/new",) + multipart({"csrf": b.csrf, "repo": "x"}),
        ("/signin",) + multipart({"csrf": "0" * 64, "token": "x"}),
        ("/admin/tokens", b"name=%ff", "application/x-www-form-urlencoded"),
    ]
    for path, body, ctype in cases:
        head, page = post(path, body, ctype)
        check(head[9:10] == b"4", "%s %r: a 4xx: %r" % (path, body[:40], head[:80]))
        check(b"Content-Type: text/html" in head, "%s %r: an HTML page: %r"
              % (path, body[:40], head))
        check(b"</html>" in page, "%s %r: the page: %r" % (path, body[:40], page[-300:]))
    # A form body over the server's limit: an HTML 413, also when the
    # browser waits for 100 Continue (then before any body is sent).
    body = b"csrf=" + b.csrf.encode() + b"&notify=" + b"a" * (17 * 1024 * 1024)
    head, page = post("/jobs/new", body, "application/x-www-form-urlencoded")
    check(head.startswith(b"HTTP/1.1 413 "), "an over-long form: %r" % head[:80])
    check(b"Content-Type: text/html" in head, "an HTML 413: %r" % head)
    data = raw(port, b"POST /jobs/new HTTP/1.1\r\nHost: x\r\nCookie: %s\r\n"
               b"Content-Type: application/x-www-form-urlencoded\r\n"
               b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n"
               % (cookie.encode(), LARGE), b"</html>")
    check(data.startswith(b"HTTP/1.1 413 "), "413 first, no 100 Continue: %r" % data[:80])
    check(b"Content-Type: text/html" in data.partition(b"\r\n\r\n")[0],
          "an HTML 413 for the browser: %r" % data[:300])
    # A path no route of the web UI takes, or a method it does not take:
    # a page too.
    for path, body, want in (("/jobs/1/2/cancel", b"csrf=x", b" 404 "),
                             ("/jobs/1/live", b"csrf=x", b" 405 ")):
        head, page = post(path, body, "application/x-www-form-urlencoded")
        check(want in head[:20] and b"text/html" in head and b"</html>" in page,
              "%s: an HTML page: %r" % (path, head[:200]))
    # The API keeps its JSON.
    status, reply = svc.api.call("POST", "/api/v1/nothing", {})
    eq((status, reply["error"]["code"]), (404, "not_found"), "the API's 404")
    data = raw(port, b"POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n"
               b"Content-Type: application/x-www-form-urlencoded\r\n"
               b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % LARGE, b"}")
    check(data.startswith(b"HTTP/1.1 413 ") and b"application/json" in data
          and b"too_large" in data, "the API's 413 is JSON: %r" % data[:300])
    status, reply = svc.api.call("POST", "/api/v1/jobs", raw_body=b"{" + b" " * (17 << 20) + b"}",
                                 token=svc.submit_token)
    eq((status, reply["error"]["code"]), (413, "too_large"), "an over-long API body")
    eq(svc.api.ok("GET", "/api/v1/jobs")["total"], before, "no job stored")
