-- statbisect schema, version 1.  Applied once by the server at start, inside
-- one transaction, and recorded in schema_migrations.

CREATE TABLE tokens (
	id          bigserial PRIMARY KEY,
	name        text NOT NULL,
	role        text NOT NULL
	            CHECK (role IN ('admin', 'submit', 'read', 'worker')),
	token_hash  text NOT NULL UNIQUE,         -- hex sha256 of the token
	created_at  timestamptz NOT NULL DEFAULT now(),
	revoked_at  timestamptz
);

CREATE TABLE repos (
	id          bigserial PRIMARY KEY,
	name        text NOT NULL UNIQUE,
	url         text NOT NULL,
	web_url     text,                          -- commit link with {sha}
	created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE testcases (
	id               bigserial PRIMARY KEY,
	name             text NOT NULL UNIQUE,
	build            text NOT NULL,
	run              text NOT NULL,
	kpi              text NOT NULL,
	higher_is_better boolean NOT NULL,
	min_change_pct   double precision NOT NULL DEFAULT 1.0
	                 CHECK (min_change_pct > 0),
	runs_min         integer NOT NULL DEFAULT 5 CHECK (runs_min >= 2),
	runs_max         integer NOT NULL DEFAULT 30,
	timeout_s        integer NOT NULL DEFAULT 600 CHECK (timeout_s > 0),
	params           jsonb NOT NULL DEFAULT '{}',
	monitors         jsonb NOT NULL DEFAULT '[]',
	created_at       timestamptz NOT NULL DEFAULT now(),
	CHECK (runs_max >= runs_min)
);

CREATE TABLE workers (
	id            bigserial PRIMARY KEY,
	name          text NOT NULL,
	grp           text NOT NULL DEFAULT 'default',
	machine       text,
	token_id      bigint REFERENCES tokens(id),
	registered_at timestamptz NOT NULL DEFAULT now(),
	last_seen_at  timestamptz NOT NULL DEFAULT now(),
	UNIQUE (name, grp)
);

CREATE TABLE jobs (
	id            bigserial PRIMARY KEY,
	repo_id       bigint NOT NULL REFERENCES repos(id),
	testcase_id   bigint NOT NULL REFERENCES testcases(id),
	good_rev      text NOT NULL,
	bad_rev       text NOT NULL,
	good_sha      text NOT NULL,
	bad_sha       text NOT NULL,
	notify        jsonb NOT NULL DEFAULT '[]',
	state         text NOT NULL DEFAULT 'queued'
	              CHECK (state IN ('queued', 'running', 'done', 'failed',
	                               'cancelled')),
	verdict       text CHECK (verdict IN ('regression', 'improvement',
	                                      'no-change', 'inconclusive')),
	culprit_sha   text,
	parent_sha    text,
	change_pct    double precision,
	p_value       double precision,
	message       text,                        -- why failed / inconclusive
	group_name    text NOT NULL DEFAULT 'default',
	created_by    bigint REFERENCES tokens(id),
	created_at    timestamptz NOT NULL DEFAULT now(),
	started_at    timestamptz,
	finished_at   timestamptz
);

-- The candidate commits of a job along the first-parent chain: idx 0 is
-- `good`, the highest idx is `bad`.
CREATE TABLE job_commits (
	job_id        bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	idx           integer NOT NULL,
	sha           text NOT NULL,
	subject       text NOT NULL,
	author_name   text NOT NULL,
	author_email  text NOT NULL,
	build_failed  boolean NOT NULL DEFAULT false,
	build_log     text,
	PRIMARY KEY (job_id, idx)
);

CREATE TABLE tasks (
	id               bigserial PRIMARY KEY,
	job_id           bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	commit_idx       integer NOT NULL,
	runs_wanted      integer NOT NULL CHECK (runs_wanted > 0),
	state            text NOT NULL DEFAULT 'queued'
	                 CHECK (state IN ('queued', 'running', 'done',
	                                  'cancelled')),
	worker_id        bigint REFERENCES workers(id),
	lease            integer NOT NULL DEFAULT 0,  -- bumped at each claim
	lease_expires_at timestamptz,
	created_at       timestamptz NOT NULL DEFAULT now(),
	finished_at      timestamptz,
	FOREIGN KEY (job_id, commit_idx) REFERENCES job_commits(job_id, idx)
);
CREATE INDEX tasks_claimable ON tasks (id) WHERE state IN ('queued', 'running');
CREATE INDEX tasks_job ON tasks (job_id);

-- One row per benchmark run: every metric it printed, the KPI copied out.
CREATE TABLE runs (
	id          bigserial PRIMARY KEY,
	job_id      bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	task_id     bigint NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	commit_idx  integer NOT NULL,
	worker_id   bigint REFERENCES workers(id),
	kpi         double precision,               -- NULL: KPI missing
	metrics     jsonb NOT NULL DEFAULT '{}',
	exit_code   integer NOT NULL,
	wall_s      double precision,
	created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_job ON runs (job_id, commit_idx);

CREATE TABLE outbox (
	id              bigserial PRIMARY KEY,
	job_id          bigint REFERENCES jobs(id) ON DELETE CASCADE,
	recipients      jsonb NOT NULL,
	subject         text NOT NULL,
	message         text NOT NULL,            -- the whole RFC 5322 message
	created_at      timestamptz NOT NULL DEFAULT now(),
	attempts        integer NOT NULL DEFAULT 0,
	next_attempt_at timestamptz NOT NULL DEFAULT now(),
	last_error      text,
	sent_at         timestamptz
);
CREATE INDEX outbox_pending ON outbox (next_attempt_at) WHERE sent_at IS NULL;
