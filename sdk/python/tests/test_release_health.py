"""ReleaseHealthService on the SDK: one decorated method serves GetReleaseHealth, asks for
release:health in the manifest, and answers every failure in-band."""

from __future__ import annotations

import grpc
import pytest
from forge_plugin_sdk import HealthRequest, Plugin, PluginError, VersionHealth
from plugin.v1 import plugin_pb2, plugin_pb2_grpc, release_health_pb2, release_health_pb2_grpc

TIMEOUT = 10.0


def reporter() -> tuple[Plugin, list[HealthRequest]]:
    plugin = Plugin("crashes", "1.0.0", permissions=["repo:read"])
    seen: list[HealthRequest] = []

    @plugin.on_release_health
    async def figures(request: HealthRequest) -> list[VersionHealth]:
        seen.append(request)
        if request.repo == "quiet":
            raise PluginError("no figures yet")
        if request.repo == "broken":
            raise RuntimeError("secret internals")
        return [VersionHealth(r.version, 1000, 7) for r in request.releases]

    return plugin, seen


def _ask(repo: str) -> release_health_pb2.GetReleaseHealthRequest:
    release = release_health_pb2.ReleaseVersion(tag="v1.2.0", version="1.2.0")
    return release_health_pb2.GetReleaseHealthRequest(owner="acme", repo=repo, releases=[release])


async def test_one_method_serves_get_release_health_and_asks_the_permission() -> None:
    plugin, seen = reporter()
    port = await plugin.start("127.0.0.1:0")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            manifest = await plugin_pb2_grpc.PluginServiceStub(channel).GetManifest(
                plugin_pb2.GetManifestRequest(), timeout=TIMEOUT
            )
            assert list(manifest.required_permissions) == ["repo:read", "release:health"]
            stub = release_health_pb2_grpc.ReleaseHealthServiceStub(channel)
            answer = await stub.GetReleaseHealth(_ask("app"), timeout=TIMEOUT)
            assert answer.error == ""
            assert [(f.version, f.sessions, f.crashed_sessions) for f in answer.figures] == [
                ("1.2.0", 1000, 7)
            ]
            assert seen[0].full_name == "acme/app" and seen[0].releases[0].tag == "v1.2.0"
            quiet = await stub.GetReleaseHealth(_ask("quiet"), timeout=TIMEOUT)
            assert (quiet.error, list(quiet.figures)) == ("no figures yet", [])
            broken = await stub.GetReleaseHealth(_ask("broken"), timeout=TIMEOUT)
            assert "secret" not in broken.error and broken.error
    finally:
        await plugin.stop(0)


async def test_a_plugin_without_the_method_neither_asks_nor_serves_it() -> None:
    plugin = Plugin("quiet", "1.0.0")
    assert plugin.manifest.required_permissions == ()
    port = await plugin.start("127.0.0.1:0")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = release_health_pb2_grpc.ReleaseHealthServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.GetReleaseHealth(_ask("app"), timeout=TIMEOUT)
            assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED
    finally:
        await plugin.stop(0)


def test_the_method_is_declared_once() -> None:
    plugin, _ = reporter()
    with pytest.raises(ValueError, match="already declared"):
        plugin.on_release_health(reporter()[0].registry.health_handler)  # type: ignore[arg-type]
