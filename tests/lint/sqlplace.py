#!/usr/bin/python3
"""Issue 9's rule for the server's layers: SQL is written only in
server/store/ and server/db.c.  Any other server/*.c that calls a query
function of db.c or libpq, or holds a string literal that reads as a
statement, is an offender.

Usage: tests/lint/sqlplace.py [ROOT]   (ROOT: the checkout, default .)

Prints one line per offender, "path:line: what", and exits 1 when there is
one, 0 otherwise.  Comments are ignored, so a comment may name a table or
quote a statement; string literals are looked at one by one, so an HTTP
method "DELETE" or a label "Select a repository" is not mistaken for SQL.
"""
import glob
import os
import re
import sys

ALLOWED = {"db.c"}
# Calls that send a statement: db.c's wrappers and libpq's own.
CALLS = re.compile(
    r"\b(db_exec|db_exec_params|db_query|PQexec|PQexecParams|PQprepare|"
    r"PQexecPrepared|PQsendQuery|PQsendQueryParams|PQsendPrepare|"
    r"PQputCopyData)\s*\(")
# A literal that opens with a statement keyword followed by more of it.
STATEMENT = re.compile(
    r"^\s*(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"WITH\s+\w+\s+AS|COPY\s+\w+|LOCK\s+TABLE|LISTEN\s+\w|NOTIFY\s+\w|"
    r"BEGIN|COMMIT|ROLLBACK|CREATE\s+|ALTER\s+|DROP\s+)\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def offences(path):
    """(line, what) for each offence in the C file at path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    # Comments become blanks of the same lines, so numbers stay right.
    text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = []
    for m in CALLS.finditer(text):
        found.append((text.count("\n", 0, m.start()) + 1,
                      "calls %s" % m.group(1)))
    for m in LITERAL.finditer(text):
        if STATEMENT.match(m.group(1)):
            found.append((text.count("\n", 0, m.start()) + 1,
                           "SQL text \"%s\"" % m.group(1)[:40]))
    return sorted(found)


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    bad = 0
    for path in sorted(glob.glob(os.path.join(root, "server", "*.c"))):
        if os.path.basename(path) in ALLOWED:
            continue
        for line, what in offences(path):
            print("%s:%d: %s outside server/store/ and db.c" %
                  (os.path.relpath(path, root), line, what))
            bad += 1
    if bad:
        print("sqlplace: %d offence%s" % (bad, "" if bad == 1 else "s"))
        return 1
    print("sqlplace: no SQL outside server/store/ and server/db.c")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
