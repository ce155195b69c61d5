"""The records of the accounts domain (their lookups by name: queries.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Account:
    id: int
    kind: str
    name: str
    full_name: str
    email: str
    description: str
    website: str
    location: str
    visibility: str
    is_admin: bool
    created_at: datetime

    @property
    def is_org(self) -> bool:
        return self.kind == "org"


@dataclass(frozen=True, slots=True)
class Repository:
    id: int
    owner_id: int
    name: str
    description: str
    private: bool
    public_landing: bool
    public_releases: bool
    archived: bool
    created_at: datetime
    updated_at: datetime
