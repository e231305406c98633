#!/usr/bin/python3
"""Tests of tests/lint/sqlplace.py on trees made here: a query call or a
statement literal outside server/store/ and db.c is caught, while the same
in db.c or store/, in a comment, or a literal that only looks like a
keyword (an HTTP method, a label) is not."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def run_on(files):
    """sqlplace.py's exit code and output on a tree holding `files`."""
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        p = subprocess.run(
            [sys.executable, os.path.join(HERE, "sqlplace.py"), root],
            capture_output=True, text=True)
        return p.returncode, p.stdout


class SqlPlace(unittest.TestCase):
    def test_query_call_in_a_handler_fails(self):
        rc, out = run_on({"server/jobs.c":
                          "void f(void)\n{\n\tr = db_exec(c, q, 0, 0);\n}\n"})
        self.assertEqual(rc, 1)
        self.assertIn("server/jobs.c:3: calls db_exec", out)

    def test_statement_literal_in_a_handler_fails(self):
        rc, out = run_on({"server/web.c": 'const char *q =\n'
                          '    "UPDATE jobs SET state = $1";\n'})
        self.assertEqual(rc, 1)
        self.assertIn("server/web.c:2: SQL text", out)

    def test_libpq_call_fails(self):
        rc, _ = run_on({"server/x.c": "int g(void) { PQexec(c, s); }\n"})
        self.assertEqual(rc, 1)

    def test_store_db_comments_and_lookalikes_pass(self):
        rc, out = run_on({
            "server/db.c": 'r = PQexecParams(c, "SELECT 1", 0);\n',
            "server/store/store_jobs.c": 'q = "SELECT id FROM jobs";\n',
            "server/routes.c": '{"DELETE", "/api/v1/jobs/{id}"},\n'
                               'l = "Select a repository";\n'
                               '/* SELECT id FROM jobs: db_exec( */\n',
        })
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
