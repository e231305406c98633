"""What a running job's machine does now (issue 15): the worker says it
with its task heartbeats (fetching, checking out, building, running run k
of n), the job's answer and page show it with the worker's name and since
when, and a heartbeat whose activity is not one line of text is refused."""
import os
import re
import time

import harness
from harness import Api, Service, bench_repo, check, eq, test
from test_web import Browser

P = "activity-"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def wait_activity(svc, job_id, pattern, timeout=60):
    """The job's activity once its text matches `pattern`."""
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        job = svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=svc.read_token)
        a = job["activity"]
        if a is not None:
            if not seen or seen[-1] != a["text"]:
                seen.append(a["text"])
            if re.fullmatch(pattern, a["text"]):
                return a
        check(job["state"] in ("queued", "running"),
              "job ended before %r; activities seen: %r" % (pattern, seen))
        time.sleep(0.2)
    raise AssertionError("no activity %r in %d s; seen: %r" % (pattern, timeout, seen))


@test
def a_running_job_says_what_its_machine_does_now(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "slow"), 4, owner=__name__)
    # A build and runs slow enough to be seen at it.
    svc.register(P + "slow", repo, P + "slow-tc", build="sleep 5; sh build.sh",
                 run="sleep 1.5; ./bench")
    job = svc.submit({"repo": P + "slow", "testcase": P + "slow-tc", "good": shas[0],
                      "bad": shas[-1]})
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["activity"], None,
       "a job no worker has said anything of")
    a = wait_activity(svc, job["id"], r"building [0-9a-f]{12}")
    check(a["text"][9:] in (shas[0][:12], shas[-1][:12]), "an endpoint is built: %r" % a)
    eq(a["worker"], "box-1", "the worker")
    check(STAMP.match(a["since"]), "since when: %r" % a)
    a = wait_activity(svc, job["id"],
                      r"running [0-9a-f]{12}: run \d+ of \d+ of this task")
    b = Browser(svc.url).sign_in(svc.read_token)
    status, _, live = b.get("/jobs/%d/live" % job["id"])
    eq(status, 200, "the live part")
    m = re.search(r'<p class="activity" id="activity">Now on box-1: <strong>([^<]*)'
                  r'</strong>', live)
    check(m and re.fullmatch(r"(running|building|checking out) [0-9a-f]{12}.*", m.group(1)),
          "the page says what box-1 does: %r" % (m and m.group(0)))
    svc.api.ok("DELETE", "/api/v1/jobs/%d" % job["id"], token=svc.submit_token)
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["activity"], None,
       "a cancelled job does nothing")


@test
def a_heartbeat_activity_must_be_one_line_of_text(env):
    svc = Service(env.root, env.cluster, "activity-hb", worker=False,
                  conninfo=env.cluster.database("activity_hb"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, P + "hb"), 3, owner=__name__)
        svc.register(P + "hb", repo, P + "hb-tc")
        job = svc.submit({"repo": P + "hb", "testcase": P + "hb-tc", "good": shas[0],
                          "bad": shas[-1]})
        w = Api(svc.url, svc.worker_token)
        wid = w.ok("POST", "/api/v1/workers", {"name": "hand", "machine": "box"})["id"]
        task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
        path = "/api/v1/tasks/%d/heartbeat" % task["id"]
        for bad in ("two\nlines", "a\ttab", "x" * 201, 5, ["building"], True):
            status, reply = w.call("POST", path, {"lease": task["lease"], "activity": bad})
            eq((status, reply["error"]["code"]), (400, "invalid_field"),
               "activity %r refused" % (bad,))
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["activity"], None,
           "nothing recorded from refused heartbeats")
        w.ok("POST", path, {"lease": task["lease"], "activity": "building by hand é"})
        # The heartbeat forgets this server's kept answer of its job at
        # once (server/jobcache.h): the next answer says it.
        a = svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["activity"]
        eq((a["text"], a["worker"]), ("building by hand é", "hand"), "the activity")
        # The same text again keeps its time; a heartbeat without one keeps it.
        w.ok("POST", path, {"lease": task["lease"], "activity": "building by hand é"})
        w.ok("POST", path, {"lease": task["lease"]})
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])["activity"], a,
           "unchanged by a repeat or a heartbeat without activity")
    finally:
        codes = svc.stop()
        eq(codes, [0], "server exit status")
