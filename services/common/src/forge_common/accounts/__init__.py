"""The accounts domain (docs/accounts.md): users, organizations, repositories, teams, members and
collaborators (`users`, `orgs`, `repos`, `teams`, their events in `events`), access tokens
(`tokens`), passwords (`passwords`), browser sessions (`sessions`), the sign-in throttle
(`sign_in_throttle`), Gitea's JSON shapes (`gitea_shapes`) and `forge admin user` (`cli`); the
records in `models`. Written in one place for the Gitea-shaped API, the pages and `forge admin`,
in the shared package because every service and the command use it (docs/decisions.md
"Accounts: one package, inside the shared one").

The writing functions take the caller's connection (a transaction for writes) and record the
events of what they changed in the outbox of that transaction (docs/events.md). Failures a caller
can cause raise `forge_common.errors` with Gitea's wording, so the API and the command say the
same thing.

Nothing is imported here: callers import the module they use.
"""
