"""Signing and verification keys of a repository (or of the instance), one model for every kind
(kinds.py): the table `releases.signing_keys` and its SQL (queries.py), the routes of each kind
(handlers.py), and what a kind checks: Tauri's minisign format (minisign.py) and the check of
every file/`.sig` pair uploaded while a repository's Tauri key is set (check.py). The next kind
(Sparkle's EdDSA key, an OpenPGP key for apt and dnf) is one more entry in kinds.py."""
