#!/usr/bin/python3
"""statbisect's fault suite (issue 11): real server, worker and PostgreSQL;
each test breaks one part in the middle of a job and checks that the job
still ends with the right culprit, that no run is counted twice and that
its report is queued once.  Uses the integration harness
(tests/integration/harness.py).  Prints one line per test and a closing
'faults: N passed, N failed' line; exits non-zero when any failed.

Usage: tests/faults/run.py [-k SUBSTRING] [--keep]
"""
import argparse
import glob
import importlib
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    for path in sorted(glob.glob(os.path.join(HERE, "fault_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3])
    root = harness.workdir()
    passed = failed = skipped = 0
    try:
        for fn in harness.TESTS:
            name = "%s.%s" % (fn.__module__, fn.__name__)
            if a.k not in name:
                continue
            t0 = time.time()
            try:
                fn(root)
                passed += 1
                print("PASS %-64s %6.1fs" % (name, time.time() - t0), flush=True)
            except harness.Skip as why:
                skipped += 1
                print("SKIP %-64s %s" % (name, why), flush=True)
            except Exception:
                failed += 1
                print("FAIL %-64s %6.1fs" % (name, time.time() - t0), flush=True)
                traceback.print_exc()
    finally:
        if a.keep or failed:
            print("kept", root)
        else:
            harness.rmtree(root)
    print("faults: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
