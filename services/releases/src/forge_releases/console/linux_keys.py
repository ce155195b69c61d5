"""The console's Linux signing-key page, `/{owner}/{repo}/settings/linux-key` (docs/console.md):
the instance's OpenPGP keys that sign this repository's apt and dnf repositories, and where
machines get them. A repository admin sees them; a site administrator (the keys sign every
repository) also adds a key, promotes one and retires one, as `forge linux-key` does
(linux/commands.py: a rotation is add, wait, promote, retire)."""

from __future__ import annotations

from aiohttp import web
from forge_common.access import Access
from forge_common.csrf import checked_form, text_field
from forge_common.errors import PermissionDenied
from forge_common.keys import DB_POOL
from forge_common.pages import page, see_other

from ..errors import InvalidField
from ..linux import queries
from ..linux.repository import KEYRING, USER_ID
from .access import console_repo
from .forms import console_page
from .releases import repo_context

TEMPLATE = "releases/console/linux_key.html"


@page
async def linux_key(request: web.Request) -> web.StreamResponse:
    resolved, viewer = await console_repo(request, Access.ADMIN)
    rows = await queries.openpgp_keys(request.app[DB_POOL])
    keys = [
        {"fingerprint": r["fingerprint"], "current": r["signs_first"], "since": r["updated_at"]}
        for r in rows
    ]
    context = {
        "repo": repo_context(request, resolved),
        "keys": keys,
        "site_admin": viewer.is_admin,
        "done": request.query.get("done", ""),
    }
    return console_page(request, TEMPLATE, context)


@page
async def change_linux_key(request: web.Request) -> web.StreamResponse:
    resolved, viewer = await console_repo(request, Access.ADMIN)
    if not viewer.is_admin:
        raise PermissionDenied(
            "Only a site administrator changes the keys: they sign every repository"
        )
    form = await checked_form(request)
    action, fingerprint = text_field(form, "action"), text_field(form, "fingerprint").upper()
    pool = request.app[DB_POOL]
    changes = {"promote": queries.promote_openpgp_key, "retire": queries.retire_openpgp_key}
    if action == "add":
        made, public, secret = await request.app[KEYRING].generate(USER_ID)
        first = not await queries.openpgp_keys(pool)
        await queries.add_openpgp_key(pool, made, public, secret, first)
    elif action not in changes or not await changes[action](pool, fingerprint):
        raise InvalidField("fingerprint", "no such key (the current key is never retired)")
    await queries.changed(pool)
    ref = resolved.ref
    return see_other(f"/{ref.owner}/{ref.name}/settings/linux-key?done={action}")
