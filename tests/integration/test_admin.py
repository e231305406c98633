"""Editing and deleting repositories and testcases (issue 15): GET, PATCH
and DELETE of /api/v1/repos/{name} and /api/v1/testcases/{name}.  A
deletion is soft: finished jobs keep their repository and testcase names,
a deleted name is gone from the lists and from every path that starts new
work (jobs, patch jobs, watches, inbox rules, the forms' pick lists), it
is refused while an open job, a watch or an inbox rule uses it, and the
name can be registered again."""
import html
import os
import re

import harness
from harness import bench_repo, check, eq, test
from test_patches import make_series
from test_web import Browser, error_of, field

P = "adm-"


def code(reply):
    return reply.get("error", {}).get("code") if isinstance(reply, dict) else reply


def message(reply):
    return reply.get("error", {}).get("message") if isinstance(reply, dict) else reply


def fresh(env, name, commits=4, **tc):
    """A repository `name` and testcase `name`-tc, registered; the Repo
    and its commits."""
    repo, shas = bench_repo(os.path.join(env.root, name), commits, owner=__name__ + name)
    env.svc.register(name, repo, name + "-tc", **tc)
    return repo, shas


@test
def admin_repo_get_patch_and_refusals(env):
    svc = env.svc
    repo, _ = fresh(env, P + "edit")
    got = svc.api.ok("GET", "/api/v1/repos/%sedit" % P, token=svc.read_token)
    eq((got["name"], got["url"], got["web_url"]),
       (P + "edit", repo.path, "https://git.example.org/c/{sha}"), "GET one")
    check(got["created_at"].endswith("Z"), "created_at: %r" % got)
    eq(svc.api.call("GET", "/api/v1/repos/%snone" % P, token=svc.read_token)[0], 404,
       "GET unknown")
    status, reply = svc.api.call("PATCH", "/api/v1/repos/%sedit" % P,
                                 {"web_url": "https://cgit.example.org/x/commit/?id={sha}"})
    eq((status, reply.get("web_url")),
       (200, "https://cgit.example.org/x/commit/?id={sha}"), "web_url changed: %r" % reply)
    eq(svc.api.ok("GET", "/api/v1/repos/%sedit" % P)["web_url"],
       "https://cgit.example.org/x/commit/?id={sha}", "kept")
    # The create's rules and words.
    status, reply = svc.api.call("PATCH", "/api/v1/repos/%sedit" % P, {"web_url": "nope"})
    eq((status, code(reply), message(reply)),
       (400, "invalid_field", "'web_url' must be a link template containing {sha}"),
       "bad web_url")
    status, reply = svc.api.call("PATCH", "/api/v1/repos/%sedit" % P, {"url": ""})
    eq((status, message(reply)), (400, "'url' must be a git URL or path"), "bad url")
    status, reply = svc.api.call("PATCH", "/api/v1/repos/%sedit" % P,
                                 {"url": "/nonexistent/repo"})
    eq((status, code(reply)), (422, "unreachable_repo"), "unreachable url")
    status, reply = svc.api.call("PATCH", "/api/v1/repos/%sedit" % P, {"name": "other"})
    eq((status, code(reply)), (400, "invalid_field"), "name cannot change")
    status, reply = svc.api.call("PATCH", "/api/v1/repos/%sedit" % P, {"web_url": None})
    eq((status, reply.get("web_url", "x")), (200, None), "web_url cleared")
    eq(svc.api.call("PATCH", "/api/v1/repos/%snone" % P, {"web_url": None})[0], 404,
       "PATCH unknown")
    eq(svc.api.call("PATCH", "/api/v1/repos/%sedit" % P, {"web_url": None},
                    token=svc.submit_token)[0], 403, "PATCH is the admin's")
    eq(svc.api.call("DELETE", "/api/v1/repos/%sedit" % P, token=svc.submit_token)[0], 403,
       "DELETE is the admin's")


@test
def admin_testcase_get_and_patch_with_the_create_rules(env):
    svc = env.svc
    fresh(env, P + "tc")
    path = "/api/v1/testcases/%stc-tc" % P
    got = svc.api.ok("GET", path, token=svc.read_token)
    eq((got["name"], got["kpi"], got["params"], got["monitors"], got["notify"],
        got["notify_author"]),
       (P + "tc-tc", "bench.score", {"test": "score", "nr_task": 1}, [], [], False), "GET one")
    eq(svc.api.call("GET", "/api/v1/testcases/%snone" % P)[0], 404, "GET unknown")
    got = svc.api.ok("PATCH", path, {"runs_max": 12, "monitors": ["time"],
                                     "notify": ["perf@example.org"], "notify_author": True})
    eq((got["runs_min"], got["runs_max"], got["monitors"], got["notify"], got["notify_author"],
        got["kpi"], got["params"]),
       (5, 12, ["time"], ["perf@example.org"], True, "bench.score",
        {"test": "score", "nr_task": 1}), "changed only what was sent")
    eq(svc.api.ok("GET", path)["runs_max"], 12, "kept")
    for body, field_message in (
            ({"runs_max": 3}, "'runs_max' must not be below 'runs_min'"),
            ({"kpi": "a b"}, "'kpi' must be a metric name without spaces"),
            ({"run": ""}, "'build' and 'run' must be shell commands ('run' not empty)"),
            ({"monitors": ["top"]},
             "'monitors' must be a list of: vmstat, proc-vmstat, perf-stat, time"),
            ({"higher_is_better": "yes"},
             "field 'higher_is_better' is required and must be true or false")):
        status, reply = svc.api.call("PATCH", path, body)
        eq((status, code(reply), message(reply)), (400, "invalid_field", field_message),
           "refused %r" % body)
    status, reply = svc.api.call("PATCH", path, {"name": "renamed"})
    eq((status, code(reply)), (400, "invalid_field"), "name cannot change")
    eq(svc.api.ok("GET", path)["runs_max"], 12, "refusals changed nothing")
    eq(svc.api.call("PATCH", "/api/v1/testcases/%snone" % P, {"runs_max": 9})[0], 404,
       "PATCH unknown")


@test
def admin_delete_is_refused_while_an_open_job_uses_it_and_keeps_finished_jobs(env):
    svc = env.svc
    _, shas = fresh(env, P + "busy", commits=10)
    job = svc.submit({"repo": P + "busy", "testcase": P + "busy-tc", "good": shas[0],
                      "bad": shas[-1]})
    for path in ("/api/v1/repos/%sbusy" % P, "/api/v1/testcases/%sbusy-tc" % P):
        status, reply = svc.api.call("DELETE", path)
        eq((status, code(reply)), (409, "in_use"), "%s while job open: %r" % (path, reply))
    # The open job reads what it measures from its testcase as it runs:
    # that cannot change under it; whom the report is mailed to can.
    path = "/api/v1/testcases/%sbusy-tc" % P
    before = svc.api.ok("GET", path)
    for body in ({"run": "./bench --fast"}, {"runs_max": 7}, {"kpi": "other"},
                 {"params": {"n": 2}}, {"min_change_pct": 5.0}):
        status, reply = svc.api.call("PATCH", path, body)
        eq((status, code(reply)), (409, "conflict"), "PATCH %r while job open" % body)
    eq(svc.api.ok("GET", path), before, "the refused PATCHes changed nothing")
    eq(svc.api.ok("PATCH", path, {"notify": ["ops@example.org"]})["notify"],
       ["ops@example.org"], "notify changes while a job runs")
    done = svc.wait(job["id"])
    eq(svc.api.ok("PATCH", path, {"runs_max": 7})["runs_max"], 7,
       "the runs limit changes once the job ended")
    for path in ("/api/v1/repos/%sbusy" % P, "/api/v1/testcases/%sbusy-tc" % P):
        status, _ = svc.api.call("DELETE", path)
        eq(status, 200, "%s deleted once the job ended" % path)
        eq(svc.api.call("GET", path)[0], 404, "%s gone" % path)
        eq(svc.api.call("DELETE", path)[0], 404, "%s deleted twice" % path)
    after = svc.api.ok("GET", "/api/v1/jobs/%d" % job["id"], token=svc.read_token)
    eq((after["repo"], after["testcase"], after["state"], after.get("verdict")),
       (P + "busy", P + "busy-tc", done["state"], done.get("verdict")),
       "the finished job still reads")
    status, report = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                  token=svc.read_token)
    check(status in (200, 404), "report still answers: %r" % status)
    listed = svc.api.ok("GET", "/api/v1/jobs?repo=%sbusy" % P, token=svc.read_token)
    eq([j["id"] for j in listed["jobs"]], [job["id"]], "listed by its repository still")
    b = Browser(svc.url).sign_in(svc.read_token)
    status, _, page = b.get("/jobs/%d" % job["id"])
    eq(status, 200, "the job page still reads")
    check(P + "busy" in page and P + "busy-tc" in page, "with both names")
    status, reply = svc.api.call("POST", "/api/v1/jobs/%d/rerun" % job["id"], {},
                                 token=svc.submit_token)
    eq((status, code(reply)), (404, "unknown_repo"), "no re-run on a deleted repository")
    status, reply = svc.api.call("POST", "/api/v1/repos/%sbusy/push" % P, {},
                                 token=svc.submit_token)
    eq((status, code(reply)), (404, "unknown_repo"), "the push hook forgets it")


@test
def admin_deleted_names_start_no_new_work_and_can_be_registered_again(env):
    svc = env.svc
    repo, shas = fresh(env, P + "gone")
    mbox = make_series(repo)
    eq(svc.api.call("DELETE", "/api/v1/repos/%sgone" % P)[0], 200, "repo deleted")
    eq(svc.api.call("DELETE", "/api/v1/testcases/%sgone-tc" % P)[0], 200, "testcase deleted")
    repos = [r["name"] for r in svc.api.ok("GET", "/api/v1/repos")["repos"]]
    tcs = [t["name"] for t in svc.api.ok("GET", "/api/v1/testcases")["testcases"]]
    check(P + "gone" not in repos and P + "gone-tc" not in tcs, "gone from the lists")
    status, reply = svc.api.call("POST", "/api/v1/jobs", {
        "repo": P + "gone", "testcase": P + "gone-tc", "good": shas[0], "bad": shas[-1]},
        token=svc.submit_token)
    eq((status, code(reply)), (404, "unknown_repo"), "no job on a deleted repository")
    status, reply = svc.api.call("POST", "/api/v1/jobs", {
        "kind": "patch", "repo": P + "gone", "testcase": P + "gone-tc", "base": "main",
        "mbox": mbox}, token=svc.submit_token)
    eq((status, code(reply)), (404, "unknown_repo"), "no patch job on a deleted repository")
    status, reply = svc.api.call("POST", "/api/v1/watches", {
        "repo": P + "gone", "branch": "main", "testcases": [P + "gone-tc"]})
    eq((status, code(reply)), (404, "unknown_repo"), "no watch of a deleted repository")
    status, reply = svc.api.call("POST", "/api/v1/inbox/rules", {
        "name": "adm-gone", "repo": P + "gone", "testcase": P + "gone-tc", "base": "main"})
    eq((status, code(reply)), (404, "unknown_repo"), "no inbox rule of a deleted repository")
    # Only the testcase is deleted: each path names it.
    fresh(env, P + "half")
    eq(svc.api.call("DELETE", "/api/v1/testcases/%shalf-tc" % P)[0], 200, "tc deleted")
    status, reply = svc.api.call("POST", "/api/v1/jobs", {
        "repo": P + "half", "testcase": P + "half-tc", "good": "main~1", "bad": "main"},
        token=svc.submit_token)
    eq((status, code(reply)), (404, "unknown_testcase"), "no job with a deleted testcase")
    status, reply = svc.api.call("POST", "/api/v1/jobs", {
        "kind": "patch", "repo": P + "half", "testcase": P + "half-tc", "base": "main",
        "mbox": mbox}, token=svc.submit_token)
    eq((status, code(reply)), (404, "unknown_testcase"), "no patch job, deleted testcase")
    status, reply = svc.api.call("POST", "/api/v1/watches", {
        "repo": P + "half", "branch": "main", "testcases": [P + "half-tc"]})
    eq((status, code(reply)), (404, "unknown_testcase"), "no watch of a deleted testcase")
    # The names are free again.
    svc.register(P + "gone", repo, P + "gone-tc", runs_max=7)
    eq(svc.api.ok("GET", "/api/v1/testcases/%sgone-tc" % P)["runs_max"], 7, "re-created")
    eq(svc.api.ok("GET", "/api/v1/repos/%sgone" % P)["name"], P + "gone", "repo re-created")
    eq([r["name"] for r in svc.api.ok("GET", "/api/v1/repos")["repos"]].count(P + "gone"), 1,
       "listed once")


@test
def admin_delete_is_refused_while_a_watch_or_inbox_rule_uses_it(env):
    svc = env.svc
    fresh(env, P + "watched")
    watch = svc.api.ok("POST", "/api/v1/watches", {
        "repo": P + "watched", "branch": "main", "testcases": [P + "watched-tc"],
        "paused": True})
    for path in ("/api/v1/repos/%swatched" % P, "/api/v1/testcases/%swatched-tc" % P):
        status, reply = svc.api.call("DELETE", path)
        eq((status, code(reply)), (409, "in_use"), "%s while watched: %r" % (path, reply))
    svc.api.ok("DELETE", "/api/v1/watches/%d" % watch["id"], expect=(200, 204))
    rule = svc.api.ok("POST", "/api/v1/inbox/rules", {
        "name": "adm-watched", "repo": P + "watched", "testcase": P + "watched-tc",
        "base": "main"})
    status, reply = svc.api.call("DELETE", "/api/v1/repos/%swatched" % P)
    eq((status, code(reply)), (409, "in_use"), "while an inbox rule uses it")
    svc.api.ok("DELETE", "/api/v1/inbox/rules/%d" % rule["id"], expect=(200, 204))
    eq(svc.api.call("DELETE", "/api/v1/repos/%swatched" % P)[0], 200, "then deleted")


# The admin pages, as a browser without JavaScript uses them.

def checked(page, name):
    m = re.search(r'<input[^>]*name="%s"[^>]*>' % re.escape(name), page)
    check(m is not None, "no input %r in the page" % name)
    return " checked" in m.group(0)


def selected(page, name):
    m = re.search(r'<select[^>]*name="%s"[^>]*>(.*?)</select>' % re.escape(name), page, re.S)
    check(m is not None, "no select %r in the page" % name)
    return re.search(r'<option value="([^"]*)" selected>', m.group(1)).group(1) \
        if ' selected>' in m.group(1) else None


def textarea(page, name):
    m = re.search(r'<textarea[^>]*name="%s"[^>]*>([^<]*)</textarea>' % re.escape(name), page)
    check(m is not None, "no textarea %r in the page" % name)
    return html.unescape(m.group(1))


@test
def admin_testcase_form_takes_params_monitors_notify_and_keeps_every_value(env):
    svc = env.svc
    b = Browser(svc.url).sign_in(harness.ADMIN)
    status, _, page = b.get("/admin/testcases")
    eq(status, 200, "testcases page")
    eq((textarea(page, "params"), checked(page, "monitor_vmstat"),
        checked(page, "monitor_proc-vmstat"), checked(page, "monitor_perf-stat"),
        checked(page, "monitor_time"), field(page, "notify"), checked(page, "notify_author"),
        selected(page, "higher_is_better")),
       ("", False, False, False, False, "", False, None), "the new fields, empty")
    check("key=value" in page, "the label says how params are written")
    form = {"csrf": b.csrf, "name": P + "form", "build": "make", "run": "./bench",
            "kpi": "a b", "higher_is_better": "false", "min_change_pct": "2",
            "params": "test=score\r\nnr_task = 4\r\n\r\nmode=fast", "monitor_vmstat": "1",
            "monitor_time": "1", "notify": "perf@example.org, lists@example.org  dev@example.org",
            "notify_author": "1"}
    status, _, page = b.post("/admin/testcases", form)
    eq(status, 400, "kpi with a space")
    eq(error_of(page, "kpi"), "\u201cKPI metric\u201d must be a metric name without spaces",
       "error next to kpi")
    eq((selected(page, "higher_is_better"), textarea(page, "params"),
        checked(page, "monitor_vmstat"), checked(page, "monitor_proc-vmstat"),
        checked(page, "monitor_time"), field(page, "notify"), checked(page, "notify_author"),
        field(page, "min_change_pct")),
       ("false", form["params"].strip(), True, False, True, form["notify"],
        True, "2"), "every value kept after an error")
    status, _, page = b.post("/admin/testcases", dict(form, kpi="k", params="nr_task\nx=1",
                                                      notify="not-an-address"))
    eq(status, 400, "a params line without =")
    eq(error_of(page, "params"), "\u201cParameters\u201d line 1 must be key=value",
       "error next to params, in the form's words")
    check(error_of(page, "notify"), "error next to notify: %r" % error_of(page, "notify"))
    status, hdrs, _ = b.post("/admin/testcases", dict(form, kpi="k"))
    eq((status, hdrs.get("Location")), (303, "/admin/testcases"), "created")
    t = svc.api.ok("GET", "/api/v1/testcases/%sform" % P)
    eq((t["higher_is_better"], t["params"], t["monitors"], t["notify"], t["notify_author"]),
       (False, {"test": "score", "nr_task": 4, "mode": "fast"}, ["vmstat", "time"],
        ["perf@example.org", "lists@example.org", "dev@example.org"], True), "stored")


@test
def admin_pages_edit_a_repository_and_a_testcase(env):
    svc = env.svc
    repo, _ = fresh(env, P + "wedit")
    svc.api.ok("PATCH", "/api/v1/testcases/%swedit-tc" % P,
               {"monitors": ["perf-stat"], "notify": ["a@example.org", "b@example.org"],
                "notify_author": True, "higher_is_better": False, "runs_max": 20})
    b = Browser(svc.url).sign_in(harness.ADMIN)
    _, _, page = b.get("/admin/repos")
    check('href="/admin/repos/%swedit/edit"' % P in page, "edit link on the list")
    check('href="/admin/repos/%swedit/delete"' % P in page, "delete link on the list")
    status, _, page = b.get("/admin/repos/%swedit/edit" % P)
    eq((status, field(page, "url"), field(page, "web_url")),
       (200, repo.path, "https://git.example.org/c/{sha}"), "repository edit page")
    status, _, page = b.post("/admin/repos/%swedit/edit" % P,
                             {"csrf": b.csrf, "url": repo.path, "web_url": "no-sha"})
    eq(status, 400, "bad commit link")
    eq((error_of(page, "web_url"), field(page, "web_url")),
       ("\u201cCommit link\u201d must be a link template containing {sha}", "no-sha"),
       "error next to the field, value kept")
    eq(b.post("/admin/repos/%swedit/edit" % P, {"url": repo.path, "web_url": ""})[0], 403,
       "no CSRF token")
    status, hdrs, _ = b.post("/admin/repos/%swedit/edit" % P,
                             {"csrf": b.csrf, "url": repo.path, "web_url": ""})
    eq((status, hdrs.get("Location")), (303, "/admin/repos"), "saved")
    eq(svc.api.ok("GET", "/api/v1/repos/%swedit" % P)["web_url"], None, "link cleared")
    eq(b.get("/admin/repos/%snone/edit" % P)[0], 404, "unknown repository")

    _, _, page = b.get("/admin/testcases")
    check('href="/admin/testcases/%swedit-tc/edit"' % P in page, "edit link on the list")
    status, _, page = b.get("/admin/testcases/%swedit-tc/edit" % P)
    eq((status, field(page, "run"), field(page, "kpi"), selected(page, "higher_is_better"),
        field(page, "runs_max"), textarea(page, "params"), checked(page, "monitor_perf-stat"),
        checked(page, "monitor_time"), field(page, "notify"), checked(page, "notify_author")),
       (200, "./bench", "bench.score", "false", "20", "test=score\nnr_task=1",
        True, False, "a@example.org, b@example.org", True), "testcase edit page, filled in")
    form = {"csrf": b.csrf, "build": "sh build.sh", "run": "./bench", "kpi": "bench.score",
            "higher_is_better": "false", "min_change_pct": "1", "runs_min": "30",
            "runs_max": "20", "timeout_s": "", "params": "test=score\nnr_task=2",
            "monitor_time": "1", "notify": "a@example.org", "notify_author": ""}
    status, _, page = b.post("/admin/testcases/%swedit-tc/edit" % P, form)
    eq(status, 400, "runs_max below runs_min")
    eq(error_of(page, "runs_max"), "\u201cMost runs\u201d must not be below \u201cFewest runs\u201d",
       "error in the form's words")
    eq((selected(page, "higher_is_better"), field(page, "runs_min"), textarea(page, "params"),
        checked(page, "monitor_time"), checked(page, "monitor_perf-stat"),
        checked(page, "notify_author")),
       ("false", "30", "test=score\nnr_task=2", True, False, False), "values kept")
    eq(svc.api.ok("GET", "/api/v1/testcases/%swedit-tc" % P)["runs_max"], 20, "unchanged")
    status, hdrs, _ = b.post("/admin/testcases/%swedit-tc/edit" % P, dict(form, runs_min="4"))
    eq((status, hdrs.get("Location")), (303, "/admin/testcases"), "saved")
    t = svc.api.ok("GET", "/api/v1/testcases/%swedit-tc" % P)
    eq((t["runs_min"], t["runs_max"], t["timeout_s"], t["params"], t["monitors"], t["notify"],
        t["notify_author"]),
       (4, 20, 600, {"test": "score", "nr_task": 2}, ["time"], ["a@example.org"], False),
       "stored; an emptied number is the default again")


@test
def admin_pages_delete_after_a_confirmation_page(env):
    svc = env.svc
    fresh(env, P + "wdel")
    b = Browser(svc.url).sign_in(harness.ADMIN)
    watch = svc.api.ok("POST", "/api/v1/watches", {
        "repo": P + "wdel", "branch": "main", "testcases": [P + "wdel-tc"], "paused": True})
    for kind, name in (("repos", P + "wdel"), ("testcases", P + "wdel-tc")):
        status, _, page = b.get("/admin/%s/%s/delete" % (kind, name))
        eq(status, 200, "%s confirmation page" % kind)
        check('<form class="card" method="post" action="/admin/%s/%s/delete">' % (kind, name)
              in page, "the page's form POSTs")
        eq(field(page, "csrf"), b.csrf, "with the CSRF token")
        check("<script" not in page.split("</h1>")[1], "no script needed")
        eq(b.post("/admin/%s/%s/delete" % (kind, name), {"csrf": "0" * 64})[0], 403,
           "wrong CSRF token")
        status, _, page = b.post("/admin/%s/%s/delete" % (kind, name), {"csrf": b.csrf})
        eq(status, 409, "%s in use by the watch" % kind)
        check("used by an open job, a watch or an inbox rule" in html.unescape(page),
              "says why")
    svc.api.ok("DELETE", "/api/v1/watches/%d" % watch["id"], expect=(200, 204))
    for kind, name in (("repos", P + "wdel"), ("testcases", P + "wdel-tc")):
        status, hdrs, _ = b.post("/admin/%s/%s/delete" % (kind, name), {"csrf": b.csrf})
        eq((status, hdrs.get("Location")), (303, "/admin/" + kind), "%s deleted" % kind)
        _, _, page = b.get("/admin/" + kind)
        check('<td data-label="Name">%s</td>' % name not in page, "gone from the list")
        eq(b.get("/admin/%s/%s/delete" % (kind, name))[0], 404, "no page for it")
    # The pick lists of the job, patch and dashboard forms forget it too.
    for path in ("/jobs/new", "/jobs/new-patch", "/"):
        status, _, page = b.get(path)
        eq(status, 200, path)
        check('<option value="%swdel"' % P not in page and
              '<option value="%swdel-tc"' % P not in page, "%s offers no deleted name" % path)


@test
def admin_testcase_form_keeps_the_better_is_select_after_an_error(env):
    b = Browser(env.svc.url).sign_in(harness.ADMIN)
    status, _, page = b.post("/admin/testcases", {
        "csrf": b.csrf, "name": P + "lower", "build": "", "run": "./bench", "kpi": "a b",
        "higher_is_better": "false"})
    eq(status, 400, "kpi with a space")
    eq(selected(page, "higher_is_better"), "false", "'lower' still chosen")
