-- Signing and verification keys in one table (docs/releases.md "Signing keys"): a repository's
-- (repo_id) or the instance's (repo_id NULL), at most one of each kind (signing_keys/kinds.py
-- says what each kind holds and checks). The first kind, `tauri`, is a repository's Tauri public
-- key, moved here from releases.tauri_keys with its rows: `public_key` is the key line of the
-- minisign `.pub` file (`RW...`: base64 of "Ed", the key id and the Ed25519 key).
CREATE TABLE releases.signing_keys (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id    bigint REFERENCES core.repositories (id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9-]{0,31}$'),
    public_key text NOT NULL CHECK (length(public_key) BETWEEN 1 AND 65536),
    updated_by bigint REFERENCES core.accounts (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repo_id, kind),
    CONSTRAINT signing_keys_tauri_key_line CHECK (kind <> 'tauri' OR length(public_key) = 56)
);
-- the instance's keys: UNIQUE above does not hold rows whose repo_id is NULL to one per kind
CREATE UNIQUE INDEX signing_keys_instance_kind ON releases.signing_keys (kind)
    WHERE repo_id IS NULL;

INSERT INTO releases.signing_keys (repo_id, kind, public_key, updated_by, updated_at)
SELECT repo_id, 'tauri', public_key, updated_by, updated_at FROM releases.tauri_keys;
DROP TABLE releases.tauri_keys;
