"""The read side of the release API: list, get, latest and the update check, with the repository
resolution every endpoint shares (resolve.py), the release queries (queries.py) and the
in-process cache that keeps the update check cheap (cache.py, kept true by the notifications
lifecycle.py subscribes it to)."""
