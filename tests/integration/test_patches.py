"""Patch jobs (issue 13) on real parts: a series of four patches made with
git format-patch from a repository the test creates (the source repository
never holds the patched commits: the server and the worker make them from
the mail), bisected by a real worker, the report delivered to a real SMTP
server (aiosmtpd) as a reply in the patch's thread."""
import os
import re

import harness
from harness import Repo, bench_repo, check, eq, sh, test
from test_mail import MailService, addresses, parse

ARCHIVE = "https://lore.example.org/all/"


def make_series(repo, slow_patch=3):
    """Four patches on the repository's head, the `slow_patch`-th lowering
    the benchmark's mean by 5%; returns the mbox text.  The repository is
    put back on its head afterwards, so the patches exist only as mail."""
    base = sh("git rev-parse HEAD", cwd=repo.path).strip()
    env = dict(repo.env, GIT_AUTHOR_NAME="Pat Cher",
               GIT_AUTHOR_EMAIL="pat@example.org")
    for n in range(1, 5):
        if n == slow_patch:
            repo.write("mean", "950.0\n")
            subject = "sched: take the slow path"
        elif n == 2:
            repo.write("file01.txt", "patched by patch 2\n")
            subject = "fs: ext4: rewrite file one"
        else:
            repo.write("patch%d.txt" % n, "patch %d\n" % n)
            subject = "net: add note %d" % n
        stamp = "@%d +0100" % (1767300000 + 60 * n)
        sh("git add -A", cwd=repo.path)
        sh(["git", "commit", "-q", "-m", subject, "-m", "Why patch %d." % n],
           cwd=repo.path, env=dict(env, GIT_AUTHOR_DATE=stamp,
                                   GIT_COMMITTER_DATE=stamp))
    mbox = sh(["git", "format-patch", "--stdout", "--cover-letter",
               "--thread=shallow", "--to=Net List <netdev@example.org>",
               "--cc=Rev Iewer <reviewer@example.org>", base + "..HEAD"],
              cwd=repo.path)
    sh(["git", "reset", "-q", "--hard", base], cwd=repo.path)
    return mbox


def message_ids(mbox):
    """{patch number: Message-ID} of a format-patch mbox."""
    out = {}
    for m in re.finditer(r"^Message-Id: (<[^>]+>)\n(?:.*\n)*?Subject: \[PATCH (\d+)/4\]",
                         mbox, re.M):
        out[int(m.group(2))] = m.group(1)
    out.pop(0, None)  # the cover letter
    return out


@test
def patch_series_is_bisected_to_the_slow_patch_and_replied_in_its_thread(env):
    mail = MailService(env, "patches")
    try:
        svc = mail.svc
        repo, shas = bench_repo(os.path.join(env.root, "patchrepo"), 3,
                                owner=__name__)
        svc.register("patchrepo", repo, "patch-tc", notify_author=True,
                     notify=["perf-list@example.org"])
        mbox = make_series(repo)
        ids = message_ids(mbox)
        eq(sorted(ids), [1, 2, 3, 4], "Message-IDs in the mbox")

        job = svc.submit({"kind": "patch", "repo": "patchrepo",
                          "testcase": "patch-tc", "base": "main",
                          "mbox": mbox, "archive": ARCHIVE})
        eq(job["kind"], "patch", "kind")
        eq([p["subject"] for p in job["patches"]],
           ["[PATCH 1/4] net: add note 1", "[PATCH 2/4] fs: ext4: rewrite file one",
            "[PATCH 3/4] sched: take the slow path", "[PATCH 4/4] net: add note 4"],
           "patches")
        eq(job["good"], shas[-1], "the base is the job's good end")
        eq(job["bad"], job["patches"][3]["commit"], "the last patch is its bad end")
        done = svc.wait(job["id"])
        eq((done["verdict"], done["culprit"], done["parent"]),
           ("regression", job["patches"][2]["commit"], job["patches"][1]["commit"]),
           "verdict: the third patch")

        report = mail.wait_report(job["id"], lambda r: r["state"] == "sent")
        stored = mail.stored_report(job["id"]).encode()
        got = mail.sink.with_message_id(parse(stored)["Message-ID"])
        eq(len(got), 1, "the reply arrived once")
        raw, envelope = got[0]
        msg = parse(raw)
        check(not msg.defects, "no parse defects: %r" % msg.defects)
        eq(str(msg["Subject"]), "Re: [PATCH 3/4] sched: take the slow path", "Subject")
        eq(msg["In-Reply-To"], ids[3], "In-Reply-To is patch 3's Message-ID")
        check(ids[3] in msg["References"], "References %r" % msg["References"])
        want = ["pat@example.org", "netdev@example.org", "reviewer@example.org",
                "perf-list@example.org"]
        eq(sorted(envelope["rcpt_tos"]), sorted(want), "RCPT TO")
        eq(addresses(msg, "To")[0], "pat@example.org", "To: the patch author first")
        body = msg.get_content().replace("\r\n", "\n")
        check("commit: %s (\"sched: take the slow path\")" % job["patches"][2]["commit"]
              in body, "commit line:\n" + body[:800])
        for line in ("url: %s/jobs/%d" % (svc.url, job["id"]),
                     "base: %s %s" % (repo.path, shas[-1]),
                     "patch link: %s%s/" % (ARCHIVE, ids[3][1:-1]),
                     "patch subject: [PATCH 3/4] sched: take the slow path"):
            check("\n" + line + "\n" in body, "%r in the body:\n%s" % (line, body[:900]))
        eq(sorted(report["recipients"]), sorted(want), "API recipients")
    finally:
        mail.stop()


@test
def patch_series_that_does_not_apply_is_refused_naming_the_patch(env):
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "patchrepo2"), 3,
                            owner=__name__ + "2")
    svc.register("patchrepo2", repo, "patch-tc2")
    mbox = make_series(repo)
    # On the root commit file01.txt does not exist yet: patch 2 fails.
    status, answer = svc.api.call("POST", "/api/v1/jobs", {
        "kind": "patch", "repo": "patchrepo2", "testcase": "patch-tc2",
        "base": shas[0], "mbox": mbox}, token=svc.submit_token)
    eq(status, 422, "status: %r" % answer)
    eq(answer["error"]["code"], "patch_does_not_apply", "code")
    eq([f["patch"] for f in answer["error"]["failures"]], [2], "failing patches")
    check("patch 2 '[PATCH 2/4] fs: ext4: rewrite file one' does not apply"
          in answer["error"]["message"], answer["error"]["message"])
    # Not an mbox, a gap in the numbering, a missing base: 422 each.
    for body, code in (({"mbox": "hello\n"}, "invalid_mbox"),
                       ({"mbox": mbox.replace("[PATCH 2/4]", "[PATCH 2/5]")},
                        "invalid_mbox"),
                       ({"base": "no-such-branch"}, "unknown_revision")):
        request = {"kind": "patch", "repo": "patchrepo2", "testcase": "patch-tc2",
                   "base": "main", "mbox": mbox}
        request.update(body)
        status, answer = svc.api.call("POST", "/api/v1/jobs", request,
                                      token=svc.submit_token)
        eq((status, answer["error"]["code"]), (422, code), "refused: %r" % answer)


@test
def patch_series_through_the_form_is_bisected_and_replied(env):
    from test_web import Browser, field
    svc = env.svc
    repo, shas = bench_repo(os.path.join(env.root, "patchrepo3"), 3,
                            owner=__name__ + "3")
    svc.register("patchrepo3", repo, "patch-tc3")
    mbox = make_series(repo)
    ids = message_ids(mbox)
    b = Browser(svc.url).sign_in(svc.submit_token)
    status, _, page = b.get("/jobs/new-patch")
    eq(status, 200, "the patch form")
    check('<textarea id="mbox" name="mbox"' in page and 'type="file"' in page,
          "the form takes a series as text and as a file")
    form = {"csrf": field(page, "csrf"), "repo": "patchrepo3",
            "testcase": "patch-tc3", "base": shas[0], "mbox": mbox,
            "archive": "", "notify": "watcher@example.org"}
    status, _, page = b.post("/jobs/new-patch", form)
    eq(status, 422, "a series that does not apply is refused on the form")
    check("patch 2 &#39;[PATCH 2/4] fs: ext4: rewrite file one&#39; does not apply"
          in page or "patch 2 '[PATCH 2/4]" in page, "the failing patch is named")
    form["base"] = "main"
    status, hdrs, _ = b.post("/jobs/new-patch", form)
    eq(status, 303, "a series that applies makes a job")
    job_id = int(re.match(r"^/jobs/(\d+)$", hdrs["Location"]).group(1))
    done = svc.wait(job_id)
    eq(done["verdict"], "regression", "verdict")
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job_id,
                                token=svc.read_token)
    eq(status, 200, "report")
    msg = parse(text.encode())
    eq(str(msg["Subject"]), "Re: [PATCH 3/4] sched: take the slow path", "Subject")
    eq(msg["In-Reply-To"], ids[3], "In-Reply-To")
    body = msg.get_content()
    check('commit: %s ("sched: take the slow path")' % done["culprit"] in body,
          "the third patch is the culprit")
    check("watcher@example.org" in str(msg["To"]), "notify from the form: %s" % msg["To"])
