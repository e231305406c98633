#!/usr/bin/python3
"""The size limits of STYLE.md and issue 9: no function over 120 lines in
server/, no file over 700 lines in server/ or worker/.

Usage: tests/lint/limits.py [ROOT]   (ROOT: the checkout, default .)

Prints one line per offender, "path:line: what", and exits 1 when there is
one, 0 otherwise.  A function's length counts every line of its
definition, from the first line of its signature to its closing brace.
Functions are found by a brace-aware scan: comments, strings, character
literals and preprocessor lines are blanked first, then a top-level `{`
whose preceding text ends in `)` opens a function body.
"""
import os
import re
import sys

FUNCTION_MAX = 120
FILE_MAX = 700
FUNCTION_DIRS = ("server",)
FILE_DIRS = ("server", "worker")


def blank(text):
    """The C text with comments, literals and preprocessor lines replaced
    by spaces, newlines kept so that line numbers stay right."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (
                line_start and c in " \t" and
                text[i:].lstrip(" \t").startswith("#")):
            # A preprocessor line, with its continuations.
            while i < n:
                if text[i] == "\n" and text[i - 1] != "\\":
                    break
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            line_start = False
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
            line_start = False
            continue
        out.append(c)
        if c == "\n":
            line_start = True
        elif c not in " \t":
            line_start = False
        i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of each function defined in text."""
    code = blank(text)
    found = []
    depth = 0
    statement_start = 0  # offset where the current top-level text began
    body_start = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[statement_start:i]
                stripped = head.rstrip()
                if stripped.endswith(")") and "=" not in head:
                    body_start = statement_start
                else:
                    body_start = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if body_start is not None:
                    head = code[body_start:i]
                    match = re.search(r"(\w+)\s*\(", head)
                    name = match.group(1) if match else "?"
                    lead = len(head) - len(head.lstrip())
                    first = code.count("\n", 0, body_start + lead) + 1
                    last = code.count("\n", 0, i) + 1
                    found.append((name, first, last))
                body_start = None
                statement_start = i + 1
        elif c == ";" and depth == 0:
            statement_start = i + 1
    return found


def sources(root, dirs):
    for top in dirs:
        for base, _, names in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.join(base, name)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    offenders = []
    for path in sources(root, FILE_DIRS):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().count("\n")
        if lines > FILE_MAX:
            offenders.append("%s:1: file is %d lines (limit %d)" %
                             (os.path.relpath(path, root), lines, FILE_MAX))
    for path in sources(root, FUNCTION_DIRS):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            length = last - first + 1
            if length > FUNCTION_MAX:
                offenders.append(
                    "%s:%d: function %s is %d lines (limit %d)" %
                    (os.path.relpath(path, root), first, name, length,
                     FUNCTION_MAX))
    for line in offenders:
        print(line)
    if offenders:
        print("limits: %d over the limits" % len(offenders))
        return 1
    print("limits: no function over %d lines in %s, no file over %d lines "
          "in %s" % (FUNCTION_MAX, "/".join(FUNCTION_DIRS), FILE_MAX,
                     " or ".join(FILE_DIRS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
