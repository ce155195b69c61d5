"""Helpers of the console tests: a browser signed in as one of publish_world's users (a session
made the way sign-in makes it, since the sign-in page belongs to the orgs service)."""

from __future__ import annotations

from typing import Any

from forge_common.accounts.sessions import start_session
from forge_common.config import Settings
from forge_testing.browser import Browser
from yarl import URL


async def signed_in(client: Any, db: Any, settings: Settings, name: str) -> Browser:
    """A Browser of `client`'s server with a session of user `name` (close it after use)."""
    browser = Browser(client.make_url("/"))
    if name != "anonymous":
        user_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = $1", name)
        secret = await start_session(db, settings, user_id)
        browser.session.cookie_jar.update_cookies(
            {"forge_session": secret}, URL(str(client.make_url("/")))
        )
    return browser


def field_error(html: str, field: str) -> str:
    """The words shown next to `field` ('' when none)."""
    marker = f'id="{field}-error">'
    if marker not in html:
        return ""
    return html.split(marker, 1)[1].split("<", 1)[0]
