-- Runs limits given with a job override its testcase's (NULL: the
-- testcase's own).
ALTER TABLE jobs ADD COLUMN runs_min integer CHECK (runs_min >= 2);
ALTER TABLE jobs ADD COLUMN runs_max integer
	CHECK (runs_max >= coalesce(runs_min, 2));

-- A flat range whose noise is as large as min_change_pct needs about 30
-- runs a side before two one-sided tests can call it unchanged; 50 leaves
-- room (inconclusive in about 0.1% of such ranges instead of 3%).
ALTER TABLE testcases ALTER COLUMN runs_max SET DEFAULT 50;
