"""The organization itself and its public members: the HTTP handlers (overview, public
members), public membership (`membership.py`) and their SQL (`queries.py`)."""
