"""Ranges with more than one change, on the real server, worker and
PostgreSQL (issue 10): a regression hidden at the endpoints by a later,
bigger improvement, and two opposite changes that cancel at the
endpoints.  Every change is named with its own direction in the API, the
report and the job page; the verdict is regression, and the CLI's --wait
exits 1."""
import os
import re
import subprocess

import harness
from harness import bench_repo, check, eq, test
from test_web import Browser

P = "engine-changes-"
BIN = os.path.join(harness.BIN_DIR, "statbisect")


def submit_and_wait(svc, repo_name, testcase, good, bad):
    """bin/statbisect submit ... --wait; returns (exit status, job)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATBISECT_")}
    env["STATBISECT_SERVER"] = svc.url
    env["STATBISECT_TOKEN"] = svc.submit_token
    r = subprocess.run([BIN, "submit", "--repo", repo_name, "--testcase", testcase,
                        "--good", good, "--bad", bad, "--wait", "--poll", "0.2"],
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    err = r.stderr.decode()
    match = re.match(r"^job (\d+) submitted", err)
    check(match, "submission line in %r" % err)
    job = svc.api.ok("GET", "/api/v1/jobs/%s" % match.group(1), token=svc.read_token)
    return r.returncode, job, r.stdout.decode()


def check_both_changes(svc, job, shas, regression, improvement):
    """The job names both culprits with their own directions: in the API,
    the report and the job page."""
    eq(job["verdict"], "regression", "verdict (message %r)" % job.get("message"))
    eq(job["culprit"], shas[regression], "the job's culprit is the regression")
    by_sha = {c["commit"]: c for c in job["culprits"]}
    eq(sorted(by_sha), sorted([shas[regression], shas[improvement]]),
       "both culprits named: %r" % job["culprits"])
    reg, imp = by_sha[shas[regression]], by_sha[shas[improvement]]
    eq((reg["direction"], imp["direction"]), ("regression", "improvement"),
       "each culprit's own direction")
    check(reg["confirmed"] and imp["confirmed"], "both confirmed")
    check(reg["change_pct"] < 0 < imp["change_pct"], "each culprit's own change: %r"
          % job["culprits"])
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                token=svc.read_token)
    eq(status, 200, "report")
    for sha, word in ((shas[regression], "regression"), (shas[improvement], "improvement")):
        check(re.search(r"^  %s [-+]?\d+\.\d%% %s" % (sha[:12], word), text, re.M),
              "the report lists %s as an %s:\n%s" % (sha[:12], word, text))
    status, _, page = Browser(svc.url).sign_in(svc.read_token).get("/jobs/%d" % job["id"])
    eq(status, 200, "job page")
    for sha, word in ((shas[regression], "regression"), (shas[improvement], "improvement")):
        check(re.search(r'%s</a></code> <strong>[-+]\d+\.\d\d%%</strong> <span class="verdict '
                        r'verdict-%s">' % (sha[:12], word), page),
              "the job page lists %s as an %s" % (sha[:12], word))


@test
def regression_then_bigger_improvement_is_a_regression(env):
    svc = env.svc
    # -5.7% at one commit, +8% (of the lower level) at a later one: the
    # endpoints show only an improvement of about 2%.
    regression, improvement = 6, 14
    repo, shas = bench_repo(os.path.join(env.root, P + "masked"), 20,
                            {regression: 943.0, improvement: 1018.4}, owner=__name__)
    svc.register(P + "masked", repo, P + "masked-tc")
    code, job, out = submit_and_wait(svc, P + "masked", P + "masked-tc", shas[0], shas[-1])
    eq(code, 1, "submit --wait exits 1 on a regression: %s" % out)
    check_both_changes(svc, job, shas, regression, improvement)


@test
def opposite_changes_cancelling_at_the_endpoints_are_found(env):
    svc = env.svc
    regression, improvement = 7, 15
    repo, shas = bench_repo(os.path.join(env.root, P + "cancel"), 20,
                            {regression: 960.0, improvement: 1000.0}, owner=__name__)
    svc.register(P + "cancel", repo, P + "cancel-tc")
    code, job, out = submit_and_wait(svc, P + "cancel", P + "cancel-tc", shas[0], shas[-1])
    eq(code, 1, "submit --wait exits 1 on a regression: %s" % out)
    check_both_changes(svc, job, shas, regression, improvement)
