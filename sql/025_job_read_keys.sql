-- Read keys of jobs (issue 15): the capability a report's links carry, so
-- that whoever gets the report (a culprit's author, a list) can open that
-- job's pages without an account.  Unguessable (32 random bytes), stored
-- hashed like tokens, read-only, good for one job only, and revoked with
-- DELETE /api/v1/jobs/{id}/keys.  A report gets a key of its own.
CREATE TABLE job_read_keys (
	id         bigserial PRIMARY KEY,
	job_id     bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	key_hash   text NOT NULL UNIQUE,             -- hex sha256 of the key
	created_at timestamptz NOT NULL DEFAULT now(),
	revoked_at timestamptz
);
CREATE INDEX job_read_keys_job ON job_read_keys (job_id);
