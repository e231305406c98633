#!/usr/bin/python3
"""Resident memory of the server and the worker (issue 14), as the kernel
counts it: VmRSS (resident now) and VmHWM (the most ever resident) from
/proc/PID/status, with VmRSS's parts RssAnon (heap, stacks) and RssFile
(mapped files: the program and its shared libraries) and the number of
threads, on one private cluster (bench/benchlib.py).

  1. idle server: started, --idle seconds with no requests but the
     harness's own (three tokens made at start);
  2. idle worker: a worker started against it, --idle seconds of
     long-polling claims with nothing queued; the server measured again;
  3. busy server: --jobs jobs submitted (each resolved and queued by the
     engine), --workers further real workers claiming, building and
     running their tasks, and every job read with GET /api/v1/jobs/{id}
     --rounds times, with GET /api/v1/jobs (the list) at each round; the
     server, and the workers, measured after.

Usage: bench/memory.py [--idle 5] [--jobs 100] [--workers 2] [--rounds 3]
                       [--busy 20] [--server BIN]
  --busy  seconds the workers run before the last round of GETs.
"""
import argparse
import time

from benchlib import harness, memory, private_service


def row(label, pid):
    m = memory(pid)
    print("%-46s %8.1f MB %8.1f MB %8.1f MB %8.1f MB %4d" % (
        label, m["VmRSS"] / 1024.0, m["VmHWM"] / 1024.0,
        m["RssAnon"] / 1024.0, m["RssFile"] / 1024.0, m["Threads"]))
    return m


def read_jobs(svc, ids):
    api = harness.Api(svc.url, svc.read_token)
    listed = api.ok("GET", "/api/v1/jobs")
    for job in ids:
        api.ok("GET", "/api/v1/jobs/%d" % job)
    return listed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--busy", type=float, default=20.0)
    ap.add_argument("--server")
    a = ap.parse_args()
    extra = ["--max-open-jobs", "0", "--max-jobs-per-hour", "0"]
    with private_service("mem", repo_commits=64, server_bin=a.server,
                         extra_args=extra) as (svc, shas):
        print("%-46s %11s %11s %11s %11s %4s" % (
            "process", "VmRSS", "VmHWM", "RssAnon", "RssFile", "thr"))
        time.sleep(a.idle)
        row("server, idle %.0f s after start" % a.idle, svc.server.pid)
        idle_worker = svc.start_worker("idle")
        time.sleep(a.idle)
        row("worker, idle %.0f s after start" % a.idle, idle_worker.pid)
        row("server, with that worker waiting", svc.server.pid)
        ids = [svc.submit({"repo": "mem", "testcase": "mem-tc",
                           "good": shas[0], "bad": shas[-1]})["id"]
               for _ in range(a.jobs)]
        harness.wait_for("%d jobs queued or running" % a.jobs, lambda: int(
            svc.psql("SELECT count(*) FROM jobs WHERE state IN"
                     " ('queued', 'running')")) == a.jobs, svc, timeout=120)
        busy = [svc.start_worker("busy-%d" % i) for i in range(a.workers)]
        for i in range(a.rounds):
            read_jobs(svc, ids)
            if i == 0:
                time.sleep(a.busy)
        states = svc.psql("SELECT state || ' ' || count(*) FROM jobs"
                          " GROUP BY state ORDER BY state")
        runs = svc.psql("SELECT count(*) FROM runs")
        print("jobs by state: %s; runs uploaded: %s"
              % (", ".join(states.splitlines()), runs))
        row("server, %d active jobs, %d+1 workers, GETs"
            % (a.jobs, a.workers), svc.server.pid)
        for i, p in enumerate([idle_worker] + busy):
            row("worker %d of %d, after %.0f s with jobs"
                % (i + 1, a.workers + 1, a.busy), p.pid)


if __name__ == "__main__":
    main()
