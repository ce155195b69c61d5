"""The update check's kept answer and the list's kept page, given before routing
(forge_common.fast_path): the same status, body and headers as the routed answer, counted under
the route in the request metrics; anything the fast path cannot vouch for (a token, HEAD, an
encoded path, a body) takes the ordinary way.

`make_client` serves the app as `forge serve` does (ForgeTestServer), so every releases test
goes through the fast paths where they apply; these tests check that they were taken or declined."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web
from forge_common import fast_path
from forge_common.fast_path import FAST_PATHS, Answerer, Keyer
from forge_releases.feeds.registry import FEEDS
from yarl import URL

from .feed_support import release_for_every_feed, target
from .support import auth, one_repo, rel

CHECK = "/api/v2/repos/owner/app/releases/update?version=1.0.0&platform=darwin&arch=arm64"
ROUTE = 'route="/api/v2/repos/{owner}/{repo}/releases/update"'


async def spied_client(make_client: Any, load: Any) -> tuple[Any, list[bool]]:
    """A client, and one entry per request a fast path was offered: True when it answered."""
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    offered: list[bool] = []
    for path in client.app[FAST_PATHS]:
        path.answer = spy(path.answer, offered)
    return client, offered


def spy(answer: Answerer, offered: list[bool]) -> Answerer:
    def spied(
        request: web.BaseRequest, match: Mapping[str, str], key: str
    ) -> web.StreamResponse | None:
        response = answer(request, match, key)
        offered.append(response is not None)
        return response

    return spied


def varying(headers: Any) -> list[tuple[str, str]]:
    """Every header in order, with the values that change per request or second blanked (the
    micro-cache's X-Accel-Expires is an absolute second, like Date)."""
    per_second = ("x-request-id", "date", "x-accel-expires")
    return [(k, "" if k.lower() in per_second else v) for k, v in headers.items()]


async def test_kept_answer_is_the_routed_answer(make_client: Any, load: Any) -> None:
    client, offered = await spied_client(make_client, load)
    routed = await client.get(CHECK)  # computes and keeps the answer
    assert offered == [False]
    fast = await client.get(CHECK, headers={"X-Request-Id": "caller-id-1"})
    assert offered == [False, True]
    assert (fast.status, await fast.read()) == (routed.status, await routed.read())
    assert (await fast.json())["name"] == "v1.1.0"
    assert varying(fast.headers) == varying(routed.headers)
    assert fast.headers["X-Request-Id"] == "caller-id-1"
    assert fast.headers["X-Content-Type-Options"] == "nosniff"
    assert len(routed.headers["X-Request-Id"]) == 32  # a new id when none is sent

    not_modified = await client.get(CHECK, headers={"If-None-Match": fast.headers["ETag"]})
    assert offered[-1] is True
    assert not_modified.status == 304
    assert await not_modified.read() == b""
    assert not_modified.headers["ETag"] == fast.headers["ETag"]
    assert not_modified.headers["X-Content-Type-Options"] == "nosniff"

    metrics = await (await client.get("/metrics")).text()
    assert f'forge_http_requests_total{{method="GET",{ROUTE},status="200"}} 2.0' in metrics
    assert f'forge_http_requests_total{{method="GET",{ROUTE},status="304"}} 1.0' in metrics


async def test_what_the_fast_path_cannot_vouch_for_is_routed(make_client: Any, load: Any) -> None:
    client, offered = await spied_client(make_client, load)
    kept = await (await client.get(CHECK)).read()
    assert offered == [False]

    # a token: the middleware authenticates it (the owner's answer is the same release)
    owner = await client.get(CHECK, headers=auth("owner"))
    assert offered == [False, False]
    assert (owner.status, await owner.read()) == (200, kept)
    unknown = await client.get(CHECK, headers={"Authorization": "token nobody-has-this"})
    assert unknown.status == 401

    # neither offered: HEAD, a percent-encoded path, a body, an Expect header
    head = await client.head(CHECK)
    assert (head.status, await head.read()) == (200, b"")
    # sent as is (yarl would decode `%6F`): the router decodes it, the fast path is not offered it
    encoded = await client.get(URL(CHECK.replace("/owner/", "/%6Fwner/"), encoded=True))
    assert (encoded.status, await encoded.read()) == (200, kept)
    with_body = await client.get(CHECK, data=b"x")
    assert (with_body.status, await with_body.read()) == (200, kept)
    assert offered == [False, False, False]


async def test_kept_list_page_is_the_routed_page(make_client: Any, load: Any) -> None:
    client, offered = await spied_client(make_client, load)
    page = "/api/v2/repos/owner/app/releases?limit=1"
    routed = await client.get(page)  # computes and keeps the page for a second
    assert offered == [False]
    fast = await client.get(page)
    if offered == [False, False]:  # the second came after the page expired: once more
        routed, fast = fast, await client.get(page)
    assert offered[-1] is True
    assert (fast.status, await fast.read()) == (routed.status, await routed.read())
    assert [r["tag_name"] for r in await fast.json()] == ["v1.1.0"]
    assert varying(fast.headers) == varying(routed.headers)
    assert fast.headers["X-Total-Count"] == "1"

    signed_in = await client.get(page, headers=auth("owner"))
    assert offered[-1] is False  # declined: a token takes the ordinary way
    assert (signed_in.status, await signed_in.read()) == (200, await fast.read())


# every feed route (feeds/registry.py), each with a request the fast path can answer once kept
FEED_PATHS = [target(feed) for feed in FEEDS]


async def test_every_feed_takes_the_update_checks_lane(make_client: Any, load: Any) -> None:
    """docs/decisions.md "The update feeds": a feed's kept answer is given before routing, the
    same status, body and headers as routed, with the request contract's id and headers."""
    await load(one_repo([release_for_every_feed()]))
    client = await make_client(wait_cache=True)
    offered: list[bool] = []
    for path in client.app[FAST_PATHS]:
        path.answer = spy(path.answer, offered)
    for feed in FEED_PATHS:
        routed = await client.get(feed)  # computes and keeps the answer
        assert routed.status == 200, feed
        assert offered[-1] is False, feed
        fast = await client.get(feed, headers={"X-Request-Id": "feed-id"})
        assert offered[-1] is True, feed
        assert (fast.status, await fast.read()) == (routed.status, await routed.read()), feed
        assert varying(fast.headers) == varying(routed.headers), feed
        assert fast.headers["X-Request-Id"] == "feed-id"
        assert fast.headers["X-Content-Type-Options"] == "nosniff"
        # an update key, a token: the ordinary way (the key is checked, the token authenticated)
        answered = len(offered)
        assert (await client.get(f"{feed}{'&' if '?' in feed else '?'}key=junk")).status == 404
        assert len(offered) == answered, feed  # never offered: the key is in the target
        owner = await client.get(feed, headers=auth("owner"))
        assert offered[-1] is False, feed
        assert (owner.status, await owner.read()) == (200, await routed.read()), feed
    metrics = await (await client.get("/metrics")).text()
    mac = 'route="/{owner}/{repo}/darwin-{arch}/{version}"'
    assert f'forge_http_requests_total{{method="GET",{mac},status="200"}} 3.0' in metrics


async def test_a_target_is_matched_once_and_the_memo_stays_bounded(
    make_client: Any, load: Any, monkeypatch: Any
) -> None:
    """docs/decisions.md "The update feeds": what a request target answered before routing
    matched, and its key, are worked out once per target; a flood of distinct targets empties the
    memo instead of growing it; a target declined (here, a token) is forgotten."""
    monkeypatch.setattr(fast_path, "KNOWN_TARGETS", 2)
    client, offered = await spied_client(make_client, load)
    keyed = count_keys(client)
    checks = [f"{CHECK}&n={n}" for n in range(4)]
    first = await (await client.get(checks[0])).read()  # routed: computes and keeps the answer
    for _ in range(3):
        assert await (await client.get(checks[0])).read() == first
    assert offered == [False, True, True, True]
    assert len(keyed) == 2  # four requests: matched when routed, then once more when answered
    for check in checks[1:]:  # three more targets answered: the memo (2) fills and is emptied
        await client.get(check)
        await client.get(check)
    assert len(keyed) == 8
    assert await (await client.get(checks[0])).read() == first
    assert len(keyed) == 9  # forgotten, matched again
    await client.get(checks[0])
    assert len(keyed) == 9
    owner = await client.get(checks[0], headers=auth("owner"))  # declined: routed, forgotten
    assert (owner.status, offered[-1], len(keyed)) == (200, False, 9)
    await client.get(checks[0])
    assert len(keyed) == 10  # matched again


async def test_a_private_repository_target_is_never_remembered(make_client: Any, load: Any) -> None:
    """docs/decisions.md "The update feeds": only targets answered before routing are remembered,
    so a declined target costs the same work however often anyone asked for it: a stranger can
    not tell by timing that the owner checks for updates at that address."""
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")], private=True))
    client = await make_client(wait_cache=True)
    keyed = count_keys(client)
    for _ in range(3):
        assert (await client.get(CHECK, headers=auth("owner"))).status == 200
        assert (await client.get(CHECK)).status == 401  # refused, and routed every time
    assert len(keyed) == 6  # every request matched afresh


def count_keys(client: Any) -> list[str]:
    keyed: list[str] = []
    for path in client.app[FAST_PATHS]:
        path.key_of = counted(path.key_of, keyed)
    return keyed


def counted(key_of: Keyer, keyed: list[str]) -> Keyer:
    def key(request: web.BaseRequest, match: Mapping[str, str]) -> str | None:
        made = key_of(request, match)
        keyed.append(str(made))
        return made

    return key
