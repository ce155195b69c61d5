"""Administration of the core schema: users, organizations, repositories, teams, members and
collaborators, written in one place for the Gitea-shaped API and `forge admin`
(docs/accounts.md). Every function takes the caller's connection (a transaction for writes) and
records the events of what it changed in the outbox of that transaction (docs/events.md).

Failures a caller can cause raise `forge_common.errors` with Gitea's wording, so the API and the
command say the same thing.
"""
