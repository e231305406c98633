-- Compare jobs (issue 13): two to four revisions measured interleaved and
-- reported as one table with a column per revision, each column's change
-- against the first.  A re-test of a fix is a compare job of a finished
-- bisection's culprit's parent, the culprit and the fix.
--
-- A compare job's job_commits are its revisions in the order given (idx 0
-- the base); its good_sha is the first and its bad_sha the last.  The
-- engine does not bisect them: the scheduler runs the engine's endpoint
-- test on each column against the first (server/compare.c).

ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check
	CHECK (kind IN ('bisect', 'patch', 'compare'));

-- The re-tested bisection of a fix re-test, else NULL.
ALTER TABLE jobs ADD COLUMN retest_of bigint REFERENCES jobs(id);

CREATE TABLE job_columns (
	job_id     bigint NOT NULL,
	idx        integer NOT NULL CHECK (idx >= 0 AND idx < 4),
	revision   text NOT NULL,      -- as submitted
	label      text NOT NULL,      -- "base", "culprit", "fix" or the revision
	-- set when the job ends; NULL for the first column
	verdict    text CHECK (verdict IN ('regression', 'improvement',
	                                   'no-change', 'inconclusive')),
	change_pct double precision,   -- KPI mean against the first column's
	p_value    double precision,
	PRIMARY KEY (job_id, idx),
	FOREIGN KEY (job_id, idx) REFERENCES job_commits (job_id, idx)
		ON DELETE CASCADE
);
