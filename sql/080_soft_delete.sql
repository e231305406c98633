-- Repositories and testcases are deleted softly (issue 15): deleted_at is
-- set, and the row stays so that finished jobs, their reports and their
-- logs still read with the names they ran under.  Every query that starts
-- new work or lists what can be chosen skips deleted rows, and a name is
-- unique only among the rows not deleted, so it can be registered again.
ALTER TABLE repos ADD COLUMN deleted_at timestamptz;
ALTER TABLE testcases ADD COLUMN deleted_at timestamptz;
ALTER TABLE repos DROP CONSTRAINT repos_name_key;
ALTER TABLE testcases DROP CONSTRAINT testcases_name_key;
CREATE UNIQUE INDEX repos_name_live ON repos (name) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX testcases_name_live ON testcases (name)
	WHERE deleted_at IS NULL;
