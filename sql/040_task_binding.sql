-- A claimed task belongs to the worker that claimed it and to that
-- worker's token (issue 11): heartbeats and uploads from another token are
-- refused.  The lease, which told a claim from a later one by counting
-- claims, becomes a random 63-bit number the claim hands out, so it cannot
-- be guessed either.
ALTER TABLE tasks ALTER COLUMN lease TYPE bigint;
ALTER TABLE tasks ADD COLUMN token_id bigint REFERENCES tokens(id);
-- Tasks claimed before: bound to the token their worker registered with.
UPDATE tasks t SET token_id = w.token_id FROM workers w
	WHERE w.id = t.worker_id;
