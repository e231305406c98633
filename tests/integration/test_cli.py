"""The command-line client bin/statbisect against the real server: submit
and wait (exit status from the verdict), status, report, cancel, and the
errors it must turn into exit status 2 with the server's message."""
import json
import os
import re
import subprocess

import harness
from harness import bench_repo, check, eq, test

P = "cli-"
BIN = os.path.join(harness.BIN_DIR, "statbisect")
PROGRESS = re.compile(r"^job (\d+): (queued|running), (\d+) commits? tested, (\d+) runs?, "
                      r"range [0-9a-f]{12}\.\.[0-9a-f]{12}( \(\d+ commits?\))?"
                      r"(; confirming with fresh runs|; a culprit is found, now checking "
                      r"another part of the range for a change the search stepped over)?"
                      r"(; (\d+ (s|min \d+ s|h \d+ min|d \d+ h)) so far"
                      r"(, about (\d+ (s|min \d+ s|h \d+ min|d \d+ h)) left)?)?$")
_made = {}


def made(env):
    """Repositories and testcases the module's cases share, made once."""
    if _made:
        return _made
    svc = env.svc
    culprit = harness.rand_index(3, 12)
    repo, shas = bench_repo(os.path.join(env.root, P + "regr"), 14, {culprit: 950.0},
                            owner=__name__)
    svc.register(P + "regr", repo, P + "regr-tc")
    flat, flat_shas = bench_repo(os.path.join(env.root, P + "flat"), 6, owner=__name__)
    svc.register(P + "flat", flat, P + "flat-tc")
    # Slow runs, so a job is still open when the test cancels it.
    svc.api.ok("POST", "/api/v1/testcases",
               {"name": P + "slow-tc", "build": "sh build.sh", "run": "sleep 1; ./bench",
                "kpi": "bench.score", "higher_is_better": True})
    job = svc.submit({"repo": P + "flat", "testcase": P + "slow-tc", "good": flat_shas[0],
                      "bad": flat_shas[-1]})
    svc.api.ok("DELETE", "/api/v1/jobs/%d" % job["id"], token=svc.submit_token)
    _made.update(shas=shas, culprit=culprit, flat_shas=flat_shas, cancelled=job["id"])
    return _made


def cli(svc, *args, token=None, server=None):
    """Runs the client with STATBISECT_SERVER/TOKEN set (token=False: no
    token at all); returns (exit status, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATBISECT_")}
    env["STATBISECT_SERVER"] = server or svc.url
    if token is not False:
        env["STATBISECT_TOKEN"] = token or svc.submit_token
    r = subprocess.run([BIN] + list(args), env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    # Decoded as is: a report's line ends must survive.
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def check_progress(err, job_id):
    """stderr of --wait: the submission line (if any), then progress
    lines, each different from the one before."""
    lines = [l for l in err.splitlines() if " submitted: " not in l]
    check(lines, "progress lines printed")
    for a, b in zip(lines, lines[1:]):
        check(a != b, "a progress line repeated: %r" % a)
    for line in lines:
        match = PROGRESS.match(line)
        check(match and int(match.group(1)) == job_id, "progress line %r" % line)
        # A running job has been claimed: its time so far, and once it has
        # runs, an estimate of the time left (issue 15).
        if match.group(2) == "running":
            check(match.group(7), "a running job's line gives its time: %r" % line)
            if int(match.group(4)) > 0:
                check(match.group(10), "a line with runs estimates the time left: %r"
                      % line)


@test
def regression_exits_1_and_prints_the_culprit(env):
    m = made(env)
    svc, shas, culprit = env.svc, m["shas"], m["culprit"]
    code, out, err = cli(svc, "submit", "--repo", P + "regr", "--testcase", P + "regr-tc",
                         "--good", shas[0], "--bad", "main", "--notify", "dev@example.org",
                         "--notify", "qa@example.org", "--wait", "--poll", "0.2")
    eq(code, 1, "exit status of a regression; stderr:\n" + err)
    first = err.splitlines()[0]
    match = re.match(r"^job (\d+) submitted: 15 candidates, (\S+)$", first)
    check(match, "submission line %r" % first)
    job_id = int(match.group(1))
    # The job page a browser opens, not the API (issue 15).
    eq(match.group(2), "%s/jobs/%d" % (svc.url, job_id), "job page URL")
    check_progress(err, job_id)
    job = svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=svc.read_token)
    eq((job["verdict"], job["culprit"], job["notify"]),
       ("regression", shas[culprit], ["dev@example.org", "qa@example.org"]), "the job")
    subject = "%s: change number %d" % (harness.AREAS[culprit % 5], culprit)
    lo, hi = job["change_ci95"]
    eq(out, 'job %d: regression: first bad commit %s "%s", %+.1f%% (95%% CI %+.1f%% to '
       '%+.1f%%) bench.score\n' % (job_id, shas[culprit], subject, job["change_pct"], lo, hi),
       "verdict line")

    code, out, err = cli(svc, "status", str(job_id), token=svc.read_token)
    eq((code, err), (0, ""), "status of a finished job")
    lines = out.splitlines()
    eq(lines[0], "job %d: done, regression" % job_id, "status headline")
    check("culprit:   %s" % shas[culprit] in lines, "status names the culprit: %r" % out)
    check("subject:   %s" % subject in lines, "status names the subject")
    check("tested:    15 candidates, %d commits tested, %d runs"
          % (job["commits_tested"], job["runs"]) in lines, "status counts")

    code, out, err = cli(svc, "status", str(job_id), "--json", token=svc.read_token)
    eq(code, 0, "status --json")
    # The report's delivery state moves on by itself; the rest is fixed.
    got = json.loads(out)
    got.pop("report", None)
    job = dict(job)
    job.pop("report", None)
    eq(got, job, "status --json is the job")

    code, out, err = cli(svc, "status", "--wait", str(job_id), token=svc.read_token)
    eq((code, out.split(":")[1]), (1, " regression"), "status --wait of a regression")

    code, out, err = cli(svc, "report", str(job_id), token=svc.read_token)
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job_id)
    eq((code, out, err), (0, text, ""), "report prints the message")

    code, out, err = cli(svc, "cancel", str(job_id))
    eq((code, out, err), (2, "", "statbisect: job %d is already done\n" % job_id),
       "cancel of a finished job")


@test
def flat_range_exits_0_and_json_parses(env):
    m = made(env)
    svc, flat = env.svc, m["flat_shas"]
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--wait", "--json",
                         "--poll", "0.2")
    eq(code, 0, "exit status of no change; stderr:\n" + err)
    job = json.loads(out)
    eq((job["state"], job["verdict"], job["culprit"], job["good"], job["bad"]),
       ("done", "no-change", None, flat[0], flat[-1]), "the final job JSON")
    api_job = svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"])
    # The report's delivery state moves on by itself; the rest is fixed.
    eq({k: v for k, v in job.items() if k != "report"},
       {k: v for k, v in api_job.items() if k != "report"}, "JSON as the API gives it")
    eq(err.splitlines()[-1], "job %d: no-change: bench.score did not change between "
       "%s and %s" % (job["id"], flat[0][:12], flat[-1][:12]),
       "verdict line on stderr when stdout is JSON")
    check_progress("\n".join(err.splitlines()[:-1]), job["id"])

    # Without --wait: the id on stdout (or the job as JSON), exit 0.
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "slow-tc",
                         "--good", flat[0], "--bad", flat[-1])
    eq(code, 0, "submit without waiting: " + err)
    job_id = int(out)
    code, out, err = cli(svc, "cancel", str(job_id))
    eq((code, out, err), (0, "job %d: cancelled\n" % job_id, ""), "cancel")
    eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job_id)["state"], "cancelled", "state")
    code, out, err = cli(svc, "status", str(job_id), "--wait", token=svc.read_token)
    eq((code, out), (2, "job %d: cancelled: cancelled on request\n" % job_id),
       "a cancelled job exits 2")
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "slow-tc",
                         "--good", flat[0], "--bad", flat[-1], "--json")
    created = json.loads(out)
    eq((code, created["state"], created["candidates"]), (0, "queued", 7),
       "submit --json prints the new job")
    code, out, err = cli(svc, "cancel", str(created["id"]), "--json")
    eq((code, json.loads(out)["state"]), (0, "cancelled"), "cancel --json")


@test
def unknown_revision_exits_2_with_the_servers_message(env):
    made(env)
    svc = env.svc
    before = env.cluster.psql("select count(*) from jobs")
    cases = [({"good": "cli-no-such-rev"}, 422), ({"repo": P + "nope"}, 404),
             ({"testcase": P + "nope"}, 404), ({"notify": ["not an address"]}, 400),
             ({"good": made(env)["flat_shas"][-1], "bad": made(env)["flat_shas"][0]}, 422)]
    for change, want in cases:
        body = {"repo": P + "flat", "testcase": P + "flat-tc",
                "good": made(env)["flat_shas"][0], "bad": "main"}
        body.update(change)
        status, reply = svc.api.call("POST", "/api/v1/jobs", body, token=svc.submit_token)
        eq(status, want, "API status for %r" % change)
        args = ["submit", "--repo", body["repo"], "--testcase", body["testcase"],
                "--good", body["good"], "--bad", body["bad"], "--wait"]
        for address in body.get("notify", []):
            args += ["--notify", address]
        code, out, err = cli(svc, *args)
        eq((code, out, err), (2, "", "statbisect: %s\n" % reply["error"]["message"]),
           "client for %r" % change)
    check("cli-no-such-rev" in cli(svc, "submit", "--repo", P + "flat", "--testcase",
                                   P + "flat-tc", "--good", "cli-no-such-rev",
                                   "--bad", "main")[2], "the message names the revision")
    eq(env.cluster.psql("select count(*) from jobs"), before, "no job was created")
    code, out, err = cli(svc, "status", "99999999", token=svc.read_token)
    eq((code, out, err), (2, "", "statbisect: no job 99999999\n"), "unknown job")
    code, out, err = cli(svc, "report", "99999999", token=svc.read_token)
    eq((code, err), (2, "statbisect: no job 99999999\n"), "report of an unknown job")


@test
def missing_or_bad_token_and_bad_usage_exit_2(env):
    made(env)
    svc = env.svc
    submit = ["submit", "--repo", P + "flat", "--testcase", P + "flat-tc", "--good",
              made(env)["flat_shas"][0], "--bad", "main"]
    eq(cli(svc, *submit, token=False),
       (2, "", "statbisect: no token: pass --token TOKEN or set STATBISECT_TOKEN\n"),
       "no token")
    eq(cli(svc, "status", "1", token=False),
       (2, "", "statbisect: no token: pass --token TOKEN or set STATBISECT_TOKEN\n"),
       "no token for status")
    eq(cli(svc, *submit, token="sb_not_a_token"),
       (2, "", "statbisect: token refused: it is unknown or revoked\n"),
       "unknown token")
    eq(cli(svc, *submit, token=svc.read_token),
       (2, "", "statbisect: this needs the submit role; the token has read\n"),
       "read token submitting")
    code, out, err = cli(svc, "status", str(made(env)["cancelled"]), "--token",
                         svc.read_token, token=False)
    eq((code, out.splitlines()[0], err), (0, "job %d: cancelled" % made(env)["cancelled"], ""),
       "--token instead of the environment")
    eq(cli(svc, *(submit + ["--token", "two words"]))[:2], (2, ""), "token with a space")

    port = harness.free_port()
    code, out, err = cli(svc, "status", "1", server="http://127.0.0.1:%d" % port)
    eq((code, out), (2, ""), "unreachable server")
    check(err.startswith("statbisect: cannot reach http://127.0.0.1:%d: " % port),
          "network error message: %r" % err)
    code, out, err = cli(svc, "status", "1", server="ftp://127.0.0.1/")
    eq((code, err.startswith("statbisect: the server URL must start with http://")),
       (2, True), "not an HTTP URL: %r" % err)

    usage = [([], None), (["frobnicate"], "statbisect: unknown command 'frobnicate': "
                                          "submit, retest, status, report or cancel (see --help)\n"),
             (["status"], "statbisect: status takes one job id\n"),
             (["status", "1", "2"], "statbisect: status takes one job id\n"),
             (["status", "abc"], "statbisect: 'abc' is not a job id\n"),
             (["status", "0"], "statbisect: '0' is not a job id\n"),
             # One id parser (lib/id) for the server and the command line:
             # an id has one spelling.
             (["status", "01"], "statbisect: '01' is not a job id\n"),
             (["cancel", "-5"], "statbisect: unknown option '-5' (see --help)\n"),
             (["report", "1", "--wait"], "statbisect: --wait is for submit, retest and status\n"),
             (["status", "1", "--poll", "0"],
              "statbisect: --poll takes seconds from 0.1 to 3600, not '0'\n"),
             (["status", "1", "--poll", "2"], "statbisect: --poll needs --wait\n"),
             (["status", "1", "--repo", "x"],
              "statbisect: --repo, --testcase, --good, --bad, --notify, --runs-min, "
              "--runs-max, --group and --machines are for submit only\n"),
             (["status", "1", "--runs-max", "5"],
              "statbisect: --repo, --testcase, --good, --bad, --notify, --runs-min, "
              "--runs-max, --group and --machines are for submit only\n"),
             (submit[:-2], "statbisect: submit needs --repo, --testcase, --good and --bad\n"),
             (submit + ["extra"], "statbisect: submit takes no argument 'extra'\n"),
             (submit + ["--frob"], "statbisect: unknown option '--frob' (see --help)\n"),
             (["status", "1", "--group", "b"],
              "statbisect: --repo, --testcase, --good, --bad, --notify, --runs-min, "
              "--runs-max, --group and --machines are for submit only\n"),
             (["status", "1", "--machines", "2"],
              "statbisect: --repo, --testcase, --good, --bad, --notify, --runs-min, "
              "--runs-max, --group and --machines are for submit only\n"),
             (submit + ["--machines", "two"],
              "statbisect: --machines takes a whole number of machines, not 'two'\n"),
             (["status", "1", "--server"], "statbisect: --server needs a value "
                                           "(see --help)\n")]
    for args, message in usage:
        code, out, err = cli(svc, *args)
        eq((code, out), (2, ""), "usage error %r" % args)
        if message is None:
            check(err.startswith("usage: statbisect submit"), "usage on stderr: %r" % err)
        else:
            eq(err, message, "message for %r" % args)
    code, out, err = cli(svc, "--help", token=False)
    eq((code, err), (0, ""), "--help")
    check(out.startswith("usage: statbisect submit") and "STATBISECT_TOKEN" in out,
          "--help text: %r" % out)


@test
def submit_names_the_machine_group(env):
    m = made(env)
    svc, flat = env.svc, m["flat_shas"]
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--group", "nowhere-yet")
    submitted = re.match(r"job (\d+) submitted", err)
    check(code == 0 and submitted, "submit --group: %d %r" % (code, err))
    job = int(submitted.group(1))
    try:
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % job,
                      token=svc.read_token)["group"], "nowhere-yet", "the job's group")
    finally:
        svc.api.ok("DELETE", "/api/v1/jobs/%d" % job)
    # Several machines at once (lib/spread.h): the job says so.
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--group", "nowhere-yet",
                         "--machines", "3")
    submitted = re.match(r"job (\d+) submitted", err)
    check(code == 0 and submitted, "submit --machines: %d %r" % (code, err))
    job = int(submitted.group(1))
    try:
        spread = svc.api.ok("GET", "/api/v1/jobs/%d" % job, token=svc.read_token)["spread"]
        eq((spread["machines"], spread["active"], spread["joined"]), (3, True, []),
           "the job's spread before any machine joined")
    finally:
        svc.api.ok("DELETE", "/api/v1/jobs/%d" % job)
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--machines", "9")
    check(code != 0 and "machines" in err, "9 machines refused: %d %r" % (code, err))
    # A name the server refuses: its message, nothing queued.
    before = svc.api.ok("GET", "/api/v1/jobs", token=svc.read_token)["total"]
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--group", "a\tb")
    check(code != 0 and "group" in err, "a bad group refused: %d %r" % (code, err))
    eq(svc.api.ok("GET", "/api/v1/jobs", token=svc.read_token)["total"], before,
       "jobs after the refused submission")


NUMBER = re.compile(r'(?<![\w."])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w"])')


@test
def submit_takes_runs_bounds_and_json_prints_shortest_decimals(env):
    m = made(env)
    svc, flat = env.svc, m["flat_shas"]
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--runs-min", "4",
                         "--runs-max", "6", "--wait", "--json", "--poll", "0.2")
    job = json.loads(out)
    # So few runs on a flat range may leave the job inconclusive (exit 2).
    eq((code, job["state"]), (0 if job["verdict"] == "no-change" else 2, "done"),
       "the job ended; stderr:\n" + err)
    eq((job["runs_min"], job["runs_max"]), (4, 6), "the bounds reach the job")
    # The endpoints get runs_min before their first test; a commit inside
    # the range may be probed with fewer (step_runs_min); none passes
    # runs_max.
    runs = {c["commit"]: len(c["runs"]) for c in job["commits"]}
    check(runs.get(flat[0], 0) >= 4 and runs.get(flat[-1], 0) >= 4,
          "the endpoints ran at least 4 times: %r" % runs)
    check(all(n <= 6 for n in runs.values()), "no commit ran over 6 times: %r" % runs)
    # Every decimal as the shortest text that reads back as the same
    # double: what Python's repr gives.
    decimals = [t for t in NUMBER.findall(out) if "." in t or "e" in t.lower()]
    check(decimals, "the job has decimals")
    for text in decimals:
        eq(text, repr(float(text)), "shortest round-trip decimal")
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--runs-min", "x")
    eq((code, out, err), (2, "", "statbisect: --runs-min takes a whole number of runs, "
                          "not 'x'\n"), "a bad --runs-min")
    code, out, err = cli(svc, "submit", "--repo", P + "flat", "--testcase", P + "flat-tc",
                         "--good", flat[0], "--bad", flat[-1], "--runs-min", "9",
                         "--runs-max", "3")
    eq(code, 2, "the server refuses runs_min above runs_max: " + err)
    check(err.startswith("statbisect: ") and "runs" in err, "its message: %r" % err)
