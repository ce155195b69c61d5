-- The core schema: accounts (users and organizations), repositories and who may access them.
CREATE SCHEMA IF NOT EXISTS core;

CREATE TABLE core.accounts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('user', 'org')),
    name        text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,38}$'),
    full_name   text NOT NULL DEFAULT '',
    email       text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    website     text NOT NULL DEFAULT '',
    location    text NOT NULL DEFAULT '',
    -- only organizations use it; users are always public
    visibility  text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'limited', 'private')),
    is_admin    boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (kind = 'user' OR NOT is_admin)
);
CREATE UNIQUE INDEX accounts_lower_name_key ON core.accounts (lower(name));

CREATE TABLE core.repositories (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id        bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (name ~ '^[A-Za-z0-9._-]{1,100}$' AND name NOT IN ('.', '..')),
    description     text NOT NULL DEFAULT '',
    private         boolean NOT NULL DEFAULT false,
    public_landing  boolean NOT NULL DEFAULT false,
    public_releases boolean NOT NULL DEFAULT false,
    archived        boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX repositories_owner_lower_name_key ON core.repositories (owner_id, lower(name));

CREATE TABLE core.collaborators (
    repo_id    bigint NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    permission text NOT NULL CHECK (permission IN ('read', 'write', 'admin')),
    PRIMARY KEY (repo_id, user_id)
);
CREATE INDEX collaborators_user_id_idx ON core.collaborators (user_id);

CREATE TABLE core.org_members (
    org_id  bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    role    text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'member')),
    public  boolean NOT NULL DEFAULT false,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user_id_idx ON core.org_members (user_id);

CREATE TABLE core.teams (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id     bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    name       text NOT NULL,
    permission text NOT NULL CHECK (permission IN ('read', 'write', 'admin'))
);
CREATE UNIQUE INDEX teams_org_lower_name_key ON core.teams (org_id, lower(name));

CREATE TABLE core.team_members (
    team_id bigint NOT NULL REFERENCES core.teams (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user_id_idx ON core.team_members (user_id);

CREATE TABLE core.team_repos (
    team_id bigint NOT NULL REFERENCES core.teams (id) ON DELETE CASCADE,
    repo_id bigint NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, repo_id)
);
CREATE INDEX team_repos_repo_id_idx ON core.team_repos (repo_id);

-- Only a SHA-256 of each token is kept: a leaked database does not leak working credentials.
CREATE TABLE core.access_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT '',
    token_sha256 bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    scopes       text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now()
);
