"""GET /metrics (issue 14): the Prometheus text format, read strictly;
queue depth and workers alive per group, jobs by state, runs, ended jobs'
durations, the outbox and the HTTP layer's request counts, each checked
against the database or against the requests the test made; who may read
it (a read token, or anyone with --metrics-open)."""
import os
import re
import subprocess
import time
import urllib.error
import urllib.request

import harness
from harness import Service, bench_repo, check, eq, test

P = "metrics-"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r"^(%s)(?:\{(.*)\})? (\S+)$" % NAME)
HELP = re.compile(r"^# HELP (%s) (.*)$" % NAME)
TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$"
                  % NAME)


def unescape(value):
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse(text):
    """The exposition text as {(name, ((label, value), ...)): float};
    raises on any line that is not '# HELP', '# TYPE' or a sample of
    the family announced last, on a family announced twice, and on a
    sample seen twice."""
    check(text.endswith("\n"), "the text ends with a line end")
    samples, families, family = {}, set(), None
    for line in text[:-1].split("\n"):
        m = HELP.match(line)
        if m:
            check(m.group(1) not in families, "family %s twice" % m.group(1))
            families.add(m.group(1))
            family = m.group(1)
            continue
        m = TYPE.match(line)
        if m:
            eq(m.group(1), family, "TYPE follows the HELP of its family")
            continue
        m = SAMPLE.match(line)
        check(m is not None, "not a sample line: %r" % line)
        name, labels_text, value = m.groups()
        check(family is not None and name.startswith(family),
              "sample %r outside its family %r" % (line, family))
        labels = []
        if labels_text is not None:
            found = list(re.finditer(LABEL, labels_text))
            eq(",".join(x.group(0) for x in found), labels_text,
               "labels of %r" % line)
            labels = [(x.group(1), unescape(x.group(2))) for x in found]
        key = (name, tuple(sorted(labels)))
        check(key not in samples, "sample %r twice" % line)
        samples[key] = float(value)
    return samples


def get(svc, token):
    """GET /metrics: status, Content-Type, body text."""
    req = urllib.request.Request(svc.url + "/metrics")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def scrape(svc, token):
    status, ctype, text = get(svc, token)
    eq((status, ctype), (200, CONTENT_TYPE), "GET /metrics")
    return parse(text)


def value(samples, name, **labels):
    key = (name, tuple(sorted(labels.items())))
    check(key in samples, "no sample %s%r in %r" % (name, labels, sorted(samples)))
    return samples[key]


def requests_counted(samples, method, route, status):
    return samples.get(("statbisect_http_requests_total",
                        tuple(sorted({"method": method, "route": route,
                                      "status": str(status)}.items()))), 0)


def refused(svc, token, status, code):
    got, ctype, text = get(svc, token)
    eq((got, ctype), (status, "application/json"), "GET /metrics refused")
    eq(__import__("json").loads(text)["error"]["code"], code, "error code")


@test
def test_metrics_show_the_queue_workers_runs_mail_and_requests(env):
    svc = Service(env.root, env.cluster, P + "svc", worker=False,
                  conninfo=env.cluster.database("metrics_figures"))
    try:
        # Who may read: a read token, not anyone, not a worker.
        refused(svc, None, 401, "unauthorized")
        refused(svc, svc.worker_token, 403, "forbidden")
        first = scrape(svc, svc.read_token)
        eq(value(first, "statbisect_runs_total"), 0, "no runs yet")
        for state in ("queued", "running", "done", "failed", "cancelled"):
            eq(value(first, "statbisect_jobs", state=state), 0, "jobs " + state)
        eq(value(first, "statbisect_job_duration_seconds_count"), 0, "no job ended")

        repo, shas = bench_repo(os.path.join(env.root, P + "repo"), 6, {3: 900.0},
                                owner=__name__)
        svc.register(P + "repo", repo, P + "tc")
        job = svc.submit({"repo": P + "repo", "testcase": P + "tc", "good": shas[0],
                          "bad": shas[-1], "notify": ["dev@example.org"]})
        queued = int(svc.psql("SELECT count(*) FROM tasks WHERE state = 'queued'"))
        check(queued > 0, "the job queued tasks")
        s = scrape(svc, svc.read_token)
        eq(value(s, "statbisect_tasks_queued", group="default"), queued, "queue depth")
        eq(value(s, "statbisect_jobs", state="queued") +
           value(s, "statbisect_jobs", state="running"), 1, "the job is open")

        # A worker of another group: alive while seen, gone after the
        # machine timeout (120 s by default).
        svc.api.ok("POST", "/api/v1/workers", {"name": "idle", "group": "gpu"},
                   token=svc.worker_token)
        eq(value(scrape(svc, svc.read_token), "statbisect_workers_alive", group="gpu"),
           1, "gpu worker alive")
        svc.psql("UPDATE workers SET last_seen_at = now() - interval '121 seconds'"
                 " WHERE grp = 'gpu'")
        eq(value(scrape(svc, svc.read_token), "statbisect_workers_alive", group="gpu"),
           0, "gpu worker gone")

        svc.start_worker()
        done = svc.wait(job["id"])
        eq((done["state"], done["culprit"]), ("done", shas[3]), "the job")
        deadline = time.time() + 60
        while svc.psql("SELECT count(*) FROM outbox WHERE sent_at IS NULL") != "0":
            check(time.time() < deadline, "the report was not sent")
            time.sleep(0.2)

        before = scrape(svc, svc.read_token)
        path = "/api/v1/jobs/%d" % job["id"]
        for _ in range(3):
            svc.api.ok("GET", path, token=svc.read_token)
        eq(svc.api.call("GET", "/no/such/%d" % job["id"])[0], 404, "unknown path")
        status, _, text = get(svc, svc.read_token)
        s = parse(text)

        runs = int(svc.psql("SELECT count(*) FROM runs"))
        check(runs > 0, "runs stored")
        eq(value(s, "statbisect_runs_total"), runs, "runs counted")
        eq(value(s, "statbisect_jobs", state="done"), 1, "jobs done")
        eq(value(s, "statbisect_tasks_queued", group="default"), 0, "queue empty")
        eq(value(s, "statbisect_workers_alive", group="default"), 1, "worker alive")
        seconds = float(svc.psql("SELECT extract(epoch FROM finished_at - created_at)"
                                 " FROM jobs WHERE id = %d" % job["id"]))
        eq(value(s, "statbisect_job_duration_seconds_count"), 1, "jobs ended")
        check(abs(value(s, "statbisect_job_duration_seconds_sum") - seconds) < 1e-3,
              "duration %r, database %r" % (
                  value(s, "statbisect_job_duration_seconds_sum"), seconds))
        buckets = sorted((float(dict(k[1])["le"]), v) for k, v in s.items()
                         if k[0] == "statbisect_job_duration_seconds_bucket")
        eq(buckets[-1], (float("inf"), 1), "the +Inf bucket")
        for le, count in buckets:
            eq(count, 1 if seconds <= le else 0, "bucket le=%r" % le)
        eq(int(svc.psql("SELECT count(*) FROM outbox WHERE job_id = %d" % job["id"])),
           1, "the job's report")
        eq([value(s, "statbisect_mail_outbox", state=x)
            for x in ("pending", "failed", "sent")], [0, 0, 1], "outbox")

        # The request counts: by route pattern, exact.
        eq(requests_counted(s, "GET", "/api/v1/jobs/{}", 200) -
           requests_counted(before, "GET", "/api/v1/jobs/{}", 200), 3, "job gets")
        eq(requests_counted(s, "GET", "unmatched", 404) -
           requests_counted(before, "GET", "unmatched", 404), 1, "unmatched")
        eq(requests_counted(s, "GET", "/metrics", 401), 1, "anonymous scrape")
        eq(requests_counted(s, "GET", "/metrics", 403), 1, "worker's scrape")
        eq(requests_counted(s, "POST", "/api/v1/jobs", 201), 1, "submission")
        check(requests_counted(s, "POST", "/api/v1/workers/{}/claim", 200) > 0,
              "claims counted")
        check(requests_counted(s, "POST", "/api/v1/tasks/{}/result", 200) > 0,
              "uploads counted")
        routes = {dict(k[1])["route"] for k in s
                  if k[0] == "statbisect_http_requests_total"}
        check(all(not re.search(r"/\d+(/|$)", r) for r in routes),
              "a raw path among the routes: %r" % routes)
    finally:
        svc.stop()


@test
def test_metrics_open_flag_lets_anyone_read(env):
    bad = subprocess.run([os.path.join(harness.ROOT, "bin/statbisect-server"),
                          "--db", env.cluster.conninfo],
                         env=dict(os.environ, STATBISECT_METRICS_OPEN="maybe"),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    eq(bad.returncode, 2, "a bad STATBISECT_METRICS_OPEN")
    check("STATBISECT_METRICS_OPEN" in bad.stdout, bad.stdout)
    svc = Service(env.root, env.cluster, P + "open", worker=False,
                  conninfo=env.cluster.database("metrics_open"),
                  extra_args=["--metrics-open"])
    try:
        s = scrape(svc, None)
        eq(value(s, "statbisect_runs_total"), 0, "figures for anyone")
        # The rest of the API still asks for a token.
        eq(svc.api.call("GET", "/api/v1/jobs", token="")[0], 401, "jobs list")
    finally:
        svc.stop()
