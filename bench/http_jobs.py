#!/usr/bin/python3
"""HTTP throughput of the pages people and CI poll (issue 14): `wrk`
against GET /api/v1/jobs/{id} (a finished job of 16 commits whose runs a
real worker made), against the dashboard and GET /api/v1/jobs (the list
it shares its query with), and against /healthz, on one server, in one
run, with 10,000 further jobs in the database.

The further jobs are copies of the measured job's row made with one
INSERT ... SELECT (they have no commits of their own): what matters is
that the tables the pages read are as large as a busy service's.

With --churn HZ, a job on the dashboard's first page changes HZ times a
second while the lists are measured (with psql, as a busy fleet's workers
would: every other change moves a job between the states), so that their
pages cannot simply stay kept.

Usage: bench/http_jobs.py [--jobs N] [--seconds S] [--connections C]
                          [--server BIN] [--churn HZ]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import benchlib
from benchlib import harness
from test_web import Browser  # noqa: E402  (benchlib puts it on the path)


# Issue 14's target for a job's answer, the dashboard and the list with
# 64 connections.
TARGET_SHARE = 0.30
TARGET_P99_MS = 50


def wrk(url, header, seconds, connections):
    """Requests per second and p99 latency (ms) of `wrk` on `url`, each
    request with `header` (its credentials)."""
    args = ["wrk", "-t2", "-c%d" % connections, "-d%ds" % seconds,
            "--latency", "-H", header, url]
    out = subprocess.run(args, check=True, capture_output=True,
                         text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"\s99%\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*", out)
    return {"rps": rps, "p99_ms": float(p99.group(1)) * scale,
            "non2xx": int(bad.group(1)) if bad else 0,
            "socket_errors": errors.group(0) if errors else ""}


def finished_job(svc, root):
    repo, shas = harness.bench_repo(os.path.join(root, "repo"), 15,
                                    {9: 950.0}, owner=__name__)
    svc.register("web", repo, "web-tc", runs_min=5, runs_max=20)
    job = svc.submit({"repo": "web", "testcase": "web-tc",
                      "good": shas[0], "bad": shas[-1]})["id"]
    svc.start_worker("bench-box")
    done = svc.wait(job, timeout=600)
    if done["state"] != "done":
        raise RuntimeError("the measured job ended %s" % done["state"])
    return job, done


def copy_jobs(svc, job, count):
    """`count` more jobs in the database, copies of job `job`'s row."""
    cols = svc.psql(
        "select string_agg(quote_ident(column_name), ',' order by"
        " ordinal_position) from information_schema.columns"
        " where table_name = 'jobs' and column_name <> 'id'"
        " and is_generated = 'NEVER'")
    svc.psql("insert into jobs (%s) select %s from jobs, generate_series(1, %d)"
             " where id = %d" % (cols, cols, count, job))
    return int(svc.psql("select count(*) from jobs"))


class Churn:
    """Changes jobs `newest` and `newest` - 1 `hz` times a second through
    one psql session while the `with` block runs; .count says how many
    changes were made."""

    def __init__(self, svc, newest, hz):
        self.svc, self.newest, self.hz = svc, newest, hz
        self.count = 0
        self.stop = threading.Event()

    def run(self):
        psql = subprocess.Popen(["psql", self.svc.conninfo, "-Xq"],
                                stdin=subprocess.PIPE, text=True,
                                stdout=subprocess.DEVNULL)
        t = time.monotonic()
        while not self.stop.is_set():
            if self.count % 2:
                sql = ("update jobs set state = case state when 'done'"
                       " then 'failed' else 'done' end where id = %d;"
                       % (self.newest - 1))
            else:
                sql = ("update jobs set change_pct = %d where id = %d;"
                       % (self.count, self.newest))
            psql.stdin.write(sql + "\n")
            psql.stdin.flush()
            self.count += 1
            t += 1.0 / self.hz
            self.stop.wait(max(0.0, t - time.monotonic()))
        psql.stdin.close()
        psql.wait()

    def __enter__(self):
        if self.hz > 0:
            self.thread = threading.Thread(target=self.run)
            self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.hz > 0:
            self.stop.set()
            self.thread.join()


def measure(svc, root, args):
    """Runs wrk against each page of `svc`; whether the target is met."""
    job, done = finished_job(svc, root)
    total = copy_jobs(svc, job, args.jobs)
    print("jobs in the database: %d; measured job %d: %d commits,"
          " %d runs" % (total, job, done["candidates"], done["runs"]))
    browser = Browser(svc.url).sign_in(svc.read_token)
    cookie = "Cookie: " + "; ".join(
        "%s=%s" % kv for kv in browser.cookies.items())
    bearer = "Authorization: Bearer " + svc.read_token
    # The bootstrap admin token is compared in memory: its row shows
    # what the token lookup of the row above costs.
    admin = "Authorization: Bearer " + harness.ADMIN
    targets = [("/healthz", "/healthz", bearer),
               ("/api/v1/jobs/{id}", "/api/v1/jobs/%d" % job, bearer),
               ("/api/v1/jobs/{id}, bootstrap admin token",
                "/api/v1/jobs/%d" % job, admin),
               ("dashboard /", "/", cookie),
               ("GET /api/v1/jobs", "/api/v1/jobs", bearer)]
    results = {}
    newest = int(svc.psql("select max(id) from jobs"))
    for name, path, header in targets:
        with Churn(svc, newest, args.churn if path in ("/", "/api/v1/jobs")
                   else 0) as churn:
            results[name] = wrk(svc.url + path, header, args.seconds,
                                args.connections)
        if churn.count:
            print("%s: %d changes of jobs on its first page in %d s" % (
                name, churn.count, args.seconds))
    base = results["/healthz"]["rps"]
    print("| route | requests/s | p99 | share of /healthz | non-2xx |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, _, _ in targets:
        r = results[name]
        print("| %s | %.0f | %.1f ms | %.1f%% | %d |" % (
            name, r["rps"], r["p99_ms"], 100.0 * r["rps"] / base,
            r["non2xx"]))
        if r["socket_errors"]:
            print("  %s: %s" % (name, r["socket_errors"]))
    met = True
    for name in ("/api/v1/jobs/{id}", "dashboard /", "GET /api/v1/jobs"):
        r = results[name]
        ok = (r["rps"] >= TARGET_SHARE * base and
              r["p99_ms"] < TARGET_P99_MS and r["non2xx"] == 0)
        print("target (%s at >= %d%% of /healthz, p99 under %d ms, all"
              " 2xx): %s" % (name, 100 * TARGET_SHARE, TARGET_P99_MS,
                             "met" if ok else "MISSED"))
        met = met and ok
    return met


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--server", help="statbisect-server to measure")
    ap.add_argument("--churn", type=float, default=0,
                    help="changes a second of jobs on the lists' first"
                    " page while they are measured")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("http_jobs: wrk is not installed (scripts/install-deps)")
    # wrk's connections all come from 127.0.0.1: the limit per address
    # must let them in.
    limit = ["--max-connections-per-ip", str(args.connections + 16)]
    with benchlib.private_cluster() as (root, cluster):
        with benchlib.service_on(root, cluster, "web",
                                 server_bin=args.server,
                                 extra_args=limit) as (svc, _):
            return 0 if measure(svc, root, args) else 1


if __name__ == "__main__":
    sys.exit(main())
