-- Browser sessions (docs/accounts.md "Sessions"): only the SHA-256 of a session id is stored, so a
-- copy of this table signs nobody in. Every replica reads the same rows: any of them serves any
-- signed-in visitor, and sign-out or a password change ends a session everywhere at once.
CREATE TABLE core.sessions (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id_sha256    bytea NOT NULL UNIQUE CHECK (length(id_sha256) = 32),
    user_id      bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user_id ON core.sessions (user_id);
CREATE INDEX sessions_last_seen_at ON core.sessions (last_seen_at);

-- Sign-in attempts per account name (whether or not it exists) and per client address, counted
-- in a window; past the limit, refused until blocked_until (docs/accounts.md "Sign-in throttling").
-- Shared by every replica, so adding replicas adds no guesses.
CREATE TABLE core.sign_in_attempts (
    key             text PRIMARY KEY CHECK (length(key) <= 300),
    attempts        integer NOT NULL,
    window_start    timestamptz NOT NULL DEFAULT now(),
    blocked_until   timestamptz
);
CREATE INDEX sign_in_attempts_window_start ON core.sign_in_attempts (window_start);
