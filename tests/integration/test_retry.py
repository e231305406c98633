"""Retrying one commit of a job (issue 15): a rebuild of a commit whose
build failed for a reason outside it finds the exact culprit that the
failure hid, more runs of one commit are added to a finished job, the
job page's form does the same, and bad retries are refused with nothing
changed."""
import os

import harness
from harness import bench_repo, check, eq, test
from test_web import Browser, field

P = "retry-"


def commit_of(job, sha):
    return next((c for c in job["commits"] if c["commit"] == sha), None)


def state_of(svc, job_id):
    """What a refused retry must leave alone: the job's state, verdict
    and tasks."""
    return (svc.psql("select state || ' ' || coalesce(verdict, '-') from jobs"
                     " where id = %d" % job_id),
            svc.psql("select count(*) from tasks where job_id = %d" % job_id))


@test
def a_rebuild_finds_the_culprit_a_flaky_build_hid(env):
    svc = env.svc
    culprit = harness.rand_index(3, 9)
    repo, shas = bench_repo(os.path.join(env.root, P + "flaky"), 12, {culprit: 950.0},
                            owner=__name__)
    marker = os.path.join(env.root, P + "flaky-failed-once")
    # The culprit's first build fails, as a download that timed out would.
    svc.register(P + "flaky", repo, P + "flaky-tc",
                 build='if [ "$STATBISECT_COMMIT" = %s ] && [ ! -e %s ]; then touch %s;'
                       ' echo "network timeout" >&2; exit 1; fi; sh build.sh'
                       % (shas[culprit], marker, marker))
    first = svc.wait(svc.submit({"repo": P + "flaky", "testcase": P + "flaky-tc",
                                 "good": shas[0], "bad": shas[-1],
                                 "notify": ["dev@example.org"]})["id"])
    eq(first["verdict"], "regression", "the first verdict")
    check(commit_of(first, shas[culprit])["build_failed"],
          "the culprit's build failed the first time")
    eq(first["culprit"], shas[culprit + 1], "the failed build hid the culprit")
    check(shas[culprit] in first["culprits"][0]["ambiguous"],
          "the culprit is among the ambiguous: %r" % first["culprits"][0])

    job = svc.api.ok("POST", "/api/v1/jobs/%d/commits/%s/retry"
                     % (first["id"], shas[culprit][:10]), {"rebuild": True},
                     expect=(202,), token=svc.submit_token)
    eq((job["state"], job["verdict"], job["culprit"]), ("running", None, None),
       "the reopened job")
    # Untested again until the rebuild: not listed as failing to build.
    c = commit_of(job, shas[culprit])
    check(c is None or not c["build_failed"], "the rebuild forgets the build failure: %r" % c)
    again = svc.wait(first["id"])
    eq((again["state"], again["verdict"], again["culprit"]),
       ("done", "regression", shas[culprit]), "the verdict after the rebuild")
    eq(again["culprits"][0]["ambiguous"], [], "nothing ambiguous any more")
    c = commit_of(again, shas[culprit])
    check(not c["build_failed"] and len(c["runs"]) >= 5,
          "the culprit was built and measured: %r" % c)
    subjects = svc.psql("select subject from outbox where job_id = %d order by id"
                        % first["id"]).splitlines()
    eq(len(subjects), 2, "a report for each verdict: %r" % subjects)
    check(shas[culprit][:10] in subjects[1], "the second report names the culprit: %r"
          % subjects[1])


@test
def more_runs_of_one_commit_and_a_rebuild_from_the_page(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "more"), 6, owner=__name__)
    ledger = os.path.join(env.root, P + "more-builds.txt")
    svc.register(P + "more", repo, P + "more-tc",
                 build='echo "$STATBISECT_COMMIT" >> "%s"; sh build.sh' % ledger)
    done = svc.wait(svc.submit({"repo": P + "more", "testcase": P + "more-tc",
                                "good": shas[0], "bad": shas[-1]})["id"])
    eq(done["verdict"], "no-change", "a flat range")
    before = len(commit_of(done, shas[-1])["runs"])
    with open(ledger) as f:
        builds = f.read().split()

    # More runs by the API, from the build cache.
    svc.api.ok("POST", "/api/v1/jobs/%d/commits/%s/retry" % (done["id"], shas[-1]),
               {"runs": 3}, expect=(202,), token=svc.submit_token)
    again = svc.wait(done["id"])
    eq(again["verdict"], "no-change", "the verdict with the new runs")
    check(len(commit_of(again, shas[-1])["runs"]) >= before + 3,
          "three more runs of the bad commit: %d then %d"
          % (before, len(commit_of(again, shas[-1])["runs"])))
    with open(ledger) as f:
        eq(f.read().split(), builds, "more runs are not a new build")

    # A rebuild from the job page's form, after its confirmation.
    b = Browser(svc.url).sign_in(svc.submit_token)
    status, _, page = b.get("/jobs/%d" % done["id"])
    action = "/jobs/%d/commits/%s/retry" % (done["id"], shas[0])
    check('action="%s"' % action in page, "the page offers a retry of the good commit")
    status, hdrs, _ = b.post(action, {"csrf": field(page, "csrf"), "runs": "2",
                                      "rebuild": "on"})
    eq((status, hdrs.get("Location")), (303, "/jobs/%d" % done["id"]), "back to the job")
    third = svc.wait(done["id"])
    eq(third["state"], "done", "the job after the page's retry")
    with open(ledger) as f:
        eq(f.read().split(), builds + [shas[0]], "the good commit was built again")
    # A reader sees no retry form.
    r = Browser(svc.url).sign_in(svc.read_token)
    check("retry-form" not in r.get("/jobs/%d" % done["id"])[2], "no retry for a reader")


@test
def bad_retries_are_refused_and_change_nothing(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, P + "bad"), 4, owner=__name__)
    svc.register(P + "bad", repo, P + "bad-tc", runs_max=20)
    done = svc.wait(svc.submit({"repo": P + "bad", "testcase": P + "bad-tc",
                                "good": shas[0], "bad": shas[-1]})["id"])
    path = "/api/v1/jobs/%d/commits/%%s/retry" % done["id"]
    before = state_of(svc, done["id"])
    cases = [
        (path % "xyz", {}, 400, "invalid_commit"),
        (path % ("f" * 41), {}, 400, "invalid_commit"),
        (path % ("0" * 40), {}, 404, "not_found"),
        (path % shas[1], {"runs": 0}, 400, "invalid_field"),
        (path % shas[1], {"runs": 21}, 400, "invalid_field"),
        (path % shas[1], {"runs": "3"}, 400, "invalid_field"),
        (path % shas[1], {"rebuild": "yes"}, 400, "invalid_field"),
        (path % shas[1], [1], 400, "invalid_json"),
        ("/api/v1/jobs/999999/commits/%s/retry" % shas[1], {}, 404, "not_found"),
    ]
    for p, body, status, code in cases:
        got, reply = svc.api.call("POST", p, body, token=svc.submit_token)
        eq((got, reply.get("error", {}).get("code")), (status, code),
           "POST %s %r: %r" % (p, body, reply))
    got, _ = svc.api.call("POST", path % shas[1], {}, token=svc.read_token)
    eq(got, 403, "a read token cannot retry")
    eq(state_of(svc, done["id"]), before, "nothing changed")

    # A cancelled job takes no retry.
    job = svc.submit({"repo": P + "bad", "testcase": P + "bad-tc", "good": shas[0],
                      "bad": shas[-1]})
    svc.api.ok("DELETE", "/api/v1/jobs/%d" % job["id"], token=svc.submit_token)
    got, reply = svc.api.call("POST", "/api/v1/jobs/%d/commits/%s/retry"
                              % (job["id"], shas[1]), {}, token=svc.submit_token)
    eq((got, reply["error"]["code"]), (409, "conflict"), "retry of a cancelled job")
    check("re-run" in reply["error"]["message"], "says what to do: %r" % reply)
