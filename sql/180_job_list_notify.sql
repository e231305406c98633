-- The pages of jobs that the dashboard and GET /api/v1/jobs show are
-- kept per filter by each server (server/listcache.h).  A page shows
-- its jobs, which notify their own id (sql/170_job_notify.sql), but
-- which jobs a filter selects, and how many, changes with jobs that are
-- not on the page: a job added or removed, or moved between filters by
-- its state, verdict, group, repository or testcase.  Those notify
-- 'list' (server/store/store_notify.h STORE_NOTE_LIST) besides the
-- job's id; identical notifications of a transaction arrive once, so
-- adding 10,000 jobs in one statement costs one.
-- The trigger's name sorts before job_notify, so 'list' is queued, and
-- heard, before the job's id: a server never sees the id of a moved job
-- without the change of the lists.
CREATE FUNCTION job_list_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('statbisect_jobs', 'list');
	RETURN NULL;
END $$;

CREATE TRIGGER job_list_notify AFTER INSERT OR DELETE ON jobs
	FOR EACH ROW EXECUTE FUNCTION job_list_notify();
CREATE TRIGGER job_list_notify_moved AFTER UPDATE OF state, verdict,
	group_name, repo_id, testcase_id ON jobs FOR EACH ROW
	WHEN (OLD.state IS DISTINCT FROM NEW.state
	      OR OLD.verdict IS DISTINCT FROM NEW.verdict
	      OR OLD.group_name IS DISTINCT FROM NEW.group_name
	      OR OLD.repo_id IS DISTINCT FROM NEW.repo_id
	      OR OLD.testcase_id IS DISTINCT FROM NEW.testcase_id)
	EXECUTE FUNCTION job_list_notify();

-- The names the dashboard's filters offer are kept with the pages: a
-- repository or testcase added, renamed or deleted (softly: deleted_at)
-- changes them.
CREATE TRIGGER job_list_notify AFTER INSERT OR UPDATE OF name, deleted_at
	OR DELETE ON repos FOR EACH STATEMENT
	EXECUTE FUNCTION job_list_notify();
CREATE TRIGGER job_list_notify AFTER INSERT OR UPDATE OF name, deleted_at
	OR DELETE ON testcases FOR EACH STATEMENT
	EXECUTE FUNCTION job_list_notify();

-- Servers keep the web sessions they were shown, with the tokens
-- (server/tokencache.h): a session signed out, or removed by any
-- program, is forgotten by every server.
CREATE TRIGGER job_notify AFTER UPDATE OR DELETE ON sessions
	FOR EACH ROW EXECUTE FUNCTION job_notify_all();
