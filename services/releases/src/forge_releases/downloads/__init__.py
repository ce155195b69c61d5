"""Asset downloads: the two download addresses (handlers.py), sending a file with conditional
requests and byte ranges (files.py, ranges.py). Downloads are counted by the shared counter
(counter.py); the bytes live in the shared storage (storage.py)."""
