"""The Maildir inbox of patch series (issue 13) on real parts: a server of
our own reads a Maildir the test fills as a mail system would, one file a
message and out of order; a complete series that an inbox rule fits
becomes a patch job by itself, bisected by a real worker to the slow patch
and replied in its thread; a series that does not apply gets a "could not
apply" note in its thread; an incomplete one is given up after the
timeout; nothing is read twice across a restart."""
import email
import email.policy
import os
import re
import time

from harness import Service, bench_repo, check, eq, mails, test, wait_for
from test_patches import make_series


def split_mbox(mbox):
    """The messages of a format-patch mbox, each without its From line."""
    parts = re.split(r"^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\n",
                     mbox, flags=re.M)
    return [p for p in parts if p.strip()]


def deliver(maildir, name, text):
    """Delivers one message as an MDA does: written in tmp/, moved to new/."""
    tmp = os.path.join(maildir, "tmp", name)
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(maildir, "new", name))






def inbox(svc):
    return svc.api.ok("GET", "/api/v1/inbox", token=svc.read_token)["messages"]


def states(svc):
    return {m["message_id"]: (m["state"], m["job"], m["note"]) for m in inbox(svc)}


@test
def a_series_dropped_into_the_inbox_is_tested_and_replied_by_itself(env):
    maildir = os.path.join(env.root, "inbox-maildir")
    db = env.cluster.database("inbox")
    args = ("--inbox", maildir, "--inbox-timeout", "10")
    svc = Service(env.root, env.cluster, "inbox", conninfo=db, extra_args=args)
    try:
        repo, shas = bench_repo(os.path.join(env.root, "inboxrepo"), 3,
                                owner=__name__)
        svc.register("inboxrepo", repo, "inbox-tc", notify_author=True)
        mbox = make_series(repo)
        messages = split_mbox(mbox)
        eq(len(messages), 5, "cover letter and four patches")
        # Refusals of rules, then the rule for the list's net-next series.
        for body, status, code in (
                ({"name": "x", "repo": "nosuch", "testcase": "inbox-tc",
                  "base": "main"}, 404, "unknown_repo"),
                ({"name": "bad name", "repo": "inboxrepo", "testcase": "inbox-tc",
                  "base": "main"}, 400, "invalid_field"),
                ({"name": "x", "repo": "inboxrepo", "testcase": "inbox-tc",
                  "base": "main", "list": "not an address"}, 400, "invalid_email")):
            got, answer = svc.api.call("POST", "/api/v1/inbox/rules", body)
            eq((got, answer["error"]["code"]), (status, code), "refused rule %r" % body)
        got, _ = svc.api.call("POST", "/api/v1/inbox/rules", {
            "name": "x", "repo": "inboxrepo", "testcase": "inbox-tc", "base": "main"},
            token=svc.submit_token)
        eq(got, 403, "rules are the admin's")
        rule = svc.api.ok("POST", "/api/v1/inbox/rules", {
            "name": "netdev", "list": "netdev@example.org", "repo": "inboxrepo",
            "testcase": "inbox-tc", "base": "main",
            "archive": "https://lore.example.org/all/",
            "notify": ["perf-list@example.org"]}, expect=(201,))
        eq((rule["list"], rule["base"], rule["tag"]),
           ("netdev@example.org", "main", ""), "the rule as stored")

        # The patches come before their cover letter: nothing starts early.
        for n in (4, 2, 1, 3):
            deliver(maildir, "1700000000.p%d.host" % n, messages[n])
        wait_for("four patches read", lambda: len(inbox(svc)) == 4, svc)
        time.sleep(2)
        check(all(s == "waiting" for s, _, _ in states(svc).values()),
              "the series waits for its cover letter: %r" % states(svc))
        eq(svc.api.ok("GET", "/api/v1/jobs", token=svc.read_token)["jobs"], [],
           "no job yet")
        deliver(maildir, "1700000000.cover.host", messages[0])
        taken = wait_for("the series taken", lambda: [
            m for m in inbox(svc) if m["state"] == "taken"], svc)
        wait_for("all five taken", lambda: len(
            [m for m in inbox(svc) if m["state"] == "taken"]) == 5, svc)
        job_ids = {m["job"] for m in inbox(svc)}
        eq(len(job_ids), 1, "one job for the series")
        job_id = job_ids.pop()
        check(all(m["rule"] == "netdev" for m in inbox(svc)), "the rule is named")
        check(not os.listdir(os.path.join(maildir, "new")), "new/ is empty")
        eq(len(os.listdir(os.path.join(maildir, "cur"))), 5, "read files in cur/")

        eq(svc.psql("SELECT kind FROM jobs WHERE id = %d" % job_id), "patch",
           "the job is a patch job")
        done = svc.wait(job_id)
        eq(done["verdict"], "regression", "verdict")
        eq(svc.psql("SELECT c.idx FROM job_commits c WHERE c.job_id = %d"
                    " AND c.sha = '%s'" % (job_id, done["culprit"])), "3",
           "the culprit is the third patch")
        reply = wait_for("the reply", lambda: [
            m for m in mails(svc) if "sched: take the slow path" in str(m["Subject"])],
            svc, timeout=60)[0]
        patch3 = re.search(r"^Message-Id: (<[^>]+>)", messages[3], re.M).group(1)
        eq(str(reply["Subject"]), "Re: [PATCH 3/4] sched: take the slow path", "Subject")
        eq(reply["In-Reply-To"], patch3, "the reply threads under patch 3")
        body = reply.get_body(preferencelist=("plain",)).get_content()
        check("patch link: https://lore.example.org/all/%s/" % patch3[1:-1] in body,
              "the rule's archive gives the patch link:\n" + body[:800])

        # A restart reads nothing twice and makes no second job.
        svc.stop()
        svc.start_server()
        svc.start_worker()
        time.sleep(3)
        eq(len(svc.api.ok("GET", "/api/v1/jobs", token=svc.read_token)["jobs"]), 1,
           "still one job after a restart")

        # The same series on a base it does not apply to: a note, no job.
        svc.api.ok("DELETE", "/api/v1/inbox/rules/%d" % rule["id"])
        svc.api.ok("POST", "/api/v1/inbox/rules", {
            "name": "old-base", "repo": "inboxrepo", "testcase": "inbox-tc",
            "base": shas[0], "tag": "PATCH"}, expect=(201,))
        for n, text in enumerate(messages):
            again = re.sub(r"^Message-Id: <", "Message-Id: <v2-", text, flags=re.M)
            again = re.sub(r"^In-Reply-To: <", "In-Reply-To: <v2-", again, flags=re.M)
            deliver(maildir, "1700000100.v2-%d.host" % n, again)
        refused = wait_for("the series refused", lambda: [
            m for m in inbox(svc) if m["state"] == "refused"], svc)
        check("does not apply" in refused[0]["note"], "the note: %r" % refused[0])
        note = wait_for("the note mailed", lambda: [
            m for m in mails(svc) if "could not test" in
            m.get_body(preferencelist=("plain",)).get_content()], svc, timeout=30)[0]
        cover = re.search(r"^Message-Id: <([^>]+)>", messages[0], re.M).group(1)
        eq(note["In-Reply-To"], "<v2-%s>" % cover, "the note replies to the cover letter")
        sender = email.message_from_string(messages[0])["From"]
        sender = re.search(r"<([^>]+)>", sender).group(1)
        check(sender in str(note["To"]),
              "the cover letter's sender gets the note: %s, not %s" % (sender, note["To"]))
        eq(len(svc.api.ok("GET", "/api/v1/jobs", token=svc.read_token)["jobs"]), 1,
           "no job for a series that does not apply")

        # An incomplete series is given up after the timeout.
        for n in (1, 2):
            text = re.sub(r"^Message-Id: <", "Message-Id: <v3-", messages[n], flags=re.M)
            text = re.sub(r"^In-Reply-To: <", "In-Reply-To: <v3-", text, flags=re.M)
            deliver(maildir, "1700000200.v3-%d.host" % n, text)
        expired = wait_for("the incomplete series given up", lambda: [
            m for m in inbox(svc) if m["state"] == "expired"], svc, timeout=30)
        check(re.search(r"patch \d of 4 never came", expired[0]["note"]),
              "the note says what never came: %r" % expired[0])
    finally:
        svc.stop()
