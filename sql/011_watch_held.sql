-- Reports of a watch with several testcases wait until every job of the
-- same head (the same watch, branch and range) has ended, so that the
-- testcases that moved at one culprit share one email with a table row
-- each (issue 12).  The watcher sends them.
CREATE TABLE watch_held (
	job_id      bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	which       integer NOT NULL,        -- the culprit's index in the job
	culprit_sha text NOT NULL,
	held_at     timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (job_id, which)
);
