#!/usr/bin/python3
"""statbisect integration tests: the real server and worker binaries over
HTTP, on a private PostgreSQL cluster, against git repositories the tests
make.  Every tests/integration/test_*.py module registers its cases with
@harness.test; they run in file order, sharing one cluster and one server
with a worker (harness.Env).  Prints one line per test and a closing
'integration: N passed, N failed' line (', N skipped' when a test
raised harness.Skip: this machine cannot run it); exits non-zero when any failed.

Usage: tests/integration/run.py [-k SUBSTRING] [--keep]
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
import harness  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3])
    root = harness.workdir()
    passed = failed = skipped = 0
    env = None
    try:
        env = harness.Env(root)
        for fn in harness.TESTS:
            name = "%s.%s" % (fn.__module__, fn.__name__)
            if a.k not in name:
                continue
            t0 = time.time()
            try:
                fn(env)
                passed += 1
                print("PASS %-64s %6.1fs" % (name, time.time() - t0), flush=True)
            except harness.Skip as why:
                skipped += 1
                print("SKIP %-64s %s" % (name, why), flush=True)
            except Exception:
                failed += 1
                print("FAIL %-64s %6.1fs" % (name, time.time() - t0), flush=True)
                traceback.print_exc()
    except Exception:
        failed += 1
        print("FAIL setup")
        traceback.print_exc()
    finally:
        if env is not None:
            codes = env.close()
            if any(c != 0 for c in codes):
                print("FAIL processes exited with %r on SIGTERM" % codes)
                failed += 1
        if a.keep or failed:
            print("kept", root)
        else:
            harness.rmtree(root)
    print("integration: %d passed, %d failed%s" % (
        passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
