-- Web UI sessions.  A signed-in person holds a random session id in an
-- HttpOnly, SameSite=Strict cookie; only its sha256 is stored, like the
-- tokens'.  Each session has the role of the token it was opened with and
-- the CSRF token its forms carry.  A revoked token ends its sessions
-- (checked at each request); token_id NULL is the bootstrap admin token.

CREATE TABLE sessions (
	id           bigserial PRIMARY KEY,
	session_hash text NOT NULL UNIQUE,       -- hex sha256 of the cookie
	token_id     bigint REFERENCES tokens(id) ON DELETE CASCADE,
	role         text NOT NULL CHECK (role IN ('admin', 'submit', 'read')),
	csrf_token   text NOT NULL,
	created_at   timestamptz NOT NULL DEFAULT now(),
	expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_at);
