-- Reports: who gets them, and how their delivery goes.
--
-- A testcase names default recipients (`notify`, plain addresses, checked
-- by the API) and may opt in to mailing the culprit's author
-- (`notify_author`).  A report's recipients are the job's notify list, the
-- testcase's list and, when opted in, the culprit's author, without
-- duplicates; they are fixed in outbox.recipients when the verdict is
-- stored.

ALTER TABLE testcases
	ADD COLUMN notify        jsonb NOT NULL DEFAULT '[]',
	ADD COLUMN notify_author boolean NOT NULL DEFAULT false;

-- The mailer retries a failed delivery with exponential backoff
-- (next_attempt_at) and gives up (failed_at) only after two days of
-- failures; last_error is the reason of the last failed attempt.  A row is
-- sent once sent_at is set, which happens only after the SMTP server
-- accepted the message (or the Maildir holds it).
ALTER TABLE outbox
	ADD COLUMN last_attempt_at timestamptz,
	ADD COLUMN failed_at       timestamptz;

DROP INDEX outbox_pending;
CREATE INDEX outbox_pending ON outbox (next_attempt_at)
	WHERE sent_at IS NULL AND failed_at IS NULL;
CREATE INDEX outbox_job ON outbox (job_id);
