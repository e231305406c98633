-- Per-token limits on job submissions (issue 11): how many jobs a token may
-- submit in any hour and how many of its jobs may be open (queued or
-- running) at once.  NULL: the server's --max-jobs-per-hour and
-- --max-open-jobs; 0: no limit.  A submission counts under a lock on its
-- token's row, inside the transaction that stores the job.
ALTER TABLE tokens ADD COLUMN max_jobs_per_hour integer
	CHECK (max_jobs_per_hour >= 0);
ALTER TABLE tokens ADD COLUMN max_open_jobs integer
	CHECK (max_open_jobs >= 0);
CREATE INDEX jobs_created_by ON jobs (created_by, created_at);
