"""A repository's Tauri public key: the minisign format (minisign.py), its SQL (queries.py), its
routes (handlers.py) and the check of every file/`.sig` pair uploaded while it is set (check.py)."""
