"""What a service contributes to a process: its schema, migrations, routes and world loader.

Services register a `Service` under the `forge.services` entry point group, so the `forge` CLI
finds them without `common` importing any service.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from .config import Settings
from .migrations import Migration, discover

if TYPE_CHECKING:
    import asyncpg

    # A world section validates its part of the file, appending "path: problem" lines...
    Validate = Callable[[Mapping[str, Any], list[str]], None]
    # ...and loads it inside the loader's transaction, given the ids of accounts and repositories.
    Load = Callable[
        [asyncpg.Connection[Any], Mapping[str, Any], "WorldIds", Settings], Awaitable[None]
    ]


@dataclass(frozen=True, slots=True)
class WorldIds:
    accounts: Mapping[str, int]  # lower-cased name → id
    repos: Mapping[tuple[str, str], int]  # (lower owner, lower name) → id


@dataclass(frozen=True, slots=True)
class Service:
    name: str
    schema: str | None
    migrations_package: str | None
    setup: Callable[[web.Application, Settings], None]
    validate_world: Validate | None = None
    load_world: Load | None = None
    # Adds the service's own `forge` subcommands; each sets `handler(args, env) -> exit code`.
    add_commands: Callable[[Any], None] | None = None
    # The secrets it shares with other processes: started alone, it refuses to run on one made up
    # for this start (Settings.require_set_secrets). Every service signs or checks events.
    secrets: tuple[str, ...] = ("EVENTS_SECRET",)

    def migrations(self) -> list[Migration]:
        if self.schema is None or self.migrations_package is None:
            return []
        return discover(self.schema, self.migrations_package)


OptionsT = TypeVar("OptionsT")
TunableSetup = Callable[[web.Application, Settings, OptionsT], None]


def bind_options(
    setup: TunableSetup[OptionsT], options: OptionsT
) -> Callable[[web.Application, Settings], None]:
    """A service's `setup(app, settings, options)` with its tuning bound: `SERVICE` binds the
    production defaults, `create_app` whatever a test or benchmark passes."""

    def bound(app: web.Application, settings: Settings) -> None:
        setup(app, settings, options)

    return bound


def tuned(service: Service, setup: TunableSetup[OptionsT], options: OptionsT) -> Service:
    """`service` with `options` instead of its defaults: the one way every service is tuned."""
    return dataclasses.replace(service, setup=bind_options(setup, options))


def installed_services() -> dict[str, Service]:
    """Every service installed in this environment, by name."""
    found: dict[str, Service] = {}
    for entry in entry_points(group="forge.services"):
        service = entry.load()
        if not isinstance(service, Service):
            raise TypeError(f"entry point {entry.name} is not a forge Service")
        found[service.name] = service
    return dict(sorted(found.items()))


def installed_commands() -> list[Callable[[Any], None]]:
    """The `add_commands(subparsers)` of every package installed in this environment that adds
    commands without being a service (entry point group `forge.commands`), by entry name."""
    found = sorted(entry_points(group="forge.commands"), key=lambda entry: entry.name)
    return [entry.load() for entry in found]


def all_migrations(services: Mapping[str, Service]) -> list[Migration]:
    """Core first (every schema refers to it), then each service's schema."""
    core = discover("core", "forge_common.core_migrations")
    return core + [m for s in services.values() for m in s.migrations()]
