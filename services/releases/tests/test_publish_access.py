"""Publishing API, access: every endpoint × every kind of caller × public and private.

docs/access.md "Authentication rules": a repository the caller cannot even read is 404
(never revealed), an anonymous caller is 401 AuthTokenMissing, a signed-in caller without write
access 403 (repository admin for deleting a release); an unknown token is 401 AuthTokenInvalid. A
refused write changes nothing and emits nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.service import create_app

from .publish_support import api, auth, outbox, publish_world

Client = TestClient[Any, Any]
CALLERS = ("anonymous", "stranger", "reader", "writer", "repoadmin", "owner", "siteadmin")
_tags = itertools.count(100)


@pytest.fixture
async def client(settings: Settings, aiohttp_client: Any, load: Any) -> Client:
    await load(publish_world())
    result: Client = await aiohttp_client(create_app(settings))
    return result


def expected(repo: str, caller: str, need_admin: bool, ok: int) -> tuple[int, str]:
    """(status, error code or '') for `caller` on `owner/<repo>`."""
    readable = repo in ("pub", "relpub") or caller not in ("anonymous", "stranger")
    if caller == "anonymous":
        return 401, "AuthTokenMissing"
    if not readable:
        return 404, "RepoNotFound"
    if caller in ("stranger", "reader") or (need_admin and caller == "writer"):
        return 403, "PermissionDenied"
    return ok, ""


async def release_of(client: Client, repo: str) -> int:
    resp = await client.post(
        api(repo), json={"tag_name": f"v{next(_tags)}.0.0"}, headers=auth("owner")
    )
    return int((await resp.json())["id"])


async def asset_of(client: Client, repo: str, release_id: int) -> int:
    resp = await client.post(
        f"{api(repo)}/{release_id}/assets?name=a.zip", data=b"a", headers=auth("owner")
    )
    return int((await resp.json())["id"])


Call = Callable[[Client, str, dict[str, str]], Awaitable[aiohttp.ClientResponse]]


async def create(client: Client, repo: str, headers: dict[str, str]) -> aiohttp.ClientResponse:
    tag = f"v{next(_tags)}.0.0"
    return await client.post(api(repo), json={"tag_name": tag}, headers=headers)


async def patch(client: Client, repo: str, headers: dict[str, str]) -> aiohttp.ClientResponse:
    rid = await release_of(client, repo)
    return await client.patch(f"{api(repo)}/{rid}", json={"name": "New"}, headers=headers)


async def delete(client: Client, repo: str, headers: dict[str, str]) -> aiohttp.ClientResponse:
    rid = await release_of(client, repo)
    return await client.delete(f"{api(repo)}/{rid}", headers=headers)


async def upload(client: Client, repo: str, headers: dict[str, str]) -> aiohttp.ClientResponse:
    rid = await release_of(client, repo)
    url = f"{api(repo)}/{rid}/assets?name=b.zip"
    return await client.post(url, data=b"b", headers=headers)


async def delete_asset(
    client: Client, repo: str, headers: dict[str, str]
) -> aiohttp.ClientResponse:
    rid = await release_of(client, repo)
    asset = await asset_of(client, repo, rid)
    return await client.delete(f"{api(repo)}/{rid}/assets/{asset}", headers=headers)


ENDPOINTS: dict[str, tuple[Call, bool, int]] = {
    "POST releases": (create, False, 201),
    "PATCH release": (patch, False, 200),
    "DELETE release": (delete, True, 204),
    "POST asset": (upload, False, 201),
    "DELETE asset": (delete_asset, False, 204),
}


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
async def test_access_matrix(client: Client, db: Any, endpoint: str) -> None:
    """Authentication rules 5-6 for writes, write access (admin to delete a release)."""
    call, need_admin, ok = ENDPOINTS[endpoint]
    for repo in ("pub", "priv", "relpub"):
        for caller in CALLERS:
            status, code = expected(repo, caller, need_admin, ok)
            before = len(await outbox(db))
            resp = await call(client, f"owner/{repo}", auth(caller))
            assert resp.status == status, (endpoint, repo, caller, await resp.text())
            events = await outbox(db)
            if code:
                assert (await resp.json())["error"]["code"] == code
                # the setup call emitted its events, the refused call none
                setup_events = {"POST releases": 0, "POST asset": 2, "DELETE asset": 3}
                assert len(events) - before == setup_events.get(endpoint, 2), (repo, caller)
            else:
                assert len(events) > before


async def test_unknown_token_is_401_on_every_write(client: Client, db: Any) -> None:
    bad = {"Authorization": "token not-a-token"}
    rid = await release_of(client, "owner/pub")
    before = await outbox(db)
    for method, path in [
        ("POST", api("owner/pub")),
        ("PATCH", f"{api('owner/pub')}/{rid}"),
        ("DELETE", f"{api('owner/pub')}/{rid}"),
        ("POST", f"{api('owner/pub')}/{rid}/assets?name=a.zip"),
        ("DELETE", f"{api('owner/pub')}/{rid}/assets/1"),
    ]:
        resp = await client.request(method, path, headers=bad, data=b"{}")
        assert resp.status == 401
        assert (await resp.json())["error"]["code"] == "AuthTokenInvalid"
    assert await outbox(db) == before


async def test_missing_repository_is_404_for_everyone(client: Client) -> None:
    for caller in ("anonymous", "writer", "siteadmin"):
        for path in ("owner/nope", "nobody/pub"):
            resp = await client.post(api(path), json={"tag_name": "v1"}, headers=auth(caller))
            assert resp.status == 404
            assert (await resp.json())["error"]["code"] == "RepoNotFound"


async def test_organization_team_with_write_can_publish(client: Client) -> None:
    resp = await client.post(api("acme/app"), json={"tag_name": "v1"}, headers=auth("orgwriter"))
    assert resp.status == 201
    resp = await client.post(api("acme/app"), json={"tag_name": "v2"}, headers=auth("writer"))
    assert resp.status == 403
