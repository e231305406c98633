"""The list cache: the dashboard and GET /api/v1/jobs answer from the
pages a server kept per filter (server/listcache.h), and never show what
the database no longer says.  Each change below is made where the server
asked does not see it (psql, another server, a broken listening
connection), so only the notifications of sql/170_job_notify.sql and
sql/180_job_list_notify.sql can tell it: a job's row changed in place, a
job moved between the filters, a job added.  Whenever the job's own
answer (the job cache) shows a change, the lists show it in the same
instant; the cache's counters in GET /metrics show the pages were in
fact kept."""
import html
import os
import re

from harness import (bench_repo, check, eq, metric_value, test, two_servers,
                     wait_for)
from test_web import Browser

P = "jobs_list"
# A notification reaches the server in milliseconds; far under this.
FRESH_S = 5
ROW = re.compile(r'<td data-label="Job"><a href="/jobs/(\d+)">.*?'
                 r'<span class="state state-([a-z]+)">.*?'
                 r'<td data-label="Change" class="num">([^<]*)</td>', re.S)


def hits(svc):
    return metric_value(svc, "statbisect_listcache_hits_total")


def api_list(svc, query=""):
    reply = svc.api.ok("GET", "/api/v1/jobs" + query, token=svc.read_token)
    return reply["total"], [(j["id"], j["state"], j["change_pct"])
                            for j in reply["jobs"]]


def dashboard(svc, browser, query=""):
    """The count line and the rows (id, state, change) of the dashboard."""
    status, _, page = browser.get("/" + query)
    eq(status, 200, "dashboard %r" % query)
    count = re.search(r'<p class="count" id="job-count">([^<]*)</p>', page)
    return (html.unescape(count.group(1)),
            [(int(i), s, html.unescape(c)) for i, s, c in ROW.findall(page)])


def views(svc, browser):
    """What each list this test reads shows now."""
    return {"api": api_list(svc), "api queued": api_list(svc, "?state=queued"),
            "api page 2": api_list(svc, "?limit=2&offset=2"),
            "dashboard": dashboard(svc, browser),
            "dashboard queued": dashboard(svc, browser, "?state=queued"),
            "dashboard cancelled": dashboard(svc, browser,
                                             "?state=cancelled")}


def kept(svc, browser):
    """Reads every list until all come from the cache (the listening
    connection may still be connecting); what they show."""
    def all_from_cache():
        before = hits(svc)
        seen = views(svc, browser)
        return seen if hits(svc) == before + len(seen) else None
    return wait_for("every list answered from the cache", all_from_cache,
                    svc, timeout=30)


def job_answer(svc, job):
    return svc.api.ok("GET", "/api/v1/jobs/%d" % job, token=svc.read_token)


def lists_follow(svc, browser, what, job, answered, want):
    """Waits until the job cache answers the change (`answered` of job
    `job`'s answer), then checks at once that every list shows it (`want`
    of views())."""
    wait_for(what + " in GET /api/v1/jobs/%d" % job,
             lambda: answered(job_answer(svc, job)), svc, timeout=FRESH_S)
    seen = views(svc, browser)
    for name, value in want(seen).items():
        eq(value[0], value[1], "%s: %s" % (what, name))


def ids_states(rows):
    return [(r[0], r[1]) for r in rows]


@test
def jobs_list_and_dashboard_follow_changes_the_server_did_not_make(env):
    with two_servers(env, P) as (one, two):
        repo, shas = bench_repo(os.path.join(env.root, P + "-repo"), 4,
                                owner=__name__)
        one.register(P, repo, P + "-tc")
        ids = [one.submit({"repo": P, "testcase": P + "-tc",
                           "good": shas[0], "bad": shas[-1]})["id"]
               for _ in range(4)]
        browser = Browser(one.url).sign_in(one.read_token)
        newest = sorted(ids, reverse=True)
        first = kept(one, browser)
        eq(first["api"][0], 4, "jobs listed")
        eq(first["dashboard"][0], "4 jobs · page 1 of 1", "count line")
        eq(ids_states(first["dashboard"][1]),
           [(i, "queued") for i in newest], "dashboard rows")

        # A job's row changed in place with psql: its list entries.
        one.psql("update jobs set change_pct = -4.25 where id = %d"
                 % newest[0])
        lists_follow(one, browser, "a change made with psql", newest[0],
                     lambda a: a.get("change_pct") == -4.25,
                     lambda s: {
                         "api": (s["api"][1][0][2], -4.25),
                         "dashboard": (s["dashboard"][1][0][2], "-4.25%")})

        # A job moved between filters with psql: the counts and the pages
        # that do not show it change too.
        kept(one, browser)
        one.psql("update jobs set state = 'cancelled', finished_at = now()"
                 " where id = %d" % newest[3])
        lists_follow(one, browser, "a cancel made with psql", newest[3],
                     lambda a: a["state"] == "cancelled",
                     lambda s: {
                         "api queued total": (s["api queued"][0], 3),
                         "dashboard queued": (
                             s["dashboard queued"][0],
                             "3 jobs · page 1 of 1"),
                         "dashboard cancelled": (
                             ids_states(s["dashboard cancelled"][1]),
                             [(newest[3], "cancelled")]),
                         "api page 2": (
                             [j[:2] for j in s["api page 2"][1]],
                             [(newest[2], "queued"),
                              (newest[3], "cancelled")])})

        # A cancel through the other server.
        kept(one, browser)
        two.api.ok("DELETE", "/api/v1/jobs/%d" % newest[2],
                   token=two.submit_token)
        lists_follow(one, browser, "a cancel through the other server",
                     newest[2], lambda a: a["state"] == "cancelled",
                     lambda s: {
                         "api queued": (s["api queued"][0], 2),
                         "dashboard cancelled": (
                             [r[0] for r in s["dashboard cancelled"][1]],
                             [newest[2], newest[3]])})

        # A job added through the other server: every page shifts.
        kept(one, browser)
        added = two.submit({"repo": P, "testcase": P + "-tc",
                            "good": shas[0], "bad": shas[-1]})["id"]
        lists_follow(one, browser, "a job added through the other server",
                     added, lambda a: a["state"] == "queued",
                     lambda s: {
                         "api": ([j[0] for j in s["api"][1]],
                                 [added] + newest),
                         "api page 2": ([j[0] for j in s["api page 2"][1]],
                                        newest[1:3]),
                         "dashboard": (s["dashboard"][0],
                                       "5 jobs · page 1 of 1")})

        # A lost listening connection: what is written meanwhile is
        # notified to nobody, yet never hidden.
        kept(one, browser)
        cut = one.psql("select count(pg_terminate_backend(pid))"
                       " from pg_stat_activity where datname = '%s'"
                       " and query = 'LISTEN statbisect_jobs'" % P)
        eq(cut, "2", "listening connections cut (one per server)")
        one.psql("update jobs set state = 'running' where id = %d"
                 % newest[1])
        seen = views(one, browser)
        eq(seen["api queued"][0], 2, "queued jobs while nobody listened")
        eq(dashboard(one, browser, "?state=running")[1],
           [(newest[1], "running", "")], "running while nobody listened")
        # It listens again, and keeps pages again.
        kept(one, browser)


def who(page):
    m = re.search(r'<span class="who">([^<]*) <span class="role">([a-z]+)'
                  r'</span>', page)
    check(m is not None, "the signed-in person in the page")
    return html.unescape(m.group(1)), m.group(2)


@test
def jobs_list_dashboard_kept_shows_each_session_its_own(env):
    name = P + "2"
    with two_servers(env, name) as (one, two):
        repo, shas = bench_repo(os.path.join(env.root, name + "-repo"), 4,
                                owner=__name__ + "2")
        one.register(name, repo, name + "-tc")
        one.submit({"repo": name, "testcase": name + "-tc",
                    "good": shas[0], "bad": shas[-1]})
        reader = Browser(one.url).sign_in(one.read_token)
        kept(one, reader)
        submitter = Browser(one.url).sign_in(one.submit_token)
        other_reader = Browser(one.url).sign_in(one.read_token)
        pages = {}
        for label, b in (("reader", reader), ("submitter", submitter),
                         ("other reader", other_reader)):
            before = hits(one)
            status, _, page = b.get("/")
            eq(status, 200, "dashboard of the " + label)
            check(hits(one) == before + 1, "the %s's dashboard was kept"
                  % label)
            pages[label] = page
        eq(who(pages["reader"]), (name + "a-read", "read"), "the reader")
        eq(who(pages["submitter"]), (name + "a-submit", "submit"),
           "the submitter")
        check('href="/jobs/new">New job</a>' in pages["submitter"] and
              'href="/jobs/new">New job</a>' not in pages["reader"],
              "the New job button for the submitter only")
        csrfs = {label: re.findall(r'name="csrf" value="([0-9a-f]+)"', page)
                 for label, page in pages.items()}
        eq(len(set(sum(csrfs.values(), []))), 3,
           "each session its own CSRF token: %r" % csrfs)
        eq(csrfs["reader"], [reader.csrf], "the reader's CSRF token")

        # A repository registered through the other server is offered.
        two.api.ok("POST", "/api/v1/repos", {"name": name + "-new",
                                             "url": repo.path})
        wait_for("the new repository in the dashboard's filter",
                 lambda: '<option value="%s-new">' % name in reader.get(
                     "/")[2], one, timeout=FRESH_S)

        # The reader signs out through the other server (with the CSRF
        # token this server's kept page gave): the session ends here too.
        elsewhere = Browser(two.url)
        elsewhere.cookies = dict(reader.cookies)
        status, _, _ = elsewhere.post("/signout", {"csrf": reader.csrf})
        eq(status, 303, "signed out through the other server")
        wait_for("the session ended on this server", lambda: reader.get(
            "/")[0] in (302, 303), one, timeout=FRESH_S)
        eq(other_reader.get("/")[0], 200, "the other session goes on")
