"""Tuning of the orgs service, given to `create_app(settings, options)`; `forge serve` uses the
defaults. Stored in the application under `keys.OPTIONS`.

Nothing to tune yet: the overview cache will add its fields here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Options:
    """The orgs service's tuning knobs (none yet); the defaults suit production."""
