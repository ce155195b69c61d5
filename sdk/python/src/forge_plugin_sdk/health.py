"""Release health figures for forge's rollout gate (plugin.v1.ReleaseHealthService).

A plugin that declares a handler with ``@plugin.on_release_health`` asks for the permission
``release:health`` in its manifest and serves GetReleaseHealth; the gateway calls it, for the
repositories its operator granted, with the release being rolled out and the one it replaces.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from plugin.v1 import release_health_pb2, release_health_pb2_grpc

from .errors import PluginError

#: The manifest permission that says the plugin serves ReleaseHealthService.
RELEASE_HEALTH_PERMISSION = "release:health"

log = logging.getLogger("forge_plugin_sdk")


@dataclass(frozen=True, slots=True)
class ReleaseVersion:
    """One release asked about: its tag (``v1.2.0``) and its version (``1.2.0``)."""

    tag: str
    version: str


@dataclass(frozen=True, slots=True)
class HealthRequest:
    """The repository and the releases forge asks figures for."""

    owner: str
    repo: str
    releases: tuple[ReleaseVersion, ...]

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"


@dataclass(frozen=True, slots=True)
class VersionHealth:
    """One version's totals: sessions, and of those the ones that crashed."""

    version: str
    sessions: int
    crashed_sessions: int


HealthHandler = Callable[[HealthRequest], Awaitable[Iterable[VersionHealth]]]


class ReleaseHealthServicer(release_health_pb2_grpc.ReleaseHealthServiceServicer):
    """Answers GetReleaseHealth from the plugin's handler; failures are answered in-band."""

    def __init__(self, handler: HealthHandler, plugin: str) -> None:
        self._handler = handler
        self._plugin = plugin

    async def GetReleaseHealth(
        self,
        request: release_health_pb2.GetReleaseHealthRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> release_health_pb2.GetReleaseHealthResponse:
        asked = HealthRequest(
            request.owner,
            request.repo,
            tuple(ReleaseVersion(r.tag, r.version) for r in request.releases),
        )
        try:
            figures = list(await self._handler(asked))
        except PluginError as exc:
            return release_health_pb2.GetReleaseHealthResponse(error=str(exc))
        except Exception:
            log.exception("release health handler of plugin %s failed", self._plugin)
            return release_health_pb2.GetReleaseHealthResponse(
                error="internal error in the plugin's release health handler"
            )
        return release_health_pb2.GetReleaseHealthResponse(
            figures=[
                release_health_pb2.VersionHealth(
                    version=f.version, sessions=f.sessions, crashed_sessions=f.crashed_sessions
                )
                for f in figures
            ]
        )
