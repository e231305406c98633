-- What happened to each tested commit of a job (issue 10): its outcome
-- as the worker reported it in its last upload for the commit, and the
-- output of the run it describes.  build_log (001) now also keeps the
-- output of a build that succeeded.

ALTER TABLE job_commits ADD COLUMN outcome text
	CHECK (outcome IN ('built', 'build_failed', 'crashed', 'timed_out',
	                   'no_kpi', 'ran'));
-- crashed: the exit status (-1 when a signal ended the run) and the signal
ALTER TABLE job_commits ADD COLUMN outcome_exit_code integer;
ALTER TABLE job_commits ADD COLUMN outcome_signal integer;
-- The metric names the run command printed (monitors' left out).
ALTER TABLE job_commits ADD COLUMN metrics_seen jsonb;
-- The tail of the standard output and error of the run described.
ALTER TABLE job_commits ADD COLUMN run_output text;

-- Commits whose build failed before outcomes were kept.
UPDATE job_commits SET outcome = 'build_failed' WHERE build_failed;
