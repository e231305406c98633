"""Robot mode (issue 12) on real parts: a server of our own with a worker on
a database of its own, a generated repository whose branch `main` the
server watches, and pushes announced through the push hook.  The server
measures each new head against the last measured one by itself, bisects
the range when the KPI moved, and mails one report per culprit saying
"in branch main"; unchanged heads send nothing, a restart changes none of
it, and a culprit is never reported twice."""
import os
import subprocess
import time

from harness import (AREAS, BENCH_C, BIN_DIR, BUILD_SH, Repo, Service, check, eq, mails, test,
                     wait_for)
from test_web import Browser

OWNER = __name__






class Pusher:
    """The watched repository, committed to in pushes of a few commits."""

    def __init__(self, path):
        self.repo = Repo(path)
        self.mean = 1000.0
        self.repo.write("bench.c", BENCH_C)
        self.repo.write("build.sh", BUILD_SH)
        self.repo.write("mean", "%r\n" % self.mean)
        self.repo.write("owner", "%s\n" % OWNER)
        self.i = 0
        self.head = self.repo.commit("bench: add the benchmark")

    def push(self, count, change_at=None, new_mean=None):
        """Commits `count` commits; the one at position change_at (0-based)
        sets the benchmark's mean.  Returns the SHAs."""
        shas = []
        for k in range(count):
            self.i += 1
            if k == change_at:
                self.mean = new_mean
                self.repo.write("mean", "%r\n" % new_mean)
            self.repo.write("file%02d.txt" % (self.i % 7), "change %d\n" % self.i)
            shas.append(self.repo.commit("%s: watched change %d" % (
                AREAS[self.i % len(AREAS)], self.i)))
        self.head = shas[-1]
        return shas


def watch_state(svc, watch_id):
    return svc.api.ok("GET", "/api/v1/watches/%d" % watch_id,
                      token=svc.read_token)


def head_of(svc, watch_id, sha):
    for h in watch_state(svc, watch_id)["heads"]:
        if h["sha"] == sha:
            return h
    return None


def measured(svc, watch_id, sha):
    h = head_of(svc, watch_id, sha)
    return h if h is not None and h["state"] == "measured" else None


def bisections(svc, watch_id):
    return [j for j in watch_state(svc, watch_id)["jobs"] if j["role"] == "bisect"]


def all_done(svc, watch_id):
    jobs = watch_state(svc, watch_id)["jobs"]
    return all(j["state"] in ("done", "failed", "cancelled") for j in jobs)


@test
def watched_branch_pushes_are_measured_bisected_and_reported_once(env):
    db = env.cluster.database("watch")
    svc = Service(env.root, env.cluster, "watch", conninfo=db, lease_seconds=10)
    try:
        repo = Pusher(os.path.join(env.root, "watched"))
        svc.register("wrepo", repo.repo, "wscore", min_change_pct=2.0)
        watch = svc.api.ok("POST", "/api/v1/watches", {
            "repo": "wrepo", "branch": "main", "testcases": ["wscore"],
            "interval_s": 3600, "notify": ["perf@example.org"]}, expect=(201,))
        wid = watch["id"]
        eq(watch["branch"], "main", "watched branch")
        eq(watch["testcases"], ["wscore"], "watched testcases")
        # The head at creation is the baseline: nothing to compare it with.
        base = wait_for("baseline", lambda: head_of(svc, wid, repo.head), svc=svc)
        eq(base["state"], "baseline", "first head")

        def push_hook():
            return svc.api.ok("POST", "/api/v1/repos/wrepo/push", {},
                              expect=(202,), token=svc.submit_token)

        # Push 1: nothing changes.  The hook starts the measurement at once.
        repo.push(2)
        t0 = time.time()
        push_hook()
        wait_for("measurement of push 1", lambda: head_of(svc, wid, repo.head),
                 timeout=2, svc=svc)
        check(time.time() - t0 <= 2.0, "the push hook started the measurement "
              "within 2 s")
        h1 = wait_for("push 1 measured", lambda: measured(svc, wid, repo.head), svc=svc)
        eq(h1["outcome"], "same", "push 1")
        # Push 2: a regression (mean -10%) in the middle of five commits.
        p2 = repo.push(5, change_at=2, new_mean=900.0)
        push_hook()
        h2 = wait_for("push 2 measured", lambda: measured(svc, wid, repo.head), svc=svc)
        eq(h2["outcome"], "changed", "push 2")
        # A restart while the bisection runs changes nothing.
        svc.stop()
        svc = Service(env.root, env.cluster, "watch", conninfo=db, lease_seconds=10)
        wait_for("bisection of push 2", lambda: all_done(svc, wid), svc=svc)
        # Push 3: an improvement, a single commit.
        p3 = repo.push(1, change_at=0, new_mean=1000.0)
        svc.api.ok("POST", "/api/v1/repos/wrepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        h3 = wait_for("push 3 measured", lambda: measured(svc, wid, repo.head), svc=svc)
        eq(h3["outcome"], "changed", "push 3")
        wait_for("bisection of push 3", lambda: all_done(svc, wid), svc=svc)
        wait_for("two reports", lambda: len(mails(svc)) >= 2, timeout=60, svc=svc)
        # Push 4: nothing changes, nothing is sent.
        repo.push(1)
        svc.api.ok("POST", "/api/v1/repos/wrepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        h4 = wait_for("push 4 measured", lambda: measured(svc, wid, repo.head), svc=svc)
        eq(h4["outcome"], "same", "push 4")
        time.sleep(2)  # the mailer's turn, had anything been queued

        jobs = bisections(svc, wid)
        eq(len(jobs), 2, "bisection jobs of the watch")
        culprits = sorted(svc.api.ok("GET", "/api/v1/jobs/%d" % j["id"],
                                     token=svc.read_token)["culprit"] for j in jobs)
        eq(culprits, sorted([p2[2], p3[0]]), "culprits")
        verdicts = sorted(svc.api.ok("GET", "/api/v1/jobs/%d" % j["id"],
                                     token=svc.read_token)["verdict"] for j in jobs)
        eq(verdicts, ["improvement", "regression"], "verdicts")
        sent = mails(svc)
        eq(len(sent), 2, "reports mailed")
        for msg in sent:
            body = msg.get_body(preferencelist=("plain",)).get_content()
            check("in branch main" in body, "report says the branch:\n" + body)
            check(str(msg["Subject"]).startswith("[wrepo:main] "),
                  "subject names tree and branch: %s" % msg["Subject"])
            check("perf@example.org" in str(msg["To"]) + str(msg["Cc"]),
                  "the watch's recipients get it")
        kinds = sorted("regression" if "regression" in str(m["Subject"]) else
                       "improvement" for m in sent)
        eq(kinds, ["improvement", "regression"], "report kinds")
        # Every head was taken up once and measured once.
        eq(svc.psql("SELECT count(*), count(DISTINCT sha) FROM watch_heads"),
           "5|5", "heads taken up")
        eq(svc.psql("SELECT count(*) FROM watch_jobs WHERE role = 'measure'"),
           "2", "measurements that found no change")
        check_history(svc, wid, repo, jobs, sorted([p2[2], p3[0]]))
    finally:
        svc.stop()


def check_history(svc, wid, repo, jobs, culprits):
    """The history as JSON, CSV and a web page: every head once, the two
    bisected heads carrying their culprits."""
    hist = svc.api.ok("GET", "/api/v1/watches/%d/history?testcase=wscore" % wid,
                      token=svc.read_token)
    points = hist["points"]
    eq(len(points), 5, "history points")
    eq(points[-1]["sha"], repo.head, "newest head last")
    check(all(p["runs"] >= 5 for p in points), "every head has its runs: %r" % points)
    eq(sorted(p["job"] for p in points if p["outcome"] == "changed"),
       sorted(j["id"] for j in jobs), "changed heads link their bisections")
    status, csv = svc.api.call("GET", "/api/v1/watches/%d/history?format=csv" % wid,
                               token=svc.read_token)
    eq(status, 200, "CSV status")
    lines = csv.strip().splitlines()
    eq(len(lines), 6, "CSV lines")
    check(lines[0].startswith("testcase,branch,sha,"), "CSV header: " + lines[0])
    eq(sorted(l.split(",")[16] for l in lines[1:] if l.split(",")[16]),
       culprits, "CSV culprits")
    check_cli(svc, wid, culprits)
    b = Browser(svc.url)
    b.sign_in(svc.read_token)
    status, _, page = b.get("/watches/%d/testcases/wscore" % wid)
    eq(status, 200, "history page")
    eq(page.count('class="head culprit'), 2, "culprits marked in the plot")
    for sha in culprits:
        check("culprit %s" % sha[:10] in page, "culprit %s named on the plot" % sha[:10])
    status, _, page = b.get("/watches/%d" % wid)
    eq(status, 200, "watch page")
    check("/watches/%d/testcases/wscore" % wid in page, "watch page links its history")


def notes_of(svc, wid):
    return {j["id"]: j["notes"] for j in watch_state(svc, wid)["jobs"]}


@test
def a_culprit_two_watches_find_is_reported_once_and_noted_when_still_there(env):
    db = env.cluster.database("watch_dups")
    svc = Service(env.root, env.cluster, "watchdups", conninfo=db, lease_seconds=10)
    try:
        repo = Pusher(os.path.join(env.root, "watched-dups"))
        svc.register("drepo", repo.repo, "dscore", min_change_pct=2.0)
        ids = []
        for branch in ("main", "ma*"):
            ids.append(svc.api.ok("POST", "/api/v1/watches", {
                "repo": "drepo", "branch": branch, "testcases": ["dscore"],
                "interval_s": 3600, "notify": ["perf@example.org"]},
                expect=(201,))["id"])
        for wid in ids:
            wait_for("baseline", lambda: head_of(svc, wid, repo.head), svc=svc)
        p1 = repo.push(3, change_at=1, new_mean=880.0)
        svc.api.ok("POST", "/api/v1/repos/drepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        for wid in ids:
            wait_for("bisection", lambda: bisections(svc, wid) and all_done(svc, wid),
                     svc=svc)
        jobs = [bisections(svc, wid)[0] for wid in ids]
        eq([j["culprit"] for j in jobs], [p1[1], p1[1]], "both watches find the culprit")
        wait_for("the report", lambda: len(mails(svc)) >= 1, timeout=60, svc=svc)
        # A later push that changes nothing: the regression is still there.
        repo.push(1)
        svc.api.ok("POST", "/api/v1/repos/drepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        for wid in ids:
            wait_for("push 2 measured", lambda: measured(svc, wid, repo.head), svc=svc)
        time.sleep(2)
        eq(len(mails(svc)), 1, "one report for one culprit")
        notes = [notes_of(svc, wid)[j["id"]] for wid, j in zip(ids, jobs)]
        dups = [(j, n) for j, ns in zip(jobs, notes) for n in ns if "already" in n]
        eq(len(dups), 1, "one job notes the culprit's earlier report: %r" % notes)
        other = [j for j in jobs if j["id"] != dups[0][0]["id"]][0]
        check("was reported by job %d already" % other["id"] in dups[0][1],
              "the note names the job that reported it: %r" % dups)
        for n in notes:
            check("still regression on main/%s" % repo.head[:10] in n,
                  "still regression noted: %r" % notes)
    finally:
        svc.stop()


@test
def a_measuring_job_that_cannot_be_linked_is_not_left_behind(env):
    """The measuring job and its link to the watch commit together: when
    storing the link fails, no job is left that no watch knows of, and the
    head is taken up again once the database takes the link."""
    db = env.cluster.database("watch_link")
    svc = Service(env.root, env.cluster, "watchlink", conninfo=db, lease_seconds=10)
    try:
        repo = Pusher(os.path.join(env.root, "watched-link"))
        svc.register("lrepo", repo.repo, "lscore", min_change_pct=2.0)
        wid = svc.api.ok("POST", "/api/v1/watches", {
            "repo": "lrepo", "branch": "main", "testcases": ["lscore"],
            "interval_s": 3600}, expect=(201,))["id"]
        wait_for("baseline", lambda: head_of(svc, wid, repo.head), svc=svc)
        # The database refuses every link of a measuring job for a while.
        svc.psql("CREATE FUNCTION refuse_link() RETURNS trigger"
                 " LANGUAGE plpgsql AS $$ BEGIN"
                 " RAISE EXCEPTION 'link refused by the test'; END $$;"
                 " CREATE TRIGGER refuse_link BEFORE INSERT ON watch_jobs"
                 " FOR EACH ROW EXECUTE FUNCTION refuse_link()")
        repo.push(2)
        svc.api.ok("POST", "/api/v1/repos/lrepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        wait_for("a refused link", lambda: "link refused by the test"
                 in svc.log("server"), timeout=30, svc=svc)
        time.sleep(1)
        eq(svc.psql("SELECT count(*) FROM jobs j WHERE NOT EXISTS"
                    " (SELECT 1 FROM watch_jobs w WHERE w.job_id = j.id)"),
           "0", "jobs that no watch knows of")
        svc.psql("DROP TRIGGER refuse_link ON watch_jobs")
        svc.api.ok("POST", "/api/v1/repos/lrepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        wait_for("the head measured once linked",
                 lambda: measured(svc, wid, repo.head), svc=svc)
        eq(svc.psql("SELECT count(*) FROM jobs j WHERE NOT EXISTS"
                    " (SELECT 1 FROM watch_jobs w WHERE w.job_id = j.id)"),
           "0", "jobs that no watch knows of, in the end")
        eq(svc.psql("SELECT count(*) FROM watch_jobs"), "1",
           "one measuring job for the one new head")
    finally:
        svc.stop()


@test
def bad_watches_are_refused_with_field_errors(env):
    api = env.svc.api
    bad = [
        ({"branch": "main", "testcases": ["x"]}, 400, "invalid_field"),
        ({"repo": "no-such-repo", "branch": "main", "testcases": ["x"]}, 404, "unknown_repo"),
        ({"repo": 5, "branch": "a b", "testcases": []}, 400, "invalid_field"),
        ({"repo": "r", "branch": "-x", "testcases": ["t"]}, 400, "invalid_field"),
        ({"repo": "r", "branch": "main", "testcases": ["t"], "interval_s": 5}, 400,
         "invalid_field"),
        ({"repo": "r", "branch": "main", "testcases": ["t"], "notify": ["nope"]}, 400,
         "invalid_email"),
    ]
    for body, status, code in bad:
        got, reply = api.call("POST", "/api/v1/watches", body)
        eq((got, reply["error"]["code"]), (status, code), "refused %r" % body)
    got, reply = api.call("POST", "/api/v1/watches",
                          {"repo": "r", "branch": "main", "testcases": ["t"]},
                          token=env.svc.submit_token)
    eq(got, 403, "submit cannot create watches")
    got, reply = api.call("POST", "/api/v1/repos/no-such-repo/push", {},
                          token=env.svc.submit_token)
    eq((got, reply["error"]["code"]), (404, "unknown_repo"), "push of an unknown repo")
    got, _ = api.call("GET", "/api/v1/watches/0")
    eq(got, 404, "watch 0")


def cli(svc, token, *args):
    r = subprocess.run([os.path.join(BIN_DIR, "statbisect"), "watch"] + list(args) +
                       ["--server", svc.url, "--token", token],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


def check_cli(svc, wid, culprits):
    code, out, err = cli(svc, svc.read_token, "list")
    eq(code, 0, "watch list: " + err)
    check(out.startswith("%d\twrepo\tmain\twscore\t" % wid), "list line: " + out)
    code, out, err = cli(svc, svc.read_token, "history", str(wid), "--csv")
    eq(code, 0, "watch history --csv: " + err)
    eq(len(out.strip().splitlines()), 6, "CSV from the CLI")
    check(all(c in out for c in culprits), "culprits in the CLI's CSV")
    code, out, err = cli(svc, svc.read_token, "history", str(wid), "--testcase", "wscore")
    eq((code, len(out.strip().splitlines())), (0, 6), "history table: " + out + err)
    code, out, err = cli(svc, svc.read_token, "pause", str(wid))
    eq(code, 2, "a read token cannot pause")
    check("admin" in err or "role" in err, "the server's refusal is shown: " + err)
    code, out, err = cli(svc, svc.submit_token, "push", "nope")
    eq(code, 2, "push of an unknown repository")
    check("not registered" in err, "push error: " + err)
    code, out, err = cli(svc, svc.read_token, "add", "--repo", "x")
    eq(code, 2, "add without branch and testcase")


@test
def testcases_that_move_at_one_culprit_share_one_report(env):
    db = env.cluster.database("watch_multi")
    svc = Service(env.root, env.cluster, "watchmulti", conninfo=db, lease_seconds=10)
    try:
        repo = Pusher(os.path.join(env.root, "watched-multi"))
        svc.register("mrepo", repo.repo, "mscore", min_change_pct=2.0)
        svc.api.ok("POST", "/api/v1/testcases", {
            "name": "mscore2", "build": "sh build.sh", "run": "./bench",
            "kpi": "bench.score", "higher_is_better": True, "min_change_pct": 2.0})
        wid = svc.api.ok("POST", "/api/v1/watches", {
            "repo": "mrepo", "branch": "main", "testcases": ["mscore", "mscore2"],
            "interval_s": 3600, "notify": ["perf@example.org"]}, expect=(201,))["id"]
        wait_for("baselines", lambda: len(watch_state(svc, wid)["heads"]) == 2, svc=svc)
        p = repo.push(3, change_at=1, new_mean=880.0)
        svc.api.ok("POST", "/api/v1/repos/mrepo/push", {}, expect=(202,),
                   token=svc.submit_token)
        wait_for("two bisections", lambda: len(bisections(svc, wid)) == 2 and
                 all_done(svc, wid), svc=svc)
        jobs = sorted(bisections(svc, wid), key=lambda j: j["id"])
        eq([j["culprit"] for j in jobs], [p[1], p[1]], "both testcases find the culprit")
        wait_for("the report", lambda: len(mails(svc)) >= 1, timeout=60, svc=svc)
        time.sleep(2)
        sent = mails(svc)
        eq(len(sent), 1, "one email for the culprit")
        body = sent[0].get_body(preferencelist=("plain",)).get_content()
        other = [j["testcase"] for j in jobs[1:]][0]
        rows = [l for l in body.splitlines() if l.endswith("  %s.bench.score" % other)]
        eq(len(rows), 1, "a table row of the other testcase:\n" + body)
        change = float(rows[0][16:26])
        check(-16 < change < -8, "its change, about -12%: " + rows[0])
        check("in branch main" in body, "the branch")
        notes = {j["id"]: j["notes"] for j in watch_state(svc, wid)["jobs"]}
        check(any("in one email with job %d's" % jobs[0]["id"] in n
                  for n in notes[jobs[1]["id"]]), "the merged job notes it: %r" % notes)
    finally:
        svc.stop()
