"""docs/operations.md "Metrics": one `forge serve --all` process serves the metrics of the three
services at one /metrics; a published release travels outbox → relay → gateway → plugin and
shows in the delivery metrics; and every metric the Grafana dashboard (deploy/grafana/forge.json)
queries is one this running process exports."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from forge_testing.loopback import request
from forge_testing.ports import free_port
from forge_testing.processes import load_world, start_forge_service, wait_until_ready
from forge_testing.waiting import until
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy/grafana/forge.json"
TOKEN = "alice-metrics-token"
WORLD = {
    "users": [{"name": "alice", "admin": True, "tokens": [TOKEN]}],
    "orgs": [{"name": "acme", "visibility": "public", "members": [{"user": "alice"}]}],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [{"tag": "v1.0.0", "assets": [{"name": "app.bin", "size": 1000}]}],
        }
    ],
}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def dashboard_metric_names() -> set[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    exprs = [target["expr"] for panel in panels for target in panel["targets"]]
    assert exprs
    return {name for expr in exprs for name in re.findall(r"\bforge_[a-z0-9_]+", expr)}


def call(port: int, method: str, path: str, body: bytes | None = None) -> int:
    headers = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    return request(port, method, path, headers, body, timeout=10).status


def anonymous(port: int, path: str) -> int:
    return request(port, "GET", path, timeout=10).status


def scrape(port: int) -> Samples:
    reply = request(port, "GET", "/metrics", timeout=10)
    assert reply.status == 200, reply.body
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(reply.body.decode())
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """Sum of the samples named `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def test_one_process_exports_every_dashboard_metric(database_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "STORAGE_PATH": str(tmp_path / "storage")}
    load_world(WORLD, tmp_path, env)
    address = f"127.0.0.1:{free_port()}"
    plugins = tmp_path / "plugins.json"
    plugins.write_text(json.dumps({"plugins": [{"name": "event-recorder", "address": address}]}))
    plugin = subprocess.Popen(
        [sys.executable, "-m", "event_recorder", "--address", address, "--log-level", "WARNING"],
        env=env,
    )
    process, url = start_forge_service(
        "all", database_url, tmp_path / "storage", {"PLUGINS_FILE": str(plugins)}
    )
    try:
        asyncio.run(wait_until_ready(url + "readyz", exit_code=process.poll))
        port = urlsplit(url).port
        assert port is not None
        update = "/api/v2/repos/acme/app/releases/update?version=0.9.0&platform=linux&arch=x64"
        assert anonymous(port, update) == 204  # computed: no update for linux
        assert anonymous(port, update) == 204  # prepared (or computed again while the cache is off)
        assert anonymous(port, "/acme/app/releases/download/v1.0.0/app.bin") == 200
        status = call(port, "POST", "/api/v2/repos/acme/app/releases", b'{"tag_name": "v2.0.0"}')
        assert status == 201

        # the release's events reach the plugin: delivered attempts and a lag are recorded
        samples: Samples = {}

        def delivered() -> bool:
            # the gateway in this process may deliver an event it leased at ingest before the
            # relay has read the gateway's answer and counted it as sent: wait for both
            nonlocal samples
            samples = scrape(port)
            attempts = "forge_delivery_attempts_total"
            return (
                value(samples, attempts, plugin="event-recorder", outcome="delivered") >= 1
                and value(samples, "forge_relay_events_sent_total") >= 1
            )

        until(delivered, 20, "a delivered attempt and a sent event in /metrics", interval=0.2)
        assert value(samples, "forge_delivery_lag_seconds_count", plugin="event-recorder") >= 1
        assert value(samples, "forge_plugin_state", plugin="event-recorder", state="ready") == 1
        assert value(samples, "forge_plugin_breaker_state", state="closed") == 1
        assert value(samples, "forge_downloads_total") == 1
        assert value(samples, "forge_download_bytes_total") == 1000
        assert value(samples, "forge_update_cache_misses_total") >= 1
        # the three services' routes in one registry
        routes = {dict(ls).get("route") for n, ls in samples if n == "forge_http_requests_total"}
        assert {
            "/api/v2/repos/{owner}/{repo}/releases/update",
            "/{owner}/{repo}/releases/download/{tag}/{name}",
            "/readyz",
        } <= routes

        exported = {name for name, _ in samples}
        missing = sorted(dashboard_metric_names() - exported)
        assert not missing, f"the dashboard queries metrics nobody exports: {missing}"
    finally:
        for child in (process, plugin):
            child.terminate()
            child.wait(10)


def test_the_dashboard_is_checked_against_real_names() -> None:
    """The check above can fail: the dashboard names metrics, and only forge_ ones."""
    names = dashboard_metric_names()
    assert "forge_http_request_duration_seconds_bucket" in names
    assert all(name.startswith("forge_") for name in names)
