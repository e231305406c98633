"""Real parts for statbisect's integration tests: a private PostgreSQL
cluster (scripts/pg-local), the built server and worker binaries, real git
repositories, and an HTTP client.  No part is mocked."""
import contextlib
import email
import email.policy
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The programs under test: bin/, or a sanitizer build's (make check
# SANITIZE=1 sets STATBISECT_BIN_DIR=bin-asan).
BIN_DIR = os.environ.get("STATBISECT_BIN_DIR") or os.path.join(ROOT, "bin")
ADMIN = "integration-admin-token-0123456789"

# A small C benchmark: its mean comes from the file `mean` at build time,
# its noise (1% sd, Gaussian) from the process id and the clock at run time.
BENCH_C = r'''#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(void)
{
	struct timespec ts;
	double u1, u2, z;
	clock_gettime(CLOCK_REALTIME, &ts);
	srand48((long)ts.tv_nsec ^ ((long)getpid() << 16));
	u1 = drand48(); u2 = drand48();
	if (u1 < 1e-12) u1 = 1e-12;
	z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	printf("warming up\n");
	printf("bench.score: %.4f\n", MEAN * (1 + 0.01 * z));
	printf("aux.constant: 42\n");
	return 0;
}
'''

BUILD_SH = '''#!/bin/sh
set -e
if [ -e BROKEN ]; then echo "error: this commit does not compile" >&2; exit 1; fi
cc -O2 -DMEAN="$(cat mean)" -o bench bench.c -lm
'''


def sh(cmd, cwd=None, env=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=isinstance(cmd, str),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s" % (r.returncode, cmd, r.stdout))
    return r.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Repo:
    """A git repository made by the test, one commit at a time."""

    def __init__(self, path):
        self.path = path
        os.makedirs(path)
        self.n = 0
        self.env = dict(os.environ, GIT_AUTHOR_NAME="Ada Author",
                        GIT_AUTHOR_EMAIL="ada@example.org",
                        GIT_COMMITTER_NAME="Ada Author",
                        GIT_COMMITTER_EMAIL="ada@example.org")
        sh("git -c init.defaultBranch=main init -q .", cwd=path, env=self.env)

    def write(self, name, text):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(text)

    def remove(self, name):
        p = os.path.join(self.path, name)
        if os.path.exists(p):
            os.unlink(p)

    def commit(self, subject):
        self.n += 1
        stamp = "@%d +0000" % (1767225600 + 60 * self.n)
        env = dict(self.env, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        sh("git add -A", cwd=self.path, env=env)
        sh(["git", "commit", "-q", "--allow-empty", "-m", subject], cwd=self.path, env=env)
        return sh("git rev-parse HEAD", cwd=self.path).strip()


# The subsystems bench_repo's commit subjects name: commit i is
# "AREAS[i % 5]: change number i".
AREAS = ["net", "mm", "sched", "fs: ext4", "block"]


def bench_repo(path, commits, changes=None, broken=(), owner=None):
    """commits after the root; changes: {index: new_mean}; broken: indexes
    whose build fails.  Returns the repo and the SHAs, index 0 the root.
    Repositories made alike have the same commits; owner (a test module's
    __name__) goes into the root commit, so that none of the module's
    commits, nor a report naming one, is shared with another module's."""
    changes = changes or {}
    repo = Repo(path)
    mean = 1000.0
    repo.write("bench.c", BENCH_C)
    repo.write("build.sh", BUILD_SH)
    repo.write("mean", "%r\n" % mean)
    if owner is not None:
        repo.write("owner", "%s\n" % owner)
    shas = [repo.commit("bench: add the benchmark")]
    for i in range(1, commits + 1):
        if i in changes:
            repo.write("mean", "%r\n" % changes[i])
        repo.write("file%02d.txt" % (i % 7), "change %d\n" % i)
        if i in broken:
            repo.write("BROKEN", "1\n")
        else:
            repo.remove("BROKEN")
        shas.append(repo.commit("%s: change number %d" % (AREAS[i % len(AREAS)], i)))
    return repo, shas


class Api:
    def __init__(self, url, token=ADMIN):
        self.url = url
        self.token = token

    def call(self, method, path, body=None, token=None, raw_body=None):
        data = raw_body if raw_body is not None else (
            json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        tok = self.token if token is None else token
        if tok:
            req.add_header("Authorization", "Bearer " + tok)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read().decode()
                ctype = r.headers.get("Content-Type", "")
                return r.status, (json.loads(text) if "json" in ctype else text)
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, text

    def ok(self, method, path, body=None, expect=(200, 201), token=None):
        status, reply = self.call(method, path, body, token=token)
        if status not in expect:
            raise AssertionError("%s %s -> %s %s" % (method, path, status, reply))
        return reply


class Cluster:
    """A private PostgreSQL cluster started by the project's own script."""

    def __init__(self, root):
        self.dir = os.path.join(root, "pg")
        self.conninfo = sh(["bash", os.path.join(ROOT, "scripts/pg-local"), "start",
                            self.dir]).strip().splitlines()[-1]

    def psql(self, sql, conninfo=None):
        return sh(["psql", conninfo or self.conninfo, "-AtXc", sql]).strip()

    def database(self, name):
        """A further empty database in the cluster; its conninfo."""
        self.psql("create database %s" % name)
        return self.conninfo.replace("dbname=statbisect", "dbname=" + name)

    def stop(self):
        subprocess.run(["bash", os.path.join(ROOT, "scripts/pg-local"), "stop", self.dir],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Service:
    """statbisect-server (and optionally one worker) on the cluster."""

    def __init__(self, root, cluster, name, worker=True, lease_seconds=None,
                 smtp_url=None, conninfo=None, extra_args=(), server_bin=None,
                 host="127.0.0.1"):
        self.root = root
        self.cluster = cluster
        self.conninfo = conninfo or cluster.conninfo
        self.name = name
        self.port = free_port()
        self.url = "http://%s:%d" % (host, self.port)
        self.mail = os.path.join(root, name + "-mail")
        self.procs = []
        args = [server_bin or os.path.join(BIN_DIR, "statbisect-server"),
                "--db", self.conninfo,
                "--listen", "%s:%d" % (host, self.port), "--mail-dir", self.mail,
                "--data-dir", os.path.join(root, name + "-data")]
        if lease_seconds:
            args += ["--lease-seconds", str(lease_seconds)]
        if smtp_url:
            args += ["--smtp-url", smtp_url]
        args += list(extra_args)
        self.server_args = args
        self.start_server()
        self.api = Api(self.url)
        self.worker_token = self.api.ok("POST", "/api/v1/tokens",
                                        {"name": name + "-worker", "role": "worker"})["token"]
        self.submit_token = self.api.ok("POST", "/api/v1/tokens",
                                        {"name": name + "-submit", "role": "submit"})["token"]
        self.read_token = self.api.ok("POST", "/api/v1/tokens",
                                      {"name": name + "-read", "role": "read"})["token"]
        if worker:
            self.start_worker()

    def start_server(self):
        """Starts the server (again, after a kill) and waits for /healthz."""
        self.server = self._spawn(self.server_args, self.name + "-server.log",
                                  dict(os.environ, STATBISECT_ADMIN_TOKEN=ADMIN))
        for _ in range(600):
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=1)
                break
            except Exception:
                if self.server.poll() is not None:
                    raise RuntimeError("server exited: " + self.log("server"))
                time.sleep(0.05)
        else:
            raise RuntimeError("server did not answer /healthz")

    def _spawn(self, args, log, env=None):
        out = open(os.path.join(self.root, log), "a")
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def psql(self, sql):
        return self.cluster.psql(sql, self.conninfo)

    def start_worker(self, name="box-1", env=None, args=(), prefix=()):
        """Starts a worker; `env` adds to (or overrides) the environment,
        `args` go after its own, `prefix` before the program (a command
        that runs it, such as `ip netns exec NS`).
        Returns once it has logged its first line (its signal handlers are
        in place by then), so that a test that ends at once does not stop
        it with a SIGTERM it cannot handle yet."""
        log = os.path.join(self.root, self.name + "-worker.log")
        before = os.path.getsize(log) if os.path.exists(log) else 0
        p = self._spawn(list(prefix) + [
            os.path.join(BIN_DIR, "statbisect-worker"), "--server", self.url,
            "--token", self.worker_token, "--work-dir",
            os.path.join(self.root, self.name + "-" + name),
            "--name", name] + list(args), self.name + "-worker.log",
                        dict(os.environ, **env) if env else None)
        deadline = time.time() + 10
        while (time.time() < deadline and p.poll() is None and
               os.path.getsize(log) <= before):
            time.sleep(0.01)
        return p

    def log(self, which):
        with open(os.path.join(self.root, "%s-%s.log" % (self.name, which))) as f:
            return f.read()[-4000:]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        return [p.returncode for p in self.procs]

    def register(self, repo_name, repo, testcase, **tc):
        self.api.ok("POST", "/api/v1/repos", {"name": repo_name, "url": repo.path,
                                              "web_url": "https://git.example.org/c/{sha}"})
        body = {"name": testcase, "build": "sh build.sh", "run": "./bench",
                "kpi": "bench.score", "higher_is_better": True, "min_change_pct": 1.0,
                "params": {"test": "score", "nr_task": 1}}
        body.update(tc)
        self.api.ok("POST", "/api/v1/testcases", body)

    def submit(self, body):
        return self.api.ok("POST", "/api/v1/jobs", body, expect=(201,), token=self.submit_token)

    def wait(self, job_id, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            job = self.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=self.read_token)
            if job["state"] in ("done", "failed", "cancelled"):
                return job
            time.sleep(0.3)
        raise AssertionError("job %d did not finish in %d s; worker log:\n%s" %
                             (job_id, timeout, self.log("worker")))


def metric_value(svc, name):
    """The value of counter or gauge `name` in svc's GET /metrics."""
    text = svc.api.ok("GET", "/metrics")
    m = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
    check(m is not None, "%s in GET /metrics" % name)
    return int(m.group(1))


def wait_for(what, fn, svc=None, timeout=240):
    """fn()'s first true value, asked every 0.2 s; fails after `timeout`
    seconds, with the end of `svc`'s server log when one is given."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("%s did not happen in %d s%s" % (
        what, timeout, "; server log:\n" + svc.log("server") if svc else ""))


def mails(svc):
    """The reports `svc` delivered into its Maildir, parsed, in the order
    of their file names."""
    out = []
    for path in sorted(glob.glob(os.path.join(svc.mail, "new", "*"))):
        with open(path, "rb") as f:
            out.append(email.message_from_binary_file(f, policy=email.policy.default))
    return out


def workdir():
    d = tempfile.mkdtemp(prefix="sbtest-")
    os.chmod(d, 0o755)
    return d


def rmtree(d):
    shutil.rmtree(d, ignore_errors=True)


def rand_index(lo, hi, seed=None):
    return random.Random(seed).randint(lo, hi)


TESTS = []


class Skip(Exception):
    """Raised by a test that this machine cannot run, saying why (the
    fault suite's runner reports it as skipped)."""


def test(fn):
    """Registers an integration test case: fn(env) raises on failure."""
    TESTS.append(fn)
    return fn


def eq(got, want, what):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def runs_stored_once(svc, ids):
    """No run of jobs `ids` (a "1,2,3" list) stored twice: never more
    runs of a commit than its task planned, and no task with runs of two
    workers."""
    eq(svc.psql("select count(*) from (select r.task_id, r.commit_idx,"
                " count(*) as n from runs r where r.job_id in (%s)"
                " group by r.task_id, r.commit_idx) x"
                " join tasks t on t.id = x.task_id"
                " where x.n > (select sum((e->>'runs')::int)"
                " from jsonb_array_elements(t.plan) e"
                " where (e->>'idx')::int = x.commit_idx)" % ids),
       "0", "commits of a task with more runs than planned")
    eq(svc.psql("select count(*) from (select task_id from runs"
                " where job_id in (%s) group by task_id"
                " having count(distinct worker_id) > 1) x" % ids),
       "0", "tasks whose runs come from two workers")


@contextlib.contextmanager
def two_servers(env, name):
    """Two servers without workers, `name`a and `name`b, on one new
    database `name`; both stopped afterwards."""
    conninfo = env.cluster.database(name)
    one = Service(env.root, env.cluster, name + "a", worker=False,
                  conninfo=conninfo)
    try:
        two = Service(env.root, env.cluster, name + "b", worker=False,
                      conninfo=conninfo)
        try:
            yield one, two
        finally:
            two.stop()
    finally:
        one.stop()


class Env:
    """What the tests share: one cluster and one service with a worker.
    A test that needs another configuration starts its own Service,
    usually on a database of its own (cluster.database(name))."""

    def __init__(self, root):
        self.root = root
        self.cluster = Cluster(root)
        self.svc = Service(root, self.cluster, "main")

    def close(self):
        codes = self.svc.stop()
        self.cluster.stop()
        return codes
