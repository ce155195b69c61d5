"""Every registered feed (feeds/registry.py), walked from a request target to everything the
service derives from its record: the route answers it, the key the nginx log reader makes from
the URI (insights/proxy_log.py) is the key the answer is kept under, the key's dimensions name the
feed and the version offered, the body remade for counting behind nginx offers the same version,
the lane before routing serves it, and the OpenAPI document describes it. A feed registered
without any of these fails here."""

from __future__ import annotations

from typing import Any

from forge_common.fast_path import FAST_PATHS
from forge_common.keys import DB_POOL
from forge_releases.feeds.registry import FEEDS, remade_body
from forge_releases.insights.dimensions import Defaults, of_check
from forge_releases.insights.proxy_log import key_of
from forge_releases.openapi.document import build
from forge_releases.read.update_check import repo_releases

from .feed_support import release_for_every_feed, target
from .support import one_repo

DEFAULTS = Defaults("linux", "x64")


async def test_every_feed_from_uri_to_key_dimensions_and_remade_body(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([release_for_every_feed()]))
    client = await make_client(wait_cache=True)
    repo_id = await client.app[DB_POOL].fetchval(
        "SELECT id FROM core.repositories WHERE name = 'app'"
    )
    fast_routes = {path.resource.canonical for path in client.app[FAST_PATHS]}
    documented = build()["paths"]
    for feed in FEEDS:
        uri = target(feed)
        resp = await client.get(uri)
        assert resp.status == 200, (uri, await resp.text())
        body = await resp.read()
        assert key_of(uri) is not None, uri
        owner, repo, key = key_of(uri) or ("", "", "")
        assert (owner, repo) == ("owner", "app")
        releases = await repo_releases(client.app, repo_id)
        kept = feed.kept_key(releases, key)  # a feed with required steps keeps it per band
        assert kept in releases.answers, (uri, key, kept, list(releases.answers))
        assert releases.answers[kept].body == body

        dims = of_check(key, body, DEFAULTS)
        assert (dims.kind, dims.feed) == ("check", feed.name), key
        assert dims.offered == ("1.1.0" if feed.counted.offered else ""), key
        again = remade_body(releases, key)
        if feed.remade is None:
            assert again == b"", key
        else:
            assert of_check(key, again, DEFAULTS) == dims, key

        assert feed.path in fast_routes, feed.path
        assert documented[feed.path]["get"]["operationId"] == feed.operation["operationId"]
