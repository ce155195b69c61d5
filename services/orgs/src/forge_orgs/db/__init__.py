"""The service's SQL, one module per subject (`pins`, `groups`, `members`, `orgs`, `overview`),
and `conn`: the pooled connection a request uses and its type."""
