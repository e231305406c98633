"""Connection limits (issue 11): a flood of idle connections from one
address must not take the server from everybody else.  Connections past
the per-address limit are answered 503 with Retry-After (up to a margin,
then dropped at once), idle connections are closed after the connection
timeout, and /healthz from another loopback address (127.0.0.2) answers
promptly throughout.  Job submissions are limited per token: jobs open
at once and jobs submitted per hour, past which the submission is
answered 429 with Retry-After.  Each test runs a server of its own."""
import json
import os
import resource
import socket
import threading
import time
import urllib.error
import urllib.request

from harness import Service, bench_repo, check, eq, test

FLOOD = 1000


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))


def connect(port, source="127.0.0.1", timeout=5.0):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def get(sock, path="/healthz"):
    """Sends one GET on `sock`; the status code, the raw answer (None and
    b"" when the server closed or reset the connection)."""
    try:
        sock.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None, b""
    if not data.startswith(b"HTTP/1.1 "):
        return None, data
    return int(data[9:12]), data


def healthz_from(port, source):
    started = time.time()
    s = connect(port, source)
    try:
        status, _ = get(s)
    finally:
        s.close()
    return status, time.time() - started


def service(env, name, *extra):
    root = os.path.join(env.root, name)
    os.makedirs(root, exist_ok=True)
    return Service(root, env.cluster, name, worker=False,
                   conninfo=env.cluster.database(name.replace("-", "_")),
                   extra_args=extra)


@test
def idle_flood_from_one_address_leaves_healthz_answering(env):
    raise_fd_limit(FLOOD + 256)
    # The defaults: 64 connections from one address, 1000 in all.
    svc = service(env, "flood")
    flood = []
    try:
        # The flood comes from an address nothing else here uses: the set-up's
        # own connections from 127.0.0.1 may still be counted for a moment.
        for _ in range(FLOOD):
            try:
                flood.append(connect(svc.port, "127.0.0.4"))
            except OSError:
                pass
        time.sleep(0.5)
        for source in ("127.0.0.2", "127.0.0.3"):
            status, took = healthz_from(svc.port, source)
            eq(status, 200, "/healthz from %s during the flood" % source)
            check(took < 2.0, "/healthz from %s took %.2f s" % (source, took))
        # The flood's own connections: the first 64 are served, the next
        # few are told to come back later, the rest were closed at once.
        answers = [get(s) for s in flood]
        served = sum(1 for status, _ in answers if status == 200)
        refused = [data for status, data in answers if status == 503]
        eq(served, 64, "connections served from the flooding address")
        check(refused, "some connections past the limit answered 503")
        check(b"Retry-After:" in refused[0] and b"too_many_connections" in
              refused[0], "a 503 says why and when: %r" % refused[0][:300])
        check(len(refused) < FLOOD - served, "the rest were dropped")
    finally:
        for s in flood:
            s.close()
        svc.stop()


@test
def connections_past_the_total_limit_get_503_and_idle_ones_time_out(env):
    svc = service(env, "total", "--max-connections", "20",
                  "--connection-timeout", "1")
    held = []
    try:
        for i in range(20):
            held.append(connect(svc.port, "127.0.0.%d" % (10 + i % 5)))
        time.sleep(0.2)
        s = connect(svc.port, "127.0.0.2")
        status, data = get(s)
        s.close()
        eq(status, 503, "a connection past the total limit: %r" % data[:200])
        # The held connections are idle: the server closes them after the
        # connection timeout, and serves again.
        time.sleep(2.5)
        for s in held:
            s.settimeout(1)
            try:
                eq(s.recv(1), b"", "an idle connection was closed")
            except ConnectionResetError:
                pass
        status, took = healthz_from(svc.port, "127.0.0.2")
        eq(status, 200, "/healthz once the idle connections are gone")
    finally:
        for s in held:
            s.close()
        svc.stop()


def submit_raw(svc, token, body):
    """POST /api/v1/jobs: the status, the JSON answer and the headers."""
    req = urllib.request.Request(svc.url + "/api/v1/jobs",
                                 data=json.dumps(body).encode(), method="POST")
    req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read()), r.headers
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers


def submit_at_once(svc, token, body, n):
    """n submissions started together; their (status, reply, headers)."""
    results = []
    barrier = threading.Barrier(n)

    def one():
        barrier.wait()
        results.append(submit_raw(svc, token, body))

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def jobs_total(svc):
    return svc.api.ok("GET", "/api/v1/jobs")["total"]


@test
def a_token_past_its_job_limits_is_answered_429_with_retry_after(env):
    svc = service(env, "quota", "--max-jobs-per-hour", "6")
    try:
        repo, shas = bench_repo(os.path.join(env.root, "quota-repo"), 2,
                                owner=__name__)
        svc.register("quota", repo, "quota")
        body = {"repo": "quota", "testcase": "quota", "good": shas[0],
                "bad": shas[-1]}
        for bad in (-1, "2", 1000001, 2.5):
            status, reply = svc.api.call("POST", "/api/v1/tokens", {
                "name": "bad-limit", "role": "submit", "max_open_jobs": bad})
            eq((status, reply["error"]["code"]), (400, "invalid_field"),
               "max_open_jobs %r" % (bad,))
        made = svc.api.ok("POST", "/api/v1/tokens", {
            "name": "two-open", "role": "submit", "max_open_jobs": 2})
        eq((made["max_open_jobs"], made["max_jobs_per_hour"]), (2, None),
           "the limits of the new token")
        listed = [t for t in svc.api.ok("GET", "/api/v1/tokens")["tokens"]
                  if t["id"] == made["id"]][0]
        eq((listed["max_open_jobs"], listed["max_jobs_per_hour"]), (2, None),
           "the limits as listed")
        # Four submissions at once: two are stored, two refused, however
        # they interleave.
        results = submit_at_once(svc, made["token"], body, 4)
        statuses = sorted(r[0] for r in results)
        eq(statuses, [201, 201, 429, 429], "four concurrent submissions")
        refused = [r for r in results if r[0] == 429]
        for _, reply, headers in refused:
            eq(reply["error"]["code"], "too_many_jobs", "the 429's code")
            check(headers.get("Retry-After", "").isdigit(),
                  "a Retry-After: %r" % dict(headers))
        eq(jobs_total(svc), 2, "two jobs stored")
        # Once a job has ended, the token may submit again.
        ids = [r[1]["id"] for r in results if r[0] == 201]
        svc.api.ok("DELETE", "/api/v1/jobs/%d" % ids[0], token=made["token"])
        eq(submit_raw(svc, made["token"], body)[0], 201, "after a job ended")
        eq(submit_raw(svc, made["token"], body)[0], 429, "two open again")
        # The web form says so too, on the form.
        from test_web import Browser
        b = Browser(svc.url).sign_in(made["token"])
        status, hdrs, page = b.post("/jobs/new", dict(body, csrf=b.csrf))
        eq(status, 429, "the form past the limit")
        check("jobs queued or running, its limit" in page and
              hdrs.get("Retry-After") == "60", "the form says why and when")
        # The server's hourly limit (6): the token has submitted 3; the
        # cancelled jobs count for the hour all the same.
        for job in svc.api.ok("GET", "/api/v1/jobs")["jobs"]:
            if job["state"] in ("queued", "running"):
                svc.api.ok("DELETE", "/api/v1/jobs/%d" % job["id"])
        for _ in range(3):
            eq(submit_raw(svc, made["token"], body)[0], 201, "within the hour")
            svc.api.ok("DELETE", "/api/v1/jobs/%d" % svc.api.ok(
                "GET", "/api/v1/jobs?limit=1")["jobs"][0]["id"])
        status, reply, headers = submit_raw(svc, made["token"], body)
        eq((status, reply["error"]["code"]), (429, "too_many_jobs"),
           "the seventh submission in the hour")
        check("hour" in reply["error"]["message"], reply["error"]["message"])
        wait = int(headers.get("Retry-After", "0"))
        check(3500 <= wait <= 3600, "Retry-After when the oldest leaves the "
              "hour: %d" % wait)
        eq(jobs_total(svc), 6, "six jobs stored in all")
        # The admin's token form sets the limits too.
        from test_web import Browser
        admin = Browser(svc.url).sign_in(svc.api.token)
        status, _, page = admin.post("/admin/tokens", {
            "csrf": admin.csrf, "name": "web-limited", "role": "submit",
            "max_open_jobs": "many", "max_jobs_per_hour": ""})
        check(status == 400 and "Open jobs at most" in page and
              "from 0 to 1000000" in page, "a limit that is no number: %d" % status)
        status, _, page = admin.post("/admin/tokens", {
            "csrf": admin.csrf, "name": "web-limited", "role": "submit",
            "max_open_jobs": "1", "max_jobs_per_hour": ""})
        eq(status, 303, "a token made on the form with a limit, redirected")
        listed = [t for t in svc.api.ok("GET", "/api/v1/tokens")["tokens"]
                  if t["name"] == "web-limited"]
        eq([(t["max_open_jobs"], t["max_jobs_per_hour"]) for t in listed],
           [(1, None)], "the form's limits, stored")
        # A token of its own limits (0: none) passes the server's.
        free = svc.api.ok("POST", "/api/v1/tokens", {
            "name": "no-limit", "role": "submit", "max_jobs_per_hour": 0,
            "max_open_jobs": 0})
        for _ in range(7):
            eq(submit_raw(svc, free["token"], body)[0], 201, "no limits")
    finally:
        svc.stop()


@test
def the_servers_open_jobs_limit_comes_from_its_option(env):
    svc = service(env, "quota-open", "--max-open-jobs", "1")
    try:
        repo, shas = bench_repo(os.path.join(env.root, "quota-open-repo"), 2,
                                owner=__name__)
        svc.register("quota-open", repo, "quota-open")
        body = {"repo": "quota-open", "testcase": "quota-open",
                "good": shas[0], "bad": shas[-1]}
        eq(submit_raw(svc, svc.submit_token, body)[0], 201, "the first job")
        status, reply, headers = submit_raw(svc, svc.submit_token, body)
        eq((status, reply["error"]["code"]), (429, "too_many_jobs"),
           "a second open job: %r" % reply)
        eq(headers.get("Retry-After"), "60", "Retry-After of the open limit")
        eq(jobs_total(svc), 1, "one job stored")
    finally:
        svc.stop()
