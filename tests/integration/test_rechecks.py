"""Re-checks of a regression on a newer head of its branch (issue 13) on
real parts: a repository whose benchmark gets 10% slower at one commit,
bisected by a real worker; the branch then moves on without a fix, and a
re-check by hand adds "still regression on main <sha>" to the job and
replies in the thread of its report; a fix later, the schedule of the
testcase re-checks it by itself and finds it fixed; and the refusals."""
import os

from harness import Service, bench_repo, check, eq, mails, test, wait_for
from test_web import Browser

OWNER = __name__






def job(svc, job_id):
    return svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=svc.read_token)


def finished_rechecks(svc, job_id):
    return [r for r in job(svc, job_id)["rechecks"] if r["verdict"]]


@test
def a_regression_is_rechecked_on_a_newer_head_by_hand_and_on_a_schedule(env):
    db = env.cluster.database("rechecks")
    svc = Service(env.root, env.cluster, "rechecks", conninfo=db)
    try:
        repo, shas = bench_repo(os.path.join(env.root, "recheckrepo"), 8,
                                {5: 900.0}, owner=OWNER)
        svc.register("recheckrepo", repo, "recheck-tc", min_change_pct=2.0,
                     runs_min=5, runs_max=40)
        first = svc.submit({"repo": "recheckrepo", "testcase": "recheck-tc",
                            "good": shas[0], "bad": "main",
                            "notify": ["perf@example.org"]})
        done = svc.wait(first["id"])
        eq((done["verdict"], done["culprit"]), ("regression", shas[5]),
           "the bisection")
        eq(done["rechecks"], [], "no re-check yet")
        report = wait_for("the report", lambda: mails(svc), svc, timeout=60)[0]

        # Refusals: nothing to re-check, an unknown head, the culprit itself.
        flat = svc.submit({"repo": "recheckrepo", "testcase": "recheck-tc",
                           "good": shas[0], "bad": shas[3]})
        svc.wait(flat["id"])
        for path, body, status, code in (
                ("/api/v1/jobs/%d/recheck" % flat["id"], {}, 409, "no_regression"),
                ("/api/v1/jobs/999999/recheck", {}, 404, "not_found"),
                ("/api/v1/jobs/%d/recheck" % first["id"], {"head": "nosuch"},
                 422, "unknown_revision"),
                ("/api/v1/jobs/%d/recheck" % first["id"], {"head": 5}, 400,
                 "invalid_field")):
            got, answer = svc.api.call("POST", path, body, token=svc.submit_token)
            eq((got, answer["error"]["code"]), (status, code),
               "refused re-check %s %r: %r" % (path, body, answer))
        got, _ = svc.api.call("POST", "/api/v1/jobs/%d/recheck" % first["id"], {},
                              token=svc.read_token)
        eq(got, 403, "a re-check needs the submit role")

        # The branch moves on without a fix: still a regression.
        repo.write("notes.txt", "later work\n")
        head = repo.commit("docs: later work")
        created = svc.api.ok("POST", "/api/v1/jobs/%d/recheck" % first["id"], {},
                             expect=(201,), token=svc.submit_token)
        eq(created["kind"], "compare", "a re-check is a compare job")
        eq([r["label"] for r in created["revisions"]], ["base", "culprit", "head"],
           "its columns")
        eq(created["revisions"][2]["sha"], head, "the head of main, resolved anew")
        svc.wait(created["id"])
        rechecks = wait_for("the re-check's outcome",
                            lambda: finished_rechecks(svc, first["id"]), svc)
        eq(rechecks[0]["verdict"], "still regression", "outcome: %r" % rechecks)
        eq(rechecks[0]["note"], "still regression on main %s" % head[:12], "note")
        check(-14 < rechecks[0]["change_pct"] < -6,
              "the head is about 10%% down: %r" % rechecks[0])
        reply = wait_for("the reply", lambda: [
            m for m in mails(svc) if m["In-Reply-To"] == report["Message-ID"]],
            svc, timeout=60)[0]
        eq(str(reply["Subject"]), "Re: " + str(report["Subject"]), "reply subject")
        body = reply.get_body(preferencelist=("plain",)).get_content()
        check("still regression on main %s" % head[:12] in body, body)
        eq(len([m for m in mails(svc) if "compare of" in str(m["Subject"])]), 0,
           "a re-check mails its reply, not a compare report")

        # A fix lands; the testcase's schedule re-checks by itself.
        repo.write("mean", "1000.0\n")
        fixed = repo.commit("sched: back to the fast path")
        for body, status in (({"interval_s": 5}, 400), ({"interval_s": "x"}, 400)):
            got, _ = svc.api.call("PUT", "/api/v1/testcases/recheck-tc/recheck", body)
            eq(got, status, "schedule %r" % body)
        got, _ = svc.api.call("PUT", "/api/v1/testcases/nosuch/recheck",
                              {"interval_s": 10})
        eq(got, 404, "schedule of no testcase")
        eq(svc.api.ok("PUT", "/api/v1/testcases/recheck-tc/recheck",
                      {"interval_s": 10}),
           {"testcase": "recheck-tc", "interval_s": 10}, "the schedule set")
        later = wait_for("a scheduled re-check on the fix", lambda: [
            r for r in finished_rechecks(svc, first["id"]) if r["head"] == fixed],
            svc, timeout=120)
        eq(later[0]["verdict"], "fixed", "the scheduled outcome: %r" % later)
        eq(later[0]["note"], "fixed on main %s" % fixed[:12], "its note")
        svc.api.ok("PUT", "/api/v1/testcases/recheck-tc/recheck", {"interval_s": None})
    finally:
        svc.stop()
