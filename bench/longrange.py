#!/usr/bin/python3
"""Long ranges (issue 11): how long a submission of a 99,990-commit range
holds the server.  Generates a linear repository with one git fast-import
(in a temporary directory, removed after), starts the server(s) on one
private PostgreSQL cluster (tests/integration/harness.py; each server on a
database of its own), and for each measures:

  - the POST answer's time and status for the full range,
  - the time until that job is queued with its candidates,
  - GET /api/v1/jobs/{id} of that job (median of 5),
  - /healthz latency (median and max, probed every 0.2 s) while four
    such submissions run at once, and how long until all four answered
    and were queued,
  - the server's RSS before and after.

The mirror is cloned with git before the repository is registered, and
fetched by a short submission first, so neither is counted.  Bounded: every wait gives up after --timeout seconds.  Not part
of `make check`.

Usage: bench/longrange.py [--commits N] [--server BIN]... [--old]
  --old  also builds the `main` branch from `git archive main` into a
         temporary directory and measures its server first.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402


# fast-import grows and shrinks its heap by a little at each commit; where
# brk is slow (here 80 us a call) that is 3 ms a commit.  Keeping 256 MB
# of slack makes 3,000 commits 0.1 s instead of 7 s.
FAST_IMPORT_ENV = dict(os.environ, MALLOC_TOP_PAD_="268435456",
                       MALLOC_TRIM_THRESHOLD_="268435456")

def make_repo(path, commits):
    """A linear repository of `commits` commits after the root, made by
    one fast-import; its SHAs, index 0 the root."""
    def blob(text):
        data = text.encode()
        return b"data %d\n" % len(data) + data + b"\n"

    os.makedirs(path)
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True)
    p = subprocess.Popen(["git", "-C", path, "fast-import", "--quiet"],
                         stdin=subprocess.PIPE, env=FAST_IMPORT_ENV)
    for i in range(commits + 1):
        out = [b"commit refs/heads/main\nmark :%d\n" % (i + 1),
               b"author Ada <ada@example.org> %d +0000\n" % (1700000000 + i),
               b"committer Ada <ada@example.org> %d +0000\n" % (1700000000 + i),
               blob("%s: change number %d" % (harness.AREAS[i % 5], i))]
        if i > 0:
            out.append(b"from :%d\n" % i)
        else:
            out.append(b"M 100644 inline bench.c\n" + blob(harness.BENCH_C))
            out.append(b"M 100644 inline build.sh\n" + blob(harness.BUILD_SH))
            out.append(b"M 100644 inline mean\n" + blob("1000.0\n"))
        out.append(b"M 100644 inline counter\n" + blob("%d\n" % i))
        out.append(b"\n")
        p.stdin.write(b"".join(out))
    p.stdin.close()
    if p.wait() != 0:
        raise RuntimeError("git fast-import failed")
    return subprocess.run(["git", "-C", path, "rev-list", "--reverse", "main"],
                          check=True, capture_output=True, text=True).stdout.split()


def build_old(tmp):
    """bin/statbisect-server of the main branch, built in `tmp`."""
    src = os.path.join(tmp, "main-src")
    os.makedirs(src)
    archive = subprocess.Popen(["git", "-C", ROOT, "archive", "main"], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
    archive.wait()
    subprocess.run(["make", "-C", src, "-j2", "bin/statbisect-server"], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(src, "bin", "statbisect-server")


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def post_job(svc, body, timeout):
    t0 = time.time()
    status, job = svc.api.call("POST", "/api/v1/jobs", body, token=svc.submit_token)
    return status, job, time.time() - t0


def wait_queued(svc, job_id, t0, timeout):
    """Seconds from t0 until the job has its candidates and is queued."""
    while time.time() - t0 < timeout:
        status, job = svc.api.call("GET", "/api/v1/jobs/%d" % job_id,
                                   token=svc.read_token)
        if status == 200 and job["candidates"] > 0 and job["state"] != "resolving":
            return time.time() - t0
        if status == 200 and job["state"] in ("failed", "cancelled"):
            raise RuntimeError("job %d %s: %s" % (job_id, job["state"], job.get("message")))
        time.sleep(0.1)
    return float("nan")


def healthz_s(svc, timeout):
    t0 = time.time()
    urllib.request.urlopen(svc.url + "/healthz", timeout=timeout).read()
    return time.time() - t0


def measure(root, cluster, name, server_bin, repo, shas, timeout):
    conninfo = cluster.database(name)
    svc = harness.Service(root, cluster, name, worker=False, conninfo=conninfo,
                          server_bin=server_bin)
    try:
        # The mirror is cloned by git beforehand: libgit2's clone of
        # 100,000 commits takes minutes here and is not what is measured.
        subprocess.run(["git", "clone", "-q", "--mirror", repo,
                        os.path.join(root, name + "-data", "repos", "long.git")],
                       check=True)
        t0 = time.time()
        svc.api.ok("POST", "/api/v1/repos", {"name": "long", "url": repo})
        print("  repository registered in %.1f s" % (time.time() - t0))
        svc.api.ok("POST", "/api/v1/testcases",
                   {"name": "long-tc", "build": "sh build.sh", "run": "./bench",
                    "kpi": "bench.score", "higher_is_better": True})
        t0 = time.time()
        status, job, _ = post_job(svc, {"repo": "long", "testcase": "long-tc",
                                        "good": shas[-3], "bad": shas[-1]}, timeout)
        print("  mirror fetched by a short job: %d in %.1f s: %s"
              % (status, time.time() - t0, job.get("error") or job.get("state")))
        rss0 = rss_mb(svc.server.pid)
        full = {"repo": "long", "testcase": "long-tc", "good": shas[0], "bad": shas[-1]}
        t0 = time.time()
        status, job, took = post_job(svc, full, timeout)
        queued = wait_queued(svc, job["id"], t0, timeout)
        print("  one submission: POST answered %d in %.2f s; queued with %d"
              " candidates after %.2f s" % (status, took, len(shas), queued))
        gets = []
        for _ in range(5):
            g0 = time.time()
            svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"], token=svc.read_token)
            gets.append(time.time() - g0)
        print("  GET of that job: median %.3f s" % statistics.median(gets))
        answers = []

        def submit():
            answers.append(post_job(svc, full, timeout))

        t0 = time.time()
        threads = [threading.Thread(target=submit) for _ in range(4)]
        for t in threads:
            t.start()
        # /healthz is probed until all four are queued, not only while
        # the POSTs wait: the listing goes on after a 202.
        probes = []
        while any(t.is_alive() for t in threads) and time.time() - t0 < timeout:
            probes.append(healthz_s(svc, timeout))
            time.sleep(0.2)
        for t in threads:
            t.join(timeout)
        posts_done = time.time() - t0
        pending = [job["id"] for status, job, _ in answers]
        while pending and time.time() - t0 < timeout:
            probes.append(healthz_s(svc, timeout))
            status, job = svc.api.call("GET", "/api/v1/jobs/%d" % pending[0],
                                       token=svc.read_token)
            if status == 200 and job["candidates"] > 0 and job["state"] != "resolving":
                pending.pop(0)
            time.sleep(0.2)
        all_queued = time.time() - t0
        print("  four at once: all POSTs answered after %.2f s (%s), all queued"
              " after %.2f s; /healthz median %.3f s, max %.3f s over %d probes"
              % (posts_done, ",".join(str(a[0]) for a in answers), all_queued,
                 statistics.median(probes) if probes else float("nan"),
                 max(probes) if probes else float("nan"), len(probes)))
        time.sleep(2)
        print("  server RSS: %.0f MB before, %.0f MB after" % (rss0, rss_mb(svc.server.pid)))
    finally:
        svc.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=99990)
    ap.add_argument("--server", action="append")
    ap.add_argument("--old", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args()
    root = harness.workdir()
    cluster = None
    try:
        servers = []
        if a.old:
            servers.append(("old", build_old(root)))
        for i, s in enumerate(a.server or [os.path.join(ROOT, "bin", "statbisect-server")]):
            servers.append(("new%d" % i if i else "new", s))
        t0 = time.time()
        shas = make_repo(os.path.join(root, "long"), a.commits)
        print("repository of %d commits made in %.1f s" % (len(shas), time.time() - t0))
        cluster = harness.Cluster(root)
        for name, server_bin in servers:
            print("== %s (%s)" % (name, server_bin))
            measure(root, cluster, name, server_bin, os.path.join(root, "long"), shas,
                    a.timeout)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
