-- Update keys (docs/access.md "Update keys"): read-only credentials for one repository's releases,
-- for updaters that cannot send headers. Only the SHA-256 digest of a key is stored; the key is
-- shown once, at creation. Revoking deletes the row, which also invalidates every signed URL
-- handed out under the key (they carry its id).
CREATE TABLE releases.update_keys (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id    bigint NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    key_sha256 bytea NOT NULL UNIQUE CHECK (length(key_sha256) = 32),
    creator_id bigint REFERENCES core.accounts (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX update_keys_repo_idx ON releases.update_keys (repo_id, id);
