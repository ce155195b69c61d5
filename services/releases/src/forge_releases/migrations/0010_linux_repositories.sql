-- Linux package repositories (linux/, docs/releases.md "Linux package repositories").
--
-- What each `.deb` and `.rpm` asset's own metadata says, read from the package file (never its
-- name) once, the first time it is needed (at upload, or by the first repository request for an
-- asset uploaded before this table or loaded from a world file), and kept. `format` '' marks an
-- asset with such a name that is no readable package (it is not listed, and not read again).
-- `control` is the `.deb`'s control stanza; `primary`, `filelists` and `other` are the `.rpm`'s
-- entries of the three repodata files, as createrepo_c writes them. Deleting the asset deletes
-- the row.
CREATE TABLE releases.linux_packages (
    asset_id   bigint PRIMARY KEY REFERENCES releases.assets (id) ON DELETE CASCADE,
    format     text NOT NULL CHECK (format IN ('deb', 'rpm', '')),
    name       text NOT NULL CHECK (length(name) <= 256),
    version    text NOT NULL CHECK (length(version) <= 256),
    arch       text NOT NULL CHECK (length(arch) <= 64),
    control    text NOT NULL DEFAULT '',
    primary_xml   text NOT NULL DEFAULT '',
    filelists_xml text NOT NULL DEFAULT '',
    other_xml     text NOT NULL DEFAULT '',
    read_at    timestamptz NOT NULL DEFAULT now()
);

-- The instance's OpenPGP keys, a kind of the one signing-key model (signing_keys/kinds.py): rows
-- of kind `openpgp` with no repository, several at once during a rotation (each signs; the one
-- `signs_first` is the current key), so the one-per-kind index of the instance's keys leaves them
-- out. `secret_key` is the armored secret key: it is read only by the signer (linux/openpgp.py)
-- and never shown, logged or sent.
ALTER TABLE releases.signing_keys
    ADD COLUMN secret_key  text,
    ADD COLUMN fingerprint text,
    ADD COLUMN signs_first boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT signing_keys_openpgp CHECK (
        kind <> 'openpgp'
        OR (repo_id IS NULL AND secret_key IS NOT NULL AND fingerprint ~ '^[0-9A-F]{40,64}$')
    );
DROP INDEX releases.signing_keys_instance_kind;
CREATE UNIQUE INDEX signing_keys_instance_kind ON releases.signing_keys (kind)
    WHERE repo_id IS NULL AND kind <> 'openpgp';
CREATE UNIQUE INDEX signing_keys_openpgp_fingerprint ON releases.signing_keys (fingerprint)
    WHERE kind = 'openpgp';
CREATE UNIQUE INDEX signing_keys_openpgp_first ON releases.signing_keys (kind)
    WHERE kind = 'openpgp' AND signs_first;
