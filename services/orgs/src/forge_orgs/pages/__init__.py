"""The orgs service's pages: the organization profile and the avatars (docs/pages.md)."""
