-- Issue 14: waiters wake on NOTIFY instead of polling.  A task that
-- becomes claimable (inserted, or queued again) notifies
-- 'statbisect_tasks' with its job's group, and a new outbox row notifies
-- 'statbisect_outbox'; PostgreSQL delivers a notification when its
-- transaction commits and folds identical ones of one transaction into
-- one, so a scheduler step that queues several tasks wakes waiters once.
-- Listeners also poll, slowly, so a lost notification only delays.
CREATE FUNCTION tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('statbisect_tasks',
	                  (SELECT group_name FROM jobs WHERE id = NEW.job_id));
	RETURN NULL;
END $$;

CREATE TRIGGER tasks_notify AFTER INSERT OR UPDATE OF state ON tasks
	FOR EACH ROW WHEN (NEW.state = 'queued') EXECUTE FUNCTION tasks_notify();

CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('statbisect_outbox', '');
	RETURN NULL;
END $$;

CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
	FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
