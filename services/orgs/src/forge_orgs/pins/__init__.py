"""Pinned repositories: the HTTP handlers, the operations (`pinning.py`) and their SQL
(`queries.py`)."""
