"""What the Python benches share (issue 14): the integration tests' real
parts (tests/integration/harness.py: a private PostgreSQL cluster made by
scripts/pg-local, the built server and worker) set up and torn down in
one place, a registered repository to submit jobs against, a worker
registered over the API, and a process's memory as the kernel counts it.

    with benchlib.private_service("q", repo_commits=8) as (svc, shas):
        ...
    with benchlib.private_cluster() as (root, cluster):
        for i, server in enumerate(servers):
            with benchlib.service_on(root, cluster, "s%d" % i,
                                     server_bin=server,
                                     database="s%d" % i) as (svc, _):
                ...
"""
import contextlib
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402,F401  (re-exported for the benches)


@contextlib.contextmanager
def private_cluster(statements=False):
    """A private cluster in a new directory, for the `with` block; yields
    (directory, cluster).  Stopped and removed afterwards.  With
    statements, the cluster loads pg_stat_statements (planning counted
    too): see statements_top()."""
    root = harness.workdir()
    cluster = None
    try:
        cluster = harness.Cluster(root)
        if statements:
            cluster.psql("ALTER SYSTEM SET shared_preload_libraries ="
                         " 'pg_stat_statements'")
            cluster.stop()
            cluster = harness.Cluster(root)
            cluster.psql("ALTER SYSTEM SET"
                         " pg_stat_statements.track_planning = on")
            cluster.psql("SELECT pg_reload_conf()")
        yield root, cluster
    finally:
        if cluster is not None:
            cluster.stop()
        harness.rmtree(root)


@contextlib.contextmanager
def service_on(root, cluster, name, repo_commits=None, worker=False,
               server_bin=None, extra_args=(), database=None):
    """A server on `cluster` (on a new database `database` when given),
    for the `with` block; with repo_commits, also a repository of that
    many commits after its root (harness.bench_repo, a 5% change at the
    middle commit) registered as repository `name` with testcase
    `name`-tc.  Yields (service, SHAs of the repository, index 0 the
    root; None without one).  The service is stopped afterwards."""
    svc = None
    try:
        svc = harness.Service(
            root, cluster, name, worker=worker, server_bin=server_bin,
            extra_args=extra_args,
            conninfo=cluster.database(database) if database else None)
        shas = None
        if repo_commits:
            repo, shas = harness.bench_repo(
                os.path.join(root, name + "-repo"), repo_commits,
                {repo_commits // 2: 950.0})
            svc.register(name, repo, name + "-tc")
        yield svc, shas
    finally:
        if svc is not None:
            svc.stop()


@contextlib.contextmanager
def private_service(name, **kw):
    """service_on() on a private_cluster() of its own."""
    with private_cluster() as (root, cluster):
        with service_on(root, cluster, name, **kw) as got:
            yield got


def register_worker(svc, name, api=None):
    """A worker registered over the API with the service's worker token;
    its id."""
    api = api or harness.Api(svc.url, svc.worker_token)
    return api.ok("POST", "/api/v1/workers", {"name": name})["id"]


def memory(pid):
    """{"VmRSS": kB, "VmHWM": kB, "RssAnon": kB, "RssFile": kB,
    "Threads": n} of process `pid`, from /proc/PID/status."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"):
                out[key] = int(value.split()[0])
    return out


def cpu_seconds(pid):
    """User plus system CPU seconds process `pid` has used."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cluster_cpu_seconds(cluster):
    """CPU seconds used by the cluster's postmaster and its live children
    (the backends, the background processes)."""
    with open(os.path.join(cluster.dir, "data", "postmaster.pid")) as f:
        postmaster = int(f.readline())
    total = cpu_seconds(postmaster)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == postmaster:
                total += cpu_seconds(int(entry))
        except (OSError, ValueError):
            pass  # gone meanwhile
    return total


def statements_reset(svc):
    """Starts pg_stat_statements' counts afresh on `svc`'s database (made
    by private_cluster(statements=True))."""
    svc.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    svc.psql("SELECT pg_stat_statements_reset()")


def statements_top(svc, per, n=12):
    """The `n` statements of `svc`'s database that took the most time
    since statements_reset(), as lines: calls, planning and execution
    milliseconds per `per` (say, per claim), and the statement's start."""
    rows = svc.psql(
        "SELECT calls, total_plan_time, total_exec_time,"
        " regexp_replace(left(query, 200), '\\s+', ' ', 'g')"
        " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM"
        " pg_database WHERE datname = current_database())"
        " ORDER BY total_plan_time + total_exec_time DESC LIMIT %d" % n)
    out = ["%8s %9s %9s  %s" % ("calls", "plan ms", "exec ms", "statement")]
    plan_all = exec_all = 0.0
    for line in rows.splitlines():
        calls, plan, run, query = line.split("|", 3)
        plan_all += float(plan) / per
        exec_all += float(run) / per
        out.append("%8s %9.3f %9.3f  %s" % (calls, float(plan) / per,
                                            float(run) / per, query[:90]))
    out.append("%8s %9.3f %9.3f  (these %d, per claim)" % (
        "", plan_all, exec_all, n))
    return out


def summary(values):
    """(median, mean, p90, max) of a non-empty list."""
    v = sorted(values)
    return (statistics.median(v), statistics.mean(v),
            v[int(0.9 * (len(v) - 1))], v[-1])
