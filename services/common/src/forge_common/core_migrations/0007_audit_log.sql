-- The audit log (docs/audit.md): every change to releases, keys, tokens, memberships and repository
-- settings, append-only, written in the transaction of the change it describes.
-- `actor` is the account's login at the time (NULL: the system, e.g. a rollout plan deciding); a
-- name rather than a foreign key, so a deleted account's history stays readable. `repo_id` has no
-- foreign key either: a deleted repository's entries stay for site admins until retention ends.
CREATE TABLE core.audit_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor       text,
    kind        text NOT NULL CHECK (kind ~ '^[a-z_]+(\.[a-z_]+)+$'),
    target      text NOT NULL CHECK (length(target) BETWEEN 1 AND 500),
    -- {"field": {"before": ..., "after": ...}}
    changes     jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(changes) = 'object'),
    request_id  text,
    source      text NOT NULL CHECK (source IN ('console', 'api', 'cli', 'system')),
    repo_id     bigint
);
-- Newest first, per repository and site-wide; the filters narrow these.
CREATE INDEX audit_log_repo_idx ON core.audit_log (repo_id, id DESC);
CREATE INDEX audit_log_created_idx ON core.audit_log (created_at);

-- Append-only: an entry is never edited. Retention deletes whole old entries (audit/retention).
CREATE FUNCTION core.audit_log_refuse_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END $$;

CREATE TRIGGER audit_log_append_only
    BEFORE UPDATE ON core.audit_log
    FOR EACH ROW EXECUTE FUNCTION core.audit_log_refuse_update();
