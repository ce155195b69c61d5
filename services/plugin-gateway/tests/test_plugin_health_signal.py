"""A plugin sends a rollout's external signal (docs/rollouts.md "From a plugin"): a crash
reporter posts its figures to a plugin's route through the gateway, and the plugin, a real gRPC
server on the SDK, posts them to the releases service's health endpoint with the token of its
configuration (a `write:release` token of a bot that may publish in that repository only). The
plan's external-signal gate reads them and halts the plan, as for figures a CI posts.

Everything runs in one `forge serve --all` application on a real port (the plugin calls it over
HTTP), with the documented fast evaluation setting; the test waits on the plan's state."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import aiohttp
from forge_common.accounts import tokens
from forge_common.accounts.queries import account_by_name
from forge_common.app import create_app as create_common_app
from forge_common.service import installed_services
from forge_gateway.keys import PLUGIN_MANAGER
from forge_plugin_sdk import HTTPError, Plugin, PluginError, Request

OWNER = {"Authorization": "token fay-token"}
REPORTER = {"Authorization": "token crash-reporter-token"}
RELEASES = "/api/v2/repos/fay/{}/releases"
REPORT = "/api/v1/plugins/crash-bridge/report"
WORLD = {
    "users": [
        {"name": "fay", "tokens": ["fay-token"]},
        {"name": "bot"},  # the plugin's account: its token is made below, write:release only
        {"name": "crashes", "tokens": ["crash-reporter-token"]},  # the crash reporter's
        {"name": "mallory", "tokens": ["mallory-token"]},
    ],
    "repos": [
        {
            "owner": "fay",
            "name": name,
            "collaborators": [{"user": "bot", "permission": "write"}] if name == "app" else [],
            "releases": [
                {"tag": "v1.0.0", "created_at": "2026-01-01T00:00:00Z"},
                {"tag": "v1.1.0", "created_at": "2026-01-02T00:00:00Z", "rollout": 5},
            ],
        }
        for name in ("app", "other")
    ],
}


def crash_bridge() -> Plugin:
    """The plugin: `POST /report` with `{"repository", "version", "sessions",
    "crashed_sessions"}` from the logins of `reporters`, posted on to forge for the release
    `v{version}` with `forge_token`."""
    plugin = Plugin("crash-bridge", "1.0.0", "Crash figures to forge's rollout gate")
    state: dict[str, Any] = {}

    @plugin.on_initialize
    async def configure(config: Any) -> None:
        missing = {"forge_url", "forge_token", "reporters"} - set(config)
        if missing:
            raise PluginError(f"missing configuration: {', '.join(sorted(missing))}")
        state.update(config, reporters=set(config["reporters"].split(",")))

    @plugin.route("POST", "/report", "A crash reporter's figures for one version")
    async def report(request: Request) -> dict[str, Any]:
        if request.caller.login not in state["reporters"]:  # the identity the gateway verified
            raise HTTPError(403, "Only the configured crash reporters may report")
        body = request.json()
        api = f"{state['forge_url']}api/v2/repos/{body['repository']}/releases"
        headers = {"Authorization": f"token {state['forge_token']}"}
        figures = {k: body[k] for k in ("sessions", "crashed_sessions")}
        async with aiohttp.ClientSession(headers=headers) as forge:
            async with forge.get(f"{api}/v{body['version']}") as found:
                if found.status != 200:
                    raise HTTPError(found.status, "forge does not show this release to the bot")
                release = await found.json()
            async with forge.post(f"{api}/{release['id']}/health", json=figures) as posted:
                if posted.status != 204:
                    raise HTTPError(posted.status, (await posted.json())["error"]["message"])
        return {"release_id": release["id"], **figures}

    return plugin


async def _health_token(db: Any) -> str:
    bot = await account_by_name(db, "bot")
    assert bot is not None
    async with db.transaction():  # as `forge admin user generate-access-token` makes it
        made = await tokens.create_token(db, bot.id, "crash-bridge", ("write:release",))
    assert made is not None
    return made[1]


async def _plan(client: Any, repo: str) -> dict[str, Any]:
    release = await (await client.get(f"{RELEASES.format(repo)}/v1.1.0", headers=OWNER)).json()
    reply = await client.get(f"{RELEASES.format(repo)}/{release['id']}/rollout_plan", headers=OWNER)
    return dict(await reply.json())


async def test_a_plugin_posts_the_crash_figures_that_halt_a_rollout(
    aiohttp_server: Any,
    aiohttp_client: Any,
    settings: Any,
    load: Any,
    db: Any,
    helpers: Any,
    tmp_path: Path,
) -> None:
    await load(WORLD)
    plugin = crash_bridge()
    plugin_port = await plugin.start("127.0.0.1:0")
    port = helpers.free_port()
    config = {
        "forge_url": f"http://127.0.0.1:{port}/",
        "forge_token": await _health_token(db),
        "reporters": "crashes",
    }
    entry = {"name": "crash-bridge", "address": f"127.0.0.1:{plugin_port}", "config": config}
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps({"plugins": [entry]}))
    fast = dataclasses.replace(settings, plugins_file=path, rollout_evaluation_seconds=0.05)
    app = create_common_app(fast, list(installed_services().values()))
    client = await aiohttp_client(await aiohttp_server(app, port=port))
    try:
        await helpers.eventually(lambda: app[PLUGIN_MANAGER].get("crash-bridge").state == "ready")
        for repo in ("app", "other"):
            release = await (
                await client.get(f"{RELEASES.format(repo)}/v1.1.0", headers=OWNER)
            ).json()
            plan = {"steps": [{"percent": 10, "hold_seconds": 3600}, {"percent": 100}]}
            plan["steps"][1]["hold_seconds"] = 1
            put = await client.put(
                f"{RELEASES.format(repo)}/{release['id']}/rollout_plan", json=plan, headers=OWNER
            )
            assert put.status == 200, await put.text()

        # only the configured reporter, and only where the bot may publish
        bad = {"repository": "fay/app", "version": "1.1.0", "sessions": 9, "crashed_sessions": 9}
        for headers in ({}, {"Authorization": "token mallory-token"}):
            refused = await client.post(REPORT, json=bad, headers=headers)
            assert refused.status == 403, await refused.text()
        elsewhere = await client.post(
            REPORT, json={**bad, "repository": "fay/other"}, headers=REPORTER
        )
        assert elsewhere.status == 403, (
            await elsewhere.text()
        )  # forge: the bot may not publish there
        assert await db.fetchval("SELECT count(*) FROM releases.release_health") == 0

        for version, crashed in (("1.0.0", 10), ("1.1.0", 120)):
            body = {"repository": "fay/app", "version": version, "sessions": 2000}
            reply = await client.post(
                REPORT, json={**body, "crashed_sessions": crashed}, headers=REPORTER
            )
            assert reply.status == 200, await reply.text()
        await helpers.eventually(
            lambda: _halted(client, "app"),
            within=20,
            what="the plan halted on the plugin's figures",
        )
        plan = await _plan(client, "app")
        assert plan["reason"] == (
            "Halted at step 1 of 2 (10 %): the external-signal gate failed (crash-free sessions "
            "94.0 % against 99.5 % for the release it replaces: down by more than 1.0 %)"
        )
        assert (await _plan(client, "other"))["state"] == "running"  # no figures, no decision
    finally:
        await client.close()
        await plugin.stop(0)


async def _halted(client: Any, repo: str) -> bool:
    return (await _plan(client, repo))["state"] == "halted"
