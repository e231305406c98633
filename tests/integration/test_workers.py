"""The worker protocol from the worker's side: what an upload must look
like, and that a claimed task takes writes from its worker only."""
import os

from harness import Api, Service, bench_repo, check, eq, test

P = "workers-"


def manual_worker(env, name):
    """A server of its own (no worker process) with a job of four commits
    and one registered worker that has claimed the job's first task."""
    svc = Service(env.root, env.cluster, P + name, worker=False,
                  conninfo=env.cluster.database(P.rstrip("-") + "_" + name))
    repo, shas = bench_repo(os.path.join(env.root, P + name), 4)
    svc.register(P + name, repo, P + name + "-tc")
    job = svc.submit({"repo": P + name, "testcase": P + name + "-tc",
                      "good": shas[0], "bad": shas[-1]})
    w = Api(svc.url, svc.worker_token)
    wid = w.ok("POST", "/api/v1/workers", {"name": name + "-a"})["id"]
    task = w.ok("POST", "/api/v1/workers/%d/claim" % wid)["task"]
    return svc, job, w, wid, task


def runs_of(task, count=None):
    return [{"exit_code": 0, "wall_s": 0.1, "commit_index": c["index"],
             "metrics": {"bench.score": 1000.0}}
            for c in task["commits"] for _ in range(count or c["runs"])]


def stored(svc, job):
    """How many runs job has, and how many of its commits failed to build."""
    return svc.psql("select (select count(*) from runs where job_id = %d)"
                    " || ' ' || (select count(*) from job_commits where"
                    " job_id = %d and build_failed)" % (job["id"], job["id"]))


def task_row(svc, task):
    return svc.psql("select state || ' ' || worker_id || ' ' ||"
                    " lease_expires_at from tasks where id = %d" % task["id"])


@test
def uploads_in_the_older_shape_are_refused(env):
    svc, job, w, wid, task = manual_worker(env, "shape")
    try:
        path = "/api/v1/tasks/%d/result" % task["id"]
        before = task_row(svc, task)
        # An older worker said "build_failed" for the task's one commit;
        # workers now name each commit in "build_failures".
        for body, what in (
                ({"lease": task["lease"], "runs": [], "build_failed": True,
                  "build_log": "error"}, "build_failed"),
                ({"lease": task["lease"], "runs": [], "build_log": "x"},
                 "build_log alone"),
                ({"lease": task["lease"], "runs": [
                    dict(r, commit_index=None) for r in runs_of(task)]},
                 "runs with a null commit_index")):
            status, reply = w.call("POST", path, body)
            eq((status, reply["error"]["code"]), (400, "invalid_field"
               if "build" in what else "invalid_run"), what)
        runs = runs_of(task)
        for r in runs:
            del r["commit_index"]
        status, reply = w.call("POST", path, {"lease": task["lease"],
                                              "runs": runs[:1]})
        eq((status, reply["error"]["code"]), (400, "invalid_run"),
           "a run without commit_index")
        check_message = reply["error"]["message"]
        eq("'commit_index' (integer)" in check_message, True,
           "the message names commit_index: " + check_message)
        eq(stored(svc, job), "0 0", "nothing stored")
        eq(task_row(svc, task), before, "the task is as it was")
        eq(w.ok("POST", path, {"lease": task["lease"],
                               "runs": runs_of(task)})["stored"],
           len(runs_of(task)), "the current shape is taken")
    finally:
        svc.stop()


@test
def another_worker_cannot_write_into_a_claimed_task(env):
    """Issue 11: worker B, with a token of its own, knows task and lease of
    worker A's claim (or guesses them) and posts a heartbeat and fake
    runs: both are refused and change nothing; A's upload still counts."""
    svc, job, wa, wid_a, task = manual_worker(env, "bind")
    try:
        token_b = svc.api.ok("POST", "/api/v1/tokens",
                             {"name": P + "bind-b", "role": "worker"})["token"]
        wb = Api(svc.url, token_b)
        wid_b = wb.ok("POST", "/api/v1/workers", {"name": "bind-b"})["id"]
        # The lease is an unguessable number, not a claim counter.
        check(task["lease"] >= 2 ** 32, "a random lease: %d" % task["lease"])
        before = task_row(svc, task)
        heartbeat = "/api/v1/tasks/%d/heartbeat" % task["id"]
        result = "/api/v1/tasks/%d/result" % task["id"]
        fake = runs_of(task)
        for who, api, body in (
                ("B with A's lease", wb, {"lease": task["lease"]}),
                ("B with a guessed lease", wb, {"lease": 1}),
                ("A with a wrong lease", wa, {"lease": task["lease"] ^ 1})):
            for path, extra in ((heartbeat, {}), (result, {"runs": fake})):
                status, reply = api.call("POST", path, dict(body, **extra))
                check(400 <= status < 500 and "code" in reply.get("error", {}),
                      "%s on %s: %d %s" % (who, path, status, reply))
        eq(wb.call("POST", result, {"lease": task["lease"], "runs": fake})[1]
           ["error"]["code"], "not_your_task", "B is told why")
        eq(stored(svc, job), "0 0", "no run and no build failure stored")
        eq(task_row(svc, task), before, "the task is A's as it was")
        # B claims: A's task is not handed out while A's lease lives.
        eq(wb.ok("POST", "/api/v1/workers/%d/claim" % wid_b)["task"], None,
           "nothing for B")
        eq(wa.ok("POST", result, {"lease": task["lease"],
                                  "runs": runs_of(task)})["stored"],
           len(runs_of(task)), "A's upload counts")
        eq(svc.psql("select string_agg(distinct worker_id::text, ',') from"
                    " runs where job_id = %d" % job["id"]), str(wid_a),
           "every run is A's")
    finally:
        svc.stop()
