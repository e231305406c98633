-- Issue 11: GET /api/v1/jobs/{id} answers from a cache kept per job by
-- each server (server/jobcache.h) instead of replaying the engine over
-- every run each time.  Whatever changes a job's answer notifies
-- 'statbisect_jobs' with the job's id, in the transaction that changed
-- it; a change that may touch every job's answer (a repository,
-- testcase or worker renamed, a webhook of a testcase) or a token
-- revoked notifies ''.
-- Identical notifications of one transaction arrive once, so an upload
-- of many runs costs one.  tests/unit/test_store_jobs.c checks that
-- every table with a job_id column has the trigger.
CREATE FUNCTION job_notify_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		PERFORM pg_notify('statbisect_jobs',
		                  coalesce(OLD.job_id::text, ''));
	END IF;
	IF TG_OP <> 'DELETE' THEN
		PERFORM pg_notify('statbisect_jobs',
		                  coalesce(NEW.job_id::text, ''));
	END IF;
	RETURN NULL;
END $$;

CREATE FUNCTION job_notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('statbisect_jobs',
	                  CASE TG_OP WHEN 'DELETE' THEN OLD.id ELSE NEW.id END::text);
	RETURN NULL;
END $$;

CREATE FUNCTION job_notify_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('statbisect_jobs', '');
	RETURN NULL;
END $$;

-- A recheck is shown by the job it rechecks and by its compare job.
CREATE FUNCTION job_notify_rechecks() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	r rechecks%ROWTYPE;
BEGIN
	IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
	PERFORM pg_notify('statbisect_jobs', r.job_id::text);
	IF r.compare_job_id IS NOT NULL THEN
		PERFORM pg_notify('statbisect_jobs', r.compare_job_id::text);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER job_notify AFTER INSERT OR UPDATE OR DELETE ON jobs
	FOR EACH ROW EXECUTE FUNCTION job_notify_jobs();
CREATE TRIGGER job_notify AFTER INSERT OR UPDATE OR DELETE ON rechecks
	FOR EACH ROW EXECUTE FUNCTION job_notify_rechecks();
-- Candidates are inserted with their job, whose own row changes with
-- them; after that only their build flags change.
CREATE TRIGGER job_notify AFTER UPDATE OR DELETE ON job_commits
	FOR EACH ROW EXECUTE FUNCTION job_notify_row();

DO $$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['runs', 'tasks', 'outbox', 'job_columns',
	                         'job_patches', 'job_read_keys', 'job_resolving',
	                         'inbox_messages', 'watch_heads', 'watch_held',
	                         'watch_jobs', 'watch_notes', 'watch_reported',
	                         'webhook_deliveries', 'webhooks'] LOOP
		EXECUTE format('CREATE TRIGGER job_notify AFTER INSERT OR UPDATE'
		               ' OR DELETE ON %I FOR EACH ROW'
		               ' EXECUTE FUNCTION job_notify_row()', t);
	END LOOP;
END $$;

CREATE TRIGGER job_notify AFTER UPDATE OF name OR DELETE ON repos
	FOR EACH STATEMENT EXECUTE FUNCTION job_notify_all();
CREATE TRIGGER job_notify AFTER UPDATE OR DELETE ON testcases
	FOR EACH STATEMENT EXECUTE FUNCTION job_notify_all();
CREATE TRIGGER job_notify AFTER UPDATE OF name, machine, grp OR DELETE
	ON workers FOR EACH STATEMENT EXECUTE FUNCTION job_notify_all();
-- Servers keep whom a token names with the jobs' answers
-- (server/tokencache.h): a token revoked or changed is forgotten too.
CREATE TRIGGER job_notify AFTER UPDATE OR DELETE ON tokens
	FOR EACH STATEMENT EXECUTE FUNCTION job_notify_all();
