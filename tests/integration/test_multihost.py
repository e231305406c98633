"""A multi-host test (issue 14): two servers on one database and three
workers, each process in a network namespace of its own, so that every
request between them crosses a (virtual) network: a veth pair from each
namespace to a bridge in a hub namespace, the addresses the test gives
them, and one more veth from the test's own namespace so that it can use
the API.  PostgreSQL stays the harness's private cluster on its unix
socket, which a process in any network namespace reaches through the
file system: the servers are the only clients.

Two workers are in group "a", one in group "b"; the first of "a" talks
to server one, the others to server two.  Two jobs of "a" and one of "b"
run at once.  Server one is killed with SIGKILL while the first worker
of "a" runs a job: that worker loses its server, so its job moves (after
--machine-timeout) to the other worker of "a".  Every job ends with its
culprit, the job of "b" ran on the worker of "b" only, and no run is
counted twice.  Needs root and `ip netns`; skips, saying why, without
them.  The namespaces and links carry the test's pid in their names and
are removed at the end, whatever happened."""
import os
import signal
import subprocess

from harness import (BIN_DIR, Service, Skip, bench_repo, check, eq,
                     rand_index, runs_stored_once, test, wait_for)

P = "mhost"
COMMITS = 12
# Each run of the first worker of "a" takes 0.3 s longer, so that its job
# is still running when its server is killed.
RUN = "sleep ${MHOST_RUN_DELAY:-0}; ./bench"


def ip(*args):
    """Runs `ip ARGS`; its output, or raises with its error."""
    r = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


class Net:
    """The namespaces of one run: hub (a bridge) and one per host, each
    host with `eth0` on the bridge at 10.X.Y.<n>/24, the test's own
    namespace at 10.X.Y.1.  X and Y come from the pid, so that two runs
    at once neither share names nor routes."""

    def __init__(self):
        pid = os.getpid()
        self.prefix = "sbm%d" % pid
        self.subnet = "10.%d.%d" % (100 + (pid >> 8) % 100, pid & 255)
        self.made = []  # namespaces, in the order made
        self.root_link = None
        self.addr = {}
        self.hub = None

    def build(self, hosts):
        self.hub = self.netns("hub")
        ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        ip("-n", self.hub, "link", "set", "br0", "up")
        # The test's side: a link in the root namespace.
        ip("link", "add", self.prefix, "type", "veth", "peer", "name",
           "up0", "netns", self.hub)
        self.root_link = self.prefix
        self.attach("up0")
        ip("addr", "add", self.subnet + ".1/24", "dev", self.root_link)
        ip("link", "set", self.root_link, "up")
        for n, host in enumerate(hosts, start=10):
            ns = self.netns(host)
            ip("-n", self.hub, "link", "add", "p%d" % n, "type", "veth",
               "peer", "name", "eth0", "netns", ns)
            self.attach("p%d" % n)
            ip("-n", ns, "addr", "add", "%s.%d/24" % (self.subnet, n),
               "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")
            self.addr[host] = "%s.%d" % (self.subnet, n)

    def netns(self, name):
        ns = "%s-%s" % (self.prefix, name)
        ip("netns", "add", ns)
        self.made.append(ns)
        return ns

    def attach(self, link):
        ip("-n", self.hub, "link", "set", link, "master", "br0")
        ip("-n", self.hub, "link", "set", link, "up")

    def ns(self, host):
        return "%s-%s" % (self.prefix, host)

    def run_in(self, host):
        return ["ip", "netns", "exec", self.ns(host)]

    def close(self):
        """Removes what was made; tries every part."""
        errors = []
        if self.root_link is not None:
            try:
                ip("link", "del", self.root_link)
            except RuntimeError as e:
                if "Cannot find device" not in str(e):
                    errors.append(str(e))
        for ns in reversed(self.made):
            try:
                ip("netns", "del", ns)
            except RuntimeError as e:
                errors.append(str(e))
        if errors:
            raise RuntimeError("cleaning up: " + "; ".join(errors))


def make_net(hosts):
    if os.geteuid() != 0:
        raise Skip("needs root to make network namespaces")
    try:
        ip("netns", "list")
    except (OSError, RuntimeError) as e:
        raise Skip("`ip netns` is not available: %s" % e)
    net = Net()
    try:
        net.build(hosts)
    except RuntimeError as e:
        net.close()
        raise Skip("cannot make network namespaces here: %s" % e)
    return net


def netns_of(pid):
    return os.readlink("/proc/%d/ns/net" % pid)


def server_wrapper(root, net, host):
    """A server program that runs statbisect-server in `host`'s
    namespace (`ip netns exec` executes it in its own place, so the pid
    is the server's)."""
    path = os.path.join(root, "%s-%s-server.sh" % (P, host))
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n"
                % (net.ns(host), os.path.join(BIN_DIR, "statbisect-server")))
    os.chmod(path, 0o755)
    return path


def checks(svc, done, shas, culprits, workers_of):
    ids = ",".join(str(j) for j in done)
    for job, d in done.items():
        eq((d["state"], d["verdict"], d["culprit"]),
           ("done", "regression", shas[job][culprits[job]]),
           "job %d" % job)
        runs = svc.api.ok("GET", "/api/v1/jobs/%d/runs" % job,
                          token=svc.read_token)["runs"]
        names = {r["worker"] for r in runs}
        check(names <= workers_of[d["group"]],
              "job %d of group %s ran on %r" % (job, d["group"], names))
        counted = [r for r in runs if r["counted"]]
        eq(len(counted), d["runs"], "job %d: its runs are its counted ones"
           % job)
        eq({r["worker"] for r in counted}, {d["machine"]["name"]},
           "job %d: the machine of its counted runs" % job)
    runs_stored_once(svc, ids)


@test
def servers_and_workers_on_their_own_hosts_survive_a_killed_server(env):
    hosts = ["s1", "s2", "wa1", "wa2", "wb"]
    net = make_net(hosts)
    services = []
    try:
        conninfo = env.cluster.database(P)
        for host in ("s1", "s2"):
            services.append(Service(
                env.root, env.cluster, P + host, worker=False,
                lease_seconds=3, conninfo=conninfo, host=net.addr[host],
                server_bin=server_wrapper(env.root, net, host),
                extra_args=["--machine-timeout", "4"]))
        one, two = services
        jobs, shas, culprits = [], {}, {}
        for k, group in enumerate(("a", "a", "b")):
            name = "%s-%d" % (P, k)
            culprit = rand_index(2, COMMITS - 2, seed=k)
            repo, commits = bench_repo(os.path.join(env.root, name + "-repo"),
                                       COMMITS, {culprit: 950.0},
                                       owner=__name__)
            one.register(name, repo, name + "-tc", group="a", run=RUN,
                         runs_min=5, runs_max=30)
            jobs.append((k, name, group, commits, culprit))
        procs = {"s1": one.server, "s2": two.server}
        procs["wa1"] = one.start_worker("wa1", args=["--group", "a"],
                                        prefix=net.run_in("wa1"),
                                        env={"MHOST_RUN_DELAY": "0.3"})
        procs["wa2"] = two.start_worker("wa2", args=["--group", "a"],
                                        prefix=net.run_in("wa2"))
        procs["wb"] = two.start_worker("wb", args=["--group", "b"],
                                       prefix=net.run_in("wb"))
        spaces = {h: netns_of(p.pid) for h, p in procs.items()}
        eq(len(set(spaces.values()) | {netns_of(os.getpid())}), 6,
           "network namespaces of the test, 2 servers and 3 workers")
        # The job of "b" names its group; those of "a" take the
        # testcase's.  Submitted to both servers.
        ids = {}
        for k, name, group, commits, culprit in jobs:
            body = {"repo": name, "testcase": name + "-tc",
                    "good": commits[0], "bad": commits[-1]}
            if group == "b":
                body["group"] = "b"
            job = (one, two)[k % 2].submit(body)["id"]
            ids[job] = group
            shas[job], culprits[job] = commits, culprit

        def bound_to_wa1():
            return one.psql(
                "select j.id from jobs j join workers w on w.id = j.worker_id"
                " where w.name = 'wa1' and (select count(*) from runs r"
                " where r.job_id = j.id and r.worker_id = w.id) >= 6")

        moved = int(wait_for("a job on wa1 with runs", bound_to_wa1, one,
                             timeout=90))
        check(two.psql("select state from jobs where id = %d" % moved)
              in ("queued", "running"), "job %d still open" % moved)
        os.kill(one.server.pid, signal.SIGKILL)
        one.server.wait()

        done = {job: two.wait(job, timeout=150) for job in ids}
        for job, group in ids.items():
            eq(done[job]["group"], group, "job %d's group" % job)
        eq(done[moved]["machine"]["name"], "wa2",
           "the machine of job %d after its server died" % moved)
        check(done[moved]["machine"]["moves"] >= 1,
              "job %d moved: %r" % (moved, done[moved]["machine"]))
        checks(two, done, shas, culprits,
               {"a": {"wa1", "wa2"}, "b": {"wb"}})
        workers = two.psql("select string_agg(name || ':' || grp, ','"
                           " order by name) from workers")
        eq(workers, "wa1:a,wa2:a,wb:b", "the workers registered")
    finally:
        for svc in services:
            svc.stop()
        net.close()
