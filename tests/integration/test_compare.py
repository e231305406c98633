"""Compare jobs and fix re-tests (issue 13) on real parts: a repository
the test creates whose benchmark gets 10% slower at one commit (the
culprit) and is put back at a later one (the fix); base, culprit and fix
measured interleaved by a real worker, the three-column table in the
mailed report, in the API and on the job page; the re-test of a fix
created from a finished bisection; and the refusals."""
import email
import email.policy
import glob
import html
import os
import re
import time

from harness import bench_repo, check, eq, test
from test_cli import cli
from test_web import Browser

# Bounds on noisy numbers: the benchmark's noise is 1% sd, each column has
# at least 5 runs, so a column's change has a standard error below 0.7%;
# the bounds are about 4 standard errors wide.
CULPRIT_LO, CULPRIT_HI = -13.0, -7.0
FIX_MOST = 3.0


def repo_with_fix(env, name, broken=()):
    """Commits 0..6: 3 lowers the mean from 1000 to 900 (the culprit),
    5 puts it back (the fix); `broken` do not build."""
    repo, shas = bench_repo(os.path.join(env.root, name), 6,
                            {3: 900.0, 5: 1000.0}, broken=broken,
                            owner=__name__ + name)
    env.svc.register(name, repo, name + "-tc", min_change_pct=2.0,
                     runs_min=5, runs_max=30)
    return repo, shas


def kpi_row(text):
    rows = [l for l in text.splitlines() if l.endswith("  bench.score")]
    eq(len(rows), 1, "one KPI row in %r" % text)
    return rows[0]


def check_table(text, shas, what):
    """The three-column table: the head of three SHAs, the KPI row with
    the culprit's change and the fix's."""
    text = text.replace("\r\n", "\n")
    head = "%s %s %s " % (shas[0][:16], shas[1][:27], shas[2][:27])
    check(head in text, "%s: three-column head %r" % (what, head))
    check("         %stddev     %change         %stddev     %change"
          "         %stddev\n" in text, "%s: three-column header" % what)
    row = kpi_row(text)
    eq(len(row), 16 + 28 + 28 + 2 + len("bench.score"), "%s: row width" % what)
    culprit, fix = float(row[16:26]), float(row[44:54])
    check(CULPRIT_LO < culprit < CULPRIT_HI,
          "%s: culprit column %r near -10%%" % (what, culprit))
    check(abs(fix) < FIX_MOST, "%s: fix column %r near 0" % (what, fix))


def maildir_report(svc, needle):
    deadline = time.time() + 20
    while time.time() < deadline:
        for f in glob.glob(os.path.join(svc.mail, "new", "*")):
            text = open(f, encoding="utf-8").read()
            if needle in text:
                return email.message_from_string(text, policy=email.policy.default)
        time.sleep(0.2)
    raise AssertionError("no report with %r in the Maildir" % needle)


def check_columns(done, shas, labels):
    eq(done["kind"], "compare", "kind")
    cols = done["revisions"]
    eq([c["sha"] for c in cols], shas, "columns' SHAs")
    eq([c["label"] for c in cols], labels, "columns' labels")
    for c in cols:
        check(c["runs"] >= 5, "runs_min runs of %s: %r" % (c["label"], c["runs"]))
        check(990 * (0.9 if c is cols[1] else 1) - 30 < c["mean"]
              < 1010 * (0.9 if c is cols[1] else 1) + 30,
              "mean of %s: %r" % (c["label"], c["mean"]))
        check(0 < c["sd"] < 40, "sd of %s: %r" % (c["label"], c["sd"]))
    eq(cols[0]["change_pct"], None, "the first column has no change")
    eq(cols[0]["verdict"], None, "the first column has no verdict")
    eq(cols[1]["verdict"], "regression", "culprit column")
    check(CULPRIT_LO < cols[1]["change_pct"] < CULPRIT_HI,
          "culprit change %r" % cols[1]["change_pct"])
    check(cols[2]["verdict"] in ("no-change", "inconclusive"),
          "fix column is no regression: %r" % cols[2]["verdict"])
    check(abs(cols[2]["change_pct"]) < FIX_MOST, "fix change %r" % cols[2]["change_pct"])
    eq(done["verdict"], "regression", "job verdict")


@test
def compare_of_base_culprit_and_fix_reports_a_three_column_table(env):
    svc = env.svc
    _, shas = repo_with_fix(env, "cmp")
    revs = [shas[2], shas[3], shas[5]]
    job = svc.submit({"kind": "compare", "repo": "cmp", "testcase": "cmp-tc",
                      "revisions": [shas[2][:12], shas[3], "main~1"],
                      "notify": ["dev@example.org"]})
    eq(job["kind"], "compare", "kind at submission")
    eq([c["sha"] for c in job["revisions"]], revs, "revisions resolved")
    eq([c["revision"] for c in job["revisions"]], [shas[2][:12], shas[3], "main~1"],
       "revisions as submitted")
    done = svc.wait(job["id"])
    eq(done["state"], "done", "state")
    check_columns(done, revs, [shas[2][:12], shas[3][:12], "main~1"])

    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                token=svc.read_token)
    eq(status, 200, "report status")
    msg = email.message_from_string(text, policy=email.policy.default)
    subject = str(msg["Subject"])
    check(subject.startswith("[cmp:main~1] compare of bench.score against %s: %s -"
                             % (shas[2][:10], shas[3][:10])),
          "subject %r" % subject)
    check(" regression, %s " % shas[5][:10] in subject, "subject names both: %r" % subject)
    eq(str(msg["To"]), "dev@example.org", "To")
    body = msg.get_content()
    check("compared bench.score on 3 revisions" in body, "body opening")
    check_table(body, revs, "report")
    delivered = maildir_report(svc, "compare of bench.score against %s" % shas[2][:10])
    check_table(delivered.get_content(), revs, "mailed report")

    # The job page: the columns while and after it ran, and the report's
    # table; no re-run as a bisection.
    b = Browser(svc.url).sign_in(svc.submit_token)
    status, _, page = b.get("/jobs/%d" % job["id"])
    eq(status, 200, "job page")
    table = re.search(r'<table class="compare" id="compare-table">(.*?)</table>', page, re.S)
    check(table is not None, "the compare table on the page")
    rows = re.findall(r"<tr><th scope=\"row\">([^<]*)</th><td><code>([0-9a-f]+)</code>",
                      table.group(1))
    eq([(html.unescape(l), s) for l, s in rows],
       [(shas[2][:12], shas[2][:12]), (shas[3][:12], shas[3][:12]), ("main~1", shas[5][:12])],
       "one row per revision")
    check('verdict-regression">regression<' in table.group(1), "the culprit's row says regression")
    check('<a href="/jobs/%d/commits/%s/log">logs</a>' % (job["id"], shas[5]) in table.group(1),
          "each revision's logs linked")
    check_table(html.unescape(page), revs, "job page report")
    check('id="path"' not in page and 'id="plot-range"' not in page,
          "no bisection path or range plot on a compare job's page")
    check('action="/jobs/%d/rerun"' % job["id"] not in page, "no re-run button")
    check('action="/jobs/%d/retest"' % job["id"] not in page, "no re-test button")

    # A compare job is not re-run as a bisection.
    status, err = svc.api.call("POST", "/api/v1/jobs/%d/rerun" % job["id"], {},
                               token=svc.submit_token)
    eq(status, 409, "re-run of a compare job")
    eq(err["error"]["code"], "not_a_bisection", "re-run refusal code")


@test
def retest_of_a_fix_compares_parent_culprit_and_fix(env):
    svc = env.svc
    _, shas = repo_with_fix(env, "fixre")
    bis = svc.submit({"repo": "fixre", "testcase": "fixre-tc",
                      "good": shas[1], "bad": shas[4]})
    bis = svc.wait(bis["id"])
    eq(bis["culprit"], shas[3], "the bisection's culprit")
    eq(bis["kind"], "bisect", "a bisection's kind")
    job = svc.api.ok("POST", "/api/v1/jobs/%d/retest" % bis["id"],
                     {"fix": shas[5][:10]}, expect=(201,), token=svc.submit_token)
    eq(job["kind"], "compare", "a re-test is a compare job")
    eq(job["retest_of"], bis["id"], "retest_of")
    done = svc.wait(job["id"])
    check_columns(done, [shas[2], shas[3], shas[5]], ["base", "culprit", "fix"])
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                token=svc.read_token)
    eq(status, 200, "report status")
    body = email.message_from_string(text, policy=email.policy.default).get_content()
    check("fix:     %s" % shas[5] in body, "body names the fix")
    check("fix:     " in body and "of bench.score against base" in body,
          "verdict lines against the base")
    check_table(body, [shas[2], shas[3], shas[5]], "re-test report")

    # The button on the bisection's page does the same through the same
    # service; a bad fix is said on the page.
    b = Browser(svc.url).sign_in(svc.submit_token)
    _, _, page = b.get("/jobs/%d" % bis["id"])
    check('action="/jobs/%d/retest"' % bis["id"] in page, "re-test button on a bisection")
    status, hdrs, _ = b.post("/jobs/%d/retest" % bis["id"],
                             {"csrf": b.csrf, "fix": shas[5]})
    eq(status, 303, "re-test from the page")
    new_id = int(hdrs["Location"].rsplit("/", 1)[1])
    again = svc.api.ok("GET", "/api/v1/jobs/%d" % new_id, token=svc.read_token)
    eq(again["kind"], "compare", "the button's job is a compare job")
    eq([c["label"] for c in again["revisions"]], ["base", "culprit", "fix"], "its labels")
    eq(again["retest_of"], bis["id"], "its retest_of")
    svc.wait(new_id)
    status, _, page = b.post("/jobs/%d/retest" % bis["id"],
                             {"csrf": b.csrf, "fix": "no-such-fix"})
    eq(status, 422, "unknown fix from the page")
    check("Cannot re-test the fix" in page and "no-such-fix" in page,
          "the page says why")
    status, _, _ = b.post("/jobs/%d/retest" % bis["id"], {"csrf": "", "fix": shas[5]})
    eq(status, 403, "re-test without the CSRF token")
    reader = Browser(svc.url).sign_in(svc.read_token)
    _, _, page = reader.get("/jobs/%d" % bis["id"])
    check("/retest" not in page, "no re-test button for a reader")

    # A compare job has no culprit to re-test a fix of.
    status, err = svc.api.call("POST", "/api/v1/jobs/%d/retest" % job["id"],
                               {"fix": shas[5]}, token=svc.submit_token)
    eq(status, 409, "re-test of a compare job")
    eq(err["error"]["code"], "not_a_bisection", "code")
    # An unknown fix names itself.
    status, err = svc.api.call("POST", "/api/v1/jobs/%d/retest" % bis["id"],
                               {"fix": "no-such-fix"}, token=svc.submit_token)
    eq(status, 422, "unknown fix")
    eq(err["error"]["code"], "unknown_revision", "code")
    check("no-such-fix" in err["error"]["message"], "message names it: %r" % err)
    status, err = svc.api.call("POST", "/api/v1/jobs/%d/retest" % bis["id"], {},
                               token=svc.submit_token)
    eq(status, 400, "no fix")
    status, err = svc.api.call("POST", "/api/v1/jobs/999999/retest", {"fix": "main"},
                               token=svc.submit_token)
    eq(status, 404, "no such job")
    status, err = svc.api.call("POST", "/api/v1/jobs/%d/retest" % bis["id"],
                               {"fix": "main"}, token=svc.read_token)
    eq(status, 403, "a read token cannot re-test")


@test
def compare_refusals(env):
    svc = env.svc
    _, shas = repo_with_fix(env, "cmpno")
    base = {"kind": "compare", "repo": "cmpno", "testcase": "cmpno-tc"}

    def refused(revisions, status, code, what):
        body = dict(base)
        if revisions is not None:
            body["revisions"] = revisions
        got, err = svc.api.call("POST", "/api/v1/jobs", body, token=svc.submit_token)
        eq(got, status, what)
        eq(err["error"]["code"], code, what + " code")
        return err["error"]["message"]

    before = svc.psql("SELECT count(*) FROM jobs").strip()
    msg = refused([shas[1]], 422, "invalid_field", "one revision")
    check("2 to 4" in msg, "message says how many: %r" % msg)
    refused(shas[1:6], 422, "invalid_field", "five revisions")
    refused(None, 400, "missing_field", "no revisions")
    refused("main", 422, "invalid_field", "revisions not a list")
    refused([shas[1], 7], 400, "invalid_field", "a revision not a string")
    msg = refused([shas[1], "v9.9-nope"], 422, "unknown_revision", "unknown revision")
    check("v9.9-nope" in msg, "message names the revision: %r" % msg)
    refused([shas[1], shas[1][:12]], 422, "invalid_field", "one commit twice")
    eq(svc.psql("SELECT count(*) FROM jobs").strip(), before, "no job stored")

    # A bisection that found no culprit has no fix to re-test.
    bis = svc.submit({"repo": "cmpno", "testcase": "cmpno-tc",
                      "good": shas[0], "bad": shas[2]})
    bis = svc.wait(bis["id"])
    eq(bis["verdict"], "no-change", "a range without a change")
    got, err = svc.api.call("POST", "/api/v1/jobs/%d/retest" % bis["id"],
                            {"fix": shas[5]}, token=svc.submit_token)
    eq(got, 409, "re-test without a culprit")
    eq(err["error"]["code"], "no_culprit", "code")


@test
def compare_with_a_revision_that_does_not_build_ends_with_a_report(env):
    svc = env.svc
    _, shas = repo_with_fix(env, "cmpbrk", broken=(4,))
    job = svc.submit({"kind": "compare", "repo": "cmpbrk", "testcase": "cmpbrk-tc",
                      "revisions": [shas[2], shas[4], shas[5]]})
    done = svc.wait(job["id"])
    eq(done["state"], "done", "state")
    cols = done["revisions"]
    eq(cols[1]["runs"], 0, "no runs of the revision that does not build")
    eq(cols[1]["verdict"], "inconclusive", "its column")
    check(cols[2]["verdict"] in ("no-change", "inconclusive"), "the fix's column %r" % cols)
    eq(done["verdict"], "inconclusive", "job verdict")
    check("%s inconclusive: it does not build" % shas[4][:10] in done["message"],
          "the message says why: %r" % done["message"])
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                token=svc.read_token)
    eq(status, 200, "a report all the same")
    check(": %s inconclusive, %s " % (shas[4][:10], shas[5][:10]) in
          text.replace("\r\n ", " "), "the subject says so, with no change for it")
    check(not [l for l in text.splitlines() if l.endswith("  bench.score")],
          "no KPI row with a made-up mean for the revision without runs")


@test
def cli_submits_a_compare_and_a_fix_retest(env):
    svc = env.svc
    _, shas = repo_with_fix(env, "cmpcli")
    code, out, err = cli(svc, "submit", "--repo", "cmpcli", "--testcase", "cmpcli-tc",
                         "--revision", shas[2], "--revision", shas[3],
                         "--revision", shas[5], "--wait", "--poll", "0.2")
    eq(code, 1, "a compare with a regressing column exits 1: %s" % err)
    check(out.startswith("job ") and ": regression: %s -" % shas[3][:10] in out,
          "the verdict line: %r" % out)
    code, out, err = cli(svc, "status", out.split()[1].rstrip(":"))
    eq(code, 0, "status: %s" % err)
    lines = [l for l in out.splitlines() if l.startswith("revision:")]
    eq(len(lines), 3, "one revision line per column in %r" % out)
    check(lines[1].split()[1] == shas[3][:12] and "-" in lines[1].split()[-1],
          "the culprit's line: %r" % lines[1])
    code, out, err = cli(svc, "submit", "--repo", "cmpcli", "--testcase", "cmpcli-tc",
                         "--revision", shas[2], "--good", shas[1])
    eq((code, err.strip()), (2, "statbisect: a compare job needs --repo, --testcase "
                                "and --revision (no --good or --bad)"), "compare with --good")
    bis = svc.submit({"repo": "cmpcli", "testcase": "cmpcli-tc",
                      "good": shas[1], "bad": shas[4]})
    svc.wait(bis["id"])
    code, out, err = cli(svc, "retest", str(bis["id"]), "--fix", shas[5], "--json")
    eq(code, 0, "retest: %s" % err)
    check('"kind": "compare"' in out or '"kind":"compare"' in out, "the new job: %r" % out[:200])
    code, out, err = cli(svc, "retest", str(bis["id"]))
    eq((code, err.strip()), (2, "statbisect: retest needs --fix REV"), "retest without --fix")
    code, out, err = cli(svc, "retest", str(bis["id"]), "--fix", "no-such-fix")
    eq(code, 2, "unknown fix")
    check("no-such-fix" in err, "the server's message: %r" % err)
