"""Resolving `{org}` for a request: 404 when it does not exist or the viewer may not see it
(a private organization to non-members, a limited one to anonymous callers), and for writes
401 for anonymous callers and 403 for anyone but owners and site admins."""

from __future__ import annotations

from forge_common.access import AccessFacts, owner_visible
from forge_common.auth import Viewer
from forge_common.db import Conn
from forge_common.errors import AuthTokenMissing, PermissionDenied
from forge_common.names import is_account_name

from .errors import OrgNotFound
from .models import OrgView
from .profile.queries import org_view


def visible(view: OrgView) -> bool:
    """The shared rule for seeing an owner (forge_common.access.owner_visible), so this API and
    repository access never disagree on who may see an organization."""
    facts = AccessFacts(
        owner_id=view.org.id,
        owner_is_org=True,
        owner_visibility=view.org.visibility,
        private=False,
        public_landing=False,
        public_releases=False,
        member_role=view.role,
    )
    return owner_visible(facts, view.viewer)


def require_visible(view: OrgView | None) -> OrgView:
    if view is None or not visible(view):
        raise OrgNotFound()
    return view


async def org_for_read(conn: Conn, name: str, viewer: Viewer | None) -> OrgView:
    return require_visible(await org_view(conn, name, viewer) if is_account_name(name) else None)


def require_signed_in(viewer: Viewer | None) -> Viewer:
    if viewer is None:
        raise AuthTokenMissing()
    return viewer


async def org_for_write(conn: Conn, name: str, viewer: Viewer | None) -> tuple[OrgView, Viewer]:
    """The organization whose pins or groups the signed-in viewer may change."""
    actor = require_signed_in(viewer)
    view = await org_for_read(conn, name, actor)
    if not view.can_manage:
        raise PermissionDenied(
            "Only organization owners and site admins can change pinned repositories and groups"
        )
    return view, actor
