-- Gitea's `includes_all_repositories` (its Owners team; what Gitea's Terraform provider sends):
-- the team holds every repository of its organization, those made or moved there later too.
-- A trigger adds them, whichever code path makes the repository (API, world file, console).
ALTER TABLE core.teams ADD COLUMN includes_all_repositories boolean NOT NULL DEFAULT false;

CREATE FUNCTION core.add_repo_to_all_repository_teams() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO core.team_repos (team_id, repo_id)
    SELECT t.id, NEW.id FROM core.teams t
     WHERE t.org_id = NEW.owner_id AND t.includes_all_repositories
    ON CONFLICT DO NOTHING;
    RETURN NEW;
END
$$;

CREATE TRIGGER repositories_join_all_repository_teams
    AFTER INSERT OR UPDATE OF owner_id ON core.repositories
    FOR EACH ROW EXECUTE FUNCTION core.add_repo_to_all_repository_teams();
