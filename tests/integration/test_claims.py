"""Claims wake at once on new work and stay single with several servers
(issue 14).  A claim may wait (`?wait=SECONDS`): the server holds it on
LISTEN/NOTIFY and hands out a task as soon as one is queued, whichever
server's transaction queued it; bad wait values are refused.  Two server
processes on one database, each with workers claiming through it, finish
every job with the right culprit, no task run by two workers, no run
stored twice and exactly one report per job, both mailers running."""
import os
import re
import signal
import threading
import time

from harness import (Api, Service, bench_repo, check, eq, rand_index,
                     runs_stored_once, test, two_servers, wait_for)

P = "claims"
WAIT_S = 20


def claim(api, worker_id, query=""):
    return api.call("POST", "/api/v1/workers/%d/claim%s" % (worker_id, query))


@test
def a_waiting_claim_returns_the_task_once_a_job_is_queued(env):
    svc = Service(env.root, env.cluster, P, worker=False,
                  conninfo=env.cluster.database(P))
    try:
        repo, shas = bench_repo(os.path.join(env.root, P + "-repo"), 8,
                                {rand_index(2, 6): 950.0}, owner=__name__)
        svc.register(P, repo, P + "-tc")
        worker = Api(svc.url, svc.worker_token)
        worker_id = worker.ok("POST", "/api/v1/workers",
                              {"name": "waiter"})["id"]
        # Bad waits: refused with a JSON error before anything is claimed.
        for bad in ("-1", "abc", "31", "1e3", "", "99999999999999999999",
                    "2.5"):
            status, reply = claim(worker, worker_id, "?wait=" + bad)
            eq(status, 400, "status of a claim with wait=%r" % bad)
            eq(reply["error"]["code"], "invalid_field",
               "error code for wait=%r" % bad)
        started = time.time()
        eq(claim(worker, worker_id, "?wait=0"), (200, {"task": None}),
           "a claim with nothing queued and wait=0")
        check(time.time() - started < 2, "wait=0 answers at once")

        got = {}

        def waiting_claim():
            got["started"] = time.time()
            got["answer"] = claim(worker, worker_id, "?wait=%d" % WAIT_S)
            got["returned"] = time.time()

        t = threading.Thread(target=waiting_claim)
        t.start()
        time.sleep(2.0)
        check(t.is_alive(), "the claim waits while nothing is queued")
        submitted = time.time()
        job = svc.submit({"repo": P, "testcase": P + "-tc",
                          "good": shas[0], "bad": shas[-1]})["id"]
        t.join(WAIT_S + 10)
        check(not t.is_alive(), "the waiting claim returned")
        status, reply = got["answer"]
        eq(status, 200, "status of the waiting claim")
        check(isinstance(reply.get("task"), dict),
              "the waiting claim got a task: %r" % (reply,))
        eq(reply["task"]["job"], job, "the task's job")
        # Well before the wait ran out: woken by the job, not by the
        # end of the wait.
        check(got["returned"] - submitted < WAIT_S / 2,
              "returned %.1f s after the submission, %.1f s after the "
              "claim began (wait %d s)" % (got["returned"] - submitted,
                                           got["returned"] - got["started"],
                                           WAIT_S))
        # With the task taken and nothing else queued, a waiting claim
        # waits out its wait and answers no task.
        started = time.time()
        eq(claim(worker, worker_id, "?wait=3"), (200, {"task": None}),
           "a claim with nothing left to claim")
        check(time.time() - started >= 2.9,
              "an empty claim answers when its wait ran out (%.1f s)"
              % (time.time() - started))
        # A server asked to stop does not wait for its waiting claims
        # (which get no task, or see the connection close).
        def claim_while_stopping():
            try:
                got["answer"] = claim(worker, worker_id, "?wait=%d" % WAIT_S)
            except OSError as e:
                got["answer"] = e

        got.clear()
        t = threading.Thread(target=claim_while_stopping)
        t.start()
        time.sleep(1.0)
        stopping = time.time()
        os.killpg(svc.server.pid, signal.SIGTERM)
        svc.server.wait(timeout=WAIT_S)
        check(time.time() - stopping < 5,
              "the server stopped %.1f s after SIGTERM with a claim "
              "waiting" % (time.time() - stopping))
        eq(svc.server.returncode, 0, "the server's exit status")
        t.join(WAIT_S + 10)
        check(isinstance(got["answer"], OSError)
              or got["answer"] == (200, {"task": None}),
              "the claim of a stopping server: %r" % (got["answer"],))
    finally:
        svc.stop()


@test
def a_waiting_claim_finds_work_whose_notification_was_lost(env):
    name = P + "3"
    svc = Service(env.root, env.cluster, name, worker=False,
                  conninfo=env.cluster.database(name))
    try:
        repo, shas = bench_repo(os.path.join(env.root, name + "-repo"), 6,
                                {3: 950.0}, owner=__name__)
        svc.register(name, repo, name + "-tc")
        # Tasks are queued without a NOTIFY: as if it was lost.
        svc.psql("alter table tasks disable trigger tasks_notify")
        worker = Api(svc.url, svc.worker_token)
        worker_id = worker.ok("POST", "/api/v1/workers",
                              {"name": "waiter"})["id"]
        got = {}

        def waiting_claim():
            got["answer"] = claim(worker, worker_id, "?wait=%d" % WAIT_S)
            got["returned"] = time.time()

        t = threading.Thread(target=waiting_claim)
        t.start()
        time.sleep(1.0)
        submitted = time.time()
        job = svc.submit({"repo": name, "testcase": name + "-tc",
                          "good": shas[0], "bad": shas[-1]})["id"]
        t.join(WAIT_S + 10)
        eq(got["answer"][0], 200, "status of the waiting claim")
        eq((got["answer"][1].get("task") or {}).get("job"), job,
           "the job of the task the claim found by looking again")
        check(got["returned"] - submitted < WAIT_S / 2,
              "found %.1f s after the submission (wait %d s)"
              % (got["returned"] - submitted, WAIT_S))
    finally:
        svc.stop()


@test
def waiting_claims_hold_no_thread_and_are_bounded(env):
    name = P + "4"
    # Two threads, ten connections: at most six claims wait at once.
    svc = Service(env.root, env.cluster, name, worker=False,
                  conninfo=env.cluster.database(name),
                  extra_args=["--threads", "2", "--max-connections", "10"])
    try:
        worker = Api(svc.url, svc.worker_token)
        ids = [worker.ok("POST", "/api/v1/workers",
                         {"name": "waiter-%d" % i})["id"] for i in range(7)]
        answers = {}

        def waiting_claim(i):
            answers[i] = claim(worker, ids[i], "?wait=8")

        threads = [threading.Thread(target=waiting_claim, args=(i,))
                   for i in range(6)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        check(all(t.is_alive() for t in threads), "six claims wait")
        # Six waiting claims and two threads: the server still answers.
        started = time.time()
        status, _ = svc.api.call("GET", "/api/v1/workers")
        eq(status, 200, "a request while six claims wait")
        check(time.time() - started < 2,
              "answered in %.1f s" % (time.time() - started))
        # A seventh waiting claim is past the bound: answered at once.
        started = time.time()
        eq(claim(worker, ids[6], "?wait=8"), (200, {"task": None}),
           "the claim past the bound")
        check(time.time() - started < 2, "the claim past the bound "
              "answered in %.1f s" % (time.time() - started))
        for t in threads:
            t.join(20)
        eq(sorted(answers), list(range(6)), "claims that came back")
        check(all(a == (200, {"task": None}) for a in answers.values()),
              "waiting claims with nothing to claim: %r" % answers)
    finally:
        svc.stop()


def claim_figures(svc):
    """(claims woken so far, claims waiting now) from GET /metrics."""
    text = svc.api.ok("GET", "/metrics")
    woken = re.search(r"^statbisect_claims_woken_total (\d+)$", text, re.M)
    waiting = re.search(r"^statbisect_claims_waiting (\d+)$", text, re.M)
    check(woken and waiting, "the claim figures in GET /metrics")
    return int(woken.group(1)), int(waiting.group(1))


@test
def a_queued_task_wakes_only_the_claims_of_its_group(env):
    name = P + "5"
    svc = Service(env.root, env.cluster, name, worker=False,
                  conninfo=env.cluster.database(name))
    threads = {}
    try:
        repo, shas = bench_repo(os.path.join(env.root, name + "-repo"), 6,
                                owner=__name__ + name)
        svc.register(name, repo, name + "-tc")
        worker = Api(svc.url, svc.worker_token)
        ids = {n: worker.ok("POST", "/api/v1/workers",
                            {"name": n, "group": n[0]})["id"]
               for n in ("a1", "b1", "b2", "b3")}
        answers = {}

        def waiting_claim(n):
            try:
                answers[n] = claim(worker, ids[n], "?wait=%d" % WAIT_S)
            except OSError as e:  # the server stopped under it
                answers[n] = (None, {"error": str(e)})

        threads = {n: threading.Thread(target=waiting_claim, args=(n,))
                   for n in ids}
        for t in threads.values():
            t.start()
        wait_for("four claims waiting",
                 lambda: claim_figures(svc)[1] == 4, svc, timeout=30)
        woken, _ = claim_figures(svc)

        # A task of group a: the one claim of group a wakes and takes it.
        svc.submit({"repo": name, "testcase": name + "-tc", "group": "a",
                    "good": shas[0], "bad": shas[-1]})
        threads["a1"].join(10)
        check(not threads["a1"].is_alive(), "the claim of group a returned")
        check(answers["a1"][1].get("task") is not None,
              "the claim of group a got the task: %r" % (answers["a1"],))
        eq(claim_figures(svc), (woken + 1, 3),
           "claims woken, claims waiting after a task of group a")

        # A task of group b wakes the three of group b; one takes it.
        svc.submit({"repo": name, "testcase": name + "-tc", "group": "b",
                    "good": shas[0], "bad": shas[-1]})
        wait_for("a claim of group b with the task", lambda: any(
            a[1].get("task") for n, a in answers.items() if n != "a1"),
            svc, timeout=10)
        eq(claim_figures(svc), (woken + 4, 2),
           "claims woken, claims waiting after a task of group b")
    finally:
        svc.stop()
        for t in threads.values():
            t.join(WAIT_S + 10)


def two_servers_sql_checks(svc, jobs):
    ids = ",".join(str(j) for j in jobs)
    # A job keeps to one machine: every run of it from its worker.
    eq(svc.psql("select count(*) from runs r join jobs j on j.id = r.job_id"
                " where j.id in (%s) and r.worker_id <> j.worker_id" % ids),
       "0", "runs of a job made by another worker than its own")
    runs_stored_once(svc, ids)
    eq(svc.psql("select count(*) from tasks where job_id in (%s)"
                " and state <> 'done'" % ids), "0", "tasks not done")
    # One report per job, sent once, whichever mailer sent it.
    eq(svc.psql("select string_agg(n::text, ',') from (select count(*) n"
                " from outbox where job_id in (%s) group by job_id"
                " order by job_id) x" % ids),
       ",".join("1" for _ in jobs), "outbox rows per job")
    eq(svc.psql("select count(*) from outbox where job_id in (%s)"
                " and sent_at is not null" % ids), str(len(jobs)),
       "reports sent")


def mail_files(*services):
    n = 0
    for svc in services:
        new = os.path.join(svc.mail, "new")
        n += len(os.listdir(new)) if os.path.isdir(new) else 0
    return n


@test
def two_servers_on_one_database_share_claims_decisions_and_mail(env):
    name = P + "2"
    with two_servers(env, name) as (one, two):
        commits = 12
        culprits = [rand_index(2, commits - 2, seed=s) for s in (1, 2, 3)]
        jobs = []
        for k, culprit in enumerate(culprits):
            repo, shas = bench_repo(
                os.path.join(env.root, "%s-repo%d" % (name, k)), commits,
                {culprit: 950.0}, owner=__name__)
            one.register("%s-%d" % (name, k), repo, "%s-tc%d" % (name, k))
            jobs.append((k, shas, culprit))
        for svc in (one, two):
            svc.start_worker(svc.name + "-w1")
            svc.start_worker(svc.name + "-w2")
        ids = []
        for k, shas, culprit in jobs:
            svc = (one, two)[k % 2]
            ids.append(svc.submit({"repo": "%s-%d" % (name, k),
                                   "testcase": "%s-tc%d" % (name, k),
                                   "good": shas[0], "bad": shas[-1],
                                   "notify": ["dev@example.org"]})["id"])
        for job_id, (k, shas, culprit) in zip(ids, jobs):
            done = (two, one)[k % 2].wait(job_id, timeout=400)
            eq(done["state"], "done", "job %d state" % job_id)
            eq(done["culprit"], shas[culprit], "job %d culprit" % job_id)
        workers = one.psql("select count(distinct worker_id) from runs"
                           " where job_id in (%s)"
                           % ",".join(map(str, ids)))
        check(int(workers) >= 2, "the jobs ran on %s workers" % workers)
        deadline = time.time() + 60
        while time.time() < deadline and mail_files(one, two) < len(ids):
            time.sleep(0.3)
        two_servers_sql_checks(one, ids)
        time.sleep(2)  # a mailer that would send again has had its turn
        eq(mail_files(one, two), len(ids), "report files of both mailers")

