"""The release data the read side works with: frozen rows from the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from forge_common.access import Access


@dataclass(frozen=True, slots=True)
class Asset:
    """An attached file; `sha256` addresses its bytes in storage."""

    id: int
    release_id: int
    name: str
    size: int
    content_type: str
    sha256: str
    uuid: str
    download_count: int
    created_at: datetime
    # hex digests recorded at upload (the feeds hand them out: Squirrel SHA-1, electron-updater
    # SHA-512); empty where a query did not select them
    sha1: str = ""
    sha512: str = ""


@dataclass(frozen=True, slots=True)
class Release:
    """A release with its assets in attachment order (upload order, id ascending)."""

    id: int
    repo_id: int
    tag: str
    target: str
    title: str
    note: str
    draft: bool
    prerelease: bool
    created_at: datetime
    assets: tuple[Asset, ...] = ()
    # staged rollout: the percentage of installs the feeds offer it to (None: everyone)
    rollout: int | None = None
    # release safety (docs/release-safety.md): a withdrawn release is published for nobody (as a
    # draft) yet its files stay downloadable; `required` is a step every install below it takes;
    # `critical` makes the update mandatory for installs below it
    withdrawn: bool = False
    withdrawn_reason: str = ""
    required: bool = False
    critical: bool = False

    @property
    def published(self) -> bool:
        """Offered by the spec's endpoints and the feeds: neither a draft nor withdrawn."""
        return not (self.draft or self.withdrawn)


@dataclass(frozen=True, slots=True)
class RepoRef:
    """A resolved repository: ids and the canonical spelling of its path."""

    owner_id: int
    owner: str
    repo_id: int
    name: str
    description: str = ""  # shown on the repository page (docs/pages.md)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A repository as one caller reaches it (read/resolve.py)."""

    ref: RepoRef
    access: Access
    public: bool  # anyone may read it: answers that do not depend on the caller are public
