-- Change notifications for the overview cache of every orgs replica (overview.py).
-- Channel `forge_orgs`; payload `o:<org id>` when what one organization's overview shows changed,
-- `*` when any overview may have (a user renamed: they may be a public member anywhere).
-- Triggers rather than application code, so any writer (API, world loader, psql) invalidates.
-- NOTIFY is delivered at commit and folds identical payloads within one transaction.
-- Grants (collaborators, teams' members and repositories) are not cached: each request reads
-- the viewer's own, so they need no notification.

CREATE FUNCTION orgs.notify_overview_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    column_name text := TG_ARGV[0];  -- the column naming the organization
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('forge_orgs', 'o:' || (to_jsonb(OLD) ->> column_name));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('forge_orgs', 'o:' || (to_jsonb(NEW) ->> column_name));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER overview_notify_members
    AFTER INSERT OR UPDATE OR DELETE ON core.org_members
    FOR EACH ROW EXECUTE FUNCTION orgs.notify_overview_change('org_id');
CREATE TRIGGER overview_notify_repositories
    AFTER INSERT OR UPDATE OR DELETE ON core.repositories
    FOR EACH ROW EXECUTE FUNCTION orgs.notify_overview_change('owner_id');
CREATE TRIGGER overview_notify_teams
    AFTER INSERT OR UPDATE OR DELETE ON core.teams
    FOR EACH ROW EXECUTE FUNCTION orgs.notify_overview_change('org_id');
CREATE TRIGGER overview_notify_pins
    AFTER INSERT OR UPDATE OR DELETE ON orgs.pins
    FOR EACH ROW EXECUTE FUNCTION orgs.notify_overview_change('org_id');
CREATE TRIGGER overview_notify_pin_groups
    AFTER INSERT OR UPDATE OR DELETE ON orgs.pin_groups
    FOR EACH ROW EXECUTE FUNCTION orgs.notify_overview_change('org_id');

-- An organization's own row names it; a user's row may be any organization's public member.
CREATE FUNCTION orgs.notify_account_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.kind = 'org' THEN  -- a new user is nobody's member yet
            PERFORM pg_notify('forge_orgs', 'o:' || NEW.id);
        END IF;
    ELSIF TG_OP = 'UPDATE' AND OLD.kind = 'org' AND NEW.kind = 'org' THEN
        PERFORM pg_notify('forge_orgs', 'o:' || NEW.id);
    ELSE
        PERFORM pg_notify('forge_orgs', '*');
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER overview_notify_accounts
    AFTER INSERT OR UPDATE OR DELETE ON core.accounts
    FOR EACH ROW EXECUTE FUNCTION orgs.notify_account_change();

CREATE FUNCTION orgs.notify_all_overviews() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('forge_orgs', '*');
    RETURN NULL;
END $$;

CREATE TRIGGER overview_notify_accounts_truncate AFTER TRUNCATE ON core.accounts
    FOR EACH STATEMENT EXECUTE FUNCTION orgs.notify_all_overviews();
CREATE TRIGGER overview_notify_members_truncate AFTER TRUNCATE ON core.org_members
    FOR EACH STATEMENT EXECUTE FUNCTION orgs.notify_all_overviews();
CREATE TRIGGER overview_notify_repositories_truncate AFTER TRUNCATE ON core.repositories
    FOR EACH STATEMENT EXECUTE FUNCTION orgs.notify_all_overviews();
CREATE TRIGGER overview_notify_teams_truncate AFTER TRUNCATE ON core.teams
    FOR EACH STATEMENT EXECUTE FUNCTION orgs.notify_all_overviews();
CREATE TRIGGER overview_notify_pins_truncate AFTER TRUNCATE ON orgs.pins
    FOR EACH STATEMENT EXECUTE FUNCTION orgs.notify_all_overviews();
CREATE TRIGGER overview_notify_pin_groups_truncate AFTER TRUNCATE ON orgs.pin_groups
    FOR EACH STATEMENT EXECUTE FUNCTION orgs.notify_all_overviews();
