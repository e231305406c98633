"""The server's routes as its C sources declare them, and a service with
one object of each kind for a test to name in their paths.

The routes are read from the `struct http_route` tables that
server/routes.c lists, so a route added to any of them is covered by the
tests that use this module without a change here."""
import os
import re

from harness import ROOT, Api, Service, bench_repo, check

SERVER = os.path.join(ROOT, "server")
ROLES = ["ROLE_NONE", "ROLE_READ", "ROLE_SUBMIT", "ROLE_ADMIN", "ROLE_WORKER"]


def _sources():
    out = {}
    for name in sorted(os.listdir(SERVER)):
        if name.endswith(".c"):
            with open(os.path.join(SERVER, name)) as f:
                out[name] = f.read()
    return out


def _table_names(sources):
    """The tables server_routes() concatenates, in its order."""
    m = re.search(r"tables\[\]\s*=\s*\{([^}]*)\}", sources["routes.c"])
    check(m is not None, "server/routes.c: no tables[] in server_routes()")
    return re.findall(r"\w+", m.group(1))


def routes():
    """Every route: dicts with method, pattern, role (ROLE_*), handler,
    table, in the server's order."""
    sources = _sources()
    tables = {}
    for text in sources.values():
        for m in re.finditer(r"struct http_route (\w+)\[\]\s*=\s*\{(.*?)\n\};",
                             text, re.S):
            tables[m.group(1)] = m.group(2)
    out = []
    for table in _table_names(sources):
        check(table in tables, "route table %s not found in server/" % table)
        for m in re.finditer(r'\{\s*"(\w+)",\s*"([^"]+)",\s*(ROLE_\w+),\s*(\w+)\s*\}',
                             tables[table]):
            out.append({"method": m.group(1), "pattern": m.group(2),
                        "role": m.group(3), "handler": m.group(4), "table": table})
        check(any(r["table"] == table for r in out), "no route read from " + table)
    return out


def _functions(sources):
    bodies = {}
    for text in sources.values():
        for m in re.finditer(r"^(?:static )?\w[\w \*]*?\b(\w+)\(([^;{]*?)\)\n\{\n(.*?)\n\}\n",
                             text, re.S | re.M):
            bodies.setdefault(m.group(1), m.group(3))
    return bodies


_REQUIRE = re.compile(r"web_require(?:_post)?\([^;]*?\b(ROLE_\w+)|(web_require_job_reader)\(",
                      re.S)


def web_role(handler, bodies=None, depth=3):
    """The role a web handler asks of the session (its first web_require*
    call, looked for in the functions it calls too); None when it asks
    for none."""
    if bodies is None:
        bodies = _functions(_sources())
    body = bodies.get(handler)
    if body is None:
        return None
    m = _REQUIRE.search(body)
    if m is not None:
        return m.group(1) or "ROLE_READ"
    if depth == 0:
        return None
    for callee in re.findall(r"\b(\w+)\(", body):
        if callee != handler and callee in bodies:
            role = web_role(callee, bodies, depth - 1)
            if role is not None:
                return role
    return None


def web_roles(all_routes):
    bodies = _functions(_sources())
    return {(r["method"], r["pattern"]): web_role(r["handler"], bodies)
            for r in all_routes if not is_api(r)}


def is_api(route):
    p = route["pattern"]
    return p.startswith("/api/") or p in ("/healthz", "/metrics")


def openapi_paths():
    """The paths of web/openapi.yaml, their parameters written "{}"."""
    with open(os.path.join(ROOT, "web", "openapi.yaml")) as f:
        text = f.read()
    return {re.sub(r"\{\w+\}", "{}", p) for p in re.findall(r"^  (/\S*):$", text, re.M)}


def snapshot(svc):
    """Every table of the service's database: its row count and a digest
    of its rows, in one psql call."""
    sql = ("select table_name || '=' || (xpath('/row/c/text()', query_to_xml("
           "format('select count(*)::text || '':'' || coalesce(md5(string_agg("
           "t::text, '','' order by t::text)), '''') as c from %I t', table_name),"
           " false, true, '')))[1]::text from information_schema.tables "
           "where table_schema = 'public' and table_type = 'BASE TABLE' "
           "order by table_name")
    return dict(line.split("=", 1) for line in svc.psql(sql).splitlines())


def changed(before, after):
    return sorted(t for t in set(before) | set(after) if before.get(t) != after.get(t))


class World:
    """A service of its own (no worker) holding a repository, a
    testcase, a job, a watch, an inbox rule and a registered worker, and
    tokens of each role plus a revoked one."""

    def __init__(self, env, name):
        self.svc = svc = Service(env.root, env.cluster, name, worker=False,
                                 conninfo=env.cluster.database(name))
        self.api = svc.api
        try:
            self._fill(env, name)
        except BaseException:
            svc.stop()
            raise

    def _fill(self, env, name):
        svc = self.svc
        repo, self.shas = bench_repo(os.path.join(env.root, name + "-repo"), 3,
                                     owner=__name__)
        self.repo, self.testcase = name + "-repo", name + "-tc"
        svc.register(self.repo, repo, self.testcase)
        self.job = svc.submit({"repo": self.repo, "testcase": self.testcase,
                               "good": self.shas[0], "bad": self.shas[-1]})["id"]
        self.watch = self.api.ok("POST", "/api/v1/watches", {
            "repo": self.repo, "branch": "main", "testcases": [self.testcase],
            "paused": True}, expect=(201,))["id"]
        self.rule = self.api.ok("POST", "/api/v1/inbox/rules", {
            "name": name + "-rule", "repo": self.repo, "testcase": self.testcase,
            "base": "main"}, expect=(201,))["id"]
        self.worker = Api(svc.url, svc.worker_token).ok(
            "POST", "/api/v1/workers", {"name": name + "-w", "group": "default"})["id"]
        revoked = self.api.ok("POST", "/api/v1/tokens", {"name": name + "-revoked",
                                                         "role": "read"})
        self.api.ok("DELETE", "/api/v1/tokens/%d" % revoked["id"], expect=(200, 204))
        self.tokens = {"none": "", "unknown": "sb-no-such-token-0123456789abcdef",
                       "revoked": revoked["token"], "read": svc.read_token,
                       "submit": svc.submit_token, "worker": svc.worker_token,
                       "admin": svc.api.token}

    def spare_token(self):
        """A token of its own for a route that revokes the one it names."""
        return self.api.ok("POST", "/api/v1/tokens", {"name": "spare", "role": "read"})["id"]

    def fill(self, pattern, spare=None):
        """`pattern` with each "{}" replaced by an existing object's id
        (or name) of the kind its path names; `spare` for a token."""
        ids = {"jobs": self.job, "commits": self.shas[-1], "repos": self.repo,
               "testcases": self.testcase, "watches": self.watch,
               "rules": self.rule, "workers": self.worker, "tasks": 1,
               "tokens": spare, "static": "style.css"}
        parts = pattern.split("/")
        for i, p in enumerate(parts):
            if p == "{}":
                parts[i] = str(ids.get(parts[i - 1], 1))
        return "/".join(parts)
