"""The orgs service: the version-1 organization profile API."""
