"""Organization administration in Gitea's shapes: organizations, their repositories, teams and
members (docs/accounts.md)."""
