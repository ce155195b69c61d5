"""Organizations and their members (`POST /api/v1/orgs`, `DELETE /api/v1/orgs/{org}/members/...`).

Membership is made through teams, as in Gitea (teams.py); the creator of an organization is
its first owner."""

from __future__ import annotations

from ..db import Conn
from ..errors import Unprocessable
from . import queries
from .events import record
from .models import Account
from .users import check_name, insert_account, lock_owners

VISIBILITIES = ("public", "limited", "private")


async def create_org(
    conn: Conn,
    creator: Account,
    *,
    name: str,
    full_name: str = "",
    email: str = "",
    description: str = "",
    website: str = "",
    location: str = "",
    visibility: str = "public",
) -> Account:
    check_name(name)
    if visibility not in VISIBILITIES:
        raise Unprocessable(
            "visibility must be one of public, limited, private", field="visibility"
        )
    org = await insert_account(
        conn,
        "org",
        name,
        full_name=full_name,
        email=email,
        description=description,
        website=website,
        location=location,
        visibility=visibility,
    )
    await conn.execute(queries.INSERT_OWNER, org.id, creator.id)
    await record(
        conn,
        "org.created",
        {"org_id": org.id, "org": org.name, "visibility": visibility},
        actor_id=creator.id,
        org_id=org.id,
    )
    await record(
        conn,
        "org.member.added",
        {
            "org_id": org.id,
            "org": org.name,
            "user_id": creator.id,
            "login": creator.name,
            "role": "owner",
        },
        actor_id=creator.id,
        org_id=org.id,
    )
    return org


async def ensure_member(conn: Conn, org: Account, user: Account, actor_id: int) -> bool:
    """Make `user` a member of `org` when they are not one yet; True when they were added."""
    added = await conn.fetchval(queries.INSERT_MEMBER, org.id, user.id)
    if added:
        await record(
            conn,
            "org.member.added",
            {
                "org_id": org.id,
                "org": org.name,
                "user_id": user.id,
                "login": user.name,
                "role": "member",
            },
            actor_id=actor_id,
            org_id=org.id,
        )
    return bool(added)


async def remove_member(conn: Conn, org: Account, user: Account, actor_id: int) -> bool:
    """Remove `user` from `org` and from its teams; False when they were no member. The last
    owner stays (422), as in Gitea, or nobody could manage the organization.

    The organization's row is locked first (`lock_owners`), so two removals at once are one after
    the other: the second counts the owners the first left, where two counts read side by side
    would each have seen the other owner and left none. Call it inside a transaction."""
    await lock_owners(conn, [org.id])
    role = await conn.fetchval(queries.MEMBER_ROLE_FOR_UPDATE, org.id, user.id)
    if role is None:
        return False
    if role == "owner":
        owners = await conn.fetchval(queries.OWNER_COUNT, org.id)
        if owners <= 1:
            raise Unprocessable(f"user is the last member of an owner team [uid: {user.id}]")
    await conn.execute(queries.DELETE_MEMBER_TEAMS, org.id, user.id)
    await conn.execute(queries.DELETE_MEMBER, org.id, user.id)
    await record(
        conn,
        "org.member.removed",
        {"org_id": org.id, "org": org.name, "user_id": user.id, "login": user.name},
        actor_id=actor_id,
        org_id=org.id,
    )
    return True
