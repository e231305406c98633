"""Faults injected into real parts in the middle of a job: the worker
killed with SIGKILL while its benchmark runs (and restarted), the server
killed with SIGKILL (and restarted on its port), PostgreSQL stopped (and
started again).  Each test has a cluster of its own, bisects a planted 5%
regression and checks: the right culprit, no task with runs from two
workers or more runs than it asked for, the job's run count equal to the
runs it shows, one report queued for it."""
import datetime
import os
import signal
import subprocess
import time
import uuid

from harness import Cluster, Service, Skip, bench_repo, check, eq, test

COMMITS = 12
CULPRIT = 7


def marked(mark):
    """Pids of live processes whose environment has SBMARK=mark."""
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
                if needle in f.read().split(b"\0"):
                    found.append(int(pid))
        except (OSError, IndexError):
            pass
    return found


def wait_for(what, cond, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


class Scene:
    """A cluster, a server (no worker yet) and a job on a planted
    regression, in a directory of the test's own."""

    def __init__(self, root, name, run="./bench", build="sh build.sh"):
        self.root = os.path.join(root, name)
        os.makedirs(self.root, exist_ok=True)
        self.cluster = Cluster(self.root)
        self.svc = Service(self.root, self.cluster, name, worker=False,
                           lease_seconds=3)
        repo, self.shas = bench_repo(os.path.join(self.root, "repo"), COMMITS,
                                     {CULPRIT: 950.0}, owner=name)
        self.svc.register(name, repo, name, run=run, build=build, runs_min=5,
                          runs_max=30)
        self.job = self.svc.submit({"repo": name, "testcase": name,
                                    "good": self.shas[0], "bad": self.shas[-1],
                                    "notify": ["dev@example.org"]})["id"]

    def runs_stored(self):
        return int(self.svc.psql("select count(*) from runs where job_id = %d"
                                 % self.job) or 0)

    def wait(self, timeout=300):
        """The finished job; a 503 (a server thread reconnecting to the
        database after an outage answers one) is asked again, as the API
        says to."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            status, job = self.svc.api.call("GET", "/api/v1/jobs/%d" % self.job,
                                            token=self.svc.read_token)
            if status != 503:
                eq(status, 200, "GET the job: %r" % job)
                if job["state"] in ("done", "failed", "cancelled"):
                    return job
            time.sleep(0.3)
        raise AssertionError("job %d did not finish; worker log:\n%s"
                             % (self.job, self.svc.log("worker")))

    def check_outcome(self):
        done = self.wait()
        eq(done["state"], "done", "state")
        eq(done["verdict"], "regression", "verdict")
        eq(done["culprit"], self.shas[CULPRIT], "culprit")
        eq(done["runs"], sum(len(c["runs"]) + len(c["confirm_runs"]) +
                             c["failed_runs"] for c in done["commits"]),
           "runs counted once")
        doubled = self.svc.psql(
            "select t.id from tasks t join runs r on r.task_id = t.id"
            " where t.job_id = %d group by t.id"
            " having count(distinct r.worker_id) > 1"
            " or count(*) > (select sum((e->>'runs')::int)"
            " from jsonb_array_elements(t.plan) e)" % self.job)
        eq(doubled, "", "tasks with runs of two workers or too many runs")
        eq(self.svc.psql("select count(*) from outbox where job_id = %d"
                         % self.job), "1", "reports queued")
        return done

    def close(self):
        codes = self.svc.stop()
        self.cluster.stop()
        return codes


@test
def worker_killed_with_its_benchmark_is_replaced_and_its_run_ends(root):
    mark = uuid.uuid4().hex
    state = os.path.join(root, "killed-worker-state")
    os.makedirs(state, exist_ok=True)
    # The first run hangs: the worker is killed while it runs.
    scene = Scene(root, "killed-worker",
                  run="if mkdir %s/first 2>/dev/null; then SBMARK=%s sleep 1000;"
                      " fi; ./bench" % (state, mark))
    try:
        worker = scene.svc.start_worker()
        left = wait_for("the hanging benchmark", lambda: marked(mark))
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        time.sleep(0.5)
        eq(marked(mark), left, "the benchmark outlives a worker killed with SIGKILL")
        killed_at = time.time()
        scene.svc.start_worker()
        # The new worker ends what the dead one left running.
        wait_for("the dead worker's benchmark to end",
                 lambda: not marked(mark), timeout=15)
        check(time.time() - killed_at < 15, "ended at once")
        scene.check_outcome()
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        scene.close()


@test
def server_killed_mid_job_is_restarted_and_the_job_ends_once(root):
    scene = Scene(root, "killed-server", run="sleep 0.05; ./bench")
    try:
        scene.svc.start_worker()
        wait_for("the first runs", lambda: scene.runs_stored() >= 5)
        os.kill(scene.svc.server.pid, signal.SIGKILL)
        scene.svc.server.wait()
        scene.svc.procs.remove(scene.svc.server)
        time.sleep(2)  # the worker's uploads and heartbeats fail meanwhile
        scene.svc.start_server()
        scene.check_outcome()
    finally:
        scene.close()


@test
def postgresql_stopped_mid_job_is_restarted_and_the_job_ends_once(root):
    scene = Scene(root, "stopped-db", run="sleep 0.05; ./bench")
    try:
        scene.svc.start_worker()
        wait_for("the first runs", lambda: scene.runs_stored() >= 5)
        scene.cluster.stop()
        time.sleep(3)  # the server answers 503, the worker retries
        eq(Cluster(scene.root).conninfo, scene.cluster.conninfo, "the same cluster")
        scene.check_outcome()
    finally:
        scene.close()



@test
def disk_full_during_a_build_fails_no_commit_and_the_job_ends_right(root):
    """The worker's work dir is a 16 MB tmpfs and the first build fills
    it.  That failure is not held against the commit: the worker gives
    the task up, the test frees the space, the task runs again.  (Before,
    the commit was held broken.)"""
    state = os.path.join(root, "disk-full-state")
    os.makedirs(state, exist_ok=True)
    work = os.path.join(root, "disk-full", "disk-full-box-1")
    ballast = os.path.join(work, "ballast")
    # As a compiler does, the failing build removes its partial output:
    # the disk has room again when the worker looks, but the build said
    # why it failed.
    scene = Scene(root, "disk-full", build=(
        "if mkdir %s/full 2>/dev/null; then head -c 2M /dev/zero > partial.o;"
        " head -c 64M /dev/zero > %s 2>/dev/null || { rm -f partial.o;"
        " echo 'cc: error: partial.o: No space left on device' >&2; exit 1; };"
        " fi; sh build.sh" % (state, ballast)))
    mounted = False
    try:
        os.makedirs(work, exist_ok=True)
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs",
                                work], stderr=subprocess.PIPE, text=True)
        if mount.returncode != 0:
            raise Skip("cannot mount a tmpfs: " + mount.stderr.strip())
        mounted = True
        scene.svc.start_worker()
        wait_for("the build that fills the disk",
                 lambda: os.path.isdir(os.path.join(state, "full")))
        time.sleep(2)  # the build fails; then an operator frees space
        os.remove(ballast)
        done = scene.check_outcome()
        eq([c["commit"] for c in done["commits"] if c["build_failed"]], [],
           "commits held broken")
        check("is full" in scene.svc.log("worker"), "the worker says why")
    finally:
        scene.close()
        if mounted:
            subprocess.run(["umount", "-l", work])


@test
def a_benchmark_crashing_on_some_runs_does_not_change_the_culprit(root):
    # Every fourth run of each commit dies of SIGSEGV before printing.
    scene = Scene(root, "crashing-runs",
                  run='if [ $((STATBISECT_RUN % 4)) -eq 0 ]; then kill -SEGV $$; fi;'
                      ' ./bench')
    try:
        scene.svc.start_worker()
        done = scene.check_outcome()
        check(sum(c["failed_runs"] for c in done["commits"]) > 0,
              "the crashed runs are counted as failed")
    finally:
        scene.close()


FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


@test
def a_worker_whose_clock_jumps_forward_and_back_finishes_the_job(root):
    """The worker's wall clock (libfaketime, Debian's faketime package)
    jumps a day ahead in the middle of the job, then two hours behind
    the true time, as a badly stepped NTP clock would; its monotonic clock
    runs on, as the kernel's does."""
    if not os.path.exists(FAKETIME):
        raise Skip("libfaketime is not installed (scripts/install-deps)")
    offset = os.path.join(root, "clock-jump-offset")
    with open(offset, "w") as f:
        f.write("+0\n")
    scene = Scene(root, "clock-jump", run="sleep 0.05; ./bench")
    try:
        scene.svc.start_worker(env={
            "LD_PRELOAD": FAKETIME, "FAKETIME_TIMESTAMP_FILE": offset,
            "FAKETIME_NO_CACHE": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"})
        wait_for("the first runs", lambda: scene.runs_stored() >= 5)
        with open(offset, "w") as f:
            f.write("+1d\n")
        tomorrow = (datetime.datetime.now(datetime.timezone.utc) +
                    datetime.timedelta(days=1)).strftime("%Y-%m-%d")
        before = scene.runs_stored()
        wait_for("the worker's log a day ahead, and more runs",
                 lambda: tomorrow in scene.svc.log("worker")
                 and scene.runs_stored() > before)
        with open(offset, "w") as f:
            f.write("-2h\n")
        scene.check_outcome()
    finally:
        scene.close()
