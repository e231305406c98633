#!/usr/bin/python3
"""Tests of tests/lint/limits.py on trees made here: the limits hold at
exactly 120 and 700 lines and fail one line past them, and braces in
comments, strings, initializers and macros are not functions."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import limits  # noqa: E402


def function_text(name, lines):
    """A C function of exactly `lines` lines, signature to closing brace."""
    body = ["\tx++;"] * (lines - 3)
    return "\n".join(["static int %s(int x)" % name, "{"] + body +
                     ["}"]) + "\n"


def run(root):
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "limits.py"), root],
        capture_output=True, text=True)


class Functions(unittest.TestCase):
    def test_length_counts_signature_to_closing_brace(self):
        found = limits.functions("\n" + function_text("f", 10))
        self.assertEqual(found, [("f", 2, 11)])

    def test_braces_in_comments_strings_and_chars_are_ignored(self):
        text = ('/* { not code } */\n'
                'static const char *s = "{";\n'
                "int g(void)\n"
                "{\n"
                "\tchar c = '}';\n"
                "\t// }\n"
                '\treturn s[0] == c || "}"[0];\n'
                "}\n")
        self.assertEqual(limits.functions(text), [("g", 3, 8)])

    def test_initializers_structs_and_macros_are_not_functions(self):
        text = ("struct point { int x, y; };\n"
                "static const struct point origin = {0, 0};\n"
                "static int table[] = {f(1), g(2)};\n"
                "#define BLOCK(x) do { (x)++; } while (0)\n"
                "enum color { RED, GREEN };\n"
                "int h(void)\n"
                "{\n"
                "\treturn 0;\n"
                "}\n")
        self.assertEqual(limits.functions(text), [("h", 6, 9)])

    def test_multiline_signature_starts_at_its_first_line(self):
        text = ("static const char *\n"
                "name_of(int a,\n"
                "\tint b)\n"
                "{\n"
                "\treturn 0;\n"
                "}\n")
        self.assertEqual(limits.functions(text), [("name_of", 1, 6)])


class Tree(unittest.TestCase):
    def tree(self, files):
        root = tempfile.mkdtemp(prefix="limits-")
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)),
                        exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        return root

    def test_a_tree_at_the_limits_passes(self):
        root = self.tree({
            "server/a.c": function_text("at_limit", 120),
            "server/store/b.c": function_text("also", 120),
            "worker/c.c": "x;\n" * 700,
        })
        result = run(root)
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_one_line_past_each_limit_is_reported(self):
        root = self.tree({
            "server/store/a.c": function_text("too_long", 121),
            "worker/c.c": "x;\n" * 701,
            "server/d.h": "x;\n" * 701,
        })
        result = run(root)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout.splitlines(), [
            "server/d.h:1: file is 701 lines (limit 700)",
            "worker/c.c:1: file is 701 lines (limit 700)",
            "server/store/a.c:1: function too_long is 121 lines "
            "(limit 120)",
            "limits: 3 over the limits",
        ])

    def test_long_functions_outside_server_are_not_counted(self):
        root = self.tree({
            "worker/a.c": function_text("worker_may", 200),
            "lib/b.c": function_text("lib_may", 200) + "x;\n" * 800,
        })
        self.assertEqual(run(root).returncode, 0)


if __name__ == "__main__":
    unittest.main()
