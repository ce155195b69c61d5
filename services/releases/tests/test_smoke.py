"""Quick end-to-end pass through each endpoint."""

from typing import Any

from .support import access_world


async def test_smoke(make_client: Any, load: Any) -> None:
    await load(access_world())
    client = await make_client(wait_cache=True)
    for path in [
        "/api/v2/repos/owner/pub/releases",
        "/api/v2/repos/owner/pub/releases/latest",
        "/api/v2/repos/owner/pub/releases/v1.0.0",
        "/api/v2/repos/owner/pub/releases/update?version=0.1.0&platform=darwin&arch=arm64",
        "/api/v2/repos/owner/pub/releases/update?version=0.1.0&platform=darwin&arch=arm64",
        "/owner/pub/releases/download/v1.0.0/App-1.0.0-x64.zip",
        "/owner/pub/releases/latest/download/app-1.0.0-x64.zip",
        "/api/v2/openapi.json",
    ]:
        resp = await client.get(path)
        print(path, resp.status, dict(resp.headers), (await resp.read())[:300])
