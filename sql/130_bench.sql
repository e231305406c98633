-- Issue 15: a testcase may name the benchmark's own repository
-- (bench_repo, a git URL) and revision (bench_rev; NULL: the remote's
-- HEAD).  The worker fetches it beside the tree and exposes it as
-- $STATBISECT_BENCH_DIR.  The first upload of a job pins the bench commit
-- it resolved (jobs.bench_sha), so every later task of the job, on this
-- worker or another, runs that same commit of the benchmark.
ALTER TABLE testcases ADD COLUMN bench_repo text;
ALTER TABLE testcases ADD COLUMN bench_rev text;
ALTER TABLE jobs ADD COLUMN bench_sha text;
