-- Runs limits given with a job override its testcase's (NULL: the
-- testcase's own).
ALTER TABLE jobs ADD COLUMN runs_min integer CHECK (runs_min >= 2);
ALTER TABLE jobs ADD COLUMN runs_max integer
	CHECK (runs_max >= coalesce(runs_min, 2));
