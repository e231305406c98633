"""The job cache (issue 11): GET /api/v1/jobs/{id} answers from what the
server kept of the job, and never answers what the database no longer
says.  Each change below is made where the server asking does not see
it (psql, another server, a broken listening connection), so only the
notification of sql/170_job_notify.sql can tell it; the cache's own
counters in GET /metrics show the answers were in fact kept."""
import os
import time

from harness import (Service, bench_repo, check, eq, metric_value, test,
                     two_servers, wait_for)

P = "jobcache"
# A notification reaches the server in milliseconds; far under this.
FRESH_S = 5


def hits(svc):
    return metric_value(svc, "statbisect_jobcache_hits_total")


def get(svc, job):
    return svc.api.ok("GET", "/api/v1/jobs/%d" % job, token=svc.read_token)


def a_job(env, svc, name):
    repo, shas = bench_repo(os.path.join(env.root, name + "-repo"), 4,
                            owner=__name__ + name)
    svc.register(name, repo, name + "-tc")
    return svc.submit({"repo": name, "testcase": name + "-tc",
                       "good": shas[0], "bad": shas[-1]})["id"]


def kept(svc, job):
    """Asks for the job until an answer comes from the cache (the
    listening connection may still be connecting); that answer."""
    def answered_from_cache():
        before = hits(svc)
        answer = get(svc, job)
        return answer if hits(svc) > before else None
    return wait_for("an answer kept for job %d" % job, answered_from_cache,
                    svc, timeout=30)


def seen_within(what, fn, svc):
    t0 = time.monotonic()
    wait_for(what, fn, svc, timeout=FRESH_S)
    return time.monotonic() - t0


@test
def a_kept_answer_follows_changes_the_server_did_not_make(env):
    svc = Service(env.root, env.cluster, P, worker=False,
                  conninfo=env.cluster.database(P))
    try:
        job = a_job(env, svc, P)
        first = kept(svc, job)
        eq(first["message"], None, "message before")
        again = hits(svc)
        eq(get(svc, job), first, "a second answer from the cache")
        check(hits(svc) > again, "the second answer was kept")

        # A fleet's traffic does not empty the cache: a worker's request
        # forgets nothing (what it changes is notified).
        status, _ = svc.api.call("POST", "/api/v1/tasks/999999/heartbeat",
                                 {"lease": "x"}, token=svc.worker_token)
        check(400 <= status < 500, "heartbeat of no task: %d" % status)
        again = hits(svc)
        get(svc, job)
        check(hits(svc) > again, "kept across a worker's request")

        svc.psql("update jobs set message = 'changed behind the server'"
                 " where id = %d" % job)
        took = seen_within("the change made with psql", lambda: get(
            svc, job)["message"] == "changed behind the server", svc)
        print("  a change made with psql seen after %.3f s" % took)

        # A change to what every job shows (its testcase's KPI).
        svc.psql("update testcases set kpi = 'bench.other' where name = '%s'"
                 % (P + "-tc"))
        seen_within("the testcase's change", lambda: get(
            svc, job)["kpi"] == "bench.other", svc)

        # Time goes on in a kept answer: a job running for 100 s.
        svc.psql("update jobs set state = 'running', started_at ="
                 " now() - interval '100 seconds' where id = %d" % job)
        seen_within("the job running", lambda: get(
            svc, job)["state"] == "running", svc)
        one = kept(svc, job)["progress"]["elapsed_s"]
        time.sleep(1.2)
        before = hits(svc)
        two = get(svc, job)["progress"]["elapsed_s"]
        check(hits(svc) > before, "the later answer came from the cache")
        check(100 <= one < 130 and two - one >= 1.0,
              "elapsed_s %r then %r, 1.2 s apart" % (one, two))
    finally:
        svc.stop()


@test
def a_change_through_another_server_is_seen_at_once(env):
    name = P + "2"
    with two_servers(env, name) as (one, two):
        job = a_job(env, one, name)
        eq(kept(one, job)["state"], "queued", "state on the first server")
        two.api.ok("DELETE", "/api/v1/jobs/%d" % job,
                   token=two.submit_token)
        took = seen_within("the cancel through the other server",
                           lambda: get(one, job)["state"] == "cancelled",
                           one)
        print("  a cancel through the other server seen after %.3f s" % took)
        # Whom a token names is kept too, and forgotten when another
        # server revokes it.
        token = one.api.ok("POST", "/api/v1/tokens",
                           {"name": name + "-soon-revoked", "role": "read"})
        for _ in range(2):
            eq(one.api.call("GET", "/api/v1/jobs/%d" % job,
                            token=token["token"])[0], 200, "token in use")
        two.api.ok("DELETE", "/api/v1/tokens/%d" % token["id"],
                   expect=(200, 204))
        took = seen_within("the token revoked through the other server",
                           lambda: one.api.call(
                               "GET", "/api/v1/jobs/%d" % job,
                               token=token["token"])[0] == 401, one)
        print("  a token revoked through the other server refused after"
              " %.3f s" % took)

        # Its own writes a server's client reads at once, before their
        # notification is back.
        first = get(one, job)
        other = one.submit({"repo": name, "testcase": name + "-tc",
                            "good": first["good"],
                            "bad": first["bad"]})["id"]
        eq(kept(one, other)["state"], "queued", "the second job's state")
        one.api.ok("DELETE", "/api/v1/jobs/%d" % other,
                   token=one.submit_token)
        eq(get(one, other)["state"], "cancelled",
           "the state read right after the cancel")


@test
def a_lost_listening_connection_forgets_what_was_kept(env):
    name = P + "3"
    svc = Service(env.root, env.cluster, name, worker=False,
                  conninfo=env.cluster.database(name))
    try:
        job = a_job(env, svc, name)
        kept(svc, job)
        # The server's LISTEN connection is cut; what is written meanwhile
        # is notified to nobody.
        cut = svc.psql("select count(pg_terminate_backend(pid))"
                       " from pg_stat_activity where datname = '%s'"
                       " and query = 'LISTEN statbisect_jobs'" % name)
        eq(cut, "1", "listening connections cut")
        svc.psql("update jobs set message = 'written while nobody listened'"
                 " where id = %d" % job)
        seen_within("the change written while nobody listened", lambda: get(
            svc, job)["message"] == "written while nobody listened", svc)
        # It listens again, and keeps answers again.
        kept(svc, job)
    finally:
        svc.stop()
