#!/usr/bin/python3
"""How the server holds up under a flood of idle connections (issue 11):
starts a private cluster and server (tests/integration/harness.py), opens
N idle connections from 127.0.0.1, then times GET /healthz from 127.0.0.2
while they are held, and says how many of the flood's connections were
served, answered 503 or dropped.  Loopback only; bounded in count and time.

Usage: bench/flood.py [--connections N] [--probes M] [--server BIN]...
(each --server is measured in turn, in one run; bin/statbisect-server by
default)
"""
import argparse
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import harness  # noqa: E402
from test_limits import connect, get, healthz_from  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--probes", type=int, default=50)
    ap.add_argument("--server", action="append")
    a = ap.parse_args()
    for server in a.server or [None]:
        print("== %s" % (server or "bin/statbisect-server"))
        measure(a, server)


def measure(a, server_bin):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.connections + 256), hard))
    root = harness.workdir()
    cluster = harness.Cluster(root)
    svc = harness.Service(root, cluster, "flood", worker=False,
                          server_bin=server_bin)
    flood = []
    try:
        for _ in range(a.connections):
            try:
                flood.append(connect(svc.port))
            except OSError:
                pass
        time.sleep(0.5)
        took, failed = [], 0
        for _ in range(a.probes):
            try:
                status, seconds = healthz_from(svc.port, "127.0.0.2")
            except OSError:
                status, seconds = None, 0
            if status == 200:
                took.append(seconds * 1000)
            else:
                failed += 1
        answers = [get(s)[0] for s in flood]
        print("idle connections opened from 127.0.0.1: %d" % len(flood))
        print("/healthz from 127.0.0.2: %d answered 200, %d not; "
              "median %.1f ms, max %.1f ms" % (len(took), failed,
                                               statistics.median(took) if took else -1,
                                               max(took) if took else -1))
        print("the flood's connections: %d served, %d answered 503, %d dropped"
              % (answers.count(200), answers.count(503),
                 len(answers) - answers.count(200) - answers.count(503)))
    finally:
        for s in flood:
            s.close()
        svc.stop()
        cluster.stop()
        harness.rmtree(root)


if __name__ == "__main__":
    main()
