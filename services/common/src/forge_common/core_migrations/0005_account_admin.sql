-- Teams made through the API carry a description, as Gitea's do.
ALTER TABLE core.teams ADD COLUMN description text NOT NULL DEFAULT '';
