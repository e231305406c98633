"""The worker protocol from the worker's side: what an upload must look
like, and that a claimed task takes writes from its worker only."""
import os

from harness import Api, Service, bench_repo, eq, test

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
