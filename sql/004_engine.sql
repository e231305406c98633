-- The engine of issue 3: tasks that run several commits interleaved,
-- runs kept apart by purpose, every culprit of a job with its confidence.

-- A task's runs: [{"idx": commit index, "runs": n, "purpose": "search" |
-- "confirm"}], run alternately on one machine when `interleave` is set.
-- commit_idx and runs_wanted keep naming the first commit and the total.
ALTER TABLE tasks ADD COLUMN plan jsonb NOT NULL DEFAULT '[]';
ALTER TABLE tasks ADD COLUMN interleave boolean NOT NULL DEFAULT false;

ALTER TABLE runs ADD COLUMN purpose text NOT NULL DEFAULT 'search'
	CHECK (purpose IN ('search', 'confirm'));

-- [{"commit", "parent", "change_pct", "p_value", "confidence",
--   "confirmed", "ambiguous": [sha, ...]}], oldest first.
ALTER TABLE jobs ADD COLUMN culprits jsonb NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN confidence double precision;

-- Parents of each candidate inside the range (indices), for DAG ranges.
ALTER TABLE job_commits ADD COLUMN parents integer[] NOT NULL DEFAULT '{}';
