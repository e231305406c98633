-- Robot mode (issue 12): watches follow branches of a repository, measure
-- each new head against the branch's last measured head and bisect the
-- range between them when the KPI moved.  Everything the watcher knows is
-- here, so a restart loses no state and measures no head twice.

-- A watch: a repository, a branch or a glob of branches ("release/*"), the
-- testcases it runs and how often the server fetches.  The watcher claims a
-- due watch by moving next_poll_at (FOR UPDATE SKIP LOCKED), so servers
-- sharing the database do not poll one watch together.
CREATE TABLE watches (
	id               bigserial PRIMARY KEY,
	repo_id          bigint NOT NULL REFERENCES repos(id),
	branch           text NOT NULL,
	interval_s       integer NOT NULL DEFAULT 300
	                 CHECK (interval_s BETWEEN 10 AND 604800),
	regressions_only boolean NOT NULL DEFAULT false,
	notify           jsonb NOT NULL DEFAULT '[]',
	paused           boolean NOT NULL DEFAULT false,
	created_by       bigint REFERENCES tokens(id),
	created_at       timestamptz NOT NULL DEFAULT now(),
	next_poll_at     timestamptz NOT NULL DEFAULT now(),
	last_poll_at     timestamptz,
	last_error       text
);
CREATE INDEX watches_due ON watches (next_poll_at) WHERE NOT paused;

CREATE TABLE watch_testcases (
	watch_id    bigint NOT NULL REFERENCES watches(id) ON DELETE CASCADE,
	testcase_id bigint NOT NULL REFERENCES testcases(id),
	PRIMARY KEY (watch_id, testcase_id)
);

-- Every head of a watched branch the watcher took up, per testcase.  The
-- first head of a branch is the baseline (nothing to compare it with);
-- each later one is measured by a job of two endpoints, the branch's last
-- measured head (base_head_id) and itself, and is 'measured' once the
-- engine's endpoint test decided.  A head is taken up once (UNIQUE).
CREATE TABLE watch_heads (
	id           bigserial PRIMARY KEY,
	watch_id     bigint NOT NULL REFERENCES watches(id) ON DELETE CASCADE,
	testcase_id  bigint NOT NULL REFERENCES testcases(id),
	branch       text NOT NULL,
	sha          text NOT NULL,
	subject      text NOT NULL DEFAULT '',
	base_head_id bigint REFERENCES watch_heads(id) ON DELETE SET NULL,
	state        text NOT NULL
	             CHECK (state IN ('baseline', 'measuring', 'measured')),
	-- same, changed (a bisection follows unless the watch wants only
	-- regressions and it improved), inconclusive, failed (the job failed
	-- or was cancelled)
	outcome      text CHECK (outcome IN ('same', 'changed', 'inconclusive',
	                                     'failed')),
	change_pct   double precision,
	job_id       bigint REFERENCES jobs(id) ON DELETE SET NULL,
	seen_at      timestamptz NOT NULL DEFAULT now(),
	measured_at  timestamptz,
	UNIQUE (watch_id, testcase_id, branch, sha)
);
CREATE INDEX watch_heads_branch ON watch_heads (watch_id, testcase_id, branch, id);
CREATE UNIQUE INDEX watch_heads_one_measuring
	ON watch_heads (watch_id, testcase_id, branch) WHERE state = 'measuring';

-- The KPI of every run of a head, copied from the runs of the job that
-- measured it (as the new head, or as the base of the next measurement),
-- so the history outlives the jobs.
CREATE TABLE watch_head_runs (
	head_id bigint NOT NULL REFERENCES watch_heads(id) ON DELETE CASCADE,
	run_id  bigint NOT NULL,
	kpi     double precision NOT NULL,
	PRIMARY KEY (head_id, run_id)
);

-- Jobs the watcher made: 'measure' while the endpoint test runs, 'bisect'
-- once the endpoints differed and the same job bisects the range.
CREATE TABLE watch_jobs (
	job_id   bigint PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	watch_id bigint REFERENCES watches(id) ON DELETE SET NULL,
	head_id  bigint REFERENCES watch_heads(id) ON DELETE SET NULL,
	branch   text NOT NULL,
	role     text NOT NULL CHECK (role IN ('measure', 'bisect'))
);
CREATE INDEX watch_jobs_watch ON watch_jobs (watch_id, role);

-- Culprits reported for a testcase: a culprit is reported once, whichever
-- watch or head found it again.
CREATE TABLE watch_reported (
	testcase_id bigint NOT NULL REFERENCES testcases(id),
	culprit_sha text NOT NULL,
	job_id      bigint REFERENCES jobs(id) ON DELETE SET NULL,
	reported_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (testcase_id, culprit_sha)
);

-- What the watcher noted on its jobs instead of mailing again: "still
-- regression on main/1234567890", "culprit already reported by job 7".
CREATE TABLE watch_notes (
	id         bigserial PRIMARY KEY,
	job_id     bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	note       text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX watch_notes_job ON watch_notes (job_id);
