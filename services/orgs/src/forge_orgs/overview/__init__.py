"""The organization overview: prepared once per viewer class and kept (`prepared.py`), read in
one round trip (`queries.py`)."""
