-- What a running task does now, in the worker's words (issue 15):
-- "fetching the repository", "building 1a2b3c4d5e6f", "running
-- 1a2b3c4d5e6f: run 3 of 10".  Sent with the task's heartbeats and shown
-- on the job page, so that a first fetch of a large repository does not
-- look like a stuck job.  activity_at: when it began doing that.
ALTER TABLE tasks ADD COLUMN activity text;
ALTER TABLE tasks ADD COLUMN activity_at timestamptz;
