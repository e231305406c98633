"""A database that fails, on a cluster of the test's own: the API answers
503 "try again" while the database is down, 500 with the SQLSTATE when it
refuses a query's data (trying again would not help), and serves again,
from the same server process, once the database is back (a thread whose
connection died answers 503 once, then reconnects)."""
import os
import time

from harness import Cluster, Service, bench_repo, check, eq, test
from test_cli import cli


@test
def database_down_is_503_refused_data_is_500_and_service_resumes(env):
    root = os.path.join(env.root, "dbfail")
    os.makedirs(root, exist_ok=True)
    cluster = Cluster(root)
    svc = Service(root, cluster, "dbfail", worker=False)
    try:
        repo, shas = bench_repo(os.path.join(root, "repo"), 2, owner=__name__)
        body = {"name": "dbfail", "url": repo.path}
        eq(svc.api.call("GET", "/api/v1/repos")[0], 200, "up")

        # Data the database refuses: a check that no new row passes.
        cluster.psql("alter table repos add constraint dbfail_none"
                     " check (false) not valid")
        status, reply = svc.api.call("POST", "/api/v1/repos", body)
        eq((status, reply["error"]["code"]), (500, "internal"), "refused data")
        check("23514" in reply["error"]["message"],
              "the SQLSTATE is named: %r" % reply["error"]["message"])
        eq(cluster.psql("select count(*) from repos"), "0", "nothing stored")
        cluster.psql("alter table repos drop constraint dbfail_none")
        eq(svc.api.call("POST", "/api/v1/repos", body)[0], 201, "accepted again")

        # A read the database refuses (a column gone: 42703) is a 500 too,
        # and the client's --wait gives up on it at once (exit 2) rather
        # than retrying as it does while the server is down.
        svc.register("dbfail-job", repo, "dbfail-tc")
        job = svc.submit({"repo": "dbfail-job", "testcase": "dbfail-tc",
                          "good": shas[0], "bad": shas[-1]})
        cluster.psql("alter table jobs rename column state to state_gone")
        status, reply = svc.api.call("GET", "/api/v1/jobs/%d" % job["id"])
        eq((status, reply["error"]["code"]), (500, "internal"), "refused read")
        check("42703" in reply["error"]["message"], "SQLSTATE named")
        started = time.time()
        code, _, err = cli(svc, "status", str(job["id"]), "--wait")
        eq(code, 2, "the client's exit status on a 500: %s" % err.strip())
        check(time.time() - started < 20, "no retries on a 500: %.1f s"
              % (time.time() - started))
        check("42703" in err, "the client says why: %r" % err)
        cluster.psql("alter table jobs rename column state_gone to state")

        # The database goes away: try again, says the API, every time.
        cluster.stop()
        for what in ("the first call on a dead connection", "a reconnection refused"):
            status, reply = svc.api.call("GET", "/api/v1/repos")
            eq((status, reply["error"]["code"]), (503, "unavailable"), what)
        eq(svc.api.call("GET", "/healthz", token="")[0], 200, "the server itself lives")

        # Back: the same server process serves again.  A server thread
        # whose connection died in the outage learns it on its next query
        # and answers 503 once; a client that tries again, as a 503 asks,
        # is served, after at most one such answer per thread (--threads,
        # 4 by default).
        eq(Cluster(root).conninfo, cluster.conninfo, "the same cluster")
        statuses = []
        for _ in range(10):
            status, reply = svc.api.call("GET", "/api/v1/repos")
            statuses.append(status)
            if status == 200:
                break
            eq((status, reply["error"]["code"]), (503, "unavailable"),
               "while a thread reconnects")
        eq(status, 200, "serving again after %r" % statuses)
        check(len(statuses) <= 5, "one 503 a thread at most: %r" % statuses)
        eq(sorted(r["name"] for r in reply["repos"]), ["dbfail", "dbfail-job"],
           "what was stored")
    finally:
        svc.stop()
        cluster.stop()
