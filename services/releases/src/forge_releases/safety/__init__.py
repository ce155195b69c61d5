"""Release safety (docs/release-safety.md): withdraw a release (installs on it roll back where
their client can go down), required intermediate steps and critical releases (the minimum
version), and how the update check and the feeds decide with them (decide.py)."""
