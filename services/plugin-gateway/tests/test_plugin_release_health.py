"""Release health from plugins through the contract (docs/rollouts.md "From a plugin"): the
gateway asks a plugin on the SDK (a real gRPC server serving ReleaseHealthService) for the
figures of each running plan's release and of the one it replaces, in the repositories
PLUGINS_FILE grants it, stores them, and the external-signal gate reads them.

The plans reach the gateway as the releases service's `release.rollout.changed` events, through
the outbox relay (GATEWAY_URL is the application itself, as in `forge serve --all`); the tests
run with the documented fast settings and wait on conditions, never on sleeps."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

from forge_common.app import create_app as create_common_app
from forge_common.service import installed_services
from forge_gateway.keys import HEALTH_COLLECTOR, PLUGIN_MANAGER
from forge_plugin_sdk import HealthRequest, Plugin, PluginError, VersionHealth
from forge_plugin_sdk.health import ReleaseHealthServicer
from forge_plugin_sdk.server import start_server, stop_server
from forge_plugin_sdk.service import PluginServicer

OWNER = {"Authorization": "token fay-token"}
RELEASES = "/api/v2/repos/fay/{}/releases"
WORLD = {
    "users": [{"name": "fay", "tokens": ["fay-token"]}],
    "repos": [
        {
            "owner": "fay",
            "name": name,
            "releases": [
                {"tag": "v1.0.0", "created_at": "2026-01-01T00:00:00Z"},
                {"tag": "v1.1.0", "created_at": "2026-01-02T00:00:00Z", "rollout": 5},
            ],
        }
        for name in ("app", "other")
    ],
}
# crash-free 99.5 % for the release replaced, 94 % for the new one: the gate's 1 % is exceeded
CRASHING = {"1.0.0": (2000, 10), "1.1.0": (2000, 120)}


class Reporter:
    """A crash reporter's plugin on the SDK: answers `figures`, or misbehaves as `mode` says."""

    def __init__(self, name: str = "crash-figures") -> None:
        self.plugin = Plugin(name, "1.0.0", "Crash figures for forge's rollout gate")
        self.asked: list[HealthRequest] = []
        self.figures = dict(CRASHING)
        self.mode = "answer"
        self.plugin.on_release_health(self.answer)

    async def answer(self, request: HealthRequest) -> list[VersionHealth]:
        self.asked.append(request)
        if self.mode == "error":
            raise PluginError("the crash reporter is down")
        if self.mode == "hang":
            await asyncio.Event().wait()
        if self.mode == "negative":
            return [VersionHealth("1.1.0", -1, 0)]
        if self.mode == "more_crashes_than_sessions":
            return [VersionHealth("1.0.0", 2000, 10), VersionHealth("1.1.0", 10, 11)]
        if self.mode == "unasked_version":
            return [VersionHealth("9.9.9", 2000, 10)]
        asked = {r.version for r in request.releases}
        return [VersionHealth(v, *f) for v, f in self.figures.items() if v in asked]


async def _serve_all(
    aiohttp_server: Any, aiohttp_client: Any, settings: Any, helpers: Any, tmp_path: Path,
    plugins: list[dict[str, Any]],
) -> Any:  # fmt: skip
    """Every service in one application whose relay sends the outbox to its own gateway, plans
    evaluated every 0.05 s and plugins asked every 0.1 s (PLUGIN_HEALTH_SECONDS)."""
    port = helpers.free_port()
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps({"plugins": plugins}))
    fast = dataclasses.replace(
        settings, plugins_file=path, gateway_url=f"http://127.0.0.1:{port}/",
        rollout_evaluation_seconds=0.05, plugin_health_seconds=0.1,
    )  # fmt: skip
    app = create_common_app(fast, list(installed_services().values()))
    return await aiohttp_client(await aiohttp_server(app, port=port))


async def _release(client: Any, repo: str, tag: str = "v1.1.0") -> dict[str, Any]:
    reply = await client.get(f"{RELEASES.format(repo)}/{tag}", headers=OWNER)
    assert reply.status == 200, await reply.text()
    return dict(await reply.json())


async def _start_plan(client: Any, repo: str) -> None:
    release = await _release(client, repo)
    plan = {"steps": [{"percent": 10, "hold_seconds": 3600}, {"percent": 100, "hold_seconds": 1}]}
    path = f"{RELEASES.format(repo)}/{release['id']}/rollout_plan"
    reply = await client.put(path, json=plan, headers=OWNER)
    assert reply.status == 200, await reply.text()


async def _plan(client: Any, repo: str) -> dict[str, Any]:
    release = await _release(client, repo)
    path = f"{RELEASES.format(repo)}/{release['id']}/rollout_plan"
    return dict(await (await client.get(path, headers=OWNER)).json())


async def _audit(client: Any, repo: str) -> list[dict[str, Any]]:
    reply = await client.get(f"/api/v2/repos/fay/{repo}/audit?kind=release.health", headers=OWNER)
    assert reply.status == 200, await reply.text()
    return list(await reply.json())


async def _stored(db: Any) -> int:
    return int(await db.fetchval("SELECT count(*) FROM core.plugin_release_health"))


async def test_a_granted_plugin_reports_figures_that_halt_the_rollout(
    aiohttp_server: Any, aiohttp_client: Any, settings: Any, load: Any, db: Any, helpers: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Granted fay/app only: its plan halts on the plugin's figures, audited with the plugin as
    source; fay/other's plan runs too, and the plugin is never asked about it."""
    await load(WORLD)
    reporter = Reporter()
    port = await reporter.plugin.start("127.0.0.1:0")
    entry = helpers.entry(
        "crash-figures", address=f"127.0.0.1:{port}", health_repositories=["fay/app"]
    )
    client = await _serve_all(aiohttp_server, aiohttp_client, settings, helpers, tmp_path, [entry])
    try:
        await helpers.eventually(
            lambda: client.app[PLUGIN_MANAGER].get("crash-figures").state == "ready"
        )
        for repo in ("other", "app"):
            await _start_plan(client, repo)
        await helpers.eventually(
            lambda: _halted(client, "app"), within=20, what="the plan halted on the figures"
        )
        plan = await _plan(client, "app")
        assert plan["reason"] == (
            "Halted at step 1 of 2 (10 %): the external-signal gate failed (crash-free sessions "
            "94.0 % against 99.5 % for the release it replaces: down by more than 1.0 %)"
        )
        entries = await _audit(client, "app")
        assert {(e["target"], e["source"], e["actor"]) for e in entries} == {
            ("fay/app@v1.0.0", "plugin:crash-figures", None),
            ("fay/app@v1.1.0", "plugin:crash-figures", None),
        }
        new = next(e for e in entries if e["target"].endswith("v1.1.0"))
        assert new["changes"] == {
            "sessions": {"before": None, "after": 2000},
            "crashed_sessions": {"before": None, "after": 120},
        }
        asked = reporter.asked[0]
        assert (asked.owner, asked.repo) == ("fay", "app")
        assert [(r.tag, r.version) for r in asked.releases] == [
            ("v1.1.0", "1.1.0"),
            ("v1.0.0", "1.0.0"),
        ]
        assert {(r.owner, r.repo) for r in reporter.asked} == {("fay", "app")}
        assert (await _plan(client, "other"))["state"] == "running"
        other = [(await _release(client, "other", t))["id"] for t in ("v1.0.0", "v1.1.0")]
        stored = await db.fetchval(
            "SELECT count(*) FROM core.plugin_release_health WHERE release_id = ANY($1)", other
        )
        assert stored == 0 and await _audit(client, "other") == []
    finally:
        await client.close()
        await reporter.plugin.stop(0)


async def _halted(client: Any, repo: str) -> bool:
    return (await _plan(client, repo))["state"] == "halted"


async def test_plugins_not_asking_or_not_granted_are_never_asked(
    aiohttp_server: Any, aiohttp_client: Any, settings: Any, load: Any, db: Any, helpers: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    """A plugin that serves the RPC but does not ask for release:health in its manifest, though
    granted the repository, and one that asks but is granted nothing (the default), are never
    called, while a granted one beside them is: nothing of theirs is stored."""
    await load(WORLD)
    unasked, ungranted, granted = Reporter("unasked"), Reporter("ungranted"), Reporter("granted")
    granted.figures = {"1.0.0": (500, 0), "1.1.0": (500, 0)}  # healthy: the plan keeps running
    # served on the SDK, but with a manifest that does not ask for the permission
    unasked.plugin.registry.health_handler = None
    silent = await start_server(
        PluginServicer(unasked.plugin.registry),
        "127.0.0.1:0",
        (ReleaseHealthServicer(unasked.answer, "unasked"),),
    )
    ports = [await p.plugin.start("127.0.0.1:0") for p in (ungranted, granted)]
    entries = [
        helpers.entry("unasked", address=f"127.0.0.1:{silent.port}", health_repositories=["fay/*"]),
        helpers.entry("ungranted", address=f"127.0.0.1:{ports[0]}"),
        helpers.entry("granted", address=f"127.0.0.1:{ports[1]}", health_repositories=["fay/*"]),
    ]
    client = await _serve_all(aiohttp_server, aiohttp_client, settings, helpers, tmp_path, entries)
    try:
        manager = client.app[PLUGIN_MANAGER]
        for name in ("unasked", "ungranted", "granted"):
            await helpers.eventually(lambda name=name: manager.get(name).state == "ready")
        await _start_plan(client, "app")
        await helpers.eventually(lambda: len(granted.asked) >= 3, within=20, what="3 rounds")
        assert unasked.asked == [] and ungranted.asked == []
        sources = await db.fetch("SELECT DISTINCT plugin FROM core.plugin_release_health")
        assert [row["plugin"] for row in sources] == ["granted"]
        assert {e["source"] for e in await _audit(client, "app")} == {"plugin:granted"}
        assert (await _plan(client, "app"))["state"] == "running"
    finally:
        await client.close()
        await stop_server(silent, 0)
        for reporter in (ungranted, granted):
            await reporter.plugin.stop(0)


BAD_ANSWERS = ("error", "negative", "more_crashes_than_sessions", "unasked_version", "hang")


async def test_a_failing_or_invalid_answer_stores_nothing_and_blocks_nothing(
    aiohttp_server: Any, aiohttp_client: Any, settings: Any, load: Any, db: Any, helpers: Any,
    tmp_path: Path, caplog: Any,
) -> None:  # fmt: skip
    """An error, a timeout, a negative count, more crashes than sessions, an unasked version:
    each answer is logged in one line (no traceback) and stores nothing; the plan keeps running
    and the gateway keeps asking."""
    await load(WORLD)
    reporter = Reporter()
    port = await reporter.plugin.start("127.0.0.1:0")
    entry = helpers.entry(
        "crash-figures", address=f"127.0.0.1:{port}", health_repositories=["fay/app"],
        timeouts={"GetReleaseHealth": 0.3},
    )  # fmt: skip
    client = await _serve_all(aiohttp_server, aiohttp_client, settings, helpers, tmp_path, [entry])
    caplog.set_level(logging.WARNING, logger="forge_gateway.release_health.collector")
    try:
        await helpers.eventually(
            lambda: client.app[PLUGIN_MANAGER].get("crash-figures").state == "ready"
        )
        reporter.mode = "error"
        await _start_plan(client, "app")
        for mode in BAD_ANSWERS:
            reporter.mode = mode
            calls = len(reporter.asked)
            # the round after the one that got this answer has begun: that one was handled
            await helpers.eventually(
                lambda calls=calls: len(reporter.asked) >= calls + 2, within=10
            )
        assert await _stored(db) == 0 and await _audit(client, "app") == []
        plan = await _plan(client, "app")
        assert plan["state"] == "running", plan["reason"]
        lines = [r for r in caplog.records if "release health of fay/app@v1.1.0" in r.message]
        said = " ".join(r.getMessage() for r in lines)
        for words in ("the crash reporter is down", "no answer within 0.3 s", "-1", "(11)",
                      "'9.9.9'"):  # fmt: skip
            assert words in said, words
        assert all(r.exc_info is None for r in lines)
    finally:
        await client.close()
        await reporter.plugin.stop(0)


async def test_two_replicas_ask_once_per_interval(
    aiohttp_client: Any, settings: Any, load: Any, db: Any, helpers: Any, tmp_path: Path
) -> None:
    """Two gateways on one database, each looking for due rounds every 20 ms, with an hour's
    interval: the plugin is asked once; when the interval has passed (the round's due time moved
    to now), once more, whichever replica looks first."""
    from forge_gateway.options import ReleaseHealthOptions
    from forge_gateway.service import create_app

    await load(WORLD)
    release_ids = {
        row["tag"]: row["id"]
        for row in await db.fetch("SELECT tag, id FROM releases.releases ORDER BY id LIMIT 2")
    }
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'app'")
    await db.execute(
        """INSERT INTO gateway.rollouts (release_id, repo_id, tag, replaces_release_id,
                                         replaces_tag, state, decided_at)
           VALUES ($1, $2, 'v1.1.0', $3, 'v1.0.0', 'running', now())""",
        release_ids["v1.1.0"], repo_id, release_ids["v1.0.0"],
    )  # fmt: skip
    reporter = Reporter()
    port = await reporter.plugin.start("127.0.0.1:0")
    path = tmp_path / "plugins.json"
    entry = helpers.entry(
        "crash-figures", address=f"127.0.0.1:{port}", health_repositories=["fay/app"]
    )
    path.write_text(json.dumps({"plugins": [entry]}))
    hourly = dataclasses.replace(
        helpers.FAST, release_health=ReleaseHealthOptions(interval=3600, poll_interval=0.02)
    )
    both = dataclasses.replace(settings, plugins_file=path)
    replicas = [await aiohttp_client(create_app(both, hourly)) for _ in range(2)]
    collectors = [r.app[HEALTH_COLLECTOR] for r in replicas]
    try:
        await helpers.eventually(lambda: len(reporter.asked) == 1, within=10, what="a round")
        await _both_look_again(collectors, helpers)
        assert len(reporter.asked) == 1
        await db.execute("UPDATE gateway.health_rounds SET next_round_at = now()")
        await helpers.eventually(lambda: len(reporter.asked) == 2, within=10, what="the next")
        await _both_look_again(collectors, helpers)
        assert len(reporter.asked) == 2
        assert sum(c.rounds for c in collectors) == 2
        assert await db.fetchval("SELECT rounds FROM gateway.health_rounds") == 2
    finally:
        for replica in replicas:
            await replica.close()
        await reporter.plugin.stop(0)


async def _both_look_again(collectors: list[Any], helpers: Any, times: int = 10) -> None:
    """Each replica has looked for due rounds `times` more times (every look would have taken a
    round that was due)."""
    targets = [c.looks + times for c in collectors]
    await helpers.eventually(
        lambda: all(c.looks >= t for c, t in zip(collectors, targets, strict=True)), within=10
    )


def _change(release_id: int, state: str, at: str, kind: str = "release.rollout.changed") -> Any:
    from .events_support import envelope

    payload = {"repo_id": 7, "release_id": release_id, "tag": "v1.1.0", "state": state,
               "replaces_release_id": 41, "replaces_tag": "v1.0.0"}  # fmt: skip
    return envelope(kind, occurred_at=f"2026-01-02T03:04:0{at}Z", payload=payload)


async def test_the_gateway_learns_which_plans_run_from_the_events_in_any_order(
    fresh: Any, db: Any
) -> None:
    """An event that arrives late (a retry) never overwrites a newer state, in one batch or two,
    and a deleted release's plan stays gone."""
    from .events_support import post_events

    client = await fresh([])
    batches = [
        [_change(42, "halted", "2"), _change(43, "running", "1"), _change(43, "paused", "2")],
        [_change(42, "running", "1"), _change(44, "running", "1")],
        [_change(44, "running", "2", kind="release.deleted"), _change(45, "running", "1")],
        [_change(44, "running", "3")],
    ]
    for batch in batches:
        reply = await post_events(client, batch)
        assert reply.status == 202, await reply.text()
    rows = await db.fetch(
        """SELECT release_id, state, replaces_release_id, replaces_tag
             FROM gateway.rollouts ORDER BY release_id"""
    )
    assert [tuple(row) for row in rows] == [
        (42, "halted", 41, "v1.0.0"),
        (43, "paused", 41, "v1.0.0"),
        (44, "deleted", 41, "v1.0.0"),
        (45, "running", 41, "v1.0.0"),
    ]
