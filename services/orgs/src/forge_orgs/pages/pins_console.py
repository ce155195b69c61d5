"""`/{org}/settings/pins`: an organization owner's page for its pinned repositories and groups,
and the public-membership toggle of one's own membership (docs/console.md "Pins").

Every form goes through the API's own functions (pinning.py, grouping.py, membership.py, the
payload checks of payloads.py) and its access rule (context.org_for_write: 404 to whoever may
not see the organization, 401 to anonymous visitors, 403 to members who are not owners).
Moving a pin up or down, or into another group, is one reorder of the API (`PUT
.../pinned/reorder`): every pin's entry with its group and its place, as the spec's reorder
option says each entry sets RepoID, GroupID and DisplayOrder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web
from forge_common.auth import Viewer, viewer_of
from forge_common.csrf import Form, checked_form, text_field
from forge_common.db import Conn, connection
from forge_common.errors import ApiError, Unprocessable
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL
from forge_common.pages import page, page_response, see_other

from .. import payloads
from ..context import org_for_write
from ..errors import PinGroupNotFound
from ..groups import grouping
from ..groups import queries as groups_db
from ..models import Group, OrgView, Pin
from ..overview.prepared import written
from ..pins import pinning
from ..pins import queries as pins_db
from ..pins.queries import PinOrder
from ..profile import membership
from ..profile import queries as members_db

TEMPLATE = "orgs/pins.html"
_NO_STORE = {"Cache-Control": "no-store"}


def _path(view: OrgView) -> str:
    return f"/{view.org.name}/settings/pins"


def _sections(pins: list[Pin], groups: list[Group]) -> list[tuple[Group | None, list[Pin]]]:
    """Pins without a group first, then each group in order: the organization page's layout."""
    sections: list[tuple[Group | None, list[Pin]]] = [(None, [])]
    by_group: dict[int | None, list[Pin]] = {None: sections[0][1]}
    for group in groups:
        sections.append((group, []))
        by_group[group.id] = sections[-1][1]
    for pin in pins:
        by_group.get(pin.group_id, sections[0][1]).append(pin)
    return sections


async def _state(conn: Conn, view: OrgView) -> tuple[list[Pin], list[Group]]:
    return await pins_db.list_pins(conn, view.org.id), await groups_db.list_groups(
        conn, view.org.id
    )


async def _render(
    request: web.Request,
    conn: Conn,
    view: OrgView,
    actor: Viewer,
    *,
    errors: Mapping[str, str] | None = None,
    status: int = 200,
    notice: str = "",
) -> web.Response:
    pins, groups = await _state(conn, view)
    public = await members_db.membership_public(conn, view.org.id, actor.id)
    context = {
        "org": {"name": view.org.name, "full_name": view.org.full_name or view.org.name},
        "path": _path(view),
        "sections": _sections(pins, groups),
        "groups": groups,
        "errors": dict(errors or {}),
        "member_public": public,
        "notice": notice,
    }
    return page_response(request, TEMPLATE, context, status=status, headers=_NO_STORE)


@page
async def pins_page(request: web.Request) -> web.StreamResponse:
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        notice = "Saved." if request.query.get("done") else ""
        return await _render(request, conn, view, actor, notice=notice)


def _id(form: Form, name: str) -> int | None:
    return positive_int64(text_field(form, name))


def _orders(sections: list[tuple[Group | None, list[Pin]]]) -> list[PinOrder]:
    return [
        PinOrder(pin.repo_id, group.id if group else None, index)
        for group, pins in sections
        for index, pin in enumerate(pins)
    ]


def _moved(
    sections: list[tuple[Group | None, list[Pin]]], repo_id: int, how: str, target: int | None
) -> list[PinOrder] | None:
    """The reorder that moves one pin up, down or to the end of group `target` (0: none)."""
    for _, pins in sections:
        for index, pin in enumerate(pins):
            if pin.repo_id != repo_id:
                continue
            if how in ("up", "down"):
                other = index - 1 if how == "up" else index + 1
                if not 0 <= other < len(pins):
                    return None  # already first or last
                pins[index], pins[other] = pins[other], pins[index]
                return _orders(sections)
            pins.pop(index)
            for candidate, members in sections:
                if (candidate.id if candidate else None) == (target or None):
                    members.append(pin)
                    return _orders(sections)
            raise PinGroupNotFound()
    raise Unprocessable("repo_id names a repository not pinned in this organization", field="pin")


async def _act(conn: Conn, view: OrgView, actor: Viewer, form: Form) -> None:
    """Do what the form's `action` says, through the API's functions; their errors propagate."""
    action = text_field(form, "action")
    org = view.org
    if action == "pin":
        option = payloads.add_pin({"repo_name": text_field(form, "repo_name")})
        pins, _ = await _state(conn, view)
        order = max((p.display_order for p in pins if p.group_id is None), default=-1) + 1
        option = payloads.AddPin(option.repo_name, _id(form, "group_id"), order)
        await pinning.pin(conn, org, actor.id, option)
    elif action == "unpin":
        await pinning.unpin(conn, org, actor.id, text_field(form, "repo_name"))
    elif action in ("up", "down", "move"):
        repo_id = _id(form, "repo_id") or 0
        pins, groups = await _state(conn, view)
        orders = _moved(_sections(pins, groups), repo_id, action, _id(form, "group_id"))
        if orders is not None:
            await pinning.reorder(conn, org, actor.id, orders)
    elif action == "create_group":
        data: dict[str, Any] = {"name": text_field(form, "name")}
        groups = await groups_db.list_groups(conn, org.id)
        data["display_order"] = max((g.display_order for g in groups), default=-1) + 1
        await grouping.create(conn, org, actor.id, payloads.create_group(data))
    elif action in ("rename_group", "collapse_group", "expand_group"):
        group_id = _id(form, "group_id")
        if group_id is None:
            raise PinGroupNotFound()
        if action == "rename_group":
            change: dict[str, Any] = {"name": text_field(form, "name")}
        else:
            change = {"collapsed": action == "collapse_group"}
        await grouping.update(conn, org, actor.id, group_id, payloads.update_group(change))
    elif action in ("group_up", "group_down"):
        await _move_group(conn, view, actor, _id(form, "group_id"), action == "group_up")
    elif action == "delete_group":
        group_id = _id(form, "group_id")
        if group_id is None:
            raise PinGroupNotFound()
        await grouping.delete(conn, org, actor.id, group_id)
    elif action in ("publicize", "conceal"):
        await membership.set_visibility(conn, view, actor, actor.login, action == "publicize")
    else:
        raise Unprocessable("action is not one this page offers", field="action")


async def _move_group(
    conn: Conn, view: OrgView, actor: Viewer, group_id: int | None, up: bool
) -> None:
    groups = await groups_db.list_groups(conn, view.org.id)
    ids = [g.id for g in groups]
    if group_id not in ids:
        raise PinGroupNotFound()
    index = ids.index(group_id)
    other = index - 1 if up else index + 1
    if not 0 <= other < len(ids):
        return
    ids[index], ids[other] = ids[other], ids[index]
    for order, wanted in enumerate(ids):  # each group's place becomes its display_order
        option = payloads.update_group({"display_order": order})
        await grouping.update(conn, view.org, actor.id, wanted, option)


# Which field of the page an error is shown next to, by action.
_FIELD_OF = {
    "pin": "repo_name",
    "create_group": "name",
    "rename_group": "group_name",
}


@page
async def pins_post(request: web.Request) -> web.StreamResponse:
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        form = await checked_form(request)
        action = text_field(form, "action")
        try:
            await _act(conn, view, actor, form)
        except ApiError as error:
            if error.status in (401, 403) and action not in ("publicize", "conceal"):
                raise
            field = _FIELD_OF.get(action, "pins")
            if action == "rename_group":
                field = f"group-{text_field(form, 'group_id')}"
            written(request, view.org.id)  # a group move may have saved some places before
            return await _render(
                request, conn, view, actor, errors={field: error.message}, status=error.status
            )
    written(request, view.org.id)  # after the commit: the overview shows the change at once
    return see_other(f"{_path(view)}?done=saved")
