"""The web UI over HTTP, as a browser sees it without JavaScript: sign-in
and session cookies, CSRF, escaping of hostile repository and user text,
the submit form's errors, the job page with its plots, the downloads,
cancel and re-run, and the admin pages."""
import csv
import html
import io
import json
import os
import re
import statistics
import urllib.error
import urllib.parse
import urllib.request

import harness
from harness import Service, bench_repo, check, eq, test

HOSTILE = "<script>alert(1)</script>"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Browser:
    """An HTTP client that keeps cookies by hand and never follows
    redirects, so each answer can be checked as it is."""

    def __init__(self, url):
        self.url = url
        self.cookies = {}
        self.opener = urllib.request.build_opener(NoRedirect)

    def request(self, method, path, form=None, raw=None, headers=None):
        data = raw if raw is not None else (
            urllib.parse.urlencode(form).encode() if form is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/x-www-form-urlencoded")
        if self.cookies:
            req.add_header("Cookie", "; ".join("%s=%s" % kv for kv in self.cookies.items()))
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            r = self.opener.open(req, timeout=60)
            status, hdrs, body = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, body = e.code, e.headers, e.read()
        for c in hdrs.get_all("Set-Cookie") or []:
            name, _, rest = c.partition("=")
            value = rest.split(";")[0]
            if "Max-Age=0" in c:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return status, hdrs, body.decode("utf-8", "replace")

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, form):
        return self.request("POST", path, form=form)

    def sign_in(self, token):
        status, _, page = self.get("/signin")
        eq(status, 200, "sign-in page")
        status, hdrs, _ = self.post("/signin", {"csrf": field(page, "csrf"), "token": token,
                                                "next": "/"})
        eq((status, hdrs.get("Location")), (303, "/"), "signed in")
        _, _, page = self.get("/")
        self.csrf = field(page, "csrf")
        return self


def field(page, name):
    """The value of the hidden or text input `name` (first one)."""
    m = re.search(r'<input[^>]*name="%s"[^>]*value="([^"]*)"' % re.escape(name), page)
    if m is None:
        m = re.search(r'<input[^>]*value="([^"]*)"[^>]*name="%s"' % re.escape(name), page)
    check(m is not None, "no input %r in the page" % name)
    return html.unescape(m.group(1))


def error_of(page, name):
    m = re.search(r'<p class="error" id="%s-error">([^<]*)</p>' % re.escape(name), page)
    return html.unescape(m.group(1)) if m else None


def jobs_count(env):
    return int(env.cluster.psql("select count(*) from jobs"))


_setup = {}


def web_repo(env):
    """One repository for these tests: a regression planted at a commit
    whose subject is hostile HTML, by an author whose name has quotes and
    an ampersand.  Registered once as web-hostile / web-hostile-tc."""
    if "shas" in _setup:
        return _setup["repo"], _setup["shas"]
    repo = harness.Repo(os.path.join(env.root, "web-hostile"))
    repo.write("bench.c", harness.BENCH_C)
    repo.write("build.sh", harness.BUILD_SH)
    repo.write("mean", "1000.0\n")
    shas = [repo.commit("bench: add the benchmark")]
    for i in range(1, 9):
        repo.write("f.txt", "change %d\n" % i)
        if i == 5:
            repo.write("mean", "950.0\n")
            repo.env["GIT_AUTHOR_NAME"] = "Eve \"&\" O'Hara"
            shas.append(repo.commit(HOSTILE + " & 'quotes' \"too\""))
            repo.env["GIT_AUTHOR_NAME"] = "Ada Author"
        else:
            shas.append(repo.commit("web: change %d" % i))
    env.svc.register("web-hostile", repo, "web-hostile-tc")
    _setup.update(repo=repo, shas=shas)
    return repo, shas


@test
def web_sign_in_sets_an_httponly_strict_session_cookie(env):
    svc = env.svc
    b = Browser(svc.url)
    status, hdrs, page = b.get("/signin")
    eq(status, 200, "sign-in page")
    pre = [c for c in hdrs.get_all("Set-Cookie") if c.startswith("sb_signin=")]
    eq(len(pre), 1, "pre-session cookie")
    for attr in ("HttpOnly", "SameSite=Strict", "Path=/signin"):
        check(attr in pre[0], "sign-in cookie has %s: %r" % (attr, pre[0]))
    csrf = field(page, "csrf")
    eq(csrf, b.cookies["sb_signin"], "form token is the cookie's (double submit)")
    check('<label for="token">' in page, "token field has a label")

    # A wrong or missing form token: refused, no session.
    status, hdrs, _ = b.post("/signin", {"csrf": "0" * 64, "token": svc.read_token})
    eq(status, 403, "sign-in with a wrong CSRF token")
    status, _, _ = b.post("/signin", {"token": svc.read_token})
    eq(status, 403, "sign-in without a CSRF token")
    check("sb_session" not in b.cookies, "no session after refusals")

    # Unknown and worker tokens: the form again, with the error, 401.
    for token in ("sb_nope", svc.worker_token, ""):
        status, _, page = b.get("/signin")
        status, _, page = b.post("/signin", {"csrf": field(page, "csrf"), "token": token})
        eq(status, 401, "sign-in with token %r" % token[:8])
        eq(error_of(page, "token"), "This token is unknown, revoked, or a worker token.",
           "error next to the token field")
        check('aria-invalid="true"' in page, "field marked invalid")
        check("sb_session" not in b.cookies, "no session for %r" % token[:8])

    status, _, page = b.get("/signin?next=/admin/workers")
    status, hdrs, _ = b.post("/signin", {"csrf": field(page, "csrf"), "token": svc.read_token,
                                         "next": field(page, "next")})
    eq((status, hdrs.get("Location")), (303, "/admin/workers"), "redirect to next")
    session = [c for c in hdrs.get_all("Set-Cookie") if c.startswith("sb_session=")]
    eq(len(session), 1, "one session cookie")
    attrs = [a.strip() for a in session[0].split(";")]
    check(re.fullmatch(r"sb_session=[0-9a-f]{64}", attrs[0]), "session id: %r" % attrs[0])
    for attr in ("HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"):
        check(attr in attrs, "session cookie has %s: %r" % (attr, session[0]))
    # Only a hash of the session id is stored.
    sid = attrs[0].split("=", 1)[1]
    eq(env.cluster.psql("select count(*) from sessions where session_hash = '%s'" % sid), "0",
       "raw session id not stored")
    eq(env.cluster.psql("select role from sessions where session_hash = encode(sha256('%s'),"
                        " 'hex')" % sid), "read", "session row with the token's role")

    status, hdrs, page = b.get("/")
    eq(status, 200, "dashboard with the session")
    eq(hdrs.get("Content-Type"), "text/html; charset=utf-8", "HTML")
    csp = hdrs.get("Content-Security-Policy")
    check(csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
          and "frame-ancestors 'none'" in csp, "CSP: %r" % csp)
    eq(hdrs.get("X-Frame-Options"), "DENY", "X-Frame-Options")
    check("<script>" not in page and "onclick" not in page, "no inline script")
    check('<span class="role">read</span>' in page, "shows the role")

    # An open redirect through next= is not possible.
    for evil in ("//evil.example/x", "https://evil.example/", "/\\evil"):
        status, _, page = b.get("/signin?next=" + urllib.parse.quote(evil))
        eq(field(page, "next"), "/", "next %r replaced" % evil)

    # Signing out needs the CSRF token, then ends the session.
    status, _, _ = b.post("/signout", {})
    eq(status, 403, "sign-out without CSRF")
    eq(b.get("/")[0], 200, "still signed in")
    status, _, page = b.get("/")
    status, hdrs, _ = b.post("/signout", {"csrf": field(page, "csrf")})
    eq((status, hdrs.get("Location")), (303, "/signin"), "signed out")
    eq(env.cluster.psql("select count(*) from sessions where session_hash = encode(sha256('%s'),"
                        " 'hex')" % sid), "0", "session row deleted")
    b.cookies["sb_session"] = sid
    eq(b.get("/")[0], 303, "old cookie no longer works")


@test
def web_pages_need_a_session_of_the_right_role(env):
    svc = env.svc
    anon = Browser(svc.url)
    status, hdrs, _ = anon.get("/")
    eq((status, hdrs.get("Location")), (303, "/signin?next=/"), "dashboard redirects")
    status, hdrs, _ = anon.get("/jobs/1?x=<y>")
    eq((status, hdrs.get("Location")), (303, "/signin?next=/jobs/1"), "job page redirects")
    for path in ("/jobs/1/live", "/jobs/1/runs.csv", "/admin/tokens"):
        status, _, _ = anon.get(path)
        check(status in (303, 401), "%s without a session: %d" % (path, status))
    eq(anon.get("/jobs/1/live")[0], 401, "live part without a session")
    eq(anon.post("/jobs/new", {"repo": "x"})[0], 401, "submit without a session")
    eq(anon.post("/jobs/1/cancel", {})[0], 401, "cancel without a session")
    anon.cookies["sb_session"] = "f" * 64
    eq(anon.get("/")[0], 303, "forged session cookie")
    anon.cookies["sb_session"] = "'; drop table sessions; --"
    eq(anon.get("/")[0], 303, "malformed session cookie")
    # A Bearer token does not open the web pages, and a session does not
    # open the REST API: the API keeps working with Bearer tokens only.
    req = urllib.request.Request(svc.url + "/", headers={"Authorization": "Bearer " + harness.ADMIN})
    try:
        r = urllib.request.build_opener(NoRedirect).open(req, timeout=10)
        code = r.status
    except urllib.error.HTTPError as e:
        code = e.code
    eq(code, 303, "bearer token on a page")
    reader = Browser(svc.url).sign_in(svc.read_token)
    eq(reader.get("/api/v1/jobs/1")[0], 401, "session cookie on the REST API")
    eq(reader.get("/jobs/new")[0], 403, "read role on the submit form")
    eq(reader.get("/admin/repos")[0], 403, "read role on an admin page")
    eq(reader.post("/jobs/new", {"csrf": reader.csrf, "repo": "x"})[0], 403,
       "read role posting a job")
    submitter = Browser(svc.url).sign_in(svc.submit_token)
    eq(submitter.get("/jobs/new")[0], 200, "submit role on the form")
    eq(submitter.get("/admin/workers")[0], 403, "submit role on an admin page")
    # A revoked token's sessions end at once.
    tok = svc.api.ok("POST", "/api/v1/tokens", {"name": "web-revoked", "role": "read"})
    b = Browser(svc.url).sign_in(tok["token"])
    env.cluster.psql("update tokens set revoked_at = now() where id = %d" % tok["id"])
    eq(b.get("/")[0], 303, "session of a revoked token")


@test
def web_posts_without_the_csrf_token_are_refused(env):
    svc = env.svc
    repo, shas = web_repo(env)
    b = Browser(svc.url).sign_in(svc.submit_token)
    before = jobs_count(env)
    form = {"repo": "web-hostile", "testcase": "web-hostile-tc", "good": shas[0],
            "bad": shas[-1]}
    status, _, page = b.post("/jobs/new", form)
    eq(status, 403, "job form without CSRF")
    check("CSRF" in page, "says why")
    eq(b.post("/jobs/new", dict(form, csrf="0" * 64))[0], 403, "wrong CSRF token")
    other = Browser(svc.url).sign_in(svc.submit_token)
    eq(b.post("/jobs/new", dict(form, csrf=other.csrf))[0], 403,
       "another session's CSRF token")
    eq(b.post("/jobs/1/cancel", {})[0], 403, "cancel without CSRF")
    eq(b.post("/jobs/1/rerun", {"csrf": ""})[0], 403, "re-run with an empty CSRF")
    admin = Browser(svc.url).sign_in(harness.ADMIN)
    eq(admin.post("/admin/tokens", {"name": "x", "role": "admin"})[0], 403,
       "token form without CSRF")
    eq(admin.post("/admin/repos", {"name": "x", "url": "/tmp"})[0], 403,
       "repo form without CSRF")
    eq(jobs_count(env), before, "no job created")
    eq(env.cluster.psql("select count(*) from tokens where name = 'x'"), "0",
       "no token created")
    # Bad form bodies are refused, not crashed on.
    for raw in (b"csrf=%zz", b"a=%00", b"\xff\xfe=1", b"csrf=" + b.csrf.encode() + b"&good=%E0%80"):
        status, _, _ = b.request("POST", "/jobs/new", raw=raw)
        eq(status, 400, "malformed form %r" % raw[:20])
    eq(svc.api.call("GET", "/healthz", token="")[0], 200, "healthy after bad forms")


@test
def web_form_errors_are_shown_next_to_the_field_with_values_kept(env):
    svc = env.svc
    repo, shas = web_repo(env)
    b = Browser(svc.url).sign_in(svc.submit_token)
    status, _, page = b.get("/jobs/new")
    eq(status, 200, "form")
    for name in ("repo", "testcase", "good", "bad", "notify", "runs_min", "runs_max",
                 "machines"):
        check('<label for="%s">' % name in page and 'id="%s"' % name in page,
              "field %s has a label" % name)
    check('<option value="web-hostile">' in page, "repository list")
    check('<option value="web-hostile-tc">' in page, "testcase list")
    before = jobs_count(env)
    base = {"csrf": b.csrf, "repo": "web-hostile", "testcase": "web-hostile-tc",
            "good": shas[0], "bad": shas[-1], "notify": "dev@example.org",
            "runs_min": "", "runs_max": ""}

    status, _, page = b.post("/jobs/new", dict(base, good="v9.9-missing"))
    eq(status, 422, "unknown good revision")
    eq(error_of(page, "good"),
       "Good revision 'v9.9-missing' names no commit in repository 'web-hostile'.",
       "error next to good")
    eq(error_of(page, "bad"), None, "no error next to bad")
    eq(field(page, "good"), "v9.9-missing", "good kept")
    eq(field(page, "bad"), shas[-1], "bad kept")
    eq(field(page, "notify"), "dev@example.org", "notify kept")
    check('<option value="web-hostile" selected>' in page, "repository kept")
    check('<option value="web-hostile-tc" selected>' in page, "testcase kept")
    check('id="good" name="good" value="v9.9-missing" required autocomplete="off" '
          'spellcheck="false" aria-invalid="true" aria-describedby="good-error"' in page,
          "good marked invalid and described by its error")

    status, _, page = b.post("/jobs/new", dict(base, bad="no-such-branch"))
    eq((status, error_of(page, "bad"), error_of(page, "good")),
       (422, "Bad revision 'no-such-branch' names no commit in repository 'web-hostile'.",
        None),
       "unknown bad revision")

    status, _, page = b.post("/jobs/new", dict(base, good=shas[-1], bad=shas[0]))
    eq(status, 422, "reversed range")
    check(error_of(page, "bad") and "not an ancestor" in error_of(page, "bad"),
          "range error next to bad: %r" % error_of(page, "bad"))

    status, _, page = b.post("/jobs/new", dict(base, notify="dev@example.org, not an address"))
    eq(status, 400, "bad email")
    eq(error_of(page, "notify"), "'not', 'an' and 'address' are not email addresses: "
       "write each as name@example.org, separated by commas.", "error next to notify")
    eq(field(page, "notify"), "dev@example.org, not an address", "notify kept")

    status, _, page = b.post("/jobs/new", dict(base, repo="", good="  ", runs_min="1",
                                               runs_max="x"))
    eq(status, 400, "empty fields")
    eq((error_of(page, "repo"), error_of(page, "good")),
       ("This is required.", "This is required."), "required fields")
    eq(error_of(page, "runs_min"), "'1' is not a whole number from 2 to 1000: give one, "
       "or leave it empty for the testcase's default.", "runs_min range")
    eq(error_of(page, "runs_max"), "'x' is not a whole number from 2 to 10000: give one, "
       "or leave it empty for the testcase's default.", "runs_max range")
    eq(field(page, "runs_min"), "1", "runs_min kept")

    for value in ("0", "9", "two"):
        status, _, page = b.post("/jobs/new", dict(base, machines=value))
        eq((status, error_of(page, "machines")),
           (400, "'%s' is not a whole number from 1 to 8: give one, or leave it"
            " empty for one machine." % value), "machines %r" % value)
        eq(field(page, "machines"), value, "machines kept")

    status, _, page = b.post("/jobs/new", dict(base, runs_min="9", runs_max="3"))
    eq((status, error_of(page, "runs_max")),
       (400, "The most runs cannot be below the fewest."), "runs_max below runs_min")

    status, _, page = b.post("/jobs/new", dict(base, repo="nope"))
    eq((status, error_of(page, "repo")), (404, "Repository 'nope' is not registered."),
       "unknown repository")

    # A hostile value comes back escaped inside the value attribute.
    evil = '"><script>alert(2)</script>'
    status, _, page = b.post("/jobs/new", dict(base, good=evil))
    eq(status, 422, "hostile revision")
    check(evil not in page and "<script>alert(2)" not in page, "hostile value not raw")
    check('value="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"' in page,
          "hostile value escaped in the attribute")
    eq(field(page, "good"), evil, "hostile value kept exactly")
    eq(jobs_count(env), before, "no job was created by refused forms")


@test
def web_form_shows_every_error_at_once_in_the_forms_words(env):
    """Issue 15: three mistakes take one submission, not three.  Each error
    stands next to its field in the form's words (no 'notify' entry 1, no
    field 'runs_max'), quotes the value at fault, and what was typed stays."""
    svc = env.svc
    repo, shas = web_repo(env)
    b = Browser(svc.url).sign_in(svc.submit_token)
    b.get("/jobs/new")
    before = jobs_count(env)
    sent = {"csrf": b.csrf, "repo": "web-hostile", "testcase": "web-hostile-tc",
            "good": "v9.9-missing", "bad": shas[-1],
            "notify": "dev@example.org, bob@, <x>", "runs_min": "1", "runs_max": "x"}
    status, _, page = b.post("/jobs/new", sent)
    eq(status, 400, "refused")
    eq(error_of(page, "good"),
       "Good revision 'v9.9-missing' names no commit in repository 'web-hostile'.",
       "revision error, quoting it")
    eq(error_of(page, "notify"), "'bob@' and '<x>' are not email addresses: "
       "write each as name@example.org, separated by commas.", "both bad addresses quoted")
    eq(error_of(page, "runs_min"), "'1' is not a whole number from 2 to 1000: give one, "
       "or leave it empty for the testcase's default.", "runs_min error")
    eq(error_of(page, "runs_max"), "'x' is not a whole number from 2 to 10000: give one, "
       "or leave it empty for the testcase's default.", "runs_max error")
    eq((error_of(page, "bad"), error_of(page, "repo"), error_of(page, "testcase")),
       (None, None, None), "no error on the good fields")
    check("entry 1" not in page and "field '" not in page and "(local@domain)" not in page,
          "no API words on the page")
    for name in ("good", "bad", "notify", "runs_min", "runs_max"):
        eq(field(page, name), sent[name], "%s kept" % name)
    check('<option value="web-hostile" selected>' in page, "repository kept")

    status, _, page = b.post("/jobs/new", dict(sent, repo="nope", testcase="nada", good=shas[0],
                                               bad="", notify="", runs_min="9",
                                               runs_max="3"))
    eq(status, 400, "refused again")
    eq((error_of(page, "repo"), error_of(page, "testcase"), error_of(page, "bad"),
        error_of(page, "runs_max"), error_of(page, "good")),
       ("Repository 'nope' is not registered.", "Testcase 'nada' is not registered.",
        "This is required.", "The most runs cannot be below the fewest.", None),
       "repository, testcase, bad and runs at once")
    eq(jobs_count(env), before, "no job was created by refused forms")


@test
def web_job_page_escapes_a_hostile_commit_subject_and_plots_runs(env):
    svc = env.svc
    repo, shas = web_repo(env)
    b = Browser(svc.url).sign_in(svc.submit_token)
    status, _, page = b.get("/jobs/new")
    status, hdrs, _ = b.post("/jobs/new", {"csrf": field(page, "csrf"), "repo": "web-hostile",
                                           "testcase": "web-hostile-tc", "good": shas[0],
                                           "bad": "main", "notify": "a@example.org b@example.org"})
    eq(status, 303, "job submitted")
    m = re.fullmatch(r"/jobs/(\d+)", hdrs.get("Location") or "")
    check(m, "redirect to the job page: %r" % hdrs.get("Location"))
    job_id = int(m.group(1))
    created = svc.api.ok("GET", "/api/v1/jobs/%d" % job_id)
    eq((created["good"], created["bad"], created["notify"]),
       (shas[0], shas[-1], ["a@example.org", "b@example.org"]), "job as submitted")
    status, _, page = b.get("/jobs/%d" % job_id)
    eq(status, 200, "job page while queued or running")
    check('data-live-url="/jobs/%d/live"' % job_id in page, "live part")
    check('href="/jobs/%d/cancel"' % job_id in page or "done" in page, "cancel link")

    done = svc.wait(job_id)
    eq((done["verdict"], done["culprit"]), ("regression", shas[5]), "planted culprit found")
    status, hdrs, page = b.get("/jobs/%d" % job_id)
    eq(status, 200, "job page when done")
    check(HOSTILE not in page, "hostile subject never raw")
    check("alert(1)</script>" not in page, "no closing tag either")
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;quotes&#39; &quot;too&quot;"
    check('<span class="subject" id="culprit-subject">%s</span>' % escaped in page,
          "culprit subject escaped")
    check("Eve &quot;&amp;&quot; O&#39;Hara" in page, "author name escaped")
    # In the bisection path and in the plot's tooltip, too.
    check(page.count(escaped) >= 3, "escaped subject in summary, path, plots: %d"
          % page.count(escaped))
    check('<span class="verdict verdict-regression" id="verdict">regression</span>' in page,
          "verdict")
    check(not re.search(r'/jobs/%d/cancel"' % job_id, page), "no cancel when done")
    check('action="/jobs/%d/rerun"' % job_id in page, "re-run button when done")
    # The plots: one group per tested commit, classified like the API says.
    plot = re.search(r'<figure class="plot" id="plot-range">(.*?)</figure>', page, re.S).group(1)
    groups = re.findall(r'<g class="commit (\w+)" data-index="(\d+)">', plot)
    want = sorted((c["classification"], str(c["index"])) for c in done["commits"])
    eq(sorted(groups), want, "plotted commits")
    runs_drawn = plot.count('class="run"')
    eq(runs_drawn, sum(len(c["runs"]) + len(c["confirm_runs"]) for c in done["commits"]),
       "every run drawn, search and confirmation")
    check('class="culprit"' in plot, "culprit marked")
    pair = re.search(r'<figure class="plot" id="plot-pair">(.*?)</figure>', page, re.S)
    check(pair, "parent vs culprit plot")
    check('data-role="parent"' in pair.group(1) and 'data-role="culprit"' in pair.group(1),
          "both sides")
    # The path lists every tested commit once, first the endpoints.
    path = re.findall(r'<li class="class-(\w+)"><code><a href="https://git.example.org/c/'
                      r'([0-9a-f]{40})">', page)
    eq([sha for _, sha in path[:2]], [shas[0], shas[-1]], "path starts at good and bad")
    eq(sorted(sha for _, sha in path), sorted(c["commit"] for c in done["commits"]),
       "path has the tested commits")
    # The report as text, escaped in the page.
    check('<pre class="report" id="report" tabindex="0">' in page, "report shown")
    status, hdrs, text = b.get("/jobs/%d/report" % job_id)
    eq((status, hdrs.get("Content-Type")), (200, "text/plain; charset=utf-8"), "report text")
    check(HOSTILE in text, "the plain-text report keeps the subject as it is")
    # The live part alone, for the script.
    status, hdrs, live = b.get("/jobs/%d/live" % job_id)
    eq(status, 200, "live part")
    check(live.startswith('<div class="live-root" data-state="done">'), "live root")
    check(HOSTILE not in live, "live part escaped too")
    _setup["job"] = done


def plotted_medians(plot):
    """{commit index: median in the group's tooltip} of a range plot."""
    return {int(i): float(m) for i, m in re.findall(
        r'data-index="(\d+)"><title>[^<]*\(\w+, \d+ runs, median ([-0-9.e+]+)\)', plot)}


def g6(x):
    """x as the page prints a median (C's %.6g)."""
    return float("%.6g" % x)


@test
def web_job_page_plots_any_metric_and_links_each_commit(env):
    svc = env.svc
    repo, shas = web_repo(env)
    # Each run prints a second metric that varies with the run's number.
    svc.api.ok("POST", "/api/v1/testcases", {
        "name": "web-metrics-tc", "build": "sh build.sh",
        "run": './bench && echo "aux.run: $((STATBISECT_RUN * 7))"',
        "kpi": "bench.score", "higher_is_better": True, "min_change_pct": 1.0})
    job = svc.wait(svc.submit({"repo": "web-hostile", "testcase": "web-metrics-tc",
                               "good": shas[0], "bad": shas[-1]})["id"])
    b = Browser(svc.url).sign_in(svc.read_token)
    runs = json.loads(b.get("/jobs/%d/runs.json" % job["id"])[2])["runs"]
    names = sorted({n for r in runs for n, v in r["metrics"].items()
                    if isinstance(v, (int, float))} - {job["kpi"]})
    check(names, "the runs reported metrics besides the KPI: %r" % runs[:1])
    # The page offers every metric, the KPI first and chosen.
    status, _, page = b.get("/jobs/%d" % job["id"])
    options = re.findall(r'<option value="([^"]*)"( selected)?>', page)
    eq(options, [(job["kpi"], " selected")] + [(n, "") for n in names],
       "the metric choices")
    # Each commit's marks link to the commit (the repository's web view).
    plot = re.search(r'<figure class="plot" id="plot-range">(.*?)</figure>', page, re.S).group(1)
    links = re.findall(r'<a class="commit-link" href="([^"]*)"><g class="commit \w+" '
                       r'data-index="(\d+)">', plot)
    eq(sorted(links), sorted(("https://git.example.org/c/%s" % c["commit"], str(c["index"]))
                             for c in job["commits"]), "a link for each plotted commit")
    check("no runs (skipped)" in plot, "the legend names the cross of a commit without runs")

    # Another metric, the one whose values vary most: its own values along
    # the range.
    metric = max(names, key=lambda n: len({r["metrics"].get(n) for r in runs}))
    status, _, page = b.get("/jobs/%d?metric=%s" % (job["id"], urllib.parse.quote(metric)))
    eq(status, 200, "the page of metric %s" % metric)
    check('<option value="%s" selected>' % html.escape(metric) in page, "%s chosen" % metric)
    plot = re.search(r'<figure class="plot" id="plot-range">(.*?)</figure>', page, re.S).group(1)
    check('class="ytitle"' in plot and ">%s</text>" % html.escape(metric) in plot,
          "the y axis names %s" % metric)
    index = {c["commit"]: c["index"] for c in job["commits"]}
    values = {}
    for r in runs:
        if isinstance(r["metrics"].get(metric), (int, float)) and r["commit"] in index:
            values.setdefault(index[r["commit"]], []).append(r["metrics"][metric])
    want = {i: g6(statistics.median(v)) for i, v in values.items()}
    check(len(set(want.values())) > 1, "%s varies: %r" % (metric, want))
    eq(plotted_medians(plot), want, "medians of %s per commit" % metric)
    check('data-live-url="/jobs/%d/live?metric=%s"' % (job["id"], urllib.parse.quote(metric))
          in page, "the live part keeps the metric")
    status, _, live = b.get("/jobs/%d/live?metric=%s" % (job["id"], urllib.parse.quote(metric)))
    eq(plotted_medians(live.split('id="plot-range"')[1].split("</figure>")[0]), want,
       "the live part plots %s too" % metric)

    # A metric no run reported: said so, and the KPI is drawn.
    status, _, page = b.get("/jobs/%d?metric=%s" % (job["id"], urllib.parse.quote(HOSTILE)))
    eq(status, 200, "a page for an unknown metric")
    check(HOSTILE not in page, "the unknown name is escaped")
    check('id="metric-unknown"' in page and html.escape(HOSTILE) in page,
          "the unknown metric is named")
    plot = re.search(r'<figure class="plot" id="plot-range">(.*?)</figure>', page, re.S).group(1)
    kpi = {c["index"]: g6(statistics.median(c["runs"] + c["confirm_runs"]))
           for c in job["commits"] if c["runs"] + c["confirm_runs"]}
    eq(plotted_medians(plot), kpi, "the KPI is plotted instead")


@test
def web_downloads_all_runs_as_csv_and_json(env):
    svc = env.svc
    if "job" not in _setup:
        web_job_page_escapes_a_hostile_commit_subject_and_plots_runs(env)
    job = _setup["job"]
    b = Browser(svc.url).sign_in(svc.read_token)
    status, hdrs, text = b.get("/jobs/%d/runs.csv" % job["id"])
    eq(status, 200, "CSV download")
    check(hdrs.get("Content-Type").startswith("text/csv"), "CSV type: %r" % hdrs.get("Content-Type"))
    eq(hdrs.get("Content-Disposition"), 'attachment; filename="job-%d-runs.csv"' % job["id"],
       "CSV attachment")
    rows = list(csv.DictReader(io.StringIO(text)))
    eq(len(rows), job["runs"], "one CSV row per run")
    by_commit = {}
    for r in rows:
        by_commit.setdefault(r["commit"], []).append(float(r["kpi"]))
    for c in job["commits"]:
        eq(sorted(by_commit.get(c["commit"], [])), sorted(c["runs"] + c["confirm_runs"]),
           "CSV runs of %s" % c["commit"][:12])
    status, hdrs, text = b.get("/jobs/%d/runs.json" % job["id"])
    eq(status, 200, "JSON download")
    eq(hdrs.get("Content-Disposition"), 'attachment; filename="job-%d-runs.json"' % job["id"],
       "JSON attachment")
    runs = json.loads(text)["runs"]
    eq(len(runs), job["runs"], "one JSON entry per run")
    eq(sorted(r["kpi"] for r in runs),
       sorted(v for c in job["commits"] for v in c["runs"] + c["confirm_runs"]),
       "JSON KPIs")
    eq(b.get("/jobs/999999/runs.csv")[0], 404, "CSV of no job")
    eq(b.get("/jobs/abc/runs.json")[0], 404, "JSON of a bad id")


@test
def web_cancel_rerun_dashboard_filters_and_pages(env):
    # A service without a worker on a database of its own: jobs stay queued.
    svc = Service(env.root, env.cluster, "webq", worker=False,
                  conninfo=env.cluster.database("webq"))
    try:
        repo, shas = bench_repo(os.path.join(env.root, "web-queue"), 3)
        svc.register("web-queue", repo, "web-queue-tc")
        svc.api.ok("POST", "/api/v1/repos", {"name": "web-other", "url": repo.path})
        ids = [svc.submit({"repo": "web-queue", "testcase": "web-queue-tc", "good": shas[0],
                           "bad": shas[-1]})["id"] for _ in range(27)]
        other = svc.submit({"repo": "web-other", "testcase": "web-queue-tc", "good": shas[0],
                            "bad": shas[-1]})["id"]
        b = Browser(svc.url).sign_in(svc.submit_token)

        status, _, page = b.get("/")
        eq(status, 200, "dashboard")
        check('<p class="count" id="job-count">28 jobs · page 1 of 2</p>' in page, "count")
        listed = [int(x) for x in re.findall(r'<td data-label="Job"><a href="/jobs/(\d+)">', page)]
        eq(listed, sorted(ids + [other], reverse=True)[:25], "newest 25 first")
        check('<a href="/?page=2" rel="next">' in page, "next page link")
        status, _, page = b.get("/?page=2")
        listed = [int(x) for x in re.findall(r'<td data-label="Job"><a href="/jobs/(\d+)">', page)]
        eq(listed, sorted(ids + [other], reverse=True)[25:], "page 2")
        check('<a href="/?page=1" rel="prev">' in page, "previous page link")
        status, _, page = b.get("/?repo=web-other&testcase=&state=")
        listed = [int(x) for x in re.findall(r'<td data-label="Job"><a href="/jobs/(\d+)">', page)]
        eq(listed, [other], "repository filter")
        check('<option value="web-other" selected>' in page, "filter kept")
        status, _, page = b.get("/?state=done")
        check("No jobs match." in page, "state filter")
        status, _, page = b.get("/?repo=%3Cb%3E&page=-3&state=%27")
        eq(status, 200, "hostile filters are just filters")
        check("<b>" not in page, "no raw markup from the query")

        # Cancel from the job page.
        status, _, page = b.get("/jobs/%d" % ids[0])
        check('<span class="state state-queued" id="job-state">queued</span>' in page, "queued")
        # Issue 15: the page's button asks first, on a page of its own.
        check('<a class="button danger" href="/jobs/%d/cancel" id="cancel-link">' % ids[0]
              in page, "the cancel button leads to a question")
        check('method="post" action="/jobs/%d/cancel"' % ids[0] not in page,
              "no one-click cancel on the job page")
        status, _, page = b.get("/jobs/%d/cancel" % ids[0])
        eq(status, 200, "the question")
        check("Cancel job %d?" % ids[0] in page and
              'method="post" action="/jobs/%d/cancel"' % ids[0] in page,
              "the question's form")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % ids[0])["state"], "queued",
           "asking cancels nothing")
        status, hdrs, _ = b.post("/jobs/%d/cancel" % ids[0], {"csrf": b.csrf})
        eq((status, hdrs.get("Location")), (303, "/jobs/%d" % ids[0]), "cancel redirects")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % ids[0])["state"], "cancelled", "cancelled")
        status, _, page = b.get("/jobs/%d" % ids[0])
        check('<span class="state state-cancelled" id="job-state">cancelled</span>' in page,
              "page shows cancelled")
        check('action="/jobs/%d/rerun"' % ids[0] in page, "re-run offered")
        status, hdrs, _ = b.post("/jobs/%d/rerun" % ids[0], {"csrf": b.csrf})
        eq(status, 303, "re-run redirects")
        new_id = int(hdrs.get("Location").rsplit("/", 1)[1])
        check(new_id > other, "a new job")
        again = svc.api.ok("GET", "/api/v1/jobs/%d" % new_id)
        eq((again["state"], again["good"], again["bad"]), ("queued", shas[0], shas[-1]),
           "re-run has the same range")
        status, _, page = b.get("/?state=cancelled")
        listed = [int(x) for x in re.findall(r'<td data-label="Job"><a href="/jobs/(\d+)">', page)]
        eq(listed, [ids[0]], "cancelled filter")
        # A reader sees no buttons and cannot use them.
        reader = Browser(svc.url).sign_in(svc.read_token)
        status, _, page = reader.get("/jobs/%d" % ids[1])
        check("/cancel" not in page and "/rerun" not in page, "no buttons for read")
        eq(reader.post("/jobs/%d/cancel" % ids[1], {"csrf": reader.csrf})[0], 403,
           "read cannot cancel")
        eq(reader.get("/jobs/999999")[0], 404, "no such job")
        eq(reader.get("/jobs/0")[0], 404, "job 0")
        eq(reader.get("/jobs/99999999999999999999")[0], 404, "huge job id")
    finally:
        svc.stop()


@test
def web_admin_pages_list_and_create(env):
    svc = env.svc
    web_repo(env)
    b = Browser(svc.url).sign_in(harness.ADMIN)
    status, _, page = b.get("/admin/repos")
    eq(status, 200, "repositories")
    check("<td data-label=\"Name\">web-hostile</td>" in page, "repository listed")
    status, _, page = b.post("/admin/repos", {"csrf": b.csrf, "name": "../bad name",
                                              "url": "/nonexistent", "web_url": ""})
    eq(status, 400, "bad repository name")
    check(error_of(page, "name"), "error next to name")
    eq(field(page, "url"), "/nonexistent", "url kept")
    status, _, page = b.post("/admin/repos", {"csrf": b.csrf, "name": "web-gone",
                                              "url": "/nonexistent/repo"})
    eq(status, 422, "unreachable repository")
    check(error_of(page, "url"), "error next to url")

    status, _, page = b.get("/admin/testcases")
    check("<td data-label=\"Name\">web-hostile-tc</td>" in page, "testcase listed")
    status, hdrs, _ = b.post("/admin/testcases", {
        "csrf": b.csrf, "name": "web-made", "build": "true", "run": "echo 'k: 1'", "kpi": "k",
        "higher_is_better": "false", "min_change_pct": "2.5", "runs_min": "3",
        "runs_max": "9", "timeout_s": ""})
    eq((status, hdrs.get("Location")), (303, "/admin/testcases"), "testcase created")
    tcs = {t["name"]: t for t in svc.api.ok("GET", "/api/v1/testcases")["testcases"]}
    t = tcs["web-made"]
    eq((t["higher_is_better"], t["min_change_pct"], t["runs_min"], t["runs_max"],
        t["timeout_s"]), (False, 2.5, 3, 9, 600), "typed fields")
    status, _, page = b.post("/admin/testcases", {"csrf": b.csrf, "name": "web-made2",
                                                  "run": "x", "kpi": "a b",
                                                  "higher_is_better": "true"})
    eq(status, 400, "kpi with a space")
    check(error_of(page, "kpi"), "error next to kpi")

    status, hdrs, _ = b.post("/admin/tokens", {"csrf": b.csrf, "name": "web <made>",
                                               "role": "read"})
    # Issue 15: redirected after the POST, so a reload makes no second token.
    eq((status, hdrs.get("Location")), (303, "/admin/tokens"), "token made, redirected")
    status, _, page = b.get("/admin/tokens")
    eq(status, 200, "the page after the redirect")
    token = html.unescape(re.search(r'<code class="secret" id="new-token">([^<]+)</code>',
                                    page).group(1))
    check("web &lt;made&gt;" in page, "token name escaped")
    eq(svc.api.call("GET", "/api/v1/jobs/1", token=token)[0] in (200, 404), True,
       "the new token works")
    status, _, page = b.get("/admin/tokens")
    check(token not in page, "the token is not shown again on a reload")
    eq(env.cluster.psql("select count(*) from tokens where name = 'web <made>'"), "1",
       "one token made, however often the page is loaded")
    tid = int(env.cluster.psql("select id from tokens where name = 'web <made>'"))
    check('href="/admin/tokens/%d/revoke"' % tid in page and
          'action="/admin/tokens/%d/revoke"' % tid not in page,
          "revoking asks first: the list links to the question")
    status, _, page = b.get("/admin/tokens/%d/revoke" % tid)
    check(status == 200 and "Revoke token %d?" % tid in page and
          'method="post" action="/admin/tokens/%d/revoke"' % tid in page,
          "the question before revoking")
    eq(svc.api.call("GET", "/api/v1/jobs/1", token=token)[0] in (200, 404), True,
       "asking revokes nothing")
    eq(b.get("/admin/tokens/x/revoke")[0], 404, "no such token to ask about")
    status, hdrs, _ = b.post("/admin/tokens/%d/revoke" % tid, {"csrf": b.csrf})
    eq((status, hdrs.get("Location")), (303, "/admin/tokens"), "revoked")
    eq(svc.api.call("GET", "/api/v1/jobs/1", token=token)[0], 401, "revoked token refused")

    status, _, page = b.get("/admin/workers")
    eq(status, 200, "workers")
    row = re.search(r'<tr><td data-label="Name">box-1</td><td data-label="Group">default</td>'
                    r'<td data-label="Machine">[^<]*</td><td data-label="Last seen">'
                    r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"[^>]*>(\d+ \w+) ago</time>',
                    page)
    check(row, "worker row with last seen")
    check('<td data-label="Current task">' in page, "current task column")


@test
def web_admin_forms_show_every_error_at_once_in_their_labels(env):
    svc = env.svc
    b = Browser(svc.url).sign_in(harness.ADMIN)
    status, _, page = b.post("/admin/testcases", {
        "csrf": b.csrf, "name": "bad name", "build": "make", "run": "",
        "kpi": "a b", "higher_is_better": "true", "min_change_pct": "abc",
        "runs_min": "20", "runs_max": "10"})
    eq(status, 400, "the first error's status")
    eq((error_of(page, "name"), error_of(page, "run"), error_of(page, "kpi"),
        error_of(page, "min_change_pct"), error_of(page, "runs_max")),
       ("\u201cName\u201d must be 1 to 64 of A-Z a-z 0-9 . _ -",
        "\u201cRun command\u201d is required",
        "\u201cKPI metric\u201d must be a metric name without spaces",
        "\u201cSmallest change, %\u201d must be a number in (0, 1000]",
        "\u201cMost runs\u201d must not be below \u201cFewest runs\u201d"),
       "every error next to its field, in the form's labels")
    eq((error_of(page, "build"), error_of(page, "runs_min")), (None, None),
       "no error where the field is right")
    eq(field(page, "min_change_pct"), "abc", "values kept")
    status, _, page = b.post("/admin/tokens", {"csrf": b.csrf, "name": "",
                                               "role": "emperor"})
    eq((status, error_of(page, "name"), error_of(page, "role")),
       (400, "\u201cName\u201d must be 1 to 128 printable characters",
        "\u201cRole\u201d must be one of admin, submit, read, worker"),
       "both token fields")
    eq(int(env.cluster.psql("select count(*) from testcases where name = 'bad name'")),
       0, "nothing stored")


@test
def web_static_files_and_hostile_paths(env):
    svc = env.svc
    b = Browser(svc.url)
    status, hdrs, text = b.get("/static/style.css")
    eq((status, hdrs.get("Content-Type")), (200, "text/css; charset=utf-8"), "CSS")
    check("@media" in text, "the stylesheet")
    status, hdrs, text = b.get("/static/app.js")
    eq((status, hdrs.get("Content-Type")), (200, "text/javascript; charset=utf-8"), "script")
    for path in ("/static/..%2f..%2fsql%2f001_init.sql", "/static/.hidden.css",
                 "/static/app.JS", "/static/nope.css", "/static/a%00.css"):
        eq(b.get(path)[0], 404, "static %s" % path)
    eq(svc.api.call("GET", "/healthz", token="")[0], 200, "healthy")


@test
def web_admins_create_pause_and_delete_watches(env):
    svc = env.svc
    web_repo(env)
    b = Browser(svc.url).sign_in(harness.ADMIN)
    before = int(env.cluster.psql("select count(*) from watches"))
    status, _, page = b.get("/watches")
    eq(status, 200, "watches page")
    eq(field(page, "interval_s"), "300", "default interval")
    status, _, page = b.post("/watches", {
        "csrf": b.csrf, "repo": "web-nope", "branch": "bad..branch",
        "testcases": "web-hostile-tc, web-no-tc", "interval_s": "5"})
    eq(status, 400, "the first error's status")
    eq((error_of(page, "branch"), error_of(page, "interval_s"), error_of(page, "repo"),
        error_of(page, "testcases")),
       ("\u201cBranch or glob\u201d must be a branch name or a glob of them "
        "(release/*), at most 200 bytes",
        "\u201cPoll every, s\u201d must be an integer from 10 to 604800",
        "repository 'web-nope' is not registered",
        "testcase 'web-no-tc' is not registered"),
       "every error next to its field, in the form's words")
    eq(field(page, "testcases"), "web-hostile-tc, web-no-tc", "values kept")
    eq(int(env.cluster.psql("select count(*) from watches")), before, "nothing stored")

    reader = Browser(svc.url).sign_in(svc.read_token)
    eq(reader.post("/watches", {"csrf": reader.csrf, "repo": "web-hostile", "branch": "main",
                                "testcases": "web-hostile-tc"})[0], 403, "readers cannot")
    check('action="/watches"' not in reader.get("/watches")[2], "no form for readers")
    eq(b.post("/watches", {"csrf": "0" * 64, "repo": "web-hostile", "branch": "main",
                           "testcases": "web-hostile-tc"})[0], 403, "wrong CSRF token")

    status, hdrs, _ = b.post("/watches", {
        "csrf": b.csrf, "repo": "web-hostile", "branch": "release/*",
        "testcases": "web-hostile-tc", "interval_s": "600", "regressions_only": "1"})
    eq(status, 303, "watch created")
    m = re.fullmatch(r"/watches/(\d+)", hdrs.get("Location") or "")
    check(m, "redirect to the watch's page")
    wid = int(m.group(1))
    w = svc.api.ok("GET", "/api/v1/watches/%d" % wid)
    eq((w["repo"], w["branch"], w["testcases"], w["interval_s"], w["regressions_only"],
        w["paused"]), ("web-hostile", "release/*", ["web-hostile-tc"], 600, True, False),
       "stored as typed")

    status, _, page = b.get("/watches/%d" % wid)
    check('action="/watches/%d/pause"' % wid in page, "pause button")
    status, hdrs, _ = b.post("/watches/%d/pause" % wid, {"csrf": b.csrf})
    eq((status, hdrs.get("Location")), (303, "/watches/%d" % wid), "paused")
    eq(svc.api.ok("GET", "/api/v1/watches/%d" % wid)["paused"], True, "paused in the API")
    _, _, page = b.get("/watches/%d" % wid)
    check('action="/watches/%d/resume"' % wid in page, "resume button")
    eq(reader.post("/watches/%d/resume" % wid, {"csrf": reader.csrf})[0], 403,
       "readers cannot resume")
    status, hdrs, _ = b.post("/watches/%d/resume" % wid, {"csrf": b.csrf})
    eq((status, hdrs.get("Location")), (303, "/watches/%d" % wid), "resumed")
    eq(svc.api.ok("GET", "/api/v1/watches/%d" % wid)["paused"], False, "resumed in the API")
    b.post("/watches/%d/pause" % wid, {"csrf": b.csrf})

    eq(b.post("/watches/%d/delete" % wid, {"csrf": b.csrf})[0], 400, "delete needs the tick")
    eq(svc.api.call("GET", "/api/v1/watches/%d" % wid)[0], 200, "still there")
    eq(b.post("/watches/%d/delete" % wid, {"confirm": "1"})[0], 403, "delete needs CSRF")
    status, hdrs, _ = b.post("/watches/%d/delete" % wid, {"csrf": b.csrf, "confirm": "1"})
    eq((status, hdrs.get("Location")), (303, "/watches"), "deleted")
    eq(svc.api.call("GET", "/api/v1/watches/%d" % wid)[0], 404, "gone")
    eq(b.post("/watches/%d/pause" % wid, {"csrf": b.csrf})[0], 404, "no such watch")
