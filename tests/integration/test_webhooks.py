"""Webhooks (issue 15) on real parts: a receiver of our own (Python's
http.server on 127.0.0.1), a server with a worker on a database of its
own, and jobs with planted regressions.  Checked: a job's webhook delivers
one POST whose HMAC-SHA256 signature verifies with the job's secret and
whose body names the verdict and the culprit; a testcase's github-status
webhook posts to its URL with {sha} replaced by the bad commit, state
"failure", signed with the server's secret and carrying its bearer token;
a receiver that answers 500 then 200 is retried and delivered; a 4xx is
given up at once; the job's API and page say so; bad webhook URLs are
refused 400 naming the field, and nothing is created."""
import hashlib
import hmac
import http.server
import json
import os
import re
import threading
import time

import harness
from harness import Service, bench_repo, check, eq, test

SERVER_SECRET = "server-wide secret"
TOKEN = "ghp_example_token_for_tests"


class Receiver:
    """An HTTP server on 127.0.0.1 recording every POST; `answers` maps a
    path prefix to the statuses to answer in turn (the last one repeats;
    200 when none is set)."""

    def __init__(self):
        self.posts = []
        self.answers = {}
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.posts.append((self.path, dict(self.headers.items()), body))
                    status = 200
                    for prefix, statuses in receiver.answers.items():
                        if self.path.startswith(prefix):
                            status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"answered %d" % status)

            def log_message(self, fmt, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def to(self, prefix):
        with self.lock:
            return [p for p in self.posts if p[0].startswith(prefix)]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def signature_ok(headers, body, secret):
    want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers.get("X-Statbisect-Signature-256", ""), want)


def hooks_service(env, name):
    """A server retrying webhooks at least once a second, with a server-wide
    secret and a bearer token for github-status hooks."""
    saved = {k: os.environ.get(k) for k in ("STATBISECT_WEBHOOK_SECRET",
                                            "STATBISECT_WEBHOOK_TOKEN")}
    os.environ["STATBISECT_WEBHOOK_SECRET"] = SERVER_SECRET
    os.environ["STATBISECT_WEBHOOK_TOKEN"] = TOKEN
    try:
        return Service(env.root, env.cluster, name, conninfo=env.cluster.database(name),
                       extra_args=["--webhook-retry-max", "1"])
    finally:
        for k, v in saved.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def wait_hooks(svc, job_id, want_count, timeout=60):
    deadline = time.time() + timeout
    hooks = None
    while time.time() < deadline:
        hooks = svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=svc.read_token)["webhooks"]
        if len(hooks) == want_count and all(h["state"] in ("delivered", "failed")
                                            for h in hooks):
            return {h["source"]: h for h in hooks}
        time.sleep(0.2)
    raise AssertionError("job %d: webhooks %r never settled; server log:\n%s"
                         % (job_id, hooks, svc.log("server")))


@test
def webhooks_signed_delivered_retried_and_shown(env):
    recv = Receiver()
    svc = hooks_service(env, "hooks")
    try:
        repo, shas = bench_repo(os.path.join(env.root, "hookrepo"), 10, {6: 940.0},
                                owner=__name__)
        svc.register("hookrepo", repo, "hook-tc", webhook={
            "url": recv.url + "/repos/o/r/statuses/{sha}", "format": "github-status"})
        tc = svc.api.ok("GET", "/api/v1/testcases/hook-tc")
        eq(tc["webhook"], {"url": recv.url + "/repos/o/r/statuses/{sha}",
                           "format": "github-status", "secret_set": False},
           "the testcase's webhook as shown")

        recv.answers["/job"] = [500, 200]
        job = svc.submit({"repo": "hookrepo", "testcase": "hook-tc", "good": shas[0],
                          "bad": "main", "webhook": {"url": recv.url + "/job?x=1",
                                                     "secret": "job secret"}})
        eq(job["webhook"], {"url": recv.url + "/job?x=1", "format": "statbisect",
                            "secret_set": True}, "the job's webhook, its secret not shown")
        check("job secret" not in json.dumps(job), "the secret is never returned")
        done = svc.wait(job["id"])
        eq((done["verdict"], done["culprit"]), ("regression", shas[6]), "verdict")
        hooks = wait_hooks(svc, job["id"], 2)

        # The job's own webhook: a 500, then the same signed POST again.
        posts = recv.to("/job")
        eq([p[0] for p in posts], ["/job?x=1", "/job?x=1"], "posted twice")
        eq(posts[0][2], posts[1][2], "the retry sends the same body")
        eq(posts[0][1]["X-Statbisect-Delivery"], posts[1][1]["X-Statbisect-Delivery"],
           "one delivery id")
        path, headers, body = posts[1]
        check(signature_ok(headers, body, "job secret"),
              "signature verifies with the job's secret: %r" % headers)
        check(not signature_ok(headers, body, SERVER_SECRET), "not the server's secret")
        eq(headers["X-Statbisect-Event"], "job.finished", "event header")
        eq(headers["Content-Type"], "application/json", "content type")
        check("Authorization" not in headers, "no token for a statbisect hook")
        payload = json.loads(body)
        eq(payload["event"], "job.finished", "event")
        eq((payload["job"]["id"], payload["job"]["verdict"], payload["job"]["culprit"],
            payload["job"]["state"]), (job["id"], "regression", shas[6], "done"),
           "the body's verdict and culprit")
        eq(payload["job"]["change_pct"], done["change_pct"], "the body's change")
        eq(payload["links"]["page"], "%s/jobs/%d" % (svc.url, job["id"]), "page link")
        h = hooks["job"]
        eq((h["state"], h["attempts"], h["last_status"], h["last_error"]),
           ("delivered", 2, 200, None), "the job's delivery")
        eq(int(headers["X-Statbisect-Delivery"]), h["id"], "delivery id header")

        # The testcase's github-status webhook: {sha} is the bad commit.
        posts = recv.to("/repos/")
        eq(len(posts), 1, "one status POST")
        path, headers, body = posts[0]
        eq(path, "/repos/o/r/statuses/" + shas[-1], "{sha} replaced by the bad commit")
        status = json.loads(body)
        eq(sorted(status), ["context", "description", "state", "target_url"], "status keys")
        eq((status["state"], status["target_url"], status["context"]),
           ("failure", "%s/jobs/%d" % (svc.url, job["id"]), "statbisect/hook-tc"),
           "commit status")
        check(status["description"].startswith("regression: bench.score -")
              and shas[6][:12] in status["description"]
              and len(status["description"]) <= 140, "description %r" % status["description"])
        check(signature_ok(headers, body, SERVER_SECRET), "signed with the server's secret")
        eq(headers.get("Authorization"), "Bearer " + TOKEN, "bearer token")
        eq((hooks["testcase"]["state"], hooks["testcase"]["attempts"]), ("delivered", 1),
           "the testcase's delivery")

        # A 4xx is not retried; the page says what happened to each.
        recv.answers["/gone"] = [410]
        job2 = svc.submit({"repo": "hookrepo", "testcase": "hook-tc", "good": shas[0],
                           "bad": shas[4], "webhook": {"url": recv.url + "/gone"}})
        svc.wait(job2["id"])
        hooks2 = wait_hooks(svc, job2["id"], 2)
        eq((hooks2["job"]["state"], hooks2["job"]["attempts"], hooks2["job"]["last_status"]),
           ("failed", 1, 410), "a 410 is given up at once")
        check(hooks2["job"]["last_error"].startswith("HTTP 410"), hooks2["job"]["last_error"])
        posts = recv.to("/repos/")
        eq(json.loads(posts[-1][2])["state"], "success", "no change is a success")
        check(signature_ok(recv.to("/gone")[0][1], recv.to("/gone")[0][2], SERVER_SECRET),
              "a hook without its own secret is signed with the server's")

        page = page_of(svc, job["id"])
        check(re.search(r"Webhook \(job\): delivered \(HTTP 200\) at \d{4}-", page),
              "the job page shows the delivery")
        page = page_of(svc, job2["id"])
        check("Webhook (job): failed after 1 try: HTTP 410" in page,
              "the job page shows the failure")
    finally:
        svc.stop()
        recv.stop()


def page_of(svc, job_id):
    import test_web
    b = test_web.Browser(svc.url).sign_in(svc.read_token)
    status, _, page = b.get("/jobs/%d" % job_id)
    eq(status, 200, "job page")
    return page


@test
def webhook_bad_urls_are_refused_and_passwords_masked(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "hookbad"), 3, owner=__name__)
    svc.register("hookbad", repo, "hookbad-tc")
    base = {"name": "hookbad-x", "build": "true", "run": "true", "kpi": "k",
            "higher_is_better": True}
    jobs_before = svc.psql("select count(*) from jobs")
    for url in ["ftp://example.org/hook", "not a url", "example.org/x", "http://",
                "https:///x", "http://{sha}.example.org/", "http://h/a b", ""]:
        status, reply = svc.api.call("POST", "/api/v1/testcases",
                                     dict(base, webhook={"url": url}))
        eq((status, reply["error"].get("field")), (400, "webhook.url"), "testcase with %r" % url)
        check(url == "" or url not in reply["error"]["message"], "the URL is not repeated")
        status, reply = svc.api.call("POST", "/api/v1/jobs", {
            "repo": "hookbad", "testcase": "hookbad-tc", "good": shas[0], "bad": "main",
            "webhook": {"url": url}}, token=svc.submit_token)
        eq((status, reply["error"].get("field")), (400, "webhook.url"), "job with %r" % url)
    for hook, field in [({"url": "http://h/", "format": "slack"}, "webhook.format"),
                        ({"url": "http://h/", "secret": ""}, "webhook.secret"),
                        ({"url": "http://h/", "secret": 5}, "webhook.secret"),
                        ({"url": "http://h/", "extra": 1}, "webhook"),
                        ({"format": "statbisect"}, "webhook.url"),
                        ("http://h/", "webhook")]:
        status, reply = svc.api.call("POST", "/api/v1/testcases", dict(base, webhook=hook))
        eq((status, reply["error"].get("field")), (400, field), "testcase with %r" % (hook,))
    eq(svc.api.call("GET", "/api/v1/testcases/hookbad-x")[0], 404, "no testcase created")
    eq(svc.psql("select count(*) from jobs"), jobs_before, "no job created")
    eq(svc.psql("select count(*) from webhooks w join testcases t on t.id = w.testcase_id"
                " where t.name like 'hookbad%'"), "0", "no webhook stored")

    # A password in the URL is kept but never shown; a PATCH that gives the
    # masked URL back keeps it, and a bad one changes nothing.
    created = svc.api.ok("POST", "/api/v1/testcases", dict(base, webhook={
        "url": "https://user:pa55word@hooks.example.org/x", "secret": "tc secret"}))
    eq(created["webhook"], {"url": "https://user:***@hooks.example.org/x",
                            "format": "statbisect", "secret_set": True}, "masked")
    status, reply = svc.api.call("PATCH", "/api/v1/testcases/hookbad-x",
                                 {"webhook": {"url": "ftp://h/"}})
    eq((status, reply["error"].get("field")), (400, "webhook.url"), "bad PATCH")
    patched = svc.api.ok("PATCH", "/api/v1/testcases/hookbad-x", {
        "webhook": {"url": "https://user:***@hooks.example.org/x",
                    "format": "github-status"}})
    eq(patched["webhook"], {"url": "https://user:***@hooks.example.org/x",
                            "format": "github-status", "secret_set": True},
       "the secret and the password are kept")
    eq(svc.psql("select url || ' ' || secret from webhooks w join testcases t"
                " on t.id = w.testcase_id where t.name = 'hookbad-x' and t.deleted_at is null"),
       "https://user:pa55word@hooks.example.org/x tc secret", "as stored")
    check("pa55word" not in json.dumps(svc.api.ok("GET", "/api/v1/testcases/hookbad-x")),
          "the password is never shown")
    patched = svc.api.ok("PATCH", "/api/v1/testcases/hookbad-x", {"webhook": None})
    eq(patched["webhook"], None, "removed")


@test
def cli_submit_takes_a_webhook_and_its_secret_from_the_environment(env):
    import subprocess
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "hookcli"), 3, owner=__name__)
    svc.register("hookcli", repo, "hookcli-tc")
    binary = os.path.join(harness.ROOT, "bin", "statbisect")

    def run(*args, secret=None):
        e = {k: v for k, v in os.environ.items() if not k.startswith("STATBISECT_")}
        e.update(STATBISECT_SERVER=svc.url, STATBISECT_TOKEN=svc.submit_token)
        if secret is not None:
            e["STATBISECT_WEBHOOK_SECRET"] = secret
        r = subprocess.run([binary, "submit", "--repo", "hookcli", "--testcase",
                            "hookcli-tc", "--good", shas[0], "--bad", "main", "--json"]
                           + list(args), env=e, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=120)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    jobs_before = svc.psql("select count(*) from jobs")
    code, out, err = run("--webhook", "ftp://hooks.example.org/x")
    eq(code, 2, "a bad webhook URL exits 2: %s" % err)
    check("webhook URL" in err and "http://" in err, "the server's reason: %r" % err)
    eq(svc.psql("select count(*) from jobs"), jobs_before, "no job created")
    code, out, err = run("--webhook-format", "github-status")
    eq(code, 2, "--webhook-format alone")
    code, out, err = run("--webhook", "https://u:pw@hooks.example.org/s/{sha}",
                         "--webhook-format", "github-status", secret="from env")
    eq(code, 0, "submitted: %s" % err)
    job = svc.api.ok("GET", "/api/v1/jobs/%d" % json.loads(out)["id"])
    eq(job["webhook"], {"url": "https://u:***@hooks.example.org/s/{sha}",
                        "format": "github-status", "secret_set": True},
       "the job's webhook")
    check("pw@" not in out and "from env" not in out, "nothing secret printed")
    # A re-run keeps the job's webhook, its secret and password included.
    again = svc.api.ok("POST", "/api/v1/jobs/%d/rerun" % job["id"], token=svc.submit_token)
    eq(svc.psql("select url || ' ' || format || ' ' || secret from webhooks"
                " where job_id = %d" % again["id"]),
       "https://u:pw@hooks.example.org/s/{sha} github-status from env", "re-run's webhook")


@test
def webhook_in_the_submit_and_testcase_forms(env):
    from test_web import Browser, error_of, field
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "hookform"), 3, owner=__name__)
    svc.register("hookform", repo, "hookform-tc")

    # The submit form: a bad URL shows next to its field with the other
    # errors, and nothing is created; a good one makes the job's webhook.
    b = Browser(svc.url).sign_in(svc.submit_token)
    _, _, page = b.get("/jobs/new")
    jobs_before = svc.psql("select count(*) from jobs")
    form = {"csrf": field(page, "csrf"), "repo": "hookform", "testcase": "hookform-tc",
            "good": shas[0], "bad": "main", "runs_min": "x",
            "webhook_url": "ftp://hooks.example.org/x", "webhook_format": "github-status",
            "webhook_secret": "form secret"}
    status, _, page = b.post("/jobs/new", form)
    eq(status, 400, "refused")
    check("http:// or https://" in (error_of(page, "webhook_url") or ""),
          "the URL's error by its field: %r" % error_of(page, "webhook_url"))
    check(error_of(page, "runs_min"), "and the other field's error at once")
    eq(field(page, "webhook_url"), "ftp://hooks.example.org/x", "the URL kept")
    check('<option value="github-status" selected>' in page, "the format kept")
    check("form secret" not in page, "the secret is not shown back")
    eq(svc.psql("select count(*) from jobs"), jobs_before, "no job created")
    form.update(runs_min="", webhook_url="https://hooks.example.org/s/{sha}")
    status, hdrs, _ = b.post("/jobs/new", form)
    eq(status, 303, "submitted")
    job_id = int(hdrs["Location"].rsplit("/", 1)[1])
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job_id)["webhook"],
       {"url": "https://hooks.example.org/s/{sha}", "format": "github-status",
        "secret_set": True}, "the job's webhook from the form")

    # The testcase forms: create with a webhook, edit keeps the masked URL's
    # password and the secret when they are left as shown.
    a = Browser(svc.url).sign_in(harness.ADMIN)
    _, _, page = a.get("/admin/testcases")
    tc = {"csrf": a.csrf, "name": "hookform-made", "build": "true", "run": "echo 'k: 1'",
          "kpi": "k", "higher_is_better": "true", "webhook_url": "not a url",
          "webhook_format": "statbisect", "webhook_secret": "tc form secret"}
    status, _, page = a.post("/admin/testcases", tc)
    eq(status, 400, "bad webhook URL refused")
    check(error_of(page, "webhook_url"), "error next to the webhook URL")
    eq(svc.api.call("GET", "/api/v1/testcases/hookform-made")[0], 404, "not created")
    tc["webhook_url"] = "https://u:pw@hooks.example.org/t"
    status, _, _ = a.post("/admin/testcases", tc)
    eq(status, 303, "created")
    _, _, page = a.get("/admin/testcases/hookform-made/edit")
    eq(field(page, "webhook_url"), "https://u:***@hooks.example.org/t", "masked on the page")
    check("tc form secret" not in page and "u:pw@" not in page, "no secret on the page")
    edit = {"csrf": a.csrf, "build": "true", "run": "echo 'k: 2'", "kpi": "k",
            "higher_is_better": "true", "webhook_url": field(page, "webhook_url"),
            "webhook_format": "github-status", "webhook_secret": ""}
    status, _, page = a.post("/admin/testcases/hookform-made/edit", edit)
    eq(status, 303, "saved: %s" % (error_of(page, "webhook_url") if status != 303 else ""))
    eq(svc.psql("select url || ' ' || format || ' ' || secret from webhooks w join testcases t"
                " on t.id = w.testcase_id where t.name = 'hookform-made'"
                " and t.deleted_at is null"),
       "https://u:pw@hooks.example.org/t github-status tc form secret", "kept as stored")
    edit["webhook_url"] = ""
    status, _, _ = a.post("/admin/testcases/hookform-made/edit", edit)
    eq(status, 303, "saved without a webhook")
    eq(svc.api.ok("GET", "/api/v1/testcases/hookform-made")["webhook"], None, "removed")


@test
def a_job_failed_while_resolving_posts_an_error_status(env):
    import subprocess
    import test_longrange
    svc = env.svc
    recv = Receiver()
    try:
        repo, shas = test_longrange.long_repo(os.path.join(env.root, "hooklong"),
                                              test_longrange.LONG, {})
        svc.register("hooklong", repo, "hooklong-tc", webhook={
            "url": recv.url + "/s/{sha}", "format": "github-status"})
        tree = subprocess.run(["git", "-C", repo.path, "mktree"], input="", check=True,
                              capture_output=True, text=True).stdout.strip()
        orphan = subprocess.run(["git", "-C", repo.path, "commit-tree", tree, "-m", "orphan"],
                                check=True, capture_output=True, text=True,
                                env=repo.env).stdout.strip()
        subprocess.run(["git", "-C", repo.path, "branch", "other", orphan], check=True)
        job = svc.api.ok("POST", "/api/v1/jobs", {"repo": "hooklong", "testcase": "hooklong-tc",
                                                  "good": orphan, "bad": shas[-1]},
                         expect=(202,), token=svc.submit_token)
        hooks = wait_hooks(svc, job["id"], 1)
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["state"], "failed", "failed")
        eq((hooks["testcase"]["state"], hooks["testcase"]["last_status"]), ("delivered", 200),
           "delivered")
        path, headers, body = recv.to("/s/")[0]
        eq(path, "/s/" + shas[-1], "the bad commit")
        status = json.loads(body)
        eq(status["state"], "error", "a failed job is an error")
        check(status["description"].startswith("failed: the range cannot be listed"),
              status["description"])
        check("X-Statbisect-Signature-256" not in headers, "no secret, no signature")
    finally:
        recv.stop()
