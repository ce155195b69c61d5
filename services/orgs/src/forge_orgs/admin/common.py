"""What the organization administration's handlers share: a bounded text field, the
organization's account row, the owners-only check."""

from __future__ import annotations

from typing import Any

from forge_common.accounts.models import Account
from forge_common.accounts.queries import account_by_name
from forge_common.body import optional_str
from forge_common.db import Conn
from forge_common.errors import PermissionDenied, Unprocessable

from ..accounts.api import TargetNotFound
from ..models import OrgView

MAX_TEXT = 255


def text_field(data: Any, name: str) -> str:
    value = optional_str(data, name) or ""
    if len(value) > MAX_TEXT:
        raise Unprocessable(f"{name} must be at most {MAX_TEXT} characters", field=name)
    return value


async def org_account(conn: Conn, view: OrgView) -> Account:
    account = await account_by_name(conn, view.org.name)
    if account is None:
        raise TargetNotFound()
    return account


def owner_only(view: OrgView) -> None:
    if not view.can_manage:
        raise PermissionDenied("Must be an organization owner")  # Gitea's reqOrgOwnership
