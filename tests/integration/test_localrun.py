"""scripts/run, as `make run` starts it: the worker's token stays off every
command line, one local-worker token serves every start, and the server
starts without PostgreSQL notices (issue 15)."""
import json
import os
import signal
import subprocess
import time
import urllib.request

import harness
from harness import check, eq, test


def start(var, port, log):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATBISECT_")}
    env.update(STATBISECT_VAR=var, STATBISECT_LISTEN="127.0.0.1:%d" % port,
               STATBISECT_ADMIN_TOKEN=harness.ADMIN)
    out = open(log, "w")
    proc = subprocess.Popen(["bash", os.path.join(harness.ROOT, "scripts", "run")],
                            cwd=harness.ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    for _ in range(600):
        with open(log) as f:
            if "run: Ctrl-C stops" in f.read():
                return proc
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    stop(proc)
    with open(log) as f:
        raise AssertionError("scripts/run did not start:\n" + f.read())


def stop(proc):
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def get(url, path):
    req = urllib.request.Request(url + path,
                                 headers={"Authorization": "Bearer " + harness.ADMIN})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def command_lines():
    lines = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                lines.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return lines


@test
def make_run_keeps_the_worker_token_off_ps_and_makes_it_once(env):
    var = os.path.join(env.root, "localrun-var")
    port = harness.free_port()
    url = "http://127.0.0.1:%d" % port
    for attempt in (1, 2):
        log = os.path.join(env.root, "localrun-%d.log" % attempt)
        proc = start(var, port, log)
        try:
            with open(os.path.join(var, "worker-token")) as f:
                token = f.read().strip()
            check(token, "the worker token is kept in var/worker-token")
            eq(os.stat(os.path.join(var, "worker-token")).st_mode & 0o777, 0o600,
               "var/worker-token is private")
            shown = [l for l in command_lines() if token in l]
            eq(shown, [], "command lines showing the worker token")
            tokens = [t for t in get(url, "/api/v1/tokens")["tokens"]
                      if t["name"] == "local-worker" and t["revoked_at"] is None]
            eq(len(tokens), 1, "local-worker tokens after start %d" % attempt)
            for _ in range(200):
                if any(w["name"].endswith("-local") for w in get(url, "/api/v1/workers")["workers"]):
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("the worker did not register")
        finally:
            stop(proc)
        with open(log) as f:
            text = f.read()
        check("NOTICE" not in text, "PostgreSQL notices on start %d:\n%s" % (attempt, text))
