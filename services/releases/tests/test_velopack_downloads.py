"""Velopack's packages at the feed's base URL (`{owner}/{repo}/velopack/{FileName}`) in every
storage backend and serving mode of the download tests (storage_modes.py, through nginx in its
mode): a private repository's package, asked with an update key in `Authorization`, is answered
with its bytes or with a redirect to a URL that needs no header, since Velopack's client drops
`Authorization` on every redirect (docs/releases.md "Velopack")."""

from __future__ import annotations

from typing import Any

import aiohttp
from forge_testing.velopack import nupkg
from forge_testing.waiting import eventually

from .support import TOKENS, one_repo, rel
from .test_downloads import make_client, mode, settings

__all__ = ["make_client", "mode", "settings"]  # the fixtures, used by name

PACKAGE = "App-1.0.0-full.nupkg"
CONTENT = "the package's bytes"
OWNER = {"Authorization": f"token {TOKENS['owner']}"}


async def fetched(client: Any, path: str, key: str, extra: dict[str, str]) -> tuple[int, bytes]:
    """The package as Velopack's client gets it: asked with the key in `Authorization`, and a
    redirect followed without that header (only the others kept)."""
    resp = await client.get(
        path, headers={"Authorization": f"token {key}", **extra}, allow_redirects=False
    )
    if resp.status != 302:
        return resp.status, await resp.read()
    async with (
        aiohttp.ClientSession() as bare,
        bare.get(resp.headers["Location"], headers=extra) as followed,
    ):
        return followed.status, await followed.read()


async def test_a_package_asked_with_a_key_in_authorization_needs_no_header_after(
    make_client: Any, load: Any, mode: str
) -> None:
    release = rel("v1.0.0", 1)
    release["assets"] = [{"name": PACKAGE, "content": CONTENT}]
    await load(one_repo([release], private=True))
    client = await make_client()
    resp = await client.post(
        "/api/v2/repos/owner/app/update_keys", json={"name": "velopack"}, headers=OWNER
    )
    key = (await resp.json())["key"]
    path = f"/owner/app/velopack/{PACKAGE}"
    assert (await client.get(path, allow_redirects=False)).status == 401  # no key: refused
    first = await client.get(path, headers={"Authorization": f"token {key}"}, allow_redirects=False)
    assert first.status == (302 if mode == "s3-redirect" else 200)
    assert await fetched(client, path, key, {}) == (200, CONTENT.encode())
    assert await fetched(client, path, key, {"Range": "bytes=4-10"}) == (
        206,
        CONTENT.encode()[4:11],
    )


async def test_the_nuspec_is_read_from_the_storage_in_every_mode(
    make_client: Any, load: Any
) -> None:
    """The feed reads each package's `.nuspec` with ranged reads of the storage (feeds/nuspec.py),
    S3 included; a world-loaded `.nupkg` that is no zip is skipped."""
    release = rel("v1.0.0", 1)
    release["assets"] = [{"name": PACKAGE, "content": CONTENT}]
    await load(one_repo([release]))
    client = await make_client()
    found = await (await client.get("/api/v2/repos/owner/app/releases/v1.0.0")).json()
    data = nupkg("AccApp", "1.0.0", "linux", app=bytes(range(256)) * 2000)
    resp = await client.post(
        f"/api/v2/repos/owner/app/releases/{found['id']}/assets?name=AccApp-1.0.0-full.nupkg",
        data=data,
        headers={**OWNER, "Content-Type": "application/octet-stream"},
    )
    assert resp.status == 201, await resp.text()
    expected = [("AccApp", "AccApp-1.0.0-full.nupkg", len(data))]

    async def listed() -> bool:  # once the upload's change notification has arrived
        body = await (await client.get("/owner/app/velopack/releases.linux.json")).json()
        return [(a["PackageId"], a["FileName"], a["Size"]) for a in body["Assets"]] == expected

    await eventually(listed, what="the uploaded package in the feed")
