"""docs/operations.md "Metrics": /metrics in Prometheus text format, requests by route template
(not raw path), method and status with a latency histogram, the pool and the outbox backlog read
at scrape time, one registry per application."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.app import create_app
from forge_common.config import Settings
from forge_common.db import transaction
from forge_common.keys import DB_POOL
from forge_common.outbox import Event, emit
from forge_common.render import json_response
from forge_common.service import Service
from prometheus_client.parser import text_string_to_metric_families


async def item(request: web.Request) -> web.Response:
    return json_response({"name": request.match_info["name"]})


async def publish(request: web.Request) -> web.Response:
    async with transaction(request.app[DB_POOL]) as conn:
        await emit(conn, Event("org.pin.created", "orgs", {"n": 1}))
    return json_response({}, status=201)


def setup(app: web.Application, settings: object) -> None:
    app.router.add_get("/api/v2/items/{name}", item)
    app.router.add_post("/api/v2/items", publish)


TOY = Service(name="toy", schema=None, migrations_package=None, setup=setup)


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def scrape(client: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = await client.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    return samples(await response.text())


def labels(**kw: str) -> frozenset[tuple[str, str]]:
    return frozenset(kw.items())


async def test_requests_are_counted_by_route_template(settings: Settings, aiohttp_client: Any):
    client = await aiohttp_client(create_app(settings, [TOY]))
    for name in ("a", "b", "c"):
        assert (await client.get(f"/api/v2/items/{name}")).status == 200
    assert (await client.get("/no/such/path/1")).status == 404
    assert (await client.request("PROPFIND", "/api/v2/items/a")).status == 405

    found = await scrape(client)
    route = "/api/v2/items/{name}"
    assert (
        found[("forge_http_requests_total", labels(route=route, method="GET", status="200"))] == 3
    )
    assert (
        found[("forge_http_requests_total", labels(route="unmatched", method="GET", status="404"))]
        == 1
    )
    # an invented method is one OTHER series, however many a caller makes up
    assert any(
        name == "forge_http_requests_total" and dict(ls).get("method") == "OTHER"
        for name, ls in found
    )
    assert (
        found[("forge_http_request_duration_seconds_count", labels(route=route, method="GET"))] == 3
    )
    # no raw path ever becomes a label value
    assert not any("/api/v2/items/a" in dict(ls).values() for _, ls in found)


async def test_pool_and_outbox_backlog_are_read_at_scrape_time(
    settings: Settings, aiohttp_client: Any
):
    client = await aiohttp_client(create_app(settings, [TOY]))
    before = await scrape(client)
    assert before[("forge_outbox_backlog", frozenset())] == 0
    assert before[("forge_db_pool_size", frozenset())] >= 1
    assert before[("forge_db_pool_waiters", frozenset())] == 0
    assert (await client.post("/api/v2/items")).status == 201
    assert (await client.post("/api/v2/items")).status == 201
    after = await scrape(client)
    assert after[("forge_outbox_backlog", frozenset())] == 2  # no relay here: they wait
    assert after[("forge_outbox_oldest_age_seconds", frozenset())] >= 0
    assert after[("forge_metrics_query_up", labels(query="outbox"))] == 1


async def test_each_application_has_its_own_registry(settings: Settings, aiohttp_client: Any):
    first = await aiohttp_client(create_app(settings, [TOY]))
    second = await aiohttp_client(create_app(settings, [TOY]))
    await first.get("/api/v2/items/x")
    found = await scrape(second)
    route = "/api/v2/items/{name}"
    assert (
        "forge_http_requests_total",
        labels(route=route, method="GET", status="200"),
    ) not in found
