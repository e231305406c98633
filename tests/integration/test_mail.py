"""Reports by mail, on real parts: a real SMTP server (Debian's aiosmtpd,
with the handler in smtp_sink.py), a server of our own with a worker on a
database of its own, and jobs with planted regressions.  Checked: the
message arrives intact and is a valid RFC 5322 message, its recipients
are exactly the union of the job's, the testcase's and the culprit
author's lists, the monitors' metrics are kept with the runs, a report
waits in the outbox while the SMTP server is down and arrives once after
it is back, and nothing from a commit or a request can add a header."""
import datetime
import email
import email.policy
import glob
import json
import os
import re
import signal
import subprocess
import time

import harness
from harness import Service, bench_repo, check, eq, test

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"


class SmtpSink:
    """python3 -m aiosmtpd on 127.0.0.1:port, writing into `directory`."""

    def __init__(self, root, port, directory):
        self.root = root
        self.port = port
        self.directory = directory
        self.proc = None
        self.start()

    def start(self):
        log = open(os.path.join(self.root, "smtp-%d.log" % self.port), "a")
        env = dict(os.environ, PYTHONPATH=HERE)
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "aiosmtpd", "-n", "-l", "127.0.0.1:%d" % self.port,
             "-c", "smtp_sink.Sink", self.directory],
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("aiosmtpd exited with %d" % self.proc.returncode)
            try:
                import socket
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(100).startswith(b"220"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("aiosmtpd did not answer on port %d" % self.port)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def messages(self):
        """[(raw bytes, envelope dict)] of every message received so far."""
        out = []
        for meta in sorted(glob.glob(os.path.join(self.directory, "*.json"))):
            with open(meta) as f:
                envelope = json.load(f)
            with open(meta[:-len(".json")] + ".eml", "rb") as f:
                out.append((f.read(), envelope))
        return out

    def with_message_id(self, message_id):
        return [(raw, env) for raw, env in self.messages()
                if parse(raw)["Message-ID"] == message_id]


def parse(raw):
    return email.message_from_bytes(raw, policy=email.policy.default)


def addresses(msg, header):
    value = msg[header]
    return [] if value is None else [a.addr_spec for a in value.addresses]


class MailService:
    """An SMTP sink and a server with a worker on database `name`, retrying
    deliveries at least once a second."""

    def __init__(self, env, name):
        self.port = harness.free_port()
        self.sink = SmtpSink(env.root, self.port, os.path.join(env.root, name + "-smtp"))
        saved = os.environ.get("STATBISECT_SMTP_RETRY_MAX")
        os.environ["STATBISECT_SMTP_RETRY_MAX"] = "1"
        try:
            self.svc = Service(env.root, env.cluster, name,
                               smtp_url="smtp://127.0.0.1:%d" % self.port,
                               conninfo=env.cluster.database(name))
        except Exception:
            self.sink.stop()
            raise
        finally:
            if saved is None:
                del os.environ["STATBISECT_SMTP_RETRY_MAX"]
            else:
                os.environ["STATBISECT_SMTP_RETRY_MAX"] = saved

    def stop(self):
        codes = self.svc.stop()
        self.sink.stop()
        eq(codes, [0, 0], "server and worker exit status on SIGTERM")

    def job(self, job_id):
        return self.svc.api.ok("GET", "/api/v1/jobs/%d" % job_id, token=self.svc.read_token)

    def stored_report(self, job_id):
        status, text = self.svc.api.call("GET", "/api/v1/jobs/%d/report" % job_id,
                                         token=self.svc.read_token)
        eq(status, 200, "report of job %d" % job_id)
        return text

    def wait_report(self, job_id, want, timeout=30):
        deadline = time.time() + timeout
        report = None
        while time.time() < deadline:
            report = self.job(job_id)["report"]
            if report is not None and want(report):
                return report
            time.sleep(0.2)
        raise AssertionError("job %d: report %r never as wanted; server log:\n%s"
                             % (job_id, report, self.svc.log("server")))


@test
def mail_report_arrives_once_with_monitors_and_outage(env):
    mail = MailService(env, "mail")
    try:
        svc = mail.svc
        repo, shas = bench_repo(os.path.join(env.root, "mailrepo"), 12, {7: 950.0})
        svc.register("mailrepo", repo, "mail-tc", monitors=["time", "proc-vmstat"],
                     notify=["tc-list@example.org", "Dev@Example.org"],
                     notify_author=True)
        # The testcase as created keeps its recipients.
        status, created = svc.api.call("POST", "/api/v1/testcases", {
            "name": "mail-tc2", "build": "sh build.sh", "run": "./bench",
            "kpi": "bench.score", "higher_is_better": True,
            "notify": ["a@example.org"], "notify_author": False})
        eq((status, created["notify"], created["notify_author"]),
           (201, ["a@example.org"], False), "testcase notify fields")

        job = svc.submit({"repo": "mailrepo", "testcase": "mail-tc", "good": shas[0],
                          "bad": "main", "notify": ["dev@example.org", "qa@example.org"]})
        before = datetime.datetime.now(datetime.timezone.utc)
        done = svc.wait(job["id"])
        eq((done["verdict"], done["culprit"]), ("regression", shas[7]), "verdict")
        report = mail.wait_report(job["id"], lambda r: r["state"] == "sent")
        eq((report["attempts"], report["last_error"]), (1, None), "delivered at once")
        check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", report["sent_at"]),
              "sent_at %r" % report["sent_at"])

        stored = mail.stored_report(job["id"]).encode()
        got = mail.sink.with_message_id(parse(stored)["Message-ID"])
        eq(len(got), 1, "messages received for job 1")
        raw, envelope = got[0]
        eq(raw, stored, "the message arrived byte for byte as stored")
        want_to = ["ada@example.org", "dev@example.org", "qa@example.org"]
        want_cc = ["tc-list@example.org"]
        eq(sorted(envelope["rcpt_tos"]), sorted(want_to + want_cc), "RCPT TO")
        eq(sorted(report["recipients"]), sorted(want_to + want_cc), "API recipients")
        eq(envelope["mail_from"], "statbisect@localhost", "MAIL FROM")

        msg = parse(raw)
        check(not msg.defects, "no parse defects: %r" % msg.defects)
        eq(str(msg["From"]), "statbisect robot <statbisect@localhost>", "From")
        eq(addresses(msg, "To"), want_to, "To")
        eq(addresses(msg, "Cc"), want_cc, "Cc")
        date = msg["Date"].datetime
        check(date is not None and abs((date - before).total_seconds()) < 600,
              "Date %r is now" % msg["Date"])
        check(re.match(r"^<statbisect\.job%d\.[0-9a-f]{16}@[^<>@\s]+>$" % job["id"],
                       msg["Message-ID"]), "Message-ID %r" % msg["Message-ID"])
        eq(msg["MIME-Version"], "1.0", "MIME-Version")
        eq((msg.get_content_type(), msg.get_content_charset()), ("text/plain", "utf-8"),
           "Content-Type")
        eq(msg["Content-Transfer-Encoding"], "8bit", "Content-Transfer-Encoding")
        subject = str(msg["Subject"])
        check(re.match(r"^\[mailrepo:main\] \[\w+\] +%s: +bench\.score -\d+\.\d%% regression$"
                       % shas[7][:10], subject), "subject %r" % subject)
        for line in raw.split(b"\r\n"):
            check(len(line) <= 998, "line of %d octets" % len(line))
        check(b"\n" not in raw.replace(b"\r\n", b""), "CRLF line ends only")
        body = msg.get_content().replace("\r\n", "\n")
        rows = [l for l in body.splitlines() if l.endswith("  bench.score")]
        eq(len(rows), 1, "one KPI row")
        check(rows[0][16:28].strip().startswith("-"), "KPI row shows a drop: %r" % rows[0])
        check(re.search(r"^runs: \d+ \(parent\) / \d+ \(culprit\), confidence: "
                        r"\d+\.\d%$", body, re.M), "runs and confidence line")
        check("%s/jobs/%d/runs.csv" % (svc.url, job["id"]) in body, "raw runs link")
        check("git checkout %s" % shas[7] in body, "reproduce: checkout")

        # Every metric of every run is kept: the monitors' too.
        rows = svc.psql("select metrics from runs where job_id = %d and exit_code = 0"
                        % job["id"]).splitlines()
        check(len(rows) >= 10, "runs stored: %d" % len(rows))
        for text in rows:
            metrics = json.loads(text)
            for name in ("bench.score", "aux.constant", "time.elapsed_time",
                         "time.maximum_resident_set_size", "time.minor_page_faults",
                         "proc-vmstat.nr_free_pages", "proc-vmstat.pgfault"):
                check(name in metrics, "run metrics hold %s: %r" % (name, sorted(metrics)))
            check(metrics["time.maximum_resident_set_size"] > 0, "max RSS > 0")

        # The SMTP server goes away: the next report waits in the outbox.
        mail.sink.stop()
        job2 = svc.submit({"repo": "mailrepo", "testcase": "mail-tc", "good": shas[3],
                           "bad": shas[10]})
        done2 = svc.wait(job2["id"])
        eq((done2["verdict"], done2["culprit"]), ("regression", shas[7]), "second verdict")
        waiting = mail.wait_report(job2["id"], lambda r: r["attempts"] >= 2)
        eq((waiting["state"], waiting["sent_at"]), ("retrying", None), "waiting report")
        check(waiting["last_error"] and waiting["last_error"].startswith("smtp: "),
              "last_error %r" % waiting["last_error"])
        check(waiting["next_attempt_at"] is not None, "next attempt scheduled")
        eq(svc.psql("select count(*) from outbox where job_id = %d and sent_at is null"
                    % job2["id"]), "1", "the row is not marked sent")
        stored2 = mail.stored_report(job2["id"]).encode()
        mid2 = parse(stored2)["Message-ID"]
        eq(mail.sink.with_message_id(mid2), [], "nothing received while down")

        # Back on the same port: it arrives, once.
        mail.sink.start()
        sent = mail.wait_report(job2["id"], lambda r: r["state"] == "sent")
        check(sent["attempts"] >= 3, "attempts %r" % sent["attempts"])
        eq(sent["last_error"], None, "last_error cleared")
        time.sleep(2.5)  # more than the retry interval: nothing more comes
        got2 = mail.sink.with_message_id(mid2)
        eq(len(got2), 1, "messages received for job 2")
        eq(got2[0][0], stored2, "the waiting message arrived intact")
        # job 2 notified nobody itself: the author and the testcase's list,
        # whose "Dev@Example.org" is no duplicate now
        eq(sorted(got2[0][1]["rcpt_tos"]),
           sorted(["ada@example.org", "tc-list@example.org", "Dev@Example.org"]),
           "RCPT TO of job 2")
        msg2 = parse(got2[0][0])
        eq(addresses(msg2, "To"), ["ada@example.org"], "To of job 2")
        eq(addresses(msg2, "Cc"), ["tc-list@example.org", "Dev@Example.org"], "Cc of job 2")
        eq(len(mail.sink.with_message_id(parse(stored)["Message-ID"])), 1,
           "the first report was not sent again")
    finally:
        mail.stop()


def hostile_repo(path):
    """A benchmark repository whose culprit (index 5) has a subject and an
    author address full of CR, LF, ESC and header text."""
    repo = harness.Repo(path)
    repo.write("bench.c", harness.BENCH_C)
    repo.write("build.sh", harness.BUILD_SH)
    repo.write("mean", "1000.0\n")
    shas = [repo.commit("bench: add the benchmark")]
    for i in range(1, 9):
        repo.write("file%d.txt" % i, "change %d\n" % i)
        env = repo.env
        if i == 5:
            repo.write("mean", "950.0\n")
            repo.env = dict(env, GIT_AUTHOR_EMAIL="evil@example.org\rBcc: x@example.org")
            subject = ("net\rBcc: evil@example.org\x1b[31m\t: \u00e9t\u00e9 "
                       "=?UTF-8?B?SGk=?= " + "x" * 400)
        else:
            subject = "mm: change number %d" % i
        shas.append(repo.commit(subject))
        repo.env = env
    return repo, shas


@test
def mail_header_injection_is_impossible(env):
    mail = MailService(env, "mailhostile")
    try:
        svc = mail.svc
        repo, shas = hostile_repo(os.path.join(env.root, "mailhostile"))
        svc.register("hostile", repo, "hostile-tc", notify_author=True)
        # Hostile text through the API is refused.
        base = {"build": "sh build.sh", "run": "./bench", "kpi": "bench.score",
                "higher_is_better": True}
        for body, code in [
                (dict(base, name="x\r\nBcc: evil@example.org"), "invalid_field"),
                (dict(base, name="ok-name", notify=["a@example.org\r\nBcc: e@example.org"]),
                 "invalid_email"),
                (dict(base, name="ok-name", notify=["Ada <a@example.org>"]), "invalid_email"),
                (dict(base, name="ok-name", notify="a@example.org"), "invalid_field"),
                (dict(base, name="ok-name", notify_author="yes"), "invalid_field")]:
            status, reply = svc.api.call("POST", "/api/v1/testcases", body)
            eq((status, reply["error"]["code"]), (400, code), "testcase %r" % body)
        status, reply = svc.api.call(
            "POST", "/api/v1/jobs", {"repo": "hostile", "testcase": "hostile-tc",
                                     "good": shas[0], "bad": shas[-1],
                                     "notify": ["a@example.org>\r\nDATA"]},
            token=svc.submit_token)
        eq((status, reply["error"]["code"]), (400, "invalid_email"), "job notify")

        job = svc.submit({"repo": "hostile", "testcase": "hostile-tc", "good": shas[0],
                          "bad": shas[-1], "notify": ["dev@example.org"]})
        done = svc.wait(job["id"])
        eq((done["state"], done["verdict"], done["culprit"]), ("done", "regression", shas[5]),
           "a hostile culprit still gets its verdict")
        report = mail.wait_report(job["id"], lambda r: r["state"] == "sent")
        # The author's address holds a CR: it is not a recipient.
        eq(report["recipients"], ["dev@example.org"], "recipients")
        stored = mail.stored_report(job["id"]).encode()
        got = mail.sink.with_message_id(parse(stored)["Message-ID"])
        eq(len(got), 1, "messages received")
        raw, envelope = got[0]
        eq(raw, stored, "intact")
        eq(envelope["rcpt_tos"], ["dev@example.org"], "RCPT TO")
        head = raw.split(b"\r\n\r\n", 1)[0]
        names = [line.split(b":", 1)[0] for line in head.split(b"\r\n")
                 if line and line[:1] not in (b" ", b"\t")]
        eq(names, [b"Date", b"From", b"To", b"Subject", b"Message-ID", b"MIME-Version",
                   b"Content-Type", b"Content-Transfer-Encoding"], "header fields")
        check(b"\x1b" not in raw and b"\r\r" not in raw, "no ESC, no bare CR")
        check(b"\r" not in raw.replace(b"\r\n", b""), "only CRLF line ends")
        msg = parse(raw)
        check(not msg.defects, "no defects: %r" % msg.defects)
        eq(msg["Bcc"], None, "no Bcc header")
        subject = str(msg["Subject"])
        # Submitted by SHA: the branch that holds it is named.
        check(subject.startswith("[hostile:main] [net Bcc]  %s:" % shas[5][:10]),
              "subject %r" % subject)
        body = msg.get_content()
        line = [l for l in body.splitlines() if l.startswith("commit: %s" % shas[5])]
        eq(len(line), 1, "culprit line")
        check(line[0].startswith('commit: %s ("net Bcc: evil@example.org [31m : '
                                 '\u00e9t\u00e9 =?UTF-8?B?SGk=?= xxx' % shas[5]),
              "cleaned subject %r" % line[0])
        check(line[0].endswith('x...")'), "a long subject is cut: %r" % line[0][-20:])
    finally:
        mail.stop()
