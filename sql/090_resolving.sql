-- Issue 11: a job over a long range is accepted at once in state
-- 'resolving' and its candidates are listed by the server's resolver
-- thread in the background (server/resolver.c).  job_resolving is its
-- work queue: a resolver locks a row FOR UPDATE SKIP LOCKED for as long
-- as it lists, so two servers never list one job twice and a server that
-- dies mid-way leaves the row for the next; the job's own row stays
-- unlocked meanwhile, so a GET or a cancel does not wait for the listing.
ALTER TABLE jobs DROP CONSTRAINT jobs_state_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_state_check
	CHECK (state IN ('resolving', 'queued', 'running', 'done', 'failed',
	                 'cancelled'));

CREATE TABLE job_resolving (
	job_id  bigint PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE
);
