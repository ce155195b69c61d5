-- Release health figures a plugin reported (docs/rollouts.md "From a plugin"): the plugin
-- gateway asks the plugins the operator granted a repository (GetReleaseHealth) and writes their
-- answers here; the releases service's external-signal gate reads them beside the figures posted
-- to its health endpoint (releases.release_health), the newer of the two winning. A core table,
-- because two services share it and neither imports the other; the releases schema adds the
-- foreign key to its releases (its migration 0013), so a deleted release takes its figures along.
CREATE TABLE core.plugin_release_health (
    release_id       bigint      PRIMARY KEY,
    repo_id          bigint      NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    plugin           text        NOT NULL,
    sessions         bigint      NOT NULL CHECK (sessions >= 0),
    crashed_sessions bigint      NOT NULL CHECK (crashed_sessions >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (crashed_sessions <= sessions)
);

-- A plugin is an audit source of its own, named: `plugin:NAME` (NAME as in PLUGINS_FILE).
-- The new rule only widens the old one, so the rows are checked without blocking writers.
ALTER TABLE core.audit_log DROP CONSTRAINT audit_log_source_check;
ALTER TABLE core.audit_log ADD CONSTRAINT audit_log_source_check
    CHECK (source IN ('console', 'api', 'cli', 'system')
           OR source ~ '^plugin:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$') NOT VALID;
ALTER TABLE core.audit_log VALIDATE CONSTRAINT audit_log_source_check;
