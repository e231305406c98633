"""Machine groups (issue 14): a testcase names the group of machines its
jobs run on, and a submission may name another.  A job of group "b" is
claimed only by the worker of group "b" while the worker of group "a"
stays idle beside it; a job of the testcase's own group "a" then runs on
"a".  A bad group name is refused as worker registration refuses it, and
nothing is stored."""
import os

from harness import ADMIN, Service, bench_repo, check, eq, rand_index, test, wait_for
from test_web import Browser, error_of, field

P = "groups"
COMMITS = 8


def runs_by_worker(svc, job):
    rows = svc.psql("select w.name || '/' || w.grp || '=' || count(*)"
                    " from runs r join workers w on w.id = r.worker_id"
                    " where r.job_id = %d group by w.name, w.grp"
                    " order by w.name" % job)
    return rows.splitlines()


@test
def a_job_runs_only_on_workers_of_its_group(env):
    svc = Service(env.root, env.cluster, P, worker=False,
                  conninfo=env.cluster.database(P))
    try:
        culprit = rand_index(2, COMMITS - 1)
        repo, shas = bench_repo(os.path.join(env.root, P + "-repo"), COMMITS,
                                {culprit: 950.0}, owner=__name__)
        svc.register(P, repo, P + "-tc", group="a")
        tc = svc.api.ok("GET", "/api/v1/testcases/%s-tc" % P)
        eq(tc["group"], "a", "the testcase's group")
        body = {"repo": P, "testcase": P + "-tc", "good": shas[0],
                "bad": shas[-1]}

        # Refused as a worker's group is, and nothing changes.
        for bad in ("", "a\tb", "x" * 65, 7):
            status, reply = svc.api.call("POST", "/api/v1/jobs",
                                         dict(body, group=bad),
                                         token=svc.submit_token)
            eq((status, reply["error"]["code"], reply["error"]["field"]),
               (400, "invalid_field", "group"), "job group %r" % (bad,))
            status, reply = svc.api.call("PATCH",
                                         "/api/v1/testcases/%s-tc" % P,
                                         {"group": bad})
            eq(status, 400, "testcase group %r" % (bad,))
            status, reply = svc.api.call("POST", "/api/v1/workers",
                                         {"name": "w", "group": bad},
                                         token=svc.worker_token)
            eq(status, 400, "worker group %r" % (bad,))
        eq(svc.psql("select count(*) from jobs"), "0", "jobs stored")
        eq(svc.api.ok("GET", "/api/v1/testcases/%s-tc" % P)["group"], "a",
           "the testcase's group after the refused patches")

        svc.start_worker("wa", args=["--group", "a"])
        svc.start_worker("wb", args=["--group", "b"])
        wait_for("both workers registered", lambda: svc.psql(
            "select count(*) from workers") == "2", svc)
        job_b = svc.submit(dict(body, group="b"))["id"]
        shown = svc.api.ok("GET", "/api/v1/jobs/%d" % job_b,
                           token=svc.read_token)
        eq(shown["group"], "b", "the job's group, named by its submission")
        done = svc.wait(job_b, timeout=200)
        eq((done["state"], done["culprit"]), ("done", shas[culprit]),
           "job of group b")
        eq(done["machine"]["name"], "wb", "the machine of the job of b")
        eq(runs_by_worker(svc, job_b), ["wb/b=%d" % (
            done["machine"]["runs_superseded"] + done["runs"])],
           "the runs of the job of group b")
        eq(svc.psql("select count(*) from tasks t join workers w"
                    " on w.id = t.worker_id where w.name = 'wa'"), "0",
           "tasks the worker of group a claimed")

        # A re-run keeps its job's group; the testcase's is still "a".
        rerun = svc.api.ok("POST", "/api/v1/jobs/%d/rerun" % job_b,
                           token=svc.submit_token)
        rerun_id = rerun.get("id") or rerun.get("job", {}).get("id")
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % rerun_id,
                      token=svc.read_token)["group"], "b", "the re-run's group")
        svc.api.ok("DELETE", "/api/v1/jobs/%d" % rerun_id,
                   token=svc.submit_token)

        # The web form takes a group too, and says what is wrong with one.
        web = Browser(svc.url).sign_in(svc.submit_token)
        form = {"csrf": web.csrf, "repo": P, "testcase": P + "-tc",
                "good": shas[0], "bad": shas[-1], "group": "a\tb"}
        status, _, page = web.post("/jobs/new", form)
        eq(status, 400, "the form with a bad group")
        check('id="group-error"' in page, "the form marks the group")
        status, hdrs, _ = web.post("/jobs/new", dict(form, group="b"))
        eq(status, 303, "the form with group b")
        web_job = int(hdrs["Location"].rstrip("/").split("/")[-1])
        eq(svc.api.ok("GET", "/api/v1/jobs/%d" % web_job,
                      token=svc.read_token)["group"], "b", "the form's job")
        svc.api.ok("DELETE", "/api/v1/jobs/%d" % web_job,
                   token=svc.submit_token)

        # The admin pages show and take a testcase's group.
        admin = Browser(svc.url).sign_in(ADMIN)
        status, _, page = admin.get("/admin/testcases/%s-tc/edit" % P)
        eq((status, field(page, "group")), (200, "a"), "the edit form's group")
        tc_form = {"csrf": admin.csrf, "name": P + "-web", "build": "make",
                   "run": "./bench", "kpi": "k", "higher_is_better": "true",
                   "min_change_pct": "2"}
        status, _, page = admin.post("/admin/testcases",
                                     dict(tc_form, group="a\nb"))
        eq((status, error_of(page, "group") is not None), (400, True),
           "the testcase form with a bad group")
        status, _, _ = admin.post("/admin/testcases", dict(tc_form, group="b"))
        eq(status, 303, "the testcase form with group b")
        eq(svc.api.ok("GET", "/api/v1/testcases/%s-web" % P)["group"], "b",
           "the group the form stored")

        # Without one, the job takes its testcase's group and runs there.
        job_a = svc.submit(body)["id"]
        done = svc.wait(job_a, timeout=200)
        eq((done["group"], done["state"], done["culprit"]),
           ("a", "done", shas[culprit]), "job of the testcase's group")
        check(runs_by_worker(svc, job_a)[0].startswith("wa/a="),
              "the runs of the job of group a: %r"
              % runs_by_worker(svc, job_a))
        eq(len(runs_by_worker(svc, job_a)), 1, "workers of the job of a")

        # The list says each job's group and takes one to filter by.
        listed = svc.api.ok("GET", "/api/v1/jobs?limit=100",
                            token=svc.read_token)["jobs"]
        eq({j["id"]: j["group"] for j in listed if j["id"] in (job_a, job_b)},
           {job_a: "a", job_b: "b"}, "groups in the list")
        of_b = svc.api.ok("GET", "/api/v1/jobs?group=b&limit=100",
                          token=svc.read_token)
        check(of_b["total"] >= 1 and all(j["group"] == "b"
                                          for j in of_b["jobs"]),
              "the jobs of group b: %r" % of_b)
        check(job_b in [j["id"] for j in of_b["jobs"]] and
              job_a not in [j["id"] for j in of_b["jobs"]],
              "the list of group b holds b's job, not a's")
        status, reply = svc.api.call("GET", "/api/v1/jobs?group=a%09b",
                                     token=svc.read_token)
        eq((status, reply["error"]["code"]), (400, "invalid_query"),
           "a group with a control character in the query")
    finally:
        svc.stop()
