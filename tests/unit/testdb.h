/*
 * A real PostgreSQL for the unit tests of server/store: a private cluster
 * (scripts/pg-local, about one second to start) in a temporary directory,
 * migrated with sql/, that db_conn() reaches.  Use testdb_setup and
 * testdb_teardown as the cmocka group setup and teardown; tests of one
 * program share the database, so each names its rows apart.
 */
#ifndef STATBISECT_TESTDB_H
#define STATBISECT_TESTDB_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../server/db.h"

static struct {
	char root[PATH_MAX]; /* the checkout: build/tests/x is three down */
	char dir[PATH_MAX];  /* the cluster's directory */
	char conninfo[PATH_MAX + 64];
} testdb;

/* Runs `command` and keeps the first line of its output in `out`. */
static int testdb_run(char *out, size_t size, const char *command)
{
	FILE *p = popen(command, "r");
	size_t n;

	if (p == NULL)
		return -1;
	if (out != NULL) {
		if (fgets(out, (int)size, p) == NULL)
			out[0] = '\0';
		n = strcspn(out, "\n");
		out[n] = '\0';
	}
	while (fgetc(p) != EOF)
		;
	return pclose(p) == 0 ? 0 : -1;
}

static int testdb_setup(void **state)
{
	char exe[PATH_MAX], command[4 * PATH_MAX], sql[PATH_MAX + 8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	PGconn *conn;

	(void)state;
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	snprintf(testdb.root, sizeof(testdb.root), "%s",
		 dirname(dirname(dirname(exe))));
	snprintf(testdb.dir, sizeof(testdb.dir), "/tmp/sb-unitdb-XXXXXX");
	if (mkdtemp(testdb.dir) == NULL)
		return -1;
	snprintf(command, sizeof(command),
		 "bash '%s/scripts/pg-local' start '%s'", testdb.root,
		 testdb.dir);
	if (testdb_run(testdb.conninfo, sizeof(testdb.conninfo), command) <
		0 ||
	    testdb.conninfo[0] == '\0') {
		fprintf(stderr, "testdb: cannot start a cluster in %s\n",
			testdb.dir);
		return -1;
	}
	db_configure(testdb.conninfo);
	conn = db_conn();
	snprintf(sql, sizeof(sql), "%s/sql", testdb.root);
	if (conn == NULL || db_migrate(conn, sql) < 0) {
		fprintf(stderr, "testdb: cannot migrate %s\n",
			testdb.conninfo);
		return -1;
	}
	return 0;
}

static int testdb_teardown(void **state)
{
	char command[4 * PATH_MAX];

	(void)state;
	db_disconnect();
	snprintf(command, sizeof(command),
		 "bash '%s/scripts/pg-local' stop '%s'; rm -rf '%s'",
		 testdb.root, testdb.dir, testdb.dir);
	return testdb_run(NULL, 0, command);
}

/* Runs `sql` without parameters; fails the test when it fails. */
static inline void testdb_exec(const char *sql)
{
	PGresult *r = db_exec(db_conn(), sql, 0, NULL);

	if (r == NULL)
		fail_msg("testdb: %s failed", sql);
	PQclear(r);
}

#endif
