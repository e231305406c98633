#!/usr/bin/python3
"""Claims per second from a deep queue (issue 14): 10,000 queued tasks and
64 workers claiming at once, on one private cluster and server
(bench/benchlib.py).

The queue: --jobs jobs are submitted through the API against a small
repository (each is resolved and gets its first tasks from the engine, as
in production); the tasks are then topped up with SQL to --tasks queued
tasks in all, copies of each job's first task (same commit and plan), in
rounds over the jobs, so that task ids interleave the jobs as a queue of
bisections stepping side by side does.  The workers: --claimers workers
registered over the API (POST /api/v1/workers), each a thread with one
persistent HTTP connection from an address of its own (127.0.1.N, as
separate machines would be; the server's per-address limit is 64),
claiming without waiting (POST /api/v1/workers/{id}/claim) in a loop.
Since a job keeps to the machine of its first claim, each worker takes
the tasks of the jobs it is bound to, and binds a free job when those are
gone.  Successful claims are counted over --seconds after --warmup
seconds.  Then the database must agree: every task handed out is running
under the worker and lease that claim got (a task handed out twice would
carry the later claim's), as many tasks run as were handed out, and no
job has tasks on two workers.

Usage: bench/queue_claims.py [--tasks 10000] [--jobs 200] [--claimers 64]
                             [--seconds 5] [--warmup 1] [--explain]
                             [--statements] [--threads N] [--server BIN]...
  --server   a server to measure (bin/statbisect-server by default); each
             is measured in turn on a database of its own in one cluster.
  --statements  loads pg_stat_statements into the cluster and prints the
             statements that took PostgreSQL's time, per claim.
  --explain  prints, after the run, EXPLAIN ANALYZE of the claim's query
             (server/store/store_tasks.c's, as the schema has it) for the
             worker bound to the job with the highest id.
"""
import argparse
import http.client
import json
import os
import threading
import time

from benchlib import (cluster_cpu_seconds, cpu_seconds, harness,
                      private_cluster, register_worker, service_on,
                      statements_reset, statements_top)

# server/store/store_tasks.c's store_tasks_claim, as a SELECT (the
# UPDATE it feeds changes one row by its key): before migration 160, one
# walk of the queued and running tasks in id order; since, the walk of
# the queued ones (after a look for lapsed leases, by their expiry).
CLAIM_FROM = """
 FROM tasks t JOIN jobs j ON j.id = t.job_id
 JOIN workers w ON w.id = %(worker)d
 WHERE j.state IN ('queued', 'running') AND j.group_name = w.grp
 AND (j.worker_id IS NULL OR j.worker_id = %(worker)d)"""
CLAIM_LOCK = """
 ORDER BY t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED
 FOR NO KEY UPDATE OF j SKIP LOCKED"""
CLAIM_BEFORE_160 = ("SELECT t.id" + CLAIM_FROM + """
 AND (t.state = 'queued' OR (t.state = 'running' AND
 t.lease_expires_at < now()))""" + CLAIM_LOCK)
CLAIM_QUEUED = ("SELECT t.id" + CLAIM_FROM + """
 AND t.state = 'queued'""" + CLAIM_LOCK)


def make_queue(svc, shas, jobs, tasks):
    """Submits `jobs` jobs, waits for their first tasks, then tops the
    queue up with SQL to `tasks` queued tasks."""
    for _ in range(jobs):
        svc.submit({"repo": svc.name, "testcase": svc.name + "-tc",
                    "good": shas[0], "bad": shas[-1]})
    harness.wait_for("%d jobs queued with tasks" % jobs, lambda: int(svc.psql(
        "SELECT count(DISTINCT j.id) FROM jobs j JOIN tasks t"
        " ON t.job_id = j.id WHERE j.state = 'queued'"
        " AND t.state = 'queued'")) == jobs, svc, timeout=120)
    svc.psql(
        "INSERT INTO tasks (job_id, plan, interleave)"
        " SELECT f.job_id, f.plan, f.interleave"
        " FROM generate_series(1, %d) AS round CROSS JOIN"
        " (SELECT DISTINCT ON (job_id) * FROM tasks ORDER BY job_id, id) f"
        " ORDER BY round, f.job_id"
        " LIMIT %d - (SELECT count(*) FROM tasks WHERE state = 'queued')"
        % (tasks // jobs + 1, tasks))
    svc.psql("VACUUM ANALYZE tasks, jobs")
    queued = int(svc.psql("SELECT count(*) FROM tasks WHERE state = 'queued'"))
    harness.eq(queued, tasks, "queued tasks")


def claimer(port, source, worker_id, token, start, stop, out):
    """Claims in a loop on one connection until `stop`; appends (time
    answered, task id, lease) to `out` for each answer (None, None for
    "no task"), or the exception that stopped it."""
    try:
        claim_loop(port, source, worker_id, token, start, stop, out)
    except Exception as e:  # noqa: BLE001 - reported by measure()
        out.append(e)
        start.wait()
        stop.set()


def claim_loop(port, source, worker_id, token, start, stop, out):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(source, 0))
    headers = {"Authorization": "Bearer " + token, "Content-Length": "0"}
    path = "/api/v1/workers/%d/claim" % worker_id
    start.wait()
    while not stop.is_set():
        conn.request("POST", path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError("claim answered %d %s" % (r.status, body))
        task = json.loads(body)["task"]
        if task is not None:
            out.append((time.monotonic(), task["id"], task["lease"]))
        else:
            out.append((time.monotonic(), None, None))
    conn.close()


def check_database(svc, got):
    """Each task handed out exactly once, as the database has it."""
    ids = [t for _, t, _, _ in got]
    harness.eq(len(set(ids)), len(ids), "distinct tasks among the claims")
    rows = svc.psql("SELECT id, worker_id, lease FROM tasks"
                    " WHERE state = 'running'")
    held = {int(i): (int(w), int(lease)) for i, w, lease in
            (line.split("|") for line in rows.splitlines())}
    harness.eq(len(held), len(got), "running tasks in the database")
    for _, task, lease, worker in got:
        harness.eq(held.get(task), (worker, lease),
                   "task %d's worker and lease" % task)
    shared = svc.psql("SELECT count(*) FROM (SELECT job_id FROM tasks"
                      " WHERE state = 'running' GROUP BY job_id"
                      " HAVING count(DISTINCT worker_id) > 1) s")
    harness.eq(shared, "0", "jobs with tasks on two workers")


def cpu_now(svc):
    """CPU seconds so far of the server, the cluster and this bench."""
    t = os.times()
    return (cpu_seconds(svc.server.pid), cluster_cpu_seconds(svc.cluster),
            t.user + t.system)


def measure(svc, a, workers):
    start, stop = threading.Event(), threading.Event()
    outs = {w: [] for w in workers}
    threads = [threading.Thread(target=claimer, args=(
        svc.port, "127.0.1.%d" % (i + 1), w, svc.worker_token, start, stop,
        outs[w])) for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    began = time.monotonic()
    start.set()
    time.sleep(a.warmup)
    cpu = cpu_now(svc)
    time.sleep(began + a.warmup + a.seconds - time.monotonic())
    cpu = [after - before for before, after in zip(cpu, cpu_now(svc))]
    stop.set()
    for t in threads:
        t.join(60)
    for out in outs.values():
        if out and isinstance(out[-1], Exception):
            raise RuntimeError("a claimer failed: %r" % out[-1])
    lo, hi = began + a.warmup, began + a.warmup + a.seconds
    empty = sum(1 for out in outs.values() for at, task, _ in out
                if task is None and lo <= at < hi)
    got = [(at, task, lease, w) for w, out in outs.items()
           for at, task, lease in out if task is not None]
    window = [g for g in got if lo <= g[0] < hi]
    busy = sum(1 for w in workers
               if any(lo <= at < hi and task is not None
                      for at, task, _ in outs[w]))
    per_second = [0] * int(a.seconds)
    for at, _, _, _ in window:
        if int(at - lo) < len(per_second):
            per_second[int(at - lo)] += 1
    return got, window, busy, per_second, empty, cpu


def explain(svc):
    """The claim's plan after the run, for the worker bound to the job
    with the highest id (its tasks come last among the queued)."""
    worker = int(svc.psql("SELECT worker_id FROM jobs WHERE worker_id"
                          " IS NOT NULL ORDER BY id DESC LIMIT 1"))
    after = svc.psql("SELECT to_regclass('tasks_queued') IS NOT NULL")
    query = CLAIM_QUEUED if after == "t" else CLAIM_BEFORE_160
    print("EXPLAIN ANALYZE of the claim for worker %d (%s):" % (
        worker, "queued tasks, since migration 160" if after == "t"
        else "before migration 160"))
    print(svc.psql("EXPLAIN (ANALYZE, BUFFERS) " + query
                   % {"worker": worker}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--claimers", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--explain", action="store_true")
    ap.add_argument("--statements", action="store_true")
    ap.add_argument("--threads", type=int,
                    help="the server's --threads (default: its default)")
    ap.add_argument("--server", action="append")
    a = ap.parse_args()
    # Leases outlast the run, so every claim takes a queued task; the
    # open-jobs limit would stop the submissions at 100.
    extra = ["--lease-seconds", "600", "--max-open-jobs", "0",
             "--max-jobs-per-hour", "0"]
    if a.threads:
        extra += ["--threads", str(a.threads)]
    with private_cluster(statements=a.statements) as (root, cluster):
        for i, server in enumerate(a.server or [None]):
            print("== %s" % (server or "bin/statbisect-server"))
            with service_on(root, cluster, "queue%d" % i, repo_commits=16,
                            server_bin=server, extra_args=extra,
                            database="queue%d" % i) as (svc, shas):
                run(svc, shas, a)


def run(svc, shas, a):
    made = time.monotonic()
    make_queue(svc, shas, a.jobs, a.tasks)
    made = time.monotonic() - made
    api = harness.Api(svc.url, svc.worker_token)
    workers = [register_worker(svc, "claimer-%02d" % i, api)
               for i in range(a.claimers)]
    if a.statements:
        statements_reset(svc)
    got, window, busy, per_second, empty, cpu = measure(svc, a, workers)
    check_database(svc, got)
    if a.explain:
        explain(svc)
    print("queue: %d tasks of %d jobs (made in %.1f s), %d claimers, "
          "server --threads %s" % (a.tasks, a.jobs, made, a.claimers,
                                   a.threads or "4 (default)"))
    print("claims in %.0f s after %.0f s of warm-up: %d, %.0f claims/s; "
          "%d of %d claimers got tasks in the window, %d claims "
          "answered no task" % (a.seconds, a.warmup, len(window),
                                len(window) / a.seconds, busy, a.claimers,
                                empty))
    print("claims in each second of the window: %s"
          % " ".join(str(n) for n in per_second))
    print("CPU in the window: server %.1f s, PostgreSQL %.1f s, this bench "
          "%.1f s (of %.0f s on 2 cores); per claim: %.2f + %.2f + %.2f ms"
          % (tuple(cpu) + (2 * a.seconds,) +
             tuple(1000 * c / max(1, len(window)) for c in cpu)))
    print("claims in all: %d; database: each running task once, under "
          "the claim's worker and lease; no job on two workers"
          % len(got))
    if a.statements:
        print("PostgreSQL's time by statement, per claim (all %d claims, "
              "warm-up included; pg_stat_statements):" % len(got))
        print("\n".join(statements_top(svc, len(got))))

if __name__ == "__main__":
    main()
