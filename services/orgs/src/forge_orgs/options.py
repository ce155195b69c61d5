"""Tuning of the orgs service, given to `create_app(settings, options)`; `forge serve` uses the
defaults. Stored in the application under `keys.OPTIONS`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Options:
    """The orgs service's tuning knobs; the defaults suit production."""

    # Overviews kept (one per organization and viewer class, overview.py); over the limit the
    # cache is emptied rather than tracked. 0 turns the cache off.
    overview_cache_entries: int = 10_000
