#!/usr/bin/python3
"""Generates the benchmarks' git repositories (issue 14) with one
`git fast-import`, deterministically (a seeded random generator), as bare
repositories.

  bench/genrepo.py tree DIR   20,000 files in 200 directories, 5,000
                              commits on main, each changing 3 files (one
                              in ten also adds a file, one in 25 deletes
                              one); tags bench-a (commit 3,900) and
                              bench-b (commit 4,000) for the switch.
  bench/genrepo.py dag DIR    100,000 commits with merges: a main line
                              that every 8 to 12 commits merges a side
                              branch of 1 to 6 commits forked 1 to 40
                              commits back; tags bench-good (the second
                              commit) and bench-bad (the tip).

DIR must not exist; it is made, and removed again if the generation fails.
"""
import os
import random
import shutil
import subprocess
import sys

# fast-import grows and shrinks its heap by a little at each commit; where
# brk is slow that dominates.  Slack keeps it off (bench/longrange.py).
FAST_IMPORT_ENV = dict(os.environ, MALLOC_TOP_PAD_="268435456",
                       MALLOC_TRIM_THRESHOLD_="268435456")


def data(text):
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


def commit(out, mark, when, message, parents, changes):
    out.append(b"commit refs/heads/main\nmark :%d\n" % mark)
    out.append(b"author Ada <ada@example.org> %d +0000\n" % when)
    out.append(b"committer Ada <ada@example.org> %d +0000\n" % when)
    out.append(data(message))
    for i, parent in enumerate(parents):
        out.append(b"%s :%d\n" % (b"from" if i == 0 else b"merge", parent))
    out.extend(changes)


def content(path, version):
    lines = ["/* %s, version %d */" % (path, version)]
    lines += ["int f%d_%d(void) { return %d; }" % (version, k, k)
              for k in range(12)]
    return "\n".join(lines) + "\n"


def modify(path, version):
    return b"M 100644 inline %s\n%s" % (path.encode(),
                                        data(content(path, version)))


def tree(rng):
    out = []
    paths = ["src/d%03d/f%03d.c" % (d, f) for d in range(200)
             for f in range(100)]
    commit(out, 1, 1700000000, "initial import", [],
           [modify(p, 0) for p in paths])
    yield b"".join(out)
    for i in range(2, 5001):
        out = []
        changes = [modify(p, i) for p in rng.sample(paths, 3)]
        if i % 10 == 0:
            path = "src/d%03d/new%05d.c" % (rng.randrange(200), i)
            paths.append(path)
            changes.append(modify(path, i))
        if i % 25 == 0:
            gone = paths.pop(rng.randrange(len(paths)))
            changes.append(b"D %s\n" % gone.encode())
        commit(out, i, 1700000000 + i, "change %d" % i, [i - 1], changes)
        if i == 3900:
            out.append(b"reset refs/tags/bench-a\nfrom :%d\n" % i)
        if i == 4000:
            out.append(b"reset refs/tags/bench-b\nfrom :%d\n" % i)
        yield b"".join(out)


def dag(rng):
    total = 100000
    main = []  # marks of the main line, oldest first
    mark = 0
    next_merge = 10

    def one(parents, message):
        nonlocal mark
        mark += 1
        out = []
        commit(out, mark, 1700000000 + mark, message, parents,
               [b"M 100644 inline f%d\n%s" % (mark % 64,
                                              data("%d\n" % mark))])
        return b"".join(out)

    while mark < total:
        if len(main) >= next_merge and mark + 8 <= total:
            fork = main[-rng.randint(1, min(40, len(main) - 1))]
            side = fork
            for _ in range(rng.randint(1, 6)):
                yield one([side], "side %d" % (mark + 1))
                side = mark
            yield one([main[-1], side], "merge %d" % (mark + 1))
            main.append(mark)
            next_merge = len(main) + rng.randint(8, 12)
        else:
            yield one([main[-1]] if main else [], "main %d" % (mark + 1))
            main.append(mark)
    yield b"reset refs/tags/bench-good\nfrom :2\n"
    yield b"reset refs/tags/bench-bad\nfrom :%d\n" % main[-1]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("tree", "dag"):
        sys.exit(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    os.makedirs(path)
    try:
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", path],
                       check=True)
        p = subprocess.Popen(["git", "-C", path, "fast-import", "--quiet"],
                             stdin=subprocess.PIPE, env=FAST_IMPORT_ENV)
        rng = random.Random(14)
        for chunk in (tree(rng) if kind == "tree" else dag(rng)):
            p.stdin.write(chunk)
        p.stdin.close()
        if p.wait() != 0:
            raise RuntimeError("git fast-import failed")
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise


if __name__ == "__main__":
    main()
