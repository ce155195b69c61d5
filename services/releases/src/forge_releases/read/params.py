"""Query parameters of the release endpoints: bad values fall back to defaults, unknown ones are
ignored (docs/releases.md list rules 1-3, update rule 2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from forge_common.ids import positive_int64

DEFAULT_LIMIT = 30
MAX_LIMIT = 100
_TRUE = frozenset({"1", "t", "true", "yes", "on"})


def flag(query: Mapping[str, str], name: str) -> bool:
    """A boolean query parameter; anything but a true value (or absence) is false."""
    return query.get(name, "").strip().lower() in _TRUE


def _positive_int(raw: str | None) -> int | None:
    """A positive whole number (forge_common.ids: ASCII digits, bounded before `int()`, at most
    int64), or None: the caller falls back to the default."""
    return None if raw is None else positive_int64(raw.strip())


@dataclass(frozen=True, slots=True)
class Page:
    page: int
    limit: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit

    @property
    def reachable(self) -> bool:
        """False when the offset is beyond any int64 (no rows can be there)."""
        return self.offset < 2**63


def page_of(query: Mapping[str, str]) -> Page:
    """List rule 1 (page defaults to 1) and rule 2 (limit defaults to 30, also above 100)."""
    page = _positive_int(query.get("page")) or 1
    limit = _positive_int(query.get("limit"))
    if limit is None or limit > MAX_LIMIT:
        limit = DEFAULT_LIMIT
    return Page(page, limit)


def storable_tag(value: str) -> bool:
    """Whether `value` could be a stored tag at all (PostgreSQL text holds no NUL; tags are at
    most 255 characters): anything else is simply not found, without a query."""
    return 0 < len(value) <= 255 and "\x00" not in value
