-- Releases of a repository and their attached files (assets). Asset bytes live in content-addressed
-- storage under STORAGE_PATH, keyed by SHA-256.
CREATE SCHEMA IF NOT EXISTS releases;

CREATE TABLE releases.releases (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo_id      bigint NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    tag          text NOT NULL CHECK (length(tag) BETWEEN 1 AND 255),
    target       text NOT NULL DEFAULT '',
    title        text NOT NULL DEFAULT '',
    note         text NOT NULL DEFAULT '',
    draft        boolean NOT NULL DEFAULT false,
    prerelease   boolean NOT NULL DEFAULT false,
    tag_only     boolean NOT NULL DEFAULT false, -- a bare tag: never listed as a release
    publisher_id bigint REFERENCES core.accounts (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX releases_repo_tag_key ON releases.releases (repo_id, tag);
-- list order (DESIGN §4): newest first, id breaking ties
CREATE INDEX releases_repo_order_idx ON releases.releases (repo_id, created_at DESC, id DESC);

CREATE TABLE releases.assets (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    release_id     bigint NOT NULL REFERENCES releases.releases (id) ON DELETE CASCADE,
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    size           bigint NOT NULL CHECK (size >= 0),
    content_type   text NOT NULL DEFAULT 'application/octet-stream',
    sha1           text NOT NULL,
    sha256         text NOT NULL,
    sha512         text NOT NULL,
    uuid           uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    download_count bigint NOT NULL DEFAULT 0,
    uploader_id    bigint REFERENCES core.accounts (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX assets_release_name_key ON releases.assets (release_id, name);
-- Squirrel.Windows retries a failed download lower-cased: the fallback lookup uses this
CREATE INDEX assets_release_lower_name_idx ON releases.assets (release_id, lower(name));
CREATE INDEX assets_sha256_idx ON releases.assets (sha256);
