#!/usr/bin/python3
"""How soon a queued task reaches an idle worker (issue 14): the time from
submitting a job to a claim returning its first task, for a worker that
long-polls (POST /claim?wait=20, woken by LISTEN/NOTIFY) and for one
that polls as workers did before, every second (POST /claim, then 1 s
of sleep).  The two take turns in one run on one private cluster and
server (tests/integration/harness.py), each trial submitting a job while
the claimer idles, timing its claim, then cancelling the job.

Usage: bench/claim_latency.py [--trials N] [--server BIN]
"""
import argparse
import random
import statistics
import threading
import time

from benchlib import harness, private_service, register_worker, summary

POLL_S = 1.0
WAIT_S = 20


def claimer(api, worker_id, longpoll, out, stop):
    """Claims until a task comes; out["at"] is when it came."""
    query = "?wait=%d" % WAIT_S if longpoll else ""
    while not stop.is_set():
        status, reply = api.call(
            "POST", "/api/v1/workers/%d/claim%s" % (worker_id, query))
        if status == 200 and reply.get("task"):
            out["at"] = time.monotonic()
            out["job"] = reply["task"]["job"]
            return
        if status != 200:
            raise RuntimeError("claim answered %s %s" % (status, reply))
        if not longpoll:
            time.sleep(POLL_S)


def trial(svc, worker, worker_id, longpoll, shas, rng):
    out, stop = {}, threading.Event()
    t = threading.Thread(target=claimer,
                         args=(worker, worker_id, longpoll, out, stop))
    t.start()
    # The claimer idles for a while first; the poller's phase against the
    # submission is then anybody's, as it is for a real worker.
    time.sleep(1.0 + rng.random())
    submitted = time.monotonic()
    job = svc.submit({"repo": "lat", "testcase": "lat-tc",
                      "good": shas[0], "bad": shas[-1]})["id"]
    answered = time.monotonic()
    t.join(WAIT_S + 10)
    stop.set()
    if "at" not in out:
        raise RuntimeError("no task claimed for job %d" % job)
    if out["job"] != job:
        raise RuntimeError("claimed job %d, submitted %d" % (out["job"], job))
    svc.api.ok("DELETE", "/api/v1/jobs/%d" % job, token=svc.submit_token)
    return (out["at"] - submitted) * 1000, (answered - submitted) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--server")
    a = ap.parse_args()
    with private_service("lat", repo_commits=8,
                         server_bin=a.server) as (svc, shas):
        worker = harness.Api(svc.url, svc.worker_token)
        ids = {mode: register_worker(svc, "lat-" + mode, worker)
               for mode in ("longpoll", "poll")}
        took = {"longpoll": [], "poll": []}
        submit_ms = []
        rng = random.Random(14)
        for i in range(a.trials):
            for mode in (("longpoll", "poll") if i % 2 == 0
                         else ("poll", "longpoll")):
                claimed, answered = trial(svc, worker, ids[mode],
                                          mode == "longpoll", shas, rng)
                took[mode].append(claimed)
                submit_ms.append(answered)
        print("submit -> task claimed, %d trials each, one server, "
              "2-core machine" % a.trials)
        print("%-32s %9s %9s %9s %9s" % ("claimer", "median ms", "mean ms",
                                         "p90 ms", "max ms"))
        for mode, label in (("longpoll", "long-poll (?wait=20, NOTIFY)"),
                            ("poll", "polling every 1 s (before)")):
            print("%-32s %9.1f %9.1f %9.1f %9.1f" % ((label,) +
                                                     summary(took[mode])))
        print("(the submission's own POST: median %.1f ms)"
              % statistics.median(submit_ms))
        print("ratio of medians (long-poll / polling): %.3f" % (
            statistics.median(took["longpoll"]) /
            statistics.median(took["poll"])))

if __name__ == "__main__":
    main()
