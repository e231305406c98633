"""The role-by-route matrix of issue 11: every route of the server, read
from the route tables in server/*.c, asked by every kind of credential.

An API route below the caller's role answers 401 (no token, an unknown
or a revoked one) or 403 (a token of too low a role) with a JSON error,
and changes nothing; at or above it, never 401 or 403.  A web route
(whose role is the one its handler asks of the session, web_require*)
sends a caller without a session to /signin or answers 401, one of too
low a role 403, and again changes nothing.  The matrix is written to
tests/integration/out/routes_roles.md, which docs/RELIABILITY.md quotes."""
import os

import routetable
from harness import ROOT, Api, check, eq, test
from test_web import Browser, field

OUT = os.path.join(ROOT, "tests", "integration", "out", "routes_roles.md")
API_CREDS = ["none", "unknown", "revoked", "read", "submit", "worker", "admin"]
WEB_CREDS = ["none", "bad-cookie", "read", "submit", "admin"]
RANK = {"ROLE_NONE": 0, "ROLE_READ": 1, "ROLE_SUBMIT": 2, "ROLE_ADMIN": 3}
CRED_ROLE = {"none": None, "unknown": None, "revoked": None, "bad-cookie": None,
             "read": "ROLE_READ", "submit": "ROLE_SUBMIT", "admin": "ROLE_ADMIN",
             "worker": "ROLE_WORKER"}

# Routes that change something yet anyone may call, and why.
PUBLIC_WRITES = {
    ("POST", "/signin"): "makes the session a token's holder asks for",
}
# Web routes whose handler asks for no session, and why.
PUBLIC_PAGES = {
    ("GET", "/signin"): "the sign-in form",
    ("POST", "/signin"): "checks the token it is sent",
    ("GET", "/static/{}"): "style sheet, scripts and icon of every page",
}


def allows(have, need):
    """server/http.c role_allows, for a credential's role (None: none)."""
    if need == "ROLE_NONE":
        return True
    if have is None:
        return False
    if "ROLE_WORKER" in (have, need):
        return have == need
    return RANK[have] >= RANK[need]


def order(route):
    """Reads first, then writes, deletions last, so that no request
    takes away an object a later one names."""
    return {"GET": 0, "DELETE": 2}.get(route["method"], 1), route["pattern"].endswith(
        ("/delete", "/revoke", "/signout"))


def api_case(world, route, cred, spare):
    path = world.fill(route["pattern"], spare)
    body = {} if route["method"] in ("POST", "PUT", "PATCH") else None
    return Api(world.svc.url, world.tokens[cred] or "").call(
        route["method"], path, body, token=world.tokens[cred])


def web_case(world, browsers, route, cred, spare):
    b = browsers[cred]
    if route["pattern"] == "/signout" and cred in ("read", "submit", "admin"):
        b = Browser(world.svc.url).sign_in(world.tokens[cred])
    path = world.fill(route["pattern"], spare)
    if (route["method"], route["pattern"]) == ("POST", "/signin"):
        # Public: anyone may send the form (of the page it was given).
        b = Browser(world.svc.url)
        status, hdrs, page = b.post(path, {"csrf": field(b.get(path)[2], "csrf"),
                                           "token": world.tokens["read"], "next": "/"})
    elif route["method"] == "GET":
        status, hdrs, page = b.get(path)
    else:
        status, hdrs, page = b.post(path, {"csrf": getattr(b, "csrf", "")})
    return status, hdrs.get("Location") or ""


@test
def every_route_answers_each_role_as_its_route_table_says(env):
    all_routes = routetable.routes()
    web_need = routetable.web_roles(all_routes)
    api = [r for r in all_routes if routetable.is_api(r)]
    web = [r for r in all_routes if not routetable.is_api(r)]
    eq({r["pattern"] for r in api}, routetable.openapi_paths(),
       "the API routes of the C tables against web/openapi.yaml")
    # The sanity rule: what writes needs at least the submit role.
    for r in api:
        if r["method"] != "GET":
            check(r["role"] not in ("ROLE_NONE", "ROLE_READ")
                  or (r["method"], r["pattern"]) in PUBLIC_WRITES,
                  "%s %s writes with %s" % (r["method"], r["pattern"], r["role"]))
    for r in web:
        need = web_need[(r["method"], r["pattern"])]
        key = (r["method"], r["pattern"])
        if need is None:
            check(key in PUBLIC_PAGES, "web route %s %s asks for no session" % key)
        elif r["method"] != "GET":
            check(need != "ROLE_NONE" and (need != "ROLE_READ" or r["pattern"] == "/signout"),
                  "web route %s %s writes with %s" % (key + (need,)))

    world = routetable.World(env, "roles")
    try:
        browsers = {"none": Browser(world.svc.url), "bad-cookie": Browser(world.svc.url)}
        browsers["bad-cookie"].cookies["sb_session"] = "no-such-session-0123456789"
        for cred in ("read", "submit", "admin"):
            browsers[cred] = Browser(world.svc.url).sign_in(world.tokens[cred])
        rows, failures = [], []
        for r in sorted(all_routes, key=order):
            is_api = routetable.is_api(r)
            need = r["role"] if is_api else (web_need[(r["method"], r["pattern"])] or "ROLE_NONE")
            seen = ask(world, browsers, r, need, failures)
            rows.append(("%s %s" % (r["method"], r["pattern"]), need, seen,
                         API_CREDS if is_api else WEB_CREDS))
        write_matrix(rows)
        print("routes_roles: %d routes (%d API, %d web), %d requests, %d failures" % (
            len(all_routes), len(api), len(web), sum(len(s) for _, _, s, _ in rows),
            len(failures)))
        check(not failures, "\n".join(failures))
        eq(Api(world.svc.url).call("GET", "/healthz", token="")[0], 200, "healthz after")
    finally:
        world.svc.stop()


def ask(world, browsers, r, need, failures):
    """Asks route `r` (needing role `need`) as each credential, refused
    ones first; their statuses.  Adds what is wrong to `failures`."""
    key = "%s %s" % (r["method"], r["pattern"])
    is_api = routetable.is_api(r)
    creds = API_CREDS if is_api else WEB_CREDS
    seen = {}
    denied = [c for c in creds if not allows(CRED_ROLE[c], need)]
    # The tokens a revoking route names, made before the snapshot.
    spares = {c: world.spare_token() if "/tokens/{}" in r["pattern"] else None
              for c in creds}
    before = routetable.snapshot(world.svc)
    for cred in denied + [c for c in creds if c not in denied]:
        if is_api:
            status, reply = api_case(world, r, cred, spares[cred])
            error, where = isinstance(reply, dict) and "error" in reply, ""
        else:
            status, where = web_case(world, browsers, r, cred, spares[cred])
            error = True
        seen[cred] = status
        if cred in denied:
            if CRED_ROLE[cred] is not None:
                want = (403,)
            else:
                want = (401,) if is_api else (401, 303)
            if not (status in want and error and
                    (status != 303 or where.startswith("/signin"))):
                failures.append("%s as %s: %s %s (want %s)" % (key, cred, status, where, want))
        elif status in (401, 403) or (r["method"] == "GET" and status == 303 and
                                      where.startswith("/signin")):
            failures.append("%s as %s: refused %s (needs %s)" % (key, cred, status, need))
        if status >= 500:
            failures.append("%s as %s: %s" % (key, cred, status))
        if denied and cred == denied[-1]:
            diff = routetable.changed(before, routetable.snapshot(world.svc))
            if diff:
                failures.append("%s: refused requests changed %s" % (key, diff))
    return seen


def write_matrix(rows):
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        for title, creds in (("API", API_CREDS), ("Web", WEB_CREDS)):
            f.write("| %s route | role | %s |\n" % (title, " | ".join(creds)))
            f.write("|%s\n" % ("---|" * (len(creds) + 2)))
            for key, need, seen, rc in rows:
                if rc is creds:
                    f.write("| `%s` | %s | %s |\n" % (
                        key, need[5:].lower(), " | ".join(str(seen[c]) for c in creds)))
            f.write("\n")
