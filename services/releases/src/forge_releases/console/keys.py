"""Repository admins' key pages: `/{owner}/{repo}/settings/update-keys` (create, list, revoke)
and `/{owner}/{repo}/settings/tauri-key` (set, remove), through the queries and checks of the
update-key and signing-key APIs (access_keys/, signing_keys/).

A new update key is shown once, on the answer to the post that made it (`Cache-Control:
no-store`, never in a URL or a redirect), with the feed URLs each updater needs, ready to paste.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.access import Access
from forge_common.audit import origin_of
from forge_common.csrf import checked_form, text_field
from forge_common.errors import ApiError
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.pages import page, see_other

from ..access_keys import changes as key_changes
from ..access_keys import queries as key_queries
from ..access_keys.handlers import key_name
from ..errors import InvalidField, UpdateKeyNotFound
from ..models import Resolved
from ..signing_keys import changes as signing_changes
from ..signing_keys import queries as signing_keys
from ..signing_keys.kinds import TAURI
from .access import console_repo
from .forms import console_page
from .releases import repo_context

KEYS_TEMPLATE = "releases/console/update_keys.html"
TAURI_TEMPLATE = "releases/console/tauri_key.html"


# What the spec's own check cannot do, said wherever it is offered (README, docs/releases.md
# "Desktop updaters", this page): it keeps the spec's rules, which other feeds do not share.
SPEC_CHECK_LIMITS = (
    "It keeps the specification's rules: its suffix table can hand an Intel Mac the arm64 zip "
    "(electron-builder's default names), it ignores rollouts, and after a release with no build "
    "for a platform (a Windows-only hotfix) it answers 204 to that platform until the next one."
)


def feed_urls(app_url: str, owner: str, repo: str, key: str) -> list[tuple[str, str, str]]:
    """Where each updater reads its feed with this key, and what to know about it (label, URL,
    note; docs/releases.md "Desktop updaters"): each client is pointed at the feed that serves
    it right, the spec's check last, with its limits."""
    api = f"{app_url}api/v2/repos/{owner}/{repo}/releases"
    return [
        (
            "Electron's autoUpdater on macOS (Squirrel.Mac, setFeedURL url)",
            f"{app_url}{owner}/{repo}/darwin-{{arch}}/{{version}}?key={key}",
            "{arch} is process.arch and {version} app.getVersion(): the build of exactly that "
            "architecture (or a universal one), a staged release only once fully rolled out. "
            "update-electron-app builds its own URL from a host and cannot carry a key: in a "
            "private repository call autoUpdater.setFeedURL with this URL instead.",
        ),
        ("electron-updater (generic provider url)", f"{api}/feeds/electron/?key={key}", ""),
        ("Squirrel.Windows (x64)", f"{api}/feeds/squirrel/x64?key={key}", ""),
        (
            "Tauri updater (endpoints)",
            f"{api}/feeds/tauri/{{{{target}}}}/{{{{arch}}}}/{{{{current_version}}}}?key={key}",
            "",
        ),
        (
            "Update check (the specification's JSON, for a client of your own)",
            f"{api}/update?version={{version}}&platform={{platform}}&arch={{arch}}&key={key}",
            SPEC_CHECK_LIMITS,
        ),
        ("Latest release (API)", f"{api}/latest?key={key}", ""),
    ]


async def _keys_page(
    request: web.Request,
    resolved: Resolved,
    *,
    created: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
    notice: str = "",
) -> web.Response:
    rows = await key_queries.list_keys(request.app[DB_POOL], resolved.ref.repo_id)
    context = {
        "repo": repo_context(request, resolved),
        "keys": rows,
        "created": created,
        "errors": errors or {},
        "notice": notice,
    }
    return console_page(request, KEYS_TEMPLATE, context, status=status)


@page
async def update_keys(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request, Access.ADMIN)
    notice = "Key revoked: its URLs stop working now." if request.query.get("done") else ""
    return await _keys_page(request, resolved, notice=notice)


@page
async def create_update_key(request: web.Request) -> web.StreamResponse:
    resolved, viewer = await console_repo(request, Access.ADMIN)
    form = await checked_form(request)
    try:
        name = key_name(text_field(form, "name"))
    except ApiError as error:
        return await _keys_page(
            request, resolved, errors={"name": error.message}, status=error.status
        )
    origin = origin_of(request, "console")
    row, key = await key_changes.create(request.app[DB_POOL], resolved.ref, name, viewer, origin)
    ref = resolved.ref
    created = {
        "name": row["name"],
        "key": key,
        "urls": feed_urls(request.app[SETTINGS].app_url, ref.owner, ref.name, key),
    }
    return await _keys_page(request, resolved, created=created, status=201)


@page
async def revoke_update_key(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request, Access.ADMIN)
    form = await checked_form(request)
    key_id = positive_int64(text_field(form, "id"))
    pool = request.app[DB_POOL]
    origin = origin_of(request, "console")
    if key_id is None or not await key_changes.revoke(pool, resolved.ref, key_id, origin):
        raise UpdateKeyNotFound()
    ref = resolved.ref
    return see_other(f"/{ref.owner}/{ref.name}/settings/update-keys?done=revoked")


async def _tauri_page(
    request: web.Request,
    resolved: Resolved,
    *,
    errors: dict[str, str] | None = None,
    value: str = "",
    status: int = 200,
) -> web.Response:
    pool = request.app[DB_POOL]
    row = await signing_keys.key_of(pool, resolved.ref.repo_id, TAURI.name)
    current = None
    if row is not None:
        current = {
            **TAURI.parse(row["public_key"]).shown,
            "updated_at": row["updated_at"],
            "updated_by": row["updated_by"],
        }
    context = {
        "repo": repo_context(request, resolved),
        "current": current,
        "errors": errors or {},
        "value": value,
    }
    return console_page(request, TAURI_TEMPLATE, context, status=status)


@page
async def tauri_key(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request, Access.ADMIN)
    return await _tauri_page(request, resolved)


@page
async def set_tauri_key(request: web.Request) -> web.StreamResponse:
    resolved, viewer = await console_repo(request, Access.ADMIN)
    form = await checked_form(request)
    pool = request.app[DB_POOL]
    ref = resolved.ref
    if text_field(form, "action") == "remove":
        if not await signing_changes.remove(pool, ref, TAURI, origin_of(request, "console")):
            raise TAURI.not_found()
        return see_other(f"/{ref.owner}/{ref.name}/settings/tauri-key")
    text = text_field(form, "public_key").strip()
    try:
        try:
            key = TAURI.parse(text)
        except ValueError as exc:
            raise InvalidField("public_key", str(exc)) from None
    except ApiError as error:
        errors = {"public_key": error.message}
        return await _tauri_page(request, resolved, errors=errors, value=text, status=error.status)
    origin = origin_of(request, "console")
    await signing_changes.set_key(pool, ref, TAURI, key, viewer, origin)
    return see_other(f"/{ref.owner}/{ref.name}/settings/tauri-key")
