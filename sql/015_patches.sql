-- Patch jobs (issue 13): a patch series posted as mail, applied on a base
-- revision, one candidate commit per patch.
--
-- jobs.kind says what a job is: 'bisect' (a commit range, the default),
-- 'patch' (a series on a base).  A patch job's job_commits are the base
-- (idx 0) and one commit per patch (idx n for patch n), which the server
-- made by applying the series with libgit2 (lib/patchapply.h); the worker
-- makes the same commits again from job_patches to build them.

ALTER TABLE jobs ADD COLUMN kind text NOT NULL DEFAULT 'bisect'
	CHECK (kind IN ('bisect', 'patch'));

CREATE TABLE job_patches (
	job_id       bigint NOT NULL,
	idx          integer NOT NULL CHECK (idx > 0),
	message_id   text,                 -- without angle brackets
	in_reply_to  text,
	subject      text NOT NULL,        -- the email's whole subject
	author_name  text NOT NULL,
	author_email text NOT NULL,
	date         bigint NOT NULL,      -- seconds since the epoch
	date_offset  integer NOT NULL,     -- minutes east of UTC
	recipients   jsonb NOT NULL DEFAULT '[]', -- To and Cc, plain addresses
	message      text NOT NULL,        -- the commit message
	diff         bytea NOT NULL,       -- byte for byte as mailed
	link         text,                 -- archive URL of the email, or NULL
	PRIMARY KEY (job_id, idx),
	FOREIGN KEY (job_id, idx) REFERENCES job_commits (job_id, idx)
		ON DELETE CASCADE
);
