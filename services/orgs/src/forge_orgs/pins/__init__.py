"""The service's SQL, one module per subject (`pins`, `groups`, `members`, `orgs`, `overview`);
connections and their types are `forge_common.db`'s."""
