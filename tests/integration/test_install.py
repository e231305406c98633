"""Operations (issue 14): `make install DESTDIR=... PREFIX=/usr` makes a
tree whose server, started from it, reads the installed web files and
migrations (not the build tree's) and answers /healthz; the installed
systemd units pass `systemd-analyze verify` where it is available; every
flag of the server and the worker has its variable, documented in
docs/OPERATIONS.md, and the programs take their settings from it."""
import glob
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request

import harness
from harness import Service, check, eq, sh, test

MARK = "/* the installed copy */\n"


@test
def test_make_install_tree_serves_from_its_share_dir(env):
    dest = os.path.join(env.root, "install-tree")
    sh(["make", "-s", "install", "DESTDIR=" + dest, "PREFIX=/usr"], cwd=harness.ROOT)
    usr = os.path.join(dest, "usr")
    share = os.path.join(usr, "share", "statbisect")
    for prog in ("statbisect-server", "statbisect-worker", "statbisect"):
        check(os.access(os.path.join(usr, "bin", prog), os.X_OK), prog + " installed")
    eq(sorted(os.path.basename(p) for p in glob.glob(os.path.join(share, "sql", "*.sql"))),
       sorted(os.path.basename(p) for p in glob.glob(os.path.join(harness.ROOT, "sql",
                                                                  "*.sql"))),
       "installed migrations")
    for f in ("web/openapi.yaml", "web/templates/signin.html", "web/static/app.js"):
        check(os.path.isfile(os.path.join(share, f)), f + " installed")
    for f in ("etc/statbisect/server.env", "etc/statbisect/worker.env",
              "usr/lib/systemd/system/statbisect-server.service",
              "usr/lib/systemd/system/statbisect-worker.service",
              "usr/share/doc/statbisect/OPERATIONS.md"):
        check(os.path.isfile(os.path.join(dest, f)), f + " installed")

    # Marks only the installed tree has: a server reading the build tree
    # would show neither.
    with open(os.path.join(share, "web/static/style.css"), "a") as f:
        f.write(MARK)
    with open(os.path.join(share, "sql", "999_install_mark.sql"), "w") as f:
        f.write("CREATE TABLE install_mark (id integer);\n")
    svc = Service(env.root, env.cluster, "install", worker=False,
                  conninfo=env.cluster.database("install_tree"),
                  server_bin=os.path.join(usr, "bin", "statbisect-server"))
    try:
        eq(svc.api.ok("GET", "/healthz"), {"status": "ok"}, "/healthz")
        with urllib.request.urlopen(svc.url + "/static/style.css", timeout=30) as r:
            check(r.read().decode().endswith(MARK), "style.css of the installed tree")
        eq(svc.psql("SELECT to_regclass('install_mark') IS NOT NULL"), "t",
           "the installed migrations applied")
        with open(os.path.join(share, "web/openapi.yaml")) as f:
            eq(svc.api.ok("GET", "/api/v1/openapi.yaml"), f.read(), "openapi.yaml")
        eq(svc.api.call("GET", "/signin")[0], 200, "a page from the installed templates")
    finally:
        svc.stop()

    if shutil.which("systemd-analyze") is None:
        print("    systemd-analyze not available: units not verified")
        return
    # ExecStart names /usr/bin; verify copies that name the tree's programs.
    units = os.path.join(env.root, "install-units")
    os.makedirs(units)
    for unit in glob.glob(os.path.join(usr, "lib/systemd/system/*.service")):
        with open(unit) as f:
            text = f.read()
        check("ExecStart=/usr/bin/statbisect-" in text, unit + " runs /usr/bin")
        with open(os.path.join(units, os.path.basename(unit)), "w") as f:
            f.write(text.replace("ExecStart=/usr/bin/", "ExecStart=%s/bin/" % usr))
    r = subprocess.run(["systemd-analyze", "verify"] + sorted(
        glob.glob(os.path.join(units, "*.service"))),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    eq((r.returncode, r.stdout), (0, ""), "systemd-analyze verify")


def long_options(path):
    """The long options of a program's getopt table."""
    with open(os.path.join(harness.ROOT, path)) as f:
        text = f.read()
    return [o for o in re.findall(r'\{"([a-z][a-z-]*)", (?:required|no)_argument', text)
            if o != "help"]


@test
def test_every_flag_has_its_variable_documented(env):
    with open(os.path.join(harness.ROOT, "docs/OPERATIONS.md")) as f:
        doc = f.read()
    for path, readers in (("server/main.c", ("server/main.c", "server/config.c")),
                          ("worker/main.c", ("worker/main.c",))):
        code = ""
        for reader in readers:
            with open(os.path.join(harness.ROOT, reader)) as f:
                code += f.read()
        options = long_options(path)
        check(len(options) >= 8, "options of %s: %r" % (path, options))
        for o in options:
            check('"STATBISECT_%s"' % o.upper().replace("-", "_") in code,
                  "%s reads no variable for --%s" % (path, o))
            row = re.search(r"^\| `--%s[ `][^\n]*\| `STATBISECT_%s`" % (
                re.escape(o), o.upper().replace("-", "_")), doc, re.M)
            check(row is not None, "docs/OPERATIONS.md has no row of --%s and its "
                  "variable (%s)" % (o, path))


@test
def test_server_and_worker_take_their_settings_from_the_environment(env):
    conninfo = env.cluster.database("settings_env")
    port = harness.free_port()
    data = os.path.join(env.root, "env-data")
    token = "env-admin-token-0123456789abcdef"
    log = open(os.path.join(env.root, "env-server.log"), "w")
    server = subprocess.Popen(
        [os.path.join(harness.ROOT, "bin/statbisect-server")],
        env=dict(os.environ, STATBISECT_DB=conninfo,
                 STATBISECT_LISTEN="127.0.0.1:%d" % port, STATBISECT_DATA_DIR=data,
                 STATBISECT_MAIL_DIR=os.path.join(env.root, "env-mail"),
                 STATBISECT_ADMIN_TOKEN=token, STATBISECT_THREADS="2",
                 STATBISECT_LEASE_SECONDS="7"),
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    worker = None
    try:
        api = harness.Api("http://127.0.0.1:%d" % port, token)
        deadline = time.time() + 30
        while True:
            try:
                eq(api.ok("GET", "/healthz"), {"status": "ok"}, "/healthz")
                break
            except Exception:
                check(server.poll() is None and time.time() < deadline,
                      "the server did not start from its environment")
                time.sleep(0.1)
        check(os.path.isdir(os.path.join(data, "repos")), "STATBISECT_DATA_DIR used")
        wtoken = api.ok("POST", "/api/v1/tokens", {"name": "env-w", "role": "worker"})["token"]
        work = os.path.join(env.root, "env-work")
        worker = subprocess.Popen(
            [os.path.join(harness.ROOT, "bin/statbisect-worker")],
            env=dict(os.environ, STATBISECT_SERVER=api.url, STATBISECT_TOKEN=wtoken,
                     STATBISECT_WORK_DIR=work, STATBISECT_NAME="env-box",
                     STATBISECT_GROUP="env-group", STATBISECT_POLL="0.2"),
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 30
        while not api.ok("GET", "/api/v1/workers")["workers"]:
            check(worker.poll() is None and time.time() < deadline,
                  "the worker did not register from its environment")
            time.sleep(0.1)
        w = api.ok("GET", "/api/v1/workers")["workers"][0]
        eq((w["name"], w["group"]), ("env-box", "env-group"), "the worker's name and group")
        check(os.path.isdir(work), "STATBISECT_WORK_DIR used")
        eq(api.ok("POST", "/api/v1/workers", {"name": "probe"}, token=wtoken)
           ["lease_seconds"], 7, "STATBISECT_LEASE_SECONDS used")
    finally:
        for p in (worker, server):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=15)
        log.close()
