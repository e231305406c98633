-- Re-checks of a regression on a newer head of its branch (issue 13): a
-- compare job of the culprit's parent, the culprit and the head, whose
-- outcome (lib/recheck.h) is added to the regression's job.  A testcase's
-- recheck_interval_s, when set, has the server re-check each of its
-- regressions that often while the branch moves.
CREATE TABLE rechecks (
	id             bigserial PRIMARY KEY,
	job_id         bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	compare_job_id bigint NOT NULL UNIQUE
	               REFERENCES jobs(id) ON DELETE CASCADE,
	branch         text NOT NULL,   -- the revision re-resolved: "main"
	head_sha       text NOT NULL,
	verdict        text CHECK (verdict IN ('still regression', 'fixed',
	                                       'inconclusive')),
	change_pct     double precision, -- the head against the parent
	p_worse        double precision,
	created_at     timestamptz NOT NULL DEFAULT now(),
	finished_at    timestamptz
);
CREATE INDEX rechecks_job ON rechecks (job_id);

ALTER TABLE testcases ADD COLUMN recheck_interval_s integer
	CHECK (recheck_interval_s IS NULL OR recheck_interval_s >= 10);
-- When the schedule last tried to re-check a job (a branch that has not
-- moved makes no re-check, and is not tried again before the interval).
ALTER TABLE jobs ADD COLUMN recheck_tried_at timestamptz;
