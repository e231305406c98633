-- How many builds a worker did for each task (0 when every build was in its
-- build cache; NULL when an older worker did not say).  A job's builds are
-- their sum.
ALTER TABLE tasks ADD COLUMN builds integer CHECK (builds >= 0);
