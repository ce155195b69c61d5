"""Helpers of the account administration tests: passwords and basic authentication."""

from __future__ import annotations

import base64
from typing import Any

from forge_common.accounts.passwords import hash_password
from forge_common.accounts.users import set_password, user_by_name
from forge_common.keys import DB_POOL


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


async def give_password(api: Any, login: str, password: str) -> None:
    """Set a world user's password (the world file gives none), through the shared function."""
    pool = api.client.app[DB_POOL]
    user = await user_by_name(pool, login)
    assert user is not None
    await set_password(pool, user.id, await hash_password(password), must_change_password=False)
