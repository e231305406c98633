-- Issue 14: a testcase names the machine group its jobs run on
-- (workers register with a group, and a claim hands a worker only tasks
-- of jobs of its group).  A job takes its testcase's group unless its
-- submission names another; re-runs, re-checks and re-tests keep the
-- group of the job they repeat.  Until now every job was 'default'.
ALTER TABLE testcases ADD COLUMN group_name text NOT NULL DEFAULT 'default';
