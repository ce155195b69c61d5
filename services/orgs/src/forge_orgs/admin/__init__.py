"""Gitea's organization administration (docs/accounts.md), one module per feature: organizations
and their members (`orgs`), their repositories (`repos`), teams with their members and
repositories (`teams`); what they share in `common`.

Checks in the order of every organization write (docs/access.md "The organization profile
API"): anonymous 401, an organization (or a team of one) the caller may not see 404 exactly as one
that does not exist, not an owner or site admin 403 with Gitea's words, then the body (400, 422),
then what it names (404, 422), then conflicts (409, 422). The rows are written by
`forge_common.accounts`, which records the events.
"""
