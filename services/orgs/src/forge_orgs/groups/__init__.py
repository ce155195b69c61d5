"""Pinned groups: the HTTP handlers, the operations (`grouping.py`) and their SQL (`queries.py`)."""
