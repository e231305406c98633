-- The compatibility layers of a young schema go (issue 9), after what they
-- stood for is backfilled:
--
-- * A task's commits are its plan, nothing else.  A task from before plans
--   (an empty plan) ran one commit, commit_idx, runs_wanted times: that
--   becomes its plan, and commit_idx and runs_wanted are dropped.
-- * Every job's commits list their parents inside the range.  A job from
--   before parents were stored lists none, not even for `bad` (whose
--   parents always include a commit of the range): its range was the
--   first-parent chain, so commit i's parent is commit i - 1.
UPDATE tasks SET plan = jsonb_build_array(jsonb_build_object(
	'idx', commit_idx, 'runs', runs_wanted, 'purpose', 'search'))
	WHERE plan = '[]'::jsonb;
ALTER TABLE tasks DROP COLUMN commit_idx, DROP COLUMN runs_wanted;
ALTER TABLE tasks ALTER COLUMN plan DROP DEFAULT;
ALTER TABLE tasks ADD CONSTRAINT tasks_plan_lists_commits CHECK (
	CASE WHEN jsonb_typeof(plan) = 'array'
	THEN jsonb_array_length(plan) > 0 ELSE false END);

UPDATE job_commits c SET parents = ARRAY[c.idx - 1]
	WHERE c.idx > 0 AND c.job_id IN (
		SELECT b.job_id FROM job_commits b
		WHERE cardinality(b.parents) = 0 AND b.idx = (
			SELECT max(m.idx) FROM job_commits m
			WHERE m.job_id = b.job_id));
