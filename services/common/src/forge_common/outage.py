"""A dependency that is down (the database, asset storage, ...) is a 503 with `Retry-After`, never a
500, and one warning when the outage starts and one when it ends, not one per request
(docs/architecture.md "Dependency outages").

    dep = dependency(request.app, "storage")      # one Dependency per name and application
    try:
        await write_the_file()
    except OSError as exc:
        raise dep.failed(exc, "The file could not be stored; try again later") from exc
    dep.succeeded()                               # cheap: one attribute test when nothing is down

`failed()` returns a `DependencyDown` (a `ServiceUnavailable`: the middleware renders it as 503
with `Retry-After`). A dependency given a `probe` is also checked every second while it is down,
so its end is logged even when no request succeeds meanwhile. The middleware does this for the
database: `is_database_down(exc)` says which exceptions mean PostgreSQL cannot be reached.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType

import asyncpg
from aiohttp import web

from .errors import ServiceUnavailable

log = logging.getLogger(__name__)

DATABASE = "database"
PROBE_INTERVAL = 1.0  # seconds between checks of a dependency that is down
PROBE_TIMEOUT = 2.0

Probe = Callable[[], Awaitable[object]]


class DependencyDown(ServiceUnavailable):
    """503 `ServiceUnavailable` with `Retry-After`, naming the dependency (for the log only)."""

    def __init__(
        self, dependency: str, message: str = "Service unavailable", *, retry_after: int = 5
    ) -> None:
        super().__init__(message, retry_after=retry_after)
        self.dependency = dependency


class Dependency:
    """Whether one dependency is up, in one process; logs the transitions."""

    def __init__(
        self,
        name: str,
        probe: Probe | None = None,
        *,
        consequence: str = "answering 503 until it is back",
    ) -> None:
        self.name = name
        self.probe = probe
        self.consequence = consequence  # what the warning at the start says happens meanwhile
        self.down_since: float | None = None
        self._prober: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        return self.down_since is None

    def failed(
        self, cause: BaseException | str | None = None, message: str = "Service unavailable"
    ) -> DependencyDown:
        """Record a failure to reach the dependency; returns the 503 to raise."""
        if self.down_since is None:
            self.down_since = time.monotonic()
            log.warning(
                "%s unavailable (%s): %s",
                self.name,
                _describe(cause),
                self.consequence,
                extra={"dependency": self.name},
            )
            if self.probe is not None and (self._prober is None or self._prober.done()):
                # an empty context: the probe's log line is not the failing request's
                self._prober = asyncio.get_running_loop().create_task(
                    self._probe_until_back(), context=contextvars.Context()
                )
        return DependencyDown(self.name, message)

    def succeeded(self) -> None:
        """Record that the dependency answered."""
        if self.down_since is not None:
            log.warning(
                "%s available again after %.1f s",
                self.name,
                time.monotonic() - self.down_since,
                extra={"dependency": self.name},
            )
            self.down_since = None

    async def _probe_until_back(self) -> None:
        assert self.probe is not None
        while self.down_since is not None:
            await asyncio.sleep(PROBE_INTERVAL)
            try:
                async with asyncio.timeout(PROBE_TIMEOUT):
                    await self.probe()
            except Exception:  # still down: the start of the outage was logged already
                log.debug("%s still unavailable", self.name, exc_info=True)
                continue
            self.succeeded()

    async def close(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
            await asyncio.gather(self._prober, return_exceptions=True)


class Outages:
    """The dependencies of one application, by name."""

    def __init__(self) -> None:
        self._dependencies: dict[str, Dependency] = {}

    def dependency(
        self, name: str, probe: Probe | None = None, *, consequence: str | None = None
    ) -> Dependency:
        found = self._dependencies.get(name)
        if found is None:
            found = Dependency(name, probe)
            if consequence is not None:
                found.consequence = consequence
            self._dependencies[name] = found
        elif probe is not None and found.probe is None:
            found.probe = probe
        return found

    async def close(self) -> None:
        for dependency in self._dependencies.values():
            await dependency.close()


OUTAGES = web.AppKey("outages", Outages)


def dependency(app: web.Application, name: str, probe: Probe | None = None) -> Dependency:
    """The application's tracker of dependency `name` (created on first use)."""
    return app[OUTAGES].dependency(name, probe)


def database(app: web.Application) -> Dependency:
    """The application's database, probed with `SELECT 1` through its pool while it is down."""
    from .keys import DB_POOL  # keys imports the settings; kept out of this module's import

    found = app[OUTAGES].dependency(DATABASE)
    if found.probe is None and DB_POOL in app:
        pool = app[DB_POOL]
        found.probe = lambda: pool.fetchval("SELECT 1")
    return found


async def outages_context(app: web.Application) -> AsyncIterator[None]:
    """Cleanup context of every application: stops the probes at the end."""
    outages = app[OUTAGES]
    yield
    await outages.close()


# What asyncpg 0.32 raises while PostgreSQL is stopping, restarting, refusing or unreachable.
_DATABASE_DOWN: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,  # ConnectionDoesNotExistError (closed mid-query), 08xxx
    asyncpg.CannotConnectNowError,  # starting up, shutting down, in recovery
    asyncpg.AdminShutdownError,  # terminated by a fast or smart shutdown
    asyncpg.CrashShutdownError,
    asyncpg.TooManyConnectionsError,
    # a pooled connection whose server went away mid-use: "cannot switch to state 12; another
    # operation (2) is in progress" (seen while PostgreSQL restarts under load)
    asyncpg.InternalClientError,
)


def is_database_down(exc: BaseException) -> bool:
    """`exc` says PostgreSQL cannot be reached, rather than a bug or a bad query."""
    if isinstance(exc, _DATABASE_DOWN):
        return True
    if isinstance(exc, asyncpg.InterfaceError):  # a pooled connection or the pool closed
        return "closed" in str(exc) or "closing" in str(exc)
    if isinstance(exc, OSError | TimeoutError):  # refused, reset, unreachable, timed out...
        return _raised_in_asyncpg(exc.__traceback__)  # ...talking to PostgreSQL, not to a file
    return False


# What PostgreSQL answers a query written for a newer schema than the database's: the code was
# deployed before `forge db migrate` ran (a first `kubectl apply`, a migrate Job still running).
_SCHEMA_BEHIND: tuple[type[BaseException], ...] = (
    asyncpg.UndefinedTableError,
    asyncpg.InvalidSchemaNameError,
    asyncpg.UndefinedColumnError,
    asyncpg.UndefinedFunctionError,
)


def is_schema_behind(exc: BaseException) -> bool:
    """`exc` says the database is not migrated to what the code expects (forge_common.health)."""
    return isinstance(exc, _SCHEMA_BEHIND)


def _raised_in_asyncpg(tb: TracebackType | None) -> bool:
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if isinstance(module, str) and module.startswith("asyncpg"):
            return True
        tb = tb.tb_next
    return False


def round_failed(database: Dependency, exc: Exception, what: str) -> None:
    """A failed round of a background loop (the outbox relay, the delivery worker): while the
    database is down (or not migrated yet), its outage is logged once by `database`, not a
    traceback per round; anything else is logged with its traceback, as `what`."""
    if is_database_down(exc) or is_schema_behind(exc):
        database.failed(exc)
    else:
        log.error("%s", what, exc_info=exc)


def _describe(cause: BaseException | str | None) -> str:
    if cause is None:
        return "no answer"
    if isinstance(cause, str):
        return cause[:200]
    text = str(cause).splitlines()[0] if str(cause) else ""
    return f"{type(cause).__name__}: {text[:200]}" if text else type(cause).__name__
