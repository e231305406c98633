"""The bad-input table of issue 11: malformed requests, generated for
every API route that takes a body, a path id or a query parameter, each
sent with a token of the route's own role.  Every answer must be a 4xx
with a JSON error, no table of the database may change, and the server
must still answer /healthz.

The bodies' fields, their types and limits come from web/openapi.yaml,
the routes from the C route tables (routetable.py); the table of cases
per route and category is written to tests/integration/out/bad_input.md,
which docs/RELIABILITY.md quotes."""
import collections
import json
import os

import yaml

import routetable
from harness import ROOT, Api, check, eq, test
from test_web import Browser

OUT = os.path.join(ROOT, "tests", "integration", "out", "bad_input.md")
TOKEN_OF = {"ROLE_READ": "read", "ROLE_SUBMIT": "submit", "ROLE_ADMIN": "admin",
            "ROLE_WORKER": "worker", "ROLE_NONE": "none"}


def openapi():
    with open(os.path.join(ROOT, "web", "openapi.yaml")) as f:
        return yaml.safe_load(f)


def resolve(spec, schema):
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].split("/")[-1]]
    return schema


def valid_bodies(w):
    """A body each route would take (never sent as it is): the base the
    cases below change one field of."""
    return {
        "POST /api/v1/tokens": {"name": "bi-token", "role": "read"},
        "POST /api/v1/repos": {"name": "bi-repo", "url": "/nonexistent"},
        "POST /api/v1/testcases": {"name": "bi-tc", "build": "true", "run": "true",
                                   "kpi": "k", "higher_is_better": True},
        "PATCH /api/v1/repos/{}": {"web_url": "https://example.org/{sha}"},
        "PATCH /api/v1/testcases/{}": {"runs_max": 20},
        "POST /api/v1/jobs": {"repo": w.repo, "testcase": w.testcase,
                              "good": w.shas[0], "bad": w.shas[-1]},
        "POST /api/v1/jobs/{}/commits/{}/retry": {"runs": 1},
        "POST /api/v1/jobs/{}/retest": {"fix": w.shas[-1]},
        "POST /api/v1/jobs/{}/recheck": {"head": "main"},
        "PUT /api/v1/testcases/{}/recheck": {"interval_s": 3600},
        "POST /api/v1/workers": {"name": "bi-worker"},
        "POST /api/v1/tasks/{}/heartbeat": {"lease": 1},
        "POST /api/v1/tasks/{}/result": {"lease": 1, "runs": []},
        "POST /api/v1/watches": {"repo": w.repo, "branch": "main",
                                 "testcases": [w.testcase], "paused": True},
        "POST /api/v1/inbox/rules": {"name": "bi-rule", "repo": w.repo,
                                     "testcase": w.testcase, "base": "main"},
    }


# Fields a route reads only in a form of the body the base is not, and
# so ignores like any field it does not know.
IGNORED = {("POST /api/v1/jobs", "revisions"): "a compare job's; a bisection names good and bad"}

WRONG_TYPE = {"string": 12345, "integer": "12", "number": "1.5", "boolean": "yes",
              "array": "x", "object": "x"}


def field_cases(name, schema, required):
    """(category, value or raw JSON text of the field) pairs."""
    kind = schema.get("type")
    out = [("wrong type", WRONG_TYPE.get(kind, 12345))]
    if "enum" in schema:
        out.append(("not in enum", "bogus"))
    if kind == "string":
        out += [("NUL in string", "a\u0000b"),
                ("overlong string", "x" * (schema.get("maxLength", 65535) + 1))]
        out.append(("invalid UTF-8", b'"\xff\xfe"'))
    if kind in ("integer", "number"):
        out += [("out of range", 10 ** 20), ("out of range", -(10 ** 20)),
                ("out of range", b"1e999"), ("not a number", b"NaN")]
        if "maximum" in schema:
            out.append(("out of range", schema["maximum"] + 1))
    if name in required:
        out.append(("null for required", None))
    return out


def body_text(base, name, value):
    """The JSON text of `base` with field `name` set to `value` (bytes:
    raw JSON text, to send what json.dumps cannot)."""
    if not isinstance(value, bytes):
        return json.dumps(dict(base, **{name: value})).encode()
    marker = "\"@@%s@@\"" % name
    return json.dumps(dict(base, **{name: marker[1:-1]})).encode().replace(
        marker.encode(), value)


def cases(w, spec):
    """Every bad request: (route key, category, method, path, raw body,
    token name)."""
    bodies = valid_bodies(w)
    out = []
    for r in routetable.routes():
        if not routetable.is_api(r):
            continue
        key = "%s %s" % (r["method"], r["pattern"])
        token = TOKEN_OF[r["role"]]
        path = w.fill(r["pattern"], spare=999999)
        op = spec["paths"].get(openapi_path(spec, r["pattern"]), {}).get(r["method"].lower(), {})
        if "{}" in r["pattern"]:
            for bad in ("0", "-1", "1%00", "9" * 20, "1x", "%ff"):
                if r["pattern"].startswith(("/api/v1/repos/", "/api/v1/testcases/")) \
                   and bad in ("0", "-1", "1x"):
                    bad = "no such %s" % bad
                    bad = bad.replace(" ", "%20")
                bad_path = r["pattern"].replace("{}", bad, 1)
                out.append((key, "bad path id", r["method"], w.fill(bad_path, 999999),
                            json.dumps(bodies.get(key, {})).encode()
                            if r["method"] != "GET" else None, token))
        for q in op.get("parameters", []):
            if q.get("in") != "query":
                continue
            s = resolve(spec, q.get("schema", {}))
            values = []
            if s.get("type") == "integer":
                values += ["abc", "9" * 20, "1.5", ""]
                if "minimum" in s:
                    values.append(str(s["minimum"] - 1))
                if "maximum" in s:
                    values.append(str(s["maximum"] + 1))
            if "enum" in s:
                values.append("bogus")
            if s.get("type", "string") == "string":
                values.append("%ff")
            for v in values:
                out.append((key, "bad query parameter", r["method"],
                            "%s?%s=%s" % (path, q["name"], v), None, token))
        if key not in bodies:
            continue
        base = bodies[key]
        schema = resolve(spec, op["requestBody"]["content"]["application/json"]["schema"])
        for category, raw in (("not JSON", b"{\"name\": "), ("not JSON", b"name=x"),
                              ("JSON array", b"[]"), ("JSON array", json.dumps([base]).encode()),
                              ("JSON scalar", b"\"x\""), ("JSON scalar", b"null"),
                              ("invalid UTF-8", b"{\"\xff\": 1}"),
                              ("trailing garbage", json.dumps(base).encode() + b" x")):
            out.append((key, category, r["method"], path, raw, token))
        required = schema.get("required", [])
        for name in required:
            rest = {k: v for k, v in base.items() if k != name}
            out.append((key, "missing required", r["method"], path,
                        json.dumps(rest).encode(), token))
        for name, prop in schema.get("properties", {}).items():
            if (key, name) in IGNORED:
                continue
            for category, value in field_cases(name, resolve(spec, prop), required):
                out.append((key, category, r["method"], path, body_text(base, name, value),
                            token))
    return out


def openapi_path(spec, pattern):
    for p in spec["paths"]:
        if routetable.re.sub(r"\{\w+\}", "{}", p) == pattern:
            return p
    return None


@test
def malformed_requests_are_refused_with_a_4xx_and_change_nothing(env):
    w = routetable.World(env, "badinput")
    try:
        spec = openapi()
        all_cases = cases(w, spec)
        before = routetable.snapshot(w.svc)
        counts = collections.Counter()
        statuses = collections.defaultdict(collections.Counter)
        failures = []
        for key, category, method, path, raw, token in all_cases:
            status, reply = Api(w.svc.url).call(method, path, raw_body=raw,
                                                token=w.tokens[token])
            counts[(key, category)] += 1
            statuses[key][status] += 1
            is_error = isinstance(reply, dict) and isinstance(reply.get("error"), dict)
            if not (400 <= status < 500 and is_error):
                failures.append("%s [%s] %s %s body %r: %s %s" % (
                    key, category, method, path, (raw or b"")[:300], status, str(reply)[:200]))
        # A web path that is not UTF-8 gets the web's page, not the API's JSON.
        status, hdrs, page = Browser(w.svc.url).get("/jobs/%ff")
        eq((status, hdrs.get("Content-Type", "").split(";")[0]), (400, "text/html"),
           "GET /jobs/%ff")
        after = routetable.snapshot(w.svc)
        write_table(counts, statuses)
        print("bad_input: %d cases over %d routes, %d not a 4xx JSON error" % (
            len(all_cases), len(statuses), len(failures)))
        check(not failures, "\n".join(failures))
        eq(routetable.changed(before, after), [], "tables changed by refused requests")
        check(len(all_cases) >= 150, "only %d cases" % len(all_cases))
        eq(Api(w.svc.url).call("GET", "/healthz", token="")[0], 200, "healthz after")
    finally:
        w.svc.stop()


def write_table(counts, statuses):
    categories = sorted({c for _, c in counts})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("| route | %s | cases | statuses |\n" % " | ".join(categories))
        f.write("|%s\n" % ("---|" * (len(categories) + 3)))
        for key in statuses:
            f.write("| `%s` | %s | %d | %s |\n" % (
                key, " | ".join(str(counts.get((key, c), "")) for c in categories),
                sum(statuses[key].values()),
                ", ".join("%d×%d" % (n, s) for s, n in sorted(statuses[key].items()))))
        f.write("| **all** | %s | %d | %s |\n" % (
            " | ".join(str(sum(n for (_, c), n in counts.items() if c == cat))
                       for cat in categories), sum(counts.values()),
            ", ".join("%d×%d" % (n, s) for s, n in sorted(
                sum(statuses.values(), collections.Counter()).items()))))
