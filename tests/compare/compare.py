#!/usr/bin/python3
"""Old-versus-new server comparison: replays the recorded requests of
tests/compare/requests.jsonl against two statbisect-server builds, each on a
fresh database of one private PostgreSQL cluster (scripts/pg-local), with
the same admin token and the same fixture git repositories, and reports
every answer (status, headers, body) and every mailed report that differs
once what legitimately differs is normalized (generated secrets,
timestamps, Message-IDs, temporary paths).  Exits 0 when the two agree,
1 when anything differs, 2 when the comparison itself could not run.

Usage: compare.py OLD_TREE NEW_TREE [--requests FILE] [--keep] [-v]
A tree is a built checkout: TREE/bin/statbisect-server and TREE/web/.
tests/compare/README.md describes the recording's format.
"""
import argparse
import difflib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402

ADMIN = "compare-admin-token-0123456789abcdef"
BASE_URL = "https://statbisect.example.org"
# Fixture repository "proj": 16 commits after the root, the benchmark's
# mean drops from 1000 to 900 at commit 9 (higher is better: a
# regression); commit 5 does not build.
PROJ_COMMITS = 16
PROJ_CHANGES = {9: 900.0}
PROJ_BROKEN = (5,)
# Deterministic noise the scripted worker adds to a commit's mean: run k
# of commit i gets mean * (1 + 0.004 * NOISE[(k + 3 * i) % len(NOISE)]).
NOISE = [0.31, -0.52, 1.13, -0.87, 0.05, 0.66, -1.21, 0.44, -0.13, 0.92,
         -0.35, 0.18, -0.71, 1.02, -0.48, 0.27]
# Response headers that differ by nature (the clock, the length of a body
# whose normalized form is compared anyway).
SKIP_HEADERS = {"date", "content-length", "connection"}


class Fixture:
    """The git repositories both servers mirror, made once."""

    def __init__(self, root):
        self.root = root
        repo, shas = harness.bench_repo(
            os.path.join(root, "proj"), PROJ_COMMITS, PROJ_CHANGES,
            broken=PROJ_BROKEN)
        self.means = {}
        mean = 1000.0
        for i, sha in enumerate(shas):
            mean = PROJ_CHANGES.get(i, mean)
            self.means[sha] = mean
        harness.sh("git tag v1.0 %s" % shas[0], cwd=repo.path)
        harness.sh("git tag v1.1 %s" % shas[-1], cwd=repo.path)
        small, small_shas = harness.bench_repo(os.path.join(root, "small"),
                                               3, owner="small")
        for sha in small_shas:
            self.means.setdefault(sha, 1000.0)
        self.vars = {"admin": ADMIN, "repo_proj": repo.path,
                     "repo_small": small.path,
                     "missing_path": os.path.join(root, "no-such-repo")}
        for i, sha in enumerate(shas):
            self.vars["sha%d" % i] = sha
        for i, sha in enumerate(small_shas):
            self.vars["small%d" % i] = sha


class Server:
    """One statbisect-server of a tree on a database of its own."""

    def __init__(self, tree, root, name, cluster, conninfo):
        self.name = name
        self.cluster = cluster
        self.conninfo = conninfo
        self.data = os.path.join(root, name + "-data")
        self.mail = os.path.join(root, name + "-mail")
        self.port = harness.free_port()
        self.log_path = os.path.join(root, name + "-server.log")
        env = dict(os.environ, STATBISECT_ADMIN_TOKEN=ADMIN,
                   STATBISECT_BASE_URL=BASE_URL)
        env.pop("STATBISECT_SMTP_URL", None)
        self.proc = subprocess.Popen(
            [os.path.join(tree, "bin", "statbisect-server"), "--db", conninfo,
             "--listen", "127.0.0.1:%d" % self.port, "--mail-dir", self.mail,
             "--data-dir", self.data],
            stdout=open(self.log_path, "a"), stderr=subprocess.STDOUT,
            env=env, start_new_session=True)
        for _ in range(400):
            try:
                self.request("GET", "/healthz", {}, None)
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("%s server exited:\n%s" %
                                       (name, self.log()))
                time.sleep(0.05)
        raise RuntimeError("%s server did not answer /healthz" % name)

    def psql(self, sql):
        return self.cluster.psql(sql, self.conninfo)

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-3000:]

    def request(self, method, path, headers, body):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            return r.status, r.getheaders(), r.read()
        finally:
            conn.close()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def substitute(value, variables):
    """${name} in strings (recursively in lists and objects)."""
    if isinstance(value, str):
        def one(m):
            if m.group(1) not in variables:
                raise KeyError("unknown variable ${%s}" % m.group(1))
            return str(variables[m.group(1)])
        return re.sub(r"\$\{([A-Za-z0-9_]+)\}", one, value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {substitute(k, variables): substitute(v, variables)
                for k, v in value.items()}
    return value


def json_path(doc, path):
    for part in path.split("."):
        if isinstance(doc, list):
            doc = doc[int(part)]
        else:
            doc = doc[part]
    return doc


class Replay:
    """Runs the recording against one server; keeps the transcript."""

    def __init__(self, server, fixture):
        self.server = server
        self.fixture = fixture
        self.vars = dict(fixture.vars)
        self.jars = {}
        self.transcript = []
        self.verbose = False

    def exchange(self, label, method, path, headers, body):
        status, got_headers, data = self.server.request(method, path,
                                                        headers, body)
        entry = {"label": label, "request": "%s %s" % (method, path),
                 "status": status, "headers": got_headers, "body": data}
        self.transcript.append(entry)
        if self.verbose:
            print("%s %-6s %-50s %d %s" % (
                self.server.name, method, path[:50], status,
                data[:160].decode("utf-8", "replace").replace("\n", " ")))
        return entry

    def step(self, number, step):
        if "worker_loop" in step:
            return self.worker_loop(number, step["worker_loop"])
        if "settle" in step:
            return self.settle(step["settle"])
        s = substitute(step, self.vars)
        headers = {}
        body = None
        token = s.get("as")
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        if "json" in s:
            body = json.dumps(s["json"]).encode()
            headers["Content-Type"] = "application/json"
        elif "raw" in s:
            body = s["raw"].encode() * s.get("repeat", 1)
            headers["Content-Type"] = s.get("type", "application/json")
        elif "form" in s:
            body = urllib.parse.urlencode(s["form"]).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers.update(s.get("headers", {}))
        jar = self.jars.setdefault(s["jar"], {}) if "jar" in s else None
        if jar:
            headers["Cookie"] = "; ".join("%s=%s" % kv for kv in jar.items())
        label = "#%d %s" % (number, step.get("note", ""))
        e = self.exchange(label.strip(), s["m"], s["p"], headers, body)
        if jar is not None:
            for name, value in e["headers"]:
                if name.lower() != "set-cookie":
                    continue
                pair = value.split(";", 1)[0]
                cname, _, cvalue = pair.partition("=")
                if cvalue == "" or "Max-Age=0" in value:
                    jar.pop(cname, None)
                else:
                    jar[cname] = cvalue
        for var, spec in s.get("save", {}).items():
            self.vars[var] = self.extract(e, spec, number)

    def extract(self, e, spec, number):
        text = e["body"].decode("utf-8", "replace")
        try:
            if spec.startswith("re:"):
                return re.search(spec[3:], text).group(1)
            if spec.startswith("loc:"):
                loc = dict((k.lower(), v) for k, v in e["headers"])["location"]
                return re.search(spec[4:], loc).group(1)
            return json_path(json.loads(text), spec)
        except (AttributeError, KeyError, IndexError, ValueError) as err:
            # A later request then uses a marker: the difference shows there.
            return "unsaved-%d-%s" % (number, re.sub(r"\W", "_", spec))

    def worker_loop(self, number, spec):
        """Acts as a worker until no task is left: claim, heartbeat, upload
        runs whose values follow from the fixture's means."""
        spec = substitute(spec, self.vars)
        auth = {"Authorization": "Bearer " + spec["as"],
                "Content-Type": "application/json"}
        label = "#%d worker loop" % number
        for _ in range(spec.get("max_tasks", 200)):
            e = self.exchange(label, "POST", "/api/v1/workers/%s/claim" %
                              spec["worker"], auth, b"{}")
            try:
                task = json.loads(e["body"])["task"]
            except (ValueError, KeyError, TypeError):
                return
            if task is None:
                return
            lease = task["lease"]
            self.exchange(label, "POST", "/api/v1/tasks/%d/heartbeat" %
                          task["id"], auth, json.dumps({"lease": lease}).encode())
            runs, failures = [], []
            for entry in task.get("commits") or [
                    {"index": None, "commit": task["commit"],
                     "runs": task["runs"]}]:
                i = entry["index"] if entry["index"] is not None else 0
                sha = entry["commit"]
                if self.broken(sha):
                    failures.append({"commit_index": entry["index"],
                                     "log": "error: this commit does not "
                                            "compile\n"})
                    continue
                mean = self.fixture.means.get(sha, 1000.0)
                for k in range(entry["runs"]):
                    z = NOISE[(k + 3 * i) % len(NOISE)]
                    run = {"metrics": {"bench.score": round(
                        mean * (1 + 0.004 * z), 4), "aux.constant": 42},
                        "exit_code": 0, "wall_s": 0.25}
                    if entry["index"] is not None:
                        run["commit_index"] = entry["index"]
                    runs.append(run)
            body = {"lease": lease, "runs": runs}
            if failures:
                body["build_failures"] = failures
            if spec.get("probe"):
                spec["probe"] = False
                self.probe(label, task, auth, body)
            self.exchange(label, "POST", "/api/v1/tasks/%d/result" %
                          task["id"], auth, json.dumps(body).encode())

    def probe(self, label, task, auth, good):
        """Malformed heartbeats and uploads of a claimed task, each of
        which must be refused without storing anything."""
        lease = task["lease"]
        first = dict(good["runs"][0]) if good["runs"] else {
            "metrics": {"bench.score": 1.0}, "exit_code": 0}
        index = first.get("commit_index", 0)
        bad = [
            {"lease": lease + 1},
            {"lease": lease + 1, "runs": good["runs"]},
            {"lease": lease, "runs": {}},
            {"lease": lease, "runs": [{"exit_code": 0}]},
            {"lease": lease, "runs": [dict(first, exit_code="0")]},
            {"lease": lease, "runs": [dict(first, wall_s="fast")]},
            {"lease": lease, "runs": [dict(first, commit_index=9999)]},
            {"lease": lease, "runs": [dict(first, commit_index="1")]},
            {"lease": lease, "runs": [dict(first, metrics={
                "bench.score": "fast"})]},
            {"lease": lease, "runs": [first] * 500},
            {"lease": lease, "runs": [], "build_failed": "yes"},
            {"lease": lease, "runs": [], "build_log": 5},
            {"lease": lease, "runs": [], "build_failures": {}},
            {"lease": lease, "runs": [], "build_failures": [
                {"commit_index": 9999, "log": "x"}]},
            {"lease": lease, "runs": [], "build_failures": [
                {"commit_index": index, "log": 7}]},
        ]
        self.exchange(label, "POST", "/api/v1/tasks/%d/heartbeat" %
                      task["id"], auth,
                      json.dumps({"lease": lease + 1}).encode())
        for body in bad:
            path = "/api/v1/tasks/%d/%s" % (
                task["id"], "heartbeat" if "runs" not in body else "result")
            self.exchange(label, "POST", path, auth,
                          json.dumps(body).encode())
        self.exchange(label, "GET", "/api/v1/jobs/%d/runs" % task["job"],
                      {"Authorization": "Bearer " + self.vars["admin"]},
                      None)

    def settle(self, what, seconds=30):
        """Waits for the background mailer to deliver every queued
        report (one with no recipients is never mailed), so that pages
        show the same delivery state each time."""
        if what != "outbox":
            raise SystemExit("unknown settle step %r" % what)
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.server.psql(
                    "select count(*) from outbox where sent_at is null"
                    " and failed_at is null"
                    " and recipients <> '[]'::jsonb") == "0":
                return
            time.sleep(0.1)
        raise RuntimeError("%s: the outbox did not drain in %d s" %
                           (self.server.name, seconds))

    def broken(self, sha):
        return any(self.fixture.vars.get("sha%d" % i) == sha
                   for i in PROJ_BROKEN)

    def mails(self):
        """The mailed reports, in the order of their text but for the Date
    and read keys."""
        out = []
        for sub in ("new", "cur"):
            d = os.path.join(self.server.mail, sub)
            if os.path.isdir(d):
                for name in os.listdir(d):
                    path = os.path.join(d, name)
                    with open(path, "rb") as f:
                        out.append((f.read(), os.stat(path).st_mtime_ns))
        # Not by what differs from run to run (the Date, Message-IDs and
        # the read keys of the links); reports alike but for those (a job
        # reported again after a retry) in the order they were delivered.
        def stable(text):
            text = re.sub(rb"(?m)^(Date|Message-ID|In-Reply-To|References):"
                          rb"[^\n]*\n", b"", text)
            return re.sub(rb"key=[0-9a-f]{64}", b"", text)
        out.sort(key=lambda m: (stable(m[0]), m[1]))
        return [m for m, _ in out]


class Normalizer:
    """Masks what legitimately differs between two runs of one recording:
    generated secrets (numbered in the order they first appear, so that
    the same secret in two places stays the same mark; the read keys of
    report links on their own), a claimed task's lease (a random number
    since issue 11, a claim counter before), timestamps of now,
    Message-IDs, the server's own directories and port."""

    SECRET = re.compile(r"\bsb_[0-9a-f]{48}\b|\b[0-9a-f]{64}\b")
    # A job's read key in a report link: numbered on their own, so that a
    # server that makes them does not renumber every later secret.
    READ_KEY = re.compile(r"([?&]key=)([0-9a-f]{64})\b")
    STAMP = re.compile(
        r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?"
        r"(Z|[+-]\d\d(:?\d\d)?)?\b")
    RFC_DATE = re.compile(
        r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} [A-Z][a-z]{2} \d{4} "
        r"\d\d:\d\d:\d\d [+-]\d{4}\b")
    MESSAGE_ID = re.compile(
        r"((?:Message-ID|In-Reply-To|References): *(?:<|&lt;))"
        r"[^<>@\s&;]+@[^<>\s&;]+(>|&gt;)", re.I)
    LEASE = re.compile(r'("lease":\s*)\d+')
    # A sample of GET /metrics: counts of requests (health checks while
    # the server starts among them) and seconds vary from run to run;
    # the names and labels are compared.
    METRIC = re.compile(r"^(statbisect_[a-z_]+(?:\{[^\n]*\})?) \S+$",
                        re.M)
    # How long ago something happened, as the pages show it.
    AGE = re.compile(r'(data-label="Age">|<time [^>]*>)[^<]*')
    # How long a job has taken and has left (issue 15): clock time.
    SECONDS = re.compile(r'("(?:elapsed_s|time_left_s)":\s*)-?[0-9][0-9.e+-]*')
    DURATION = re.compile(r'(<span id="(?:elapsed|time-left)">)[^<]*')
    # The fixture commits are dated 2026-01-01 00:mm (harness.Repo).
    FIXTURE_DAY = ("2026-01-01", "Thu, 1 Jan 2026")

    def __init__(self, server):
        self.secrets = {}
        self.keys = {}
        self.paths = [(server.data, "<DATA>"), (server.mail, "<MAIL>"),
                      ("127.0.0.1:%d" % server.port, "<HOST>")]

    def text(self, text):
        for path, mark in self.paths:
            text = text.replace(path, mark)

        def secret(m):
            return self.secrets.setdefault(
                m.group(0), "<SECRET%d>" % (len(self.secrets) + 1))

        def stamp(m):
            s = m.group(0)
            return s if s.startswith(self.FIXTURE_DAY) else "<TIME>"
        def read_key(m):
            return m.group(1) + self.keys.setdefault(
                m.group(2), "<KEY%d>" % (len(self.keys) + 1))
        text = self.AGE.sub(r"\1<AGE>", text)
        text = self.SECONDS.sub(r"\1<SECONDS>", text)
        text = self.DURATION.sub(r"\1<DURATION>", text)
        text = self.READ_KEY.sub(read_key, text)
        text = self.SECRET.sub(secret, text)
        text = self.LEASE.sub(r"\1<LEASE>", text)
        text = self.METRIC.sub(r"\1 <N>", text)
        text = self.STAMP.sub(stamp, text)
        text = self.RFC_DATE.sub(stamp, text)
        text = self.MESSAGE_ID.sub(r"\1MESSAGE-ID\2", text)
        return text

    def entry(self, e):
        headers = sorted("%s: %s" % (k.lower(), self.text(v))
                         for k, v in e["headers"]
                         if k.lower() not in SKIP_HEADERS)
        body = e["body"].decode("utf-8", "backslashreplace")
        return {"label": e["label"], "request": self.text(e["request"]),
                "status": e["status"], "headers": headers,
                "body": self.text(body)}


ROUTE = re.compile(r'\{\s*"(GET|POST|DELETE|PUT|PATCH)",\s*"(/[^"]*)"')


def uncovered_routes(tree, transcript):
    """The routes of the tree's route tables (server/*.c) that no
    exchange of the transcript reached."""
    routes = set()
    server_dir = os.path.join(tree, "server")
    for name in sorted(os.listdir(server_dir)) if os.path.isdir(
            server_dir) else []:
        if name.endswith(".c"):
            with open(os.path.join(server_dir, name)) as f:
                routes.update(ROUTE.findall(f.read()))
    missing = []
    for method, pattern in sorted(routes):
        rx = re.compile("^" + re.escape(pattern).replace(
            r"\{\}", "[^/]+") + r"(\?.*)?$")
        if not any(e["request"].split(" ", 1)[0] == method and
                   rx.match(e["request"].split(" ", 1)[1])
                   for e in transcript):
            missing.append("%s %s" % (method, pattern))
    return missing, len(routes)


def load_recording(path):
    steps = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                steps.append(json.loads(line))
            except ValueError as err:
                raise SystemExit("%s:%d: %s" % (path, n, err))
    return steps


def diff_text(a, b, what):
    lines = list(difflib.unified_diff(
        a.splitlines(), b.splitlines(), "old " + what, "new " + what,
        lineterm="", n=2))
    if len(lines) > 60:
        lines = lines[:60] + ["... (%d more diff lines)" % (len(lines) - 60)]
    return "\n".join(lines)


def compare(old, new):
    """The differences of two normalized transcripts, as text blocks."""
    out = []
    for i in range(max(len(old), len(new))):
        if i >= len(old) or i >= len(new):
            have = old[i] if i < len(old) else new[i]
            out.append("exchange %d (%s %s): only the %s server made it" %
                       (i + 1, have["label"], have["request"],
                        "old" if i < len(old) else "new"))
            continue
        a, b = old[i], new[i]
        where = "exchange %d (%s %s)" % (i + 1, a["label"], a["request"])
        if a["request"] != b["request"]:
            out.append("%s: the new replay sent %s instead" %
                       (where, b["request"]))
            continue
        parts = []
        if a["status"] != b["status"]:
            parts.append("status %d -> %d" % (a["status"], b["status"]))
        if a["headers"] != b["headers"]:
            parts.append(diff_text("\n".join(a["headers"]),
                                   "\n".join(b["headers"]), "headers"))
        if a["body"] != b["body"]:
            parts.append(diff_text(a["body"], b["body"], "body"))
        if parts:
            out.append(where + ":\n" + "\n".join(parts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--requests", default=os.path.join(HERE,
                                                       "requests.jsonl"))
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every exchange")
    a = ap.parse_args()
    steps = load_recording(a.requests)
    root = harness.workdir()
    cluster = servers = None
    servers = []
    failed = 2
    try:
        fixture = Fixture(root)
        cluster = harness.Cluster(root)
        replays = []
        for name, tree in (("old", a.old), ("new", a.new)):
            conninfo = cluster.database("compare_" + name)
            server = Server(os.path.abspath(tree), root, name, cluster,
                            conninfo)
            servers.append(server)
            replay = Replay(server, fixture)
            replay.verbose = a.verbose
            t0 = time.time()
            for n, step in enumerate(steps, 1):
                replay.step(n, step)
            replay.settle("outbox")
            replay.mail_text = replay.mails()
            print("%s: %d exchanges (%d recorded requests), %d mails, "
                  "%.1f s" % (name, len(replay.transcript), len(steps),
                              len(replay.mail_text), time.time() - t0),
                  flush=True)
            replays.append(replay)
        normalized = []
        for replay in replays:
            norm = Normalizer(replay.server)
            entries = [norm.entry(e) for e in replay.transcript]
            mails = [norm.text(m.decode("utf-8", "backslashreplace"))
                     for m in replay.mail_text]
            normalized.append((entries, mails))
        differences = compare(normalized[0][0], normalized[1][0])
        old_mail, new_mail = normalized[0][1], normalized[1][1]
        if len(old_mail) != len(new_mail):
            differences.append("mail: the old server sent %d reports, the "
                               "new one %d" % (len(old_mail), len(new_mail)))
        for i, (m1, m2) in enumerate(zip(old_mail, new_mail)):
            if m1 != m2:
                differences.append("mail %d:\n%s" %
                                   (i + 1, diff_text(m1, m2, "mail")))
        statuses = {}
        for e in normalized[0][0]:
            statuses[e["status"]] = statuses.get(e["status"], 0) + 1
        print("old statuses: " + ", ".join(
            "%d x%d" % kv for kv in sorted(statuses.items())))
        missing, route_count = uncovered_routes(a.new, replays[1].transcript)
        print("routes: %d in %s/server, %d not reached%s" % (
            route_count, a.new, len(missing),
            "".join("\n  not reached: " + m for m in missing)))
        for d in differences:
            print("DIFF " + d)
        print("compare: %d exchanges, %d mails, %d differences" %
              (len(normalized[0][0]), len(old_mail), len(differences)))
        failed = 1 if differences or missing else 0
    finally:
        for server in servers:
            server.stop()
        if cluster is not None:
            cluster.stop()
        if a.keep or failed == 2:
            print("kept", root)
        else:
            harness.rmtree(root)
    return failed


if __name__ == "__main__":
    sys.exit(main())
