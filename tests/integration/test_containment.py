"""Process containment (issue 11): a benchmark that escapes its process
group with setsid (a double fork) must not outlive its run.  A real worker
runs a testcase whose first run starts escapees and hangs until the time
limit, and whose second run starts escapees and ends normally; once the
job is done no process of either remains.  Both ways the worker contains
a run are checked: a cgroup (v2) of its own when the machine allows it
(STATBISECT_CONTAINMENT=auto, the default) and, forced, the sweep of the
descendants the worker inherits as a subreaper (=sweep), which is what a
container without a writable cgroup hierarchy gets."""
import os
import time
import uuid

from harness import Service, bench_repo, check, eq, test

# Escapees of three kinds: one holding the run's stdout open, one with its
# descriptors closed, one a tree of its own (a shell and its sleep).  Each
# carries SBMARK in its environment, which is how the test finds it.
ESCAPE = (
    '(SBMARK=%(mark)s setsid sleep 1000 &); '
    '(SBMARK=%(mark)s setsid sleep 1001 >/dev/null 2>&1 </dev/null &); '
    '(SBMARK=%(mark)s setsid sh -c "sleep 1002; :" >/dev/null 2>&1 '
    '</dev/null &); ')

RUN = (
    'if mkdir %(state)s/first 2>/dev/null; then ' + ESCAPE % {
        "mark": "%(mark)s-timeout"} + 'sleep 1000; fi; '
    'if mkdir %(state)s/second 2>/dev/null; then ' + ESCAPE % {
        "mark": "%(mark)s-exit"} + 'fi; ./bench')


def marked(mark):
    """Pids of live (not zombie) processes whose environment has SBMARK
    starting with `mark`."""
    found = []
    needle = ("SBMARK=" + mark).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open("/proc/%s/environ" % pid, "rb") as f:
                if any(e.startswith(needle) for e in f.read().split(b"\0")):
                    found.append(int(pid))
        except (OSError, IndexError):
            pass
    return found


def escaping_job(env, mode):
    name = "contain-" + mode
    root = os.path.join(env.root, name)
    state = os.path.join(root, "state")
    os.makedirs(state, exist_ok=True)
    svc = Service(root, env.cluster, name, worker=False,
                  conninfo=env.cluster.database(name.replace("-", "_")))
    mark = uuid.uuid4().hex
    try:
        svc.start_worker(env={"STATBISECT_CONTAINMENT": mode})
        repo, shas = bench_repo(os.path.join(root, "repo"), 2, owner=__name__)
        svc.register(name, repo, name, run=RUN % {"state": state, "mark": mark},
                     timeout_s=4, runs_min=3, runs_max=3)
        job = svc.submit({"repo": name, "testcase": name,
                          "good": shas[0], "bad": shas[-1]})
        done = svc.wait(job["id"], timeout=240)
        check(os.path.isdir(os.path.join(state, "second")),
              "both escaping runs ran: %r" % done)
        deadline = time.time() + 5
        while marked(mark) and time.time() < deadline:
            time.sleep(0.2)
        eq(marked(mark), [], "processes of the job left after it ended")
        log = svc.log("worker")
        if mode == "sweep":
            check("containment: sweep" in log, "the worker says it sweeps")
        else:
            check("containment: cgroup" in log or "containment: sweep" in log,
                  "the worker says how it contains runs")
    finally:
        codes = svc.stop()
        for pid in marked(mark):
            os.kill(pid, 9)
    eq(codes[-1], 0, "the worker stopped cleanly")


@test
def setsid_escapees_of_a_run_do_not_outlive_it_cgroup_or_auto(env):
    escaping_job(env, "auto")


@test
def setsid_escapees_of_a_run_do_not_outlive_it_subreaper_sweep(env):
    escaping_job(env, "sweep")
