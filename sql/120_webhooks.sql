-- Webhooks (issue 15): a testcase or a job may name a URL that gets a
-- JSON POST when a job finishes.  `webhooks` holds what was asked for: a
-- testcase's (every job of it) or one job's own.  The secret signs the
-- body (HMAC-SHA256); it is write-only, never shown by the API.
CREATE TABLE webhooks (
	id          bigserial PRIMARY KEY,
	testcase_id bigint REFERENCES testcases(id) ON DELETE CASCADE,
	job_id      bigint REFERENCES jobs(id) ON DELETE CASCADE,
	url         text NOT NULL,             -- may hold a {sha} placeholder
	format      text NOT NULL
	            CHECK (format IN ('statbisect', 'github-status')),
	secret      text,                      -- NULL: the server's, if any
	created_at  timestamptz NOT NULL DEFAULT now(),
	CHECK ((testcase_id IS NULL) <> (job_id IS NULL))
);
CREATE UNIQUE INDEX webhooks_testcase ON webhooks (testcase_id)
	WHERE testcase_id IS NOT NULL;
CREATE UNIQUE INDEX webhooks_job ON webhooks (job_id)
	WHERE job_id IS NOT NULL;

-- One POST to make, queued in the transaction that ends the job, and
-- delivered by the mailer thread with retries as the outbox's mail is.
-- The body and its signature are fixed when queued, so every retry
-- sends the same bytes.
CREATE TABLE webhook_deliveries (
	id              bigserial PRIMARY KEY,
	job_id          bigint NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
	source          text NOT NULL CHECK (source IN ('testcase', 'job')),
	format          text NOT NULL,
	url             text NOT NULL,         -- {sha} replaced
	body            text NOT NULL,
	signature       text,                  -- "sha256=<hex>", or NULL
	created_at      timestamptz NOT NULL DEFAULT now(),
	attempts        integer NOT NULL DEFAULT 0,
	next_attempt_at timestamptz NOT NULL DEFAULT now(),
	last_attempt_at timestamptz,
	last_status     integer,               -- the receiver's HTTP status
	last_error      text,
	delivered_at    timestamptz,
	failed_at       timestamptz,
	UNIQUE (job_id, source)
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries
	(next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
