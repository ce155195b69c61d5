-- A repository's Tauri public key (docs/releases.md "Tauri public key"): with one set, an uploaded
-- `.sig` that does not verify against its asset is refused (422) when the second file of the pair
-- arrives, so a bad signature never reaches installed apps. `public_key` is the key line of the
-- minisign `.pub` file (`RW...`: base64 of "Ed", the key id and the Ed25519 key).
CREATE TABLE releases.tauri_keys (
    repo_id    bigint PRIMARY KEY REFERENCES core.repositories (id) ON DELETE CASCADE,
    public_key text NOT NULL CHECK (length(public_key) = 56),
    updated_by bigint REFERENCES core.accounts (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
