-- Change notifications for the in-process caches of every releases replica (cache.py, listener.py).
-- Channel `forge_releases`; payload `r:<repo id>` when a repository's releases or assets changed,
-- `n` when accounts or repositories changed (name resolution and public access), `*` for all.
-- Triggers rather than application code, so any writer (API, world loader, psql) invalidates.
-- NOTIFY is delivered at commit and folds identical payloads within one transaction.

CREATE FUNCTION releases.notify_release_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('forge_releases', 'r:' || OLD.repo_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('forge_releases', 'r:' || NEW.repo_id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER releases_notify_change
    AFTER INSERT OR UPDATE OR DELETE ON releases.releases
    FOR EACH ROW EXECUTE FUNCTION releases.notify_release_change();

CREATE FUNCTION releases.notify_asset_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    repo bigint;
BEGIN
    -- Download counts change on every download: the caches do not hold them, so no notification.
    IF TG_OP = 'UPDATE'
       AND (to_jsonb(OLD) - 'download_count') = (to_jsonb(NEW) - 'download_count') THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT repo_id INTO repo FROM releases.releases WHERE id = OLD.release_id;
        -- NULL when the release itself is being deleted: its own trigger notifies then
        IF repo IS NOT NULL THEN
            PERFORM pg_notify('forge_releases', 'r:' || repo);
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT repo_id INTO repo FROM releases.releases WHERE id = NEW.release_id;
        IF repo IS NOT NULL THEN
            PERFORM pg_notify('forge_releases', 'r:' || repo);
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER assets_notify_change
    AFTER INSERT OR UPDATE OR DELETE ON releases.assets
    FOR EACH ROW EXECUTE FUNCTION releases.notify_asset_change();

-- Name resolution and anonymous access depend on accounts (name, kind, visibility) and
-- repositories (name, owner, private, public_landing, public_releases).
CREATE FUNCTION releases.notify_names_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('forge_releases', 'n');
    RETURN NULL;
END $$;

CREATE TRIGGER releases_notify_accounts_change
    AFTER INSERT OR UPDATE OR DELETE ON core.accounts
    FOR EACH STATEMENT EXECUTE FUNCTION releases.notify_names_change();

CREATE TRIGGER releases_notify_repositories_change
    AFTER INSERT OR UPDATE OR DELETE ON core.repositories
    FOR EACH STATEMENT EXECUTE FUNCTION releases.notify_names_change();

CREATE FUNCTION releases.notify_everything() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('forge_releases', '*');
    RETURN NULL;
END $$;

CREATE TRIGGER releases_notify_truncate
    AFTER TRUNCATE ON releases.releases
    FOR EACH STATEMENT EXECUTE FUNCTION releases.notify_everything();

CREATE TRIGGER assets_notify_truncate
    AFTER TRUNCATE ON releases.assets
    FOR EACH STATEMENT EXECUTE FUNCTION releases.notify_everything();

CREATE TRIGGER releases_notify_accounts_truncate
    AFTER TRUNCATE ON core.accounts
    FOR EACH STATEMENT EXECUTE FUNCTION releases.notify_everything();

CREATE TRIGGER releases_notify_repositories_truncate
    AFTER TRUNCATE ON core.repositories
    FOR EACH STATEMENT EXECUTE FUNCTION releases.notify_everything();
