"""SQL migrations of the `gateway` schema (forward-only)."""
