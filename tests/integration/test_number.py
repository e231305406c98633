"""One honest number, on real parts (server, worker, PostgreSQL, a git
repository with a planted regression): the change of a job is the same in
the email subject, the report table's KPI row, the report body, the API,
the job page and the CLI, with the same 95% interval; every view counts
the same runs of parent and culprit; a finished job shows a finished
range and progress; `ambiguous` is empty when no build failed."""
import email
import email.policy
import os
import re

import harness
from harness import bench_repo, check, eq, test
from test_cli import cli
from test_web import Browser

P = "number-"
_job = {}


def finished_job(env):
    """One job on a range with a 5% drop at a random commit, made once."""
    if _job:
        return _job
    svc = env.svc
    culprit = harness.rand_index(3, 12)
    repo, shas = bench_repo(os.path.join(env.root, P + "regr"), 14, {culprit: 950.0},
                            owner=__name__)
    svc.register(P + "regr", repo, P + "regr-tc")
    job = svc.submit({"repo": P + "regr", "testcase": P + "regr-tc", "good": shas[0],
                      "bad": shas[-1]})
    done = svc.wait(job["id"])
    eq((done["verdict"], done["culprit"]), ("regression", shas[culprit]),
       "planted culprit found")
    _job.update(job=done, shas=shas, culprit=culprit)
    return _job


def shown(change, lo, hi):
    """The change as every view prints it."""
    return "%+.1f%% (95%% CI %+.1f%% to %+.1f%%)" % (change, lo, hi)


def report_of(svc, job_id):
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job_id,
                                token=svc.read_token)
    eq(status, 200, "report of job %d" % job_id)
    if isinstance(text, bytes):
        text = text.decode()
    return email.message_from_string(text, policy=email.policy.default)


def page_of(svc, job_id):
    b = Browser(svc.url).sign_in(svc.read_token)
    status, _, page = b.get("/jobs/%d" % job_id)
    eq(status, 200, "job page")
    return page


@test
def number_change_is_the_same_in_subject_table_api_page_and_cli(env):
    svc = env.svc
    m = finished_job(env)
    job = m["job"]
    # The API: the change and its interval, the interval around it.
    check(isinstance(job.get("change_ci95"), list) and len(job["change_ci95"]) == 2,
          "change_ci95 is [lo, hi]: %r" % job.get("change_ci95"))
    lo, hi = job["change_ci95"]
    change = job["change_pct"]
    check(lo < change < hi, "interval %r around %r" % ((lo, hi), change))
    check(lo < -5.0 * 0.5 and hi > -5.0 * 1.6, "interval %r near the planted -5%%"
          % ((lo, hi),))
    first = job["culprits"][0]
    eq((first["change_pct"], first["change_ci95"]), (change, [lo, hi]),
       "the culprit's change is the job's")
    want = shown(change, lo, hi)
    api_one = "%+.1f%%" % change

    msg = report_of(svc, job["id"])
    subject = str(msg["Subject"])
    got = re.search(r" bench\.score ([+-]\d+\.\d)% regression$", subject)
    check(got, "subject with the change: %r" % subject)
    eq(got.group(1) + "%", api_one, "subject")
    body = msg.get_content()
    kpi_row = [l for l in body.splitlines() if l.endswith("  bench.score")]
    eq(len(kpi_row), 1, "one KPI row in the table: %r" % kpi_row)
    row = re.search(r"\s([+-]\d+\.\d)%\s", kpi_row[0])
    check(row, "KPI row with a change: %r" % kpi_row[0])
    eq(row.group(1) + "%", api_one, "table KPI row")
    check(("noticed a %s regression" % api_one) in body, "body's first sentence")
    check("change: " + want in body.splitlines(), "body's change line, want %r" % want)

    page = page_of(svc, job["id"])
    got = re.search(r"<dt>Change</dt><dd><strong>([^<]*)</strong>", page)
    check(got, "change on the job page")
    eq(got.group(1), want, "job page")

    code, out, err = cli(svc, "status", str(job["id"]), token=svc.read_token)
    eq(code, 0, "status exit; stderr %r" % err)
    eq([l for l in out.splitlines() if l.startswith("change:")], ["change:    " + want],
       "CLI status")


@test
def number_every_view_counts_every_run_of_parent_and_culprit(env):
    svc = env.svc
    m = finished_job(env)
    job = m["job"]
    by_sha = {c["commit"]: c for c in job["commits"]}
    parent, culprit = by_sha[job["parent"]], by_sha[job["culprit"]]
    n_parent = len(parent["runs"]) + len(parent["confirm_runs"])
    n_culprit = len(culprit["runs"]) + len(culprit["confirm_runs"])
    check(len(culprit["confirm_runs"]) > 0 and len(culprit["runs"]) > 0,
          "the culprit has search and confirmation runs")
    body = report_of(svc, job["id"]).get_content()
    got = re.search(r"^runs: (\d+) \(parent\) / (\d+) \(culprit\)", body, re.M)
    check(got, "runs line in the report")
    eq((int(got.group(1)), int(got.group(2))), (n_parent, n_culprit), "report's runs")
    page = page_of(svc, job["id"])
    # The path: "N runs" for each commit.
    for c in (parent, culprit):
        li = re.search(r'<li class="class-\w+"><code><a href="[^"]*%s">.*?</li>' % c["commit"],
                       page, re.S)
        check(li, "path entry of %s" % c["commit"])
        got = re.search(r"</span> (\d+) runs", li.group(0))
        eq(int(got.group(1)), len(c["runs"]) + len(c["confirm_runs"]),
           "path's runs of %s" % c["commit"][:12])
    # The parent-vs-culprit plot draws every run of each side.
    pair = re.search(r'<figure class="plot" id="plot-pair">(.*?)</figure>', page, re.S).group(1)
    groups = re.findall(r'<g[^>]*data-role="(parent|culprit)"[^>]*>(.*?)</g>', pair, re.S)
    counts = {role: inner.count('class="run') for role, inner in groups}
    eq(counts, {"parent": n_parent, "culprit": n_culprit}, "pair plot's runs")


@test
def number_a_finished_job_shows_a_finished_range_and_progress(env):
    m = finished_job(env)
    job = m["job"]
    shas, culprit = m["shas"], m["culprit"]
    eq(job["range"], {"after": shas[culprit - 1], "through": shas[culprit]},
       "range of a done job: the culprit's parent through the culprit")
    eq((job["progress"]["candidates_left"], job["progress"]["steps_left"],
        job["progress"]["phase"]), (1, 0, "done"), "progress of a done job")
    eq(job["culprits"][0]["ambiguous"], [], "no failed build: nothing ambiguous")
    elapsed = job["progress"]["elapsed_s"]
    check(isinstance(elapsed, float) and elapsed > 0,
          "a done job's time from its first claim to its end: %r" % elapsed)
    eq(job["progress"]["time_left_s"], None, "a done job has no time left")
    # The jobs list counts as the job does (issue 15).
    listed = [j for j in env.svc.api.ok("GET", "/api/v1/jobs?testcase=%s" % (P + "regr-tc"),
                                        token=env.svc.read_token)["jobs"]
              if j["id"] == job["id"]]
    eq([(j["runs"], j["commits_tested"]) for j in listed],
       [(job["runs"], job["commits_tested"])], "runs and tested commits in the list")
