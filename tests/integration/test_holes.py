"""Holes of issue 11 that the HTTP layer and the mirrors close: a path
with %00 does not name what precedes the NUL, a body declared larger than
the server takes is refused before "100 Continue", and mirror work on one
repository does not wait for another's (a registration stalled on a slow
remote held one global lock and every job submission waited)."""
import http.server
import os
import socket
import threading
import time

from harness import bench_repo, check, eq, test

LARGE = 50 * 1024 * 1024


def raw(port, request, read_until=b"\r\n\r\n", timeout=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(request)
        data = b""
        while read_until not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data
    finally:
        s.close()


@test
def a_path_with_an_encoded_nul_names_nothing(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "holes-nul"), 2, owner=__name__)
    svc.register("holes-nul", repo, "holes-nul")
    job = svc.submit({"repo": "holes-nul", "testcase": "holes-nul",
                      "good": shas[0], "bad": shas[-1]})
    path = "/api/v1/jobs/%d" % job["id"]
    eq(svc.api.call("GET", path)[0], 200, "the job itself")
    for suffix in ("%00", "%00x", "%2500"):
        status, reply = svc.api.call("GET", path + suffix)
        eq(status, 404, "GET %s%s" % (path, suffix))
        eq(reply["error"]["code"], "not_found", "GET %s%s" % (path, suffix))
    status, reply = svc.api.call("GET", "/api/v1/testcases/holes-nul%00")
    check(status == 404, "a name with %%00 names nothing: %d" % status)
    svc.api.call("DELETE", path, token=svc.submit_token)


@test
def a_body_declared_too_large_is_refused_before_100_continue(env):
    port = int(env.svc.url.rsplit(":", 1)[1])
    data = raw(port, (
        "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n"
        "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
        "Content-Length: %d\r\nExpect: 100-continue\r\n\r\n"
        % (env.svc.submit_token, LARGE)).encode())
    check(data.startswith(b"HTTP/1.1 413 "),
          "413 first, no 100 Continue: %r" % data[:200])
    check(b"too_large" in raw(port, (
        "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: %d\r\nExpect: 100-continue\r\n\r\n"
        % LARGE).encode(), b"}"), "the error says why")


class SlowGit(http.server.BaseHTTPRequestHandler):
    """A git remote that takes `delay` seconds to answer, then has nothing."""
    delay = 6.0

    def do_GET(self):
        time.sleep(self.delay)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@test
def a_slow_registration_does_not_stall_jobs_on_other_repositories(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "holes-lock"), 2, owner=__name__)
    svc.register("holes-lock", repo, "holes-lock")
    slow = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowGit)
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    result = {}

    def register_slow():
        started = time.time()
        result["status"] = svc.api.call("POST", "/api/v1/repos", {
            "name": "holes-slow",
            "url": "http://127.0.0.1:%d/slow.git" % slow.server_address[1]})[0]
        result["took"] = time.time() - started

    try:
        thread = threading.Thread(target=register_slow)
        thread.start()
        time.sleep(1.0)  # the slow registration is fetching now
        started = time.time()
        job = svc.submit({"repo": "holes-lock", "testcase": "holes-lock",
                          "good": shas[0], "bad": shas[-1]})
        took = time.time() - started
        thread.join(30)
        check(result.get("took", 0) >= SlowGit.delay - 1,
              "the slow registration was slow: %r" % result)
        eq(result["status"], 422, "a remote with nothing is refused")
        check(took < 3.0, "a job on another repository waited %.1f s" % took)
        svc.api.call("DELETE", "/api/v1/jobs/%d" % job["id"],
                     token=svc.submit_token)
    finally:
        slow.shutdown()


@test
def a_malformed_form_from_a_browser_gets_an_html_page(env):
    port = int(env.svc.url.rsplit(":", 1)[1])
    for body in (b"token=%ff%fe", b"token=a%00b", b"%zz=1&token=%e2%82"):
        data = raw(port, b"POST /signin HTTP/1.1\r\nHost: x\r\n"
                   b"Content-Type: application/x-www-form-urlencoded\r\n"
                   b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                   % (len(body), body), b"</html>")
        head, _, page = data.partition(b"\r\n\r\n")
        check(head.startswith(b"HTTP/1.1 400 "), "400 for %r: %r" % (body, head[:80]))
        check(b"Content-Type: text/html" in head, "an HTML page for %r: %r"
              % (body, head))
        check(b"This form could not be read" in page, "the page says why: %r"
              % page[-600:])


@test
def an_exit_code_out_of_range_is_refused_400_not_a_500(env):
    from harness import Api, Service
    svc = Service(env.root, env.cluster, "holes_exit", worker=False,
                  conninfo=env.cluster.database("holes_exit"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, "holes-exit"), 2, owner=__name__)
        svc.register("holes-exit", repo, "holes-exit")
        svc.submit({"repo": "holes-exit", "testcase": "holes-exit",
                    "good": shas[0], "bad": shas[-1]})
        w = Api(svc.url, svc.worker_token)
        wid = w.ok("POST", "/api/v1/workers", {"name": "holes-exit", "group": "default"})["id"]
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        path = "/api/v1/tasks/%d/result" % task["id"]
        for code in (9223372036854775807, 2147483648, -2147483649):
            runs = [{"exit_code": code, "wall_s": 0.1, "metrics": {}}]
            status, reply = w.call("POST", path, {"lease": task["lease"], "runs": runs})
            eq((status, reply["error"]["code"]), (400, "invalid_run"),
               "exit code %d" % code)
        runs = [{"exit_code": 0, "wall_s": 0.1, "metrics": {"bench.score": 1000.0},
                 "commit_index": task["commits"][0]["index"]}
                for _ in range(task["commits"][0]["runs"])]
        w.ok("POST", path, {"lease": task["lease"], "runs": runs})
    finally:
        svc.stop()
