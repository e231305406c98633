-- One machine per job (issue 14).  Two "identical" machines commonly
-- differ by a few percent, more than the changes a job looks for, so a
-- job keeps to the worker that first claims one of its tasks
-- (jobs.worker_id, NULL until then): no other worker of the group is
-- handed its tasks while that worker is seen.  When it is not seen for
-- the server's --machine-timeout, the next worker of the group to claim
-- takes the job over: the job's runs made so far are kept for the record
-- but marked superseded (runs.superseded), and the engine starts again on
-- the new machine from the endpoints.  machine_moves counts the moves and
-- bound_at says when the job was last bound.
ALTER TABLE jobs ADD COLUMN worker_id bigint REFERENCES workers(id);
ALTER TABLE jobs ADD COLUMN bound_at timestamptz;
ALTER TABLE jobs ADD COLUMN machine_moves integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN superseded boolean NOT NULL DEFAULT false;
-- Jobs still open keep to the worker that made their latest run; their
-- runs of other workers no longer count.  Ended jobs keep their runs as
-- they were judged.
UPDATE jobs j SET worker_id = r.worker_id, bound_at = now()
	FROM (SELECT DISTINCT ON (job_id) job_id, worker_id FROM runs
	      WHERE worker_id IS NOT NULL ORDER BY job_id, id DESC) r
	WHERE r.job_id = j.id AND j.state IN ('queued', 'running');
UPDATE runs r SET superseded = true FROM jobs j
	WHERE j.id = r.job_id AND j.worker_id IS NOT NULL
	AND r.worker_id IS DISTINCT FROM j.worker_id;
CREATE INDEX jobs_worker ON jobs (worker_id) WHERE worker_id IS NOT NULL;
