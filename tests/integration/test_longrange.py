"""Issue 11: a range longer than the server lists while a request waits
(JOBS_SYNC_RANGE, 2,000 first-parent commits) is accepted at once with 202
in state 'resolving', listed by the resolver thread in the background, and
then bisected like any job; a range that cannot be listed fails the job
with why; a server killed while listing leaves the job to the next."""
import os
import subprocess
import time

import harness
from harness import Service, check, eq, test
from test_cli import cli
from test_web import Browser

LONG = 3000  # commits after the root: over JOBS_SYNC_RANGE


# fast-import grows and shrinks its heap by a little at each commit; where
# brk is slow (here 80 us a call) that is 3 ms a commit.  Keeping 256 MB
# of slack makes 3,000 commits 0.1 s instead of 7 s.
FAST_IMPORT_ENV = dict(os.environ, MALLOC_TOP_PAD_="268435456",
                       MALLOC_TRIM_THRESHOLD_="268435456")

def long_repo(path, commits, changes):
    """A linear repository like harness.bench_repo's, made with one git
    fast-import (a few thousand commits in well under a second).  Returns
    the repo and its SHAs, index 0 the root."""
    def blob(text):
        data = text.encode()
        return b"data %d\n" % len(data) + data + b"\n"

    repo = harness.Repo(path)
    stream = []
    mean = 1000.0
    for i in range(commits + 1):
        stream.append(b"commit refs/heads/main\nmark :%d\n" % (i + 1))
        stream.append(b"author Ada <ada@example.org> %d +0000\n" % (1700000000 + i))
        stream.append(b"committer Ada <ada@example.org> %d +0000\n" % (1700000000 + i))
        stream.append(blob("%s: change number %d" % (harness.AREAS[i % 5], i)))
        if i > 0:
            stream.append(b"from :%d\n" % i)
        if i == 0:
            stream.append(b"M 100644 inline bench.c\n" + blob(harness.BENCH_C))
            stream.append(b"M 100644 inline build.sh\n" + blob(harness.BUILD_SH))
        if i == 0 or i in changes:
            mean = changes.get(i, mean)
            stream.append(b"M 100644 inline mean\n" + blob("%r\n" % mean))
        stream.append(b"M 100644 inline counter\n" + blob("%d\n" % i))
        stream.append(b"\n")
    subprocess.run(["git", "-C", path, "fast-import", "--quiet"],
                   input=b"".join(stream), check=True,
                   env=FAST_IMPORT_ENV)
    shas = subprocess.run(["git", "-C", path, "rev-list", "--reverse", "main"],
                          check=True, capture_output=True, text=True).stdout.split()
    subprocess.run(["git", "-C", path, "reset", "-q", "--hard", "main"], check=True)
    eq(len(shas), commits + 1, "commits made")
    return repo, shas


def wait_state(svc, job_id, states, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=svc.read_token)
        if job["state"] in states:
            return job
        time.sleep(0.2)
    raise AssertionError("job %d not %s in %d s: %s" % (job_id, states, timeout, job))


@test
def a_long_range_is_accepted_resolving_and_finds_the_culprit(env):
    svc = env.svc
    culprit_idx = harness.rand_index(100, LONG - 100)
    repo, shas = long_repo(os.path.join(env.root, "long"), LONG, {culprit_idx: 950.0})
    svc.register("long", repo, "long-tc")
    status, job = svc.api.call("POST", "/api/v1/jobs",
                               {"repo": "long", "testcase": "long-tc", "good": shas[0],
                                "bad": "main"}, token=svc.submit_token)
    eq(status, 202, "a long range is accepted, not yet listed")
    eq(job["state"], "resolving", "state at submission")
    eq(job["good"], shas[0], "good resolved to a SHA at once")
    eq(job["bad"], shas[-1], "bad resolved to a SHA at once")
    eq(job["candidates"], 0, "no candidates yet")
    eq(job["progress"]["phase"], "resolving", "phase")
    eq(job["range"], {"after": shas[0], "through": shas[-1]}, "range while resolving")
    queued = wait_state(svc, job["id"], ("queued", "running", "done"))
    eq(queued["candidates"], LONG + 1, "candidates listed in the background")
    done = svc.wait(job["id"], timeout=240)
    eq(done["state"], "done", "state")
    eq(done["verdict"], "regression", "verdict")
    eq(done["culprit"], shas[culprit_idx], "culprit")
    # The client waits through 'resolving' to the verdict.
    code, out, err = cli(svc, "submit", "--repo", "long", "--testcase", "long-tc",
                         "--good", shas[1], "--bad", "main", "--wait", "--poll", "0.2")
    eq(code, 1, "client's exit status of a regression; stderr:\n" + err)
    check(" submitted: listing its range in the background, " in err.splitlines()[0],
          "client's submission line: %r" % err.splitlines()[0])
    check(shas[culprit_idx] in out, "client prints the culprit: %r" % out)
    # A short range is still listed while the request waits.
    short = svc.submit({"repo": "long", "testcase": "long-tc", "good": shas[-30],
                        "bad": shas[-1]})
    # Listed at once (201, not 202 'resolving'); a waiting worker may
    # have claimed its first task before the answer was written.
    check(short["state"] in ("queued", "running"),
          "a short range is queued at once (201): %r" % short["state"])
    eq(short["candidates"], 30, "short range's candidates")
    status, _ = svc.api.call("DELETE", "/api/v1/jobs/%d" % short["id"],
                             token=svc.submit_token)


@test
def a_long_range_that_cannot_be_listed_fails_with_why(env):
    svc = env.svc
    repo, shas = long_repo(os.path.join(env.root, "longbad"), LONG, {})
    svc.register("longbad", repo, "longbad-tc")
    # good and bad swapped is still refused at once, as for any range.
    status, reply = svc.api.call("POST", "/api/v1/jobs",
                                 {"repo": "longbad", "testcase": "longbad-tc",
                                  "good": shas[-1], "bad": shas[0]}, token=svc.submit_token)
    eq((status, reply["error"]["code"]), (422, "invalid_range"), "swapped range")
    # A commit of another history: bad's first-parent line is too long to
    # walk in the request, so only the resolver finds out.
    tree = subprocess.run(["git", "-C", repo.path, "mktree"], input="", check=True,
                          capture_output=True, text=True).stdout.strip()
    orphan = subprocess.run(["git", "-C", repo.path, "commit-tree", tree, "-m", "orphan"],
                            check=True, capture_output=True, text=True,
                            env=repo.env).stdout.strip()
    subprocess.run(["git", "-C", repo.path, "branch", "other", orphan], check=True)
    status, job = svc.api.call("POST", "/api/v1/jobs",
                               {"repo": "longbad", "testcase": "longbad-tc",
                                "good": orphan, "bad": shas[-1]}, token=svc.submit_token)
    eq(status, 202, "accepted: the check is too long for the request")
    failed = wait_state(svc, job["id"], ("failed", "queued", "running", "done"))
    eq(failed["state"], "failed", "state")
    check("not an ancestor" in (failed["message"] or ""),
          "message says why: %r" % failed["message"])
    eq(failed["candidates"], 0, "no candidates")
    status, _, page = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % job["id"])
    eq(status, 200, "job page of a job failed while resolving")
    check('id="job-state">failed<' in page and "not an ancestor" in page,
          "the page says it failed and why")


@test
def a_server_killed_while_resolving_leaves_the_job_to_the_next(env):
    conninfo = env.cluster.database("longrestart")
    svc = Service(env.root, env.cluster, "longrestart", worker=False, conninfo=conninfo)
    repo, shas = long_repo(os.path.join(env.root, "longrestart"), LONG, {})
    svc.register("longrestart", repo, "longrestart-tc")
    # Hold job_commits so the resolver's COPY waits inside its transaction,
    # its claim on the job held, then kill the server there.
    holder = subprocess.Popen(["psql", conninfo, "-AtXq"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, text=True)
    try:
        holder.stdin.write("BEGIN; LOCK TABLE job_commits IN EXCLUSIVE MODE;\n")
        holder.stdin.flush()
        time.sleep(0.5)
        status, job = svc.api.call("POST", "/api/v1/jobs",
                                   {"repo": "longrestart", "testcase": "longrestart-tc",
                                    "good": shas[0], "bad": shas[-1]},
                                   token=svc.submit_token)
        eq(status, 202, "accepted")
        deadline = time.time() + 30
        while svc.psql("select count(*) from pg_stat_activity where wait_event_type ="
                       " 'Lock' and query like 'COPY job_commits%'") != "1":
            check(time.time() < deadline, "the resolver did not reach its COPY")
            time.sleep(0.1)
        # The resolver is held on the first job: a second one stays
        # resolving, for the page, the client and a cancel to see.
        status, other = svc.api.call("POST", "/api/v1/jobs",
                                     {"repo": "longrestart", "testcase": "longrestart-tc",
                                      "good": shas[1], "bad": shas[-1]},
                                     token=svc.submit_token)
        eq(status, 202, "second long range accepted")
        b = Browser(svc.url).sign_in(svc.submit_token)
        status, _, page = b.get("/jobs/%d" % other["id"])
        eq(status, 200, "job page while resolving")
        check('id="job-state">resolving<' in page, "page shows the state")
        check("listing the range" in page, "page says what happens")
        check('href="/jobs/%d/cancel"' % other["id"] in page, "cancel button")
        listed = svc.api.ok("GET", "/api/v1/jobs?state=resolving", token=svc.read_token)
        eq(sorted(j["id"] for j in listed["jobs"]), sorted([job["id"], other["id"]]),
           "jobs listed by state resolving")
        code, out, err = cli(svc, "status", str(other["id"]), token=svc.read_token)
        eq(code, 0, "cli status exit: " + err)
        check("resolving" in out + err, "cli shows resolving: %r" % (out + err))
        status, cancelled = svc.api.call("DELETE", "/api/v1/jobs/%d" % other["id"],
                                         token=svc.submit_token)
        eq((status, cancelled["state"]), (200, "cancelled"), "a resolving job is cancelled")
        svc.server.kill()
        svc.server.wait()
        svc.start_server()
        holder.stdin.write("COMMIT;\n")
        holder.stdin.flush()
        queued = wait_state(svc, job["id"], ("queued", "running", "failed"), timeout=30)
        eq(queued["state"], "queued", "resolved after the restart")
        eq(queued["candidates"], LONG + 1, "candidates listed once")
        eq(svc.psql("select count(*) from job_commits where job_id = %d" % job["id"]),
           str(LONG + 1), "rows stored once")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % other["id"])["state"], "cancelled",
           "the resolver left the cancelled job cancelled")
        eq(svc.psql("select count(*) from job_resolving"), "0", "queue empty")
    finally:
        holder.stdin.close()
        holder.wait()
        svc.stop()
