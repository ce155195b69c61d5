-- Teams made through the API carry a description, as Gitea's do.
ALTER TABLE core.teams ADD COLUMN description text NOT NULL DEFAULT '';

-- Failed sign-ins by password on the API (basic authentication), per account name, shared by
-- every replica: after a few failures in a window, further attempts wait (auth.py, docs/accounts.md
-- "Authentication"). Keyed by the name as typed (lower-cased), whether or not the account exists,
-- so the answer tells nothing about existence.
CREATE TABLE core.password_failures (
    name     text PRIMARY KEY,
    failures integer NOT NULL,
    first_at timestamptz NOT NULL DEFAULT now()
);
