-- A deep queue (issue 14, bench/queue_claims.py): the claim walked
-- tasks_claimable, which holds running tasks besides queued ones, in id
-- order and looked each running one up to see whether its lease had
-- lapsed, so every claim cost more as more tasks were out; with 10,000
-- queued and 64 workers claiming, the claims per second fell by 40% in
-- ten seconds.  A claim now looks for a lapsed lease by its expiry, then
-- walks only queued tasks (store_tasks_claim).
CREATE INDEX tasks_queued ON tasks (id) WHERE state = 'queued';
CREATE INDEX tasks_leased ON tasks (lease_expires_at) WHERE state = 'running';
DROP INDEX tasks_claimable;
