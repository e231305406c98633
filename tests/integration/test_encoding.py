"""Commit text that is not UTF-8: a Latin-1 commit under an encoding header,
and one whose bytes are not UTF-8 with no header at all, as older git and
importers wrote them.  Submitted through the API and the web form, the job
is accepted and bisected, and the text reaches the database, the JSON, the
job page and the report as UTF-8: converted when declared, U+FFFD where
the bytes are not text."""
import email
import email.policy
import html
import os
import re
import subprocess
import urllib.request

import harness
from harness import check, eq, test

# Latin-1 declared in the commit: the subsystem is not ASCII, so the
# report's Subject header has to carry it too.
LATIN1_SUBJECT = "caf\u00e9: cr\u00e8me br\u00fbl\u00e9e \u00e0 la carte"
LATIN1_AUTHOR = "J\u00fcrgen Gro\u00df"
# No encoding header and bytes that are no UTF-8: a Latin-1 e acute, an
# overlong '/', a surrogate, a sequence cut short by a space.
RAW_SUBJECT = b"mm: z\xe9ro, \xc0\xaf, \xed\xa0\x80, \xe2\x82 and \xf0\x9f\x98\x80"
RAW_AUTHOR = b"Z\xe9ro Bytes"
# The good end: valid UTF-8, with a 4-byte character.
ROOT_SUBJECT = "bench: add the benchmark \U0001f680"


def run_git(repo, args, env, data=None):
    r = subprocess.run(["git"] + args, cwd=repo.path, env=env, input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(r.returncode == 0, "git %r failed: %r" % (args, r.stderr))
    return r.stdout.decode("utf-8", "surrogateescape").strip()


def encoding_repo(path):
    """Three commits: the root (good), the Latin-1 one where the benchmark
    gets 5% slower, and the raw one (bad).  Returns the repo and SHAs."""
    repo = harness.Repo(path)
    repo.write("bench.c", harness.BENCH_C)
    repo.write("build.sh", harness.BUILD_SH)
    repo.write("mean", "1000.0\n")
    shas = [repo.commit(ROOT_SUBJECT)]

    repo.write("mean", "950.0\n")
    message = path + "-msg"
    with open(message, "wb") as f:
        f.write(LATIN1_SUBJECT.encode("latin-1") + b"\n\nSlower, but tastier.\n")
    stamp = "@1767225660 +0000"
    env = dict(repo.env, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp,
               GIT_AUTHOR_NAME=os.fsdecode(LATIN1_AUTHOR.encode("latin-1")))
    run_git(repo, ["add", "-A"], env)
    run_git(repo, ["-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-F", message],
            env)
    shas.append(run_git(repo, ["rev-parse", "HEAD"], env))
    raw = run_git(repo, ["cat-file", "commit", "HEAD"], env)
    check("\nencoding ISO-8859-1\n" in raw, "the Latin-1 commit declares it")

    # git commit would take these bytes for Latin-1 and convert them, so
    # the commit object is written as it is.
    repo.write("f.txt", "after\n")
    run_git(repo, ["add", "-A"], env)
    tree = run_git(repo, ["write-tree"], env)
    obj = (b"tree %s\nparent %s\nauthor %s <zero@example.org> 1767225720 +0000\n"
           b"committer Ada Author <ada@example.org> 1767225720 +0000\n\n%s\n"
           % (tree.encode(), shas[1].encode(), RAW_AUTHOR, RAW_SUBJECT))
    sha = run_git(repo, ["hash-object", "-t", "commit", "-w", "--stdin"], env, obj)
    run_git(repo, ["update-ref", "refs/heads/main", sha], env)
    shas.append(sha)
    return repo, shas


@test
def commit_text_not_in_utf8_is_accepted_and_shown_as_utf8(env):
    svc = env.svc
    repo, shas = encoding_repo(os.path.join(env.root, "latin1"))
    svc.register("latin1", repo, "latin1-tc")
    subjects = [ROOT_SUBJECT, LATIN1_SUBJECT, RAW_SUBJECT.decode("utf-8", "replace")]
    authors = ["Ada Author", LATIN1_AUTHOR, RAW_AUTHOR.decode("utf-8", "replace")]
    eq(subjects[2], "mm: z\ufffdro, \ufffd\ufffd, \ufffd\ufffd\ufffd, \ufffd and "
       "\U0001f600", "what Python makes of the raw subject")

    job = svc.submit({"repo": "latin1", "testcase": "latin1-tc", "good": shas[0],
                      "bad": "main", "notify": ["dev@example.org"]})
    eq((job["state"], job["bad"], job["candidates"]), ("queued", shas[2], 3),
       "job accepted")
    # What the database holds, byte for byte.
    stored = env.cluster.psql(
        "select encode(convert_to(subject, 'UTF8'), 'hex') || ' '"
        " || encode(convert_to(author_name, 'UTF8'), 'hex')"
        " from job_commits where job_id = %d order by idx" % job["id"]).splitlines()
    eq(stored, ["%s %s" % (s.encode().hex(), a.encode().hex())
                for s, a in zip(subjects, authors)], "job_commits rows")

    done = svc.wait(job["id"])
    eq((done["state"], done["verdict"], done["culprit"]), ("done", "regression", shas[1]),
       "the Latin-1 commit is the culprit")
    eq(sorted((c["index"], c["subject"]) for c in done["commits"]),
       list(enumerate(subjects)), "subjects of the tested commits in the JSON")
    eq(done["culprits"][0]["subject"], LATIN1_SUBJECT, "culprit subject in the JSON")

    # The job page shows every tested commit with its author.  (Imported
    # here, not above, so that run.py still registers test_web's cases
    # after test_mail's.)
    from test_web import Browser, field
    b = Browser(svc.url).sign_in(svc.submit_token)
    # Browser decodes leniently; the page must decode strictly.
    req = urllib.request.Request(svc.url + "/jobs/%d" % job["id"], headers={
        "Cookie": "; ".join("%s=%s" % kv for kv in b.cookies.items())})
    with urllib.request.urlopen(req, timeout=60) as r:
        eq((r.status, r.headers.get("Content-Type")), (200, "text/html; charset=utf-8"),
           "job page")
        page = r.read().decode("utf-8")
    m = re.search(r'<span class="subject" id="culprit-subject">([^<]*)</span>', page)
    check(m, "culprit subject on the page")
    eq(html.unescape(m.group(1)), LATIN1_SUBJECT, "culprit subject on the page")
    path = [html.unescape(s) for s in
            re.findall(r'<span class="subject">([^<]*)</span> <span class="muted">by', page)]
    eq(sorted(path), sorted(subjects), "subjects on the bisection path")
    for author in authors:
        check("by " + html.escape(author) in page, "author %r on the page" % author)

    # The report: its Subject header names the subsystem "café", its body
    # the culprit's subject.
    status, text = svc.api.call("GET", "/api/v1/jobs/%d/report" % job["id"],
                                token=svc.read_token)
    eq(status, 200, "report")
    # Parsed from bytes: from a str, Python's parser loses 8-bit text.
    msg = email.message_from_bytes(text.encode(), policy=email.policy.default)
    check(not msg.defects, "report parses: %r" % msg.defects)
    check(str(msg["Subject"]).startswith("[latin1:main] [caf\u00e9]  %s:" % shas[1][:10]),
          "report subject: %r" % str(msg["Subject"]))
    body = msg.get_content()
    check('("%s")' % LATIN1_SUBJECT in body, "culprit subject in the report")
    check('("%s")' % ROOT_SUBJECT in body, "parent subject in the report")

    # The web form takes the same range.
    before = int(env.cluster.psql("select count(*) from jobs"))
    status, _, page = b.get("/jobs/new")
    status, hdrs, page = b.post("/jobs/new", {
        "csrf": field(page, "csrf"), "repo": "latin1", "testcase": "latin1-tc",
        "good": shas[0], "bad": shas[2]})
    eq(status, 303, "web form job submitted: %s" % page[:200])
    m = re.fullmatch(r"/jobs/(\d+)", hdrs.get("Location") or "")
    check(m, "redirect to the job page: %r" % hdrs.get("Location"))
    eq(int(env.cluster.psql("select count(*) from jobs")), before + 1, "one more job")
    status, _, page = b.get(hdrs["Location"])
    eq(status, 200, "new job's page")
    eq(svc.api.ok("DELETE", "/api/v1/jobs/%s" % m.group(1),
                  token=svc.submit_token)["state"], "cancelled", "web form job cancelled")
