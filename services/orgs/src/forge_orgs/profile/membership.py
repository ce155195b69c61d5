"""Public membership visibility: the three rules of docs/orgs.md "Public membership rules", in
their order, then the change."""

from __future__ import annotations

from forge_common.auth import Viewer
from forge_common.db import Conn
from forge_common.errors import PermissionDenied
from forge_common.names import is_account_name

from ..errors import NotAMember, UserNotFound
from ..events import emit_org_event
from ..models import OrgView
from . import queries as members_db

ONLY_YOUR_OWN = "You can only change your own public membership visibility"


async def set_visibility(
    conn: Conn, view: OrgView, actor: Viewer, username: str, public: bool
) -> None:
    # Rule 1: someone else's visibility is for organization owners only (site admins included
    # only when they own the organization: rule 1 names owners).
    if username.lower() != actor.login.lower() and view.role != "owner":
        raise PermissionDenied(ONLY_YOUR_OWN)
    # Rule 2: the user must exist.
    user = None
    if is_account_name(username):
        user = await members_db.user_by_name(conn, username)
    if user is None:
        raise UserNotFound()
    user_id, login = user
    async with conn.transaction():
        # Rule 3: the user must be a member.
        current = await members_db.lock_membership(conn, view.org.id, user_id)
        if current is None:
            raise NotAMember()
        if current != public:
            await members_db.set_public(conn, view.org.id, user_id, public)
            await emit_org_event(
                conn,
                "org.member.publicized" if public else "org.member.concealed",
                view.org,
                actor.id,
                {"user_id": user_id, "login": login},
            )
