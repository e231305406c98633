-- The Maildir inbox of patch series (issue 13).  inbox_rules say which
-- mailed series become patch jobs: those whose PATCH tag holds `tag` (''
-- any) and that were sent to `list` ('' any), tested with `testcase` on
-- `base` of `repo`.  inbox_messages keeps every message read, once per
-- Message-ID: the patches and cover letters wait until their series is
-- complete, then are 'taken' by one job (or 'refused' when the series does
-- not apply, 'expired' when it never completed, with a note); any other
-- message is 'ignored' on arrival.
CREATE TABLE inbox_rules (
	id          bigserial PRIMARY KEY,
	name        text NOT NULL UNIQUE
	            CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
	tag         text NOT NULL DEFAULT '',
	list        text NOT NULL DEFAULT '',
	repo_id     bigint NOT NULL REFERENCES repos(id),
	testcase_id bigint NOT NULL REFERENCES testcases(id),
	base        text NOT NULL,
	archive     text,
	notify      jsonb NOT NULL DEFAULT '[]',
	created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE inbox_messages (
	id          bigserial PRIMARY KEY,
	message_id  text NOT NULL UNIQUE,
	in_reply_to text,
	subject     text NOT NULL,
	number      integer NOT NULL,
	total       integer NOT NULL,
	is_patch    boolean NOT NULL,
	author      text,               -- the plain address of From
	recipients  text NOT NULL,      -- To and Cc, plain, one per line
	raw         text NOT NULL,      -- the message as it came
	received_at timestamptz NOT NULL DEFAULT now(),
	state       text NOT NULL DEFAULT 'waiting'
	            CHECK (state IN ('waiting', 'taken', 'refused', 'expired',
	                             'ignored')),
	rule_id     bigint REFERENCES inbox_rules(id) ON DELETE SET NULL,
	job_id      bigint REFERENCES jobs(id) ON DELETE SET NULL,
	note        text
);
CREATE INDEX inbox_messages_waiting ON inbox_messages (received_at)
	WHERE state = 'waiting';
