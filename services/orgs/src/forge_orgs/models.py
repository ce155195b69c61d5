"""The rows this service reads and writes, as frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from forge_common.auth import Viewer


@dataclass(frozen=True, slots=True)
class Org:
    """An organization as the API renders it."""

    id: int
    name: str
    full_name: str
    description: str
    website: str
    location: str
    visibility: str


@dataclass(frozen=True, slots=True)
class OrgView:
    """An organization seen by one viewer: who they are to it decides what they may see."""

    org: Org
    viewer: Viewer | None
    role: str | None  # the viewer's role in the organization: owner, member or None

    @property
    def is_member(self) -> bool:
        return self.role is not None

    @property
    def can_manage(self) -> bool:
        """Organization owners and site admins write pins and groups (docs/orgs.md "Decisions")."""
        return self.role == "owner" or (self.viewer is not None and self.viewer.is_admin)

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"


@dataclass(frozen=True, slots=True)
class Group:
    id: int
    name: str
    display_order: int
    collapsed: bool


@dataclass(frozen=True, slots=True)
class PinnedRepo:
    """A repository as embedded in a pin (always one of the organization's own)."""

    id: int
    name: str
    description: str
    private: bool
    archived: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Pin:
    id: int
    repo_id: int
    group_id: int | None
    display_order: int
    repo: PinnedRepo
    group: Group | None


@dataclass(frozen=True, slots=True)
class Member:
    id: int
    login: str
    full_name: str
    role: str


@dataclass(frozen=True, slots=True)
class Stats:
    """Raw counts; `render.stats` turns them into what a viewer may learn."""

    member_count: int
    public_member_count: int
    team_count: int
    repo_count: int
    public_repo_count: int
    granted_private_repo_ids: list[
        int
    ]  # private repos with the viewer's own collaborator/team grant

    @property
    def private_repo_count(self) -> int:
        return self.repo_count - self.public_repo_count
