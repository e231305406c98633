-- Several machines for one job (issue 14, lib/spread.h).  A job submitted
-- with "machines": K > 1 runs a k-section on up to K machines of its
-- group at once, each comparison within one machine, while `spread` is
-- true; then it settles on one machine (jobs.worker_id) and goes on as an
-- ordinary job, the other machines' runs kept but superseded, and
-- `spread_reason` says why it settled.
ALTER TABLE jobs ADD COLUMN machines integer NOT NULL DEFAULT 1
	CHECK (machines BETWEEN 1 AND 8);
ALTER TABLE jobs ADD COLUMN spread boolean NOT NULL DEFAULT false;
ALTER TABLE jobs ADD COLUMN spread_reason text;
-- The machines of a spread job, in the order they joined; left_at when
-- one was gone for the machine timeout or the job settled elsewhere.
CREATE TABLE job_machines (
	job_id    bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	worker_id bigint NOT NULL REFERENCES workers(id),
	slot      integer NOT NULL,
	joined_at timestamptz NOT NULL DEFAULT now(),
	left_at   timestamptz,
	PRIMARY KEY (job_id, worker_id),
	UNIQUE (job_id, slot)
);
CREATE TRIGGER job_notify AFTER INSERT OR UPDATE OR DELETE ON job_machines
	FOR EACH ROW EXECUTE FUNCTION job_notify_row();
-- A spread job's task is for one of its machines (for_worker), or, while
-- `joining`, the endpoints of whichever machine of the group joins next.
ALTER TABLE tasks ADD COLUMN for_worker bigint REFERENCES workers(id);
ALTER TABLE tasks ADD COLUMN joining boolean NOT NULL DEFAULT false;
