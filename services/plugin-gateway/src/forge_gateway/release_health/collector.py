"""The health collector (docs/rollouts.md "From a plugin"): every gateway replica runs one. For
each plugin whose manifest asks for `release:health` and that the operator granted repositories
(PLUGINS_FILE `health_repositories`), one replica a round takes it (queries.take_round: once per
interval whatever the number of replicas) and asks the plugin, once per running rollout plan of a
granted repository, for the figures of the plan's release and of the one it replaces.

Figures are checked as the health endpoint checks a post (figures.py); a checked answer is stored
in `core.plugin_release_health`, all its versions in one transaction with an audit entry
(`release.health`, source `plugin:NAME`) when they changed. The releases service's evaluator
reads them there at its next evaluation: it never waits on a plugin. An answer that fails, times
out or breaks a rule stores nothing and is logged (one line, no traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg
from forge_common import audit
from forge_common.db import transaction
from forge_common.outage import DATABASE, Dependency, round_failed
from plugin.v1 import release_health_pb2

from ..options import ReleaseHealthOptions
from ..plugins.client import RELEASE_HEALTH_SERVICE, PluginCallError
from ..plugins.manager import PluginManager
from ..plugins.plugin import ManagedPlugin
from ..plugins.state import PluginState
from . import queries
from .figures import InvalidAnswer, accepted, version_of
from .queries import RunningRollout

log = logging.getLogger(__name__)

RELEASE_HEALTH_PERMISSION = "release:health"
AUDIT_KIND = "release.health"
RPC = "GetReleaseHealth"

# version -> (release id, tag) of the releases one request asks about
Asked = dict[str, tuple[int, str]]


def asks_for_health(plugin: ManagedPlugin) -> bool:
    """A ready plugin that asks for release:health and was granted repositories."""
    manifest = plugin.manifest
    return (
        plugin.state is PluginState.READY
        and manifest is not None
        and RELEASE_HEALTH_PERMISSION in manifest.required_permissions
        and bool(plugin.config.health_repositories)
    )


def releases_of(rollout: RunningRollout) -> Asked:
    """The plan's release and the one it replaces, by the version their installs report."""
    asked = {version_of(rollout.tag): (rollout.release_id, rollout.tag)}
    if rollout.replaces_release_id is not None and rollout.replaces_tag:
        replaced = (rollout.replaces_release_id, rollout.replaces_tag)
        asked.setdefault(version_of(rollout.replaces_tag), replaced)
    return asked


class HealthCollector:
    def __init__(self, manager: PluginManager, options: ReleaseHealthOptions) -> None:
        self.manager = manager
        self.options = options
        self.database = Dependency(DATABASE)
        # read by tests and operators: times this replica looked for due rounds, rounds it took
        self.looks = 0
        self.rounds = 0

    async def run(self, pool: asyncpg.Pool, stopping: asyncio.Event) -> None:
        """Look for due rounds every `poll_interval` until `stopping` is set."""
        while not stopping.is_set():
            try:
                await self.collect_once(pool)
            except Exception as exc:  # the database may be restarting: keep going
                round_failed(self.database, exc, "release health round failed")
            else:
                self.database.succeeded()
            self.looks += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), self.options.poll_interval)

    async def collect_once(self, pool: asyncpg.Pool) -> int:
        """Take the due rounds of the plugins that report health, and run them; how many."""
        due = [
            plugin
            for plugin in self.manager
            if asks_for_health(plugin)
            and await queries.take_round(pool, plugin.name, self.options.interval)
        ]
        if not due:
            return 0
        rollouts = await queries.running_rollouts(pool)
        # every plugin's round ends before the next look, whatever happened to the others'
        outcomes = await asyncio.gather(
            *(self._round(pool, plugin, rollouts) for plugin in due), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return len(due)

    async def _round(
        self, pool: asyncpg.Pool, plugin: ManagedPlugin, rollouts: list[RunningRollout]
    ) -> None:
        self.rounds += 1
        for rollout in rollouts:
            if plugin.config.reports_health_of(rollout.owner, rollout.repo):
                await self._ask(pool, plugin, rollout)

    async def _ask(
        self, pool: asyncpg.Pool, plugin: ManagedPlugin, rollout: RunningRollout
    ) -> None:
        asked = releases_of(rollout)
        request = release_health_pb2.GetReleaseHealthRequest(
            owner=rollout.owner,
            repo=rollout.repo,
            releases=[
                release_health_pb2.ReleaseVersion(tag=tag, version=version)
                for version, (_, tag) in asked.items()
            ],
        )
        where = f"{rollout.owner}/{rollout.repo}@{rollout.tag}"
        try:
            answer = await plugin.call(
                RPC, request, release_health_pb2.GetReleaseHealthResponse,
                service=RELEASE_HEALTH_SERVICE,
            )  # fmt: skip
            figures = accepted(answer, asked)
        except (PluginCallError, InvalidAnswer) as problem:
            detail = problem.detail if isinstance(problem, PluginCallError) else str(problem)
            log.warning(
                "plugin %s: release health of %s not stored: %s", plugin.name, where, detail,
                extra={"plugin": plugin.name},
            )  # fmt: skip
            return
        if figures:
            await self._store(pool, plugin.name, rollout, asked, figures)

    async def _store(
        self, pool: asyncpg.Pool, plugin: str, rollout: RunningRollout, asked: Asked,
        figures: dict[str, tuple[int, int]],
    ) -> None:  # fmt: skip
        """Every version's figures in one transaction, each with its audit entry if changed."""
        try:
            async with transaction(pool) as conn:
                for version, (sessions, crashed) in figures.items():
                    release_id, tag = asked[version]
                    before = await queries.store_figures(
                        conn, release_id, rollout.repo_id, plugin, sessions, crashed
                    )
                    if before == (sessions, crashed):
                        continue
                    was = before or (None, None)
                    await audit.record(
                        conn, actor=None, kind=AUDIT_KIND,
                        target=f"{rollout.owner}/{rollout.repo}@{tag}",
                        changes={"sessions": (was[0], sessions),
                                 "crashed_sessions": (was[1], crashed)},
                        source=audit.plugin_source(plugin), request_id=None,
                        repo_id=rollout.repo_id,
                    )  # fmt: skip
        except asyncpg.ForeignKeyViolationError:  # the release was deleted meanwhile
            where = f"{rollout.owner}/{rollout.repo}"
            log.info("plugin %s: a release of %s is gone; figures not stored", plugin, where)
