"""The `forge` command: `db migrate`, `load FILE`, `serve`, `release publish`, `dev`
(docs/cli-and-world.md).

This is the entry point: the only place that reads the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import errno
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import logs
from .accounts import passwords
from .accounts.cli import add_admin_commands, main_admin
from .app import create_app
from .config import ConfigError, Settings, argon2_parameters
from .db import connect
from .embedded_pg import EmbeddedPostgres, EmbeddedPostgresError
from .migrations import MigrationError, migrate
from .service import Service, all_migrations, installed_commands, installed_services
from .serving import serve as serve_app
from .world import WorldError, load_world, read_world_file


def build_parser(services: dict[str, Service]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forge", description="Run and manage the forge services.")
    commands = parser.add_subparsers(dest="command", required=True)

    db = commands.add_parser("db", help="database commands")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    db_commands.add_parser("migrate", help="apply all pending migrations (idempotent)")

    load = commands.add_parser("load", help="load a world file (JSON or YAML) in one transaction")
    load.add_argument("file", type=Path)
    load.add_argument(
        "--if-empty", action="store_true", help="load only into a database with no accounts yet"
    )

    serve = commands.add_parser("serve", help="run a service")
    group = serve.add_mutually_exclusive_group(required=True)
    group.add_argument("--service", choices=[*services, "all"])
    group.add_argument("--all", action="store_const", const="all", dest="service")
    serve.add_argument("--host", default="0.0.0.0")
    serve.add_argument("--port", type=int, default=8080)

    dev = commands.add_parser(
        "dev", help="embedded PostgreSQL, migrate, load a world once, serve everything (make run)"
    )
    start = dev.add_mutually_exclusive_group(required=True)
    start.add_argument("--world", type=Path, help="the world file to load into an empty database")
    start.add_argument(
        "--empty", action="store_true", help="load nothing: an instance with no accounts yet"
    )
    dev.add_argument("--data-dir", type=Path, default=Path(".data"))
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8080)

    add_admin_commands(commands)
    for service in services.values():
        if service.add_commands is not None:
            service.add_commands(commands)
    for add_commands in installed_commands():  # client packages (forge_publisher: `release`)
        add_commands(commands)
    return parser


async def run_migrations(database_url: str, services: dict[str, Service]) -> int:
    conn = await connect(database_url)
    try:
        applied = await migrate(conn, all_migrations(services))
    finally:
        await conn.close()
    return len(applied)


async def run_load(settings: Settings, path: Path, services: dict[str, Service]) -> dict[str, int]:
    world = read_world_file(path)
    conn = await connect(settings.database_url)
    try:
        ids = await load_world(conn, world, list(services.values()), settings)
    finally:
        await conn.close()
    return {"accounts": len(ids.accounts), "repositories": len(ids.repos)}


async def world_is_empty(database_url: str) -> bool:
    conn = await connect(database_url)
    try:
        return not await conn.fetchval("SELECT EXISTS (SELECT 1 FROM core.accounts)")
    finally:
        await conn.close()


def serve(
    settings: Settings,
    services: Sequence[Service],
    host: str,
    port: int,
    *,
    banner: str | None = None,
) -> None:
    """Serve until stopped. The banner (`forge dev`'s "ready") is printed once the port is bound;
    a port already in use is a ConfigError naming it and how to choose another."""
    if (
        settings.gateway_url is None
        and len(services) > 1
        and "gateway" in {s.name for s in services}
    ):
        # docs/events.md: `serve --all` relays events to its own gateway with no set-up.
        local = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        local = f"[{local}]" if ":" in local else local
        settings = dataclasses.replace(settings, gateway_url=f"http://{local}:{port}/")
    app = create_app(settings, services)

    def started() -> None:
        names = ", ".join(s.name for s in services)
        print(banner or f"forge: serving {names} on http://{host}:{port}/", flush=True)

    # docs/architecture.md "Stopping": SIGTERM and SIGINT stop it gracefully, with exit status 0
    try:
        asyncio.run(
            serve_app(
                app, host, port, shutdown_timeout=settings.shutdown_timeout, on_started=started
            )
        )
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise _port_in_use(host, port) from None


def _port_in_use(host: str, port: int) -> ConfigError:
    return ConfigError(
        f"port {port} is already in use on {host}: stop what listens there, or choose "
        f"another port with --port N (make run: make run PORT=N)"
    )


def refuse_a_busy_port(host: str, port: int) -> None:
    """`forge dev` checks its port before it starts or shares a database, so a start that cannot
    serve touches nothing (serve() still reports a port taken in between)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # as the server binds: SO_REUSEADDR, so only a listening socket makes the port busy
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise _port_in_use(host, port) from None
            raise


def _install_uvloop() -> None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is absent only on Windows
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def main(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    services = installed_services()
    args = build_parser(services).parse_args(argv)
    try:
        logs.configure(env.get("LOG_LEVEL", "INFO").upper(), env.get("LOG_FORMAT", "json"))
        passwords.configure(argon2_parameters(env))
        if getattr(args, "handler", None) is not None:
            result: int = args.handler(args, env)
            return result
        if args.command == "dev":
            return _dev(args, env, services)
        if args.command == "admin":
            return main_admin(args, env, lambda url: run_migrations(url, services))
        settings = Settings.from_env(env)
        if args.command == "db":
            count = asyncio.run(run_migrations(settings.database_url, services))
            print(f"forge: {count} migration(s) applied")
        elif args.command == "load":
            if args.if_empty and not asyncio.run(world_is_empty(settings.database_url)):
                print("forge: the database already has data; nothing loaded")
                return 0
            counts = asyncio.run(run_load(settings, args.file, services))
            print(
                f"forge: loaded {args.file} ({counts['accounts']} accounts, "
                f"{counts['repositories']} repositories in the database)"
            )
        elif args.command == "serve":
            chosen = list(services.values()) if args.service == "all" else [services[args.service]]
            if args.service != "all":
                settings.require_set_secrets(chosen[0].secrets)
            if settings.auto_migrate:
                asyncio.run(run_migrations(settings.database_url, services))
            _install_uvloop()
            serve(settings, chosen, args.host, args.port)
    except (ConfigError, MigrationError, EmbeddedPostgresError, OSError) as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    except WorldError as exc:
        source = args.world if args.command == "dev" else args.file
        print(f"forge: {source}: nothing was loaded:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    return 0


DEMO_PASSWORD_SUFFIX = "-demo-password"  # noqa: S105 (the demo world's, printed on purpose)


def demo_sign_ins(world: Path) -> str:
    """`alice / alice-demo-password, ...` for the world file's users whose password is the demo's
    (`<name>-demo-password`): a real password is never printed."""
    try:
        users = read_world_file(world).get("users", [])
    except WorldError:
        return ""
    if not isinstance(users, list):
        return ""
    shown = [
        f"{user['name']} / {user['password']}"
        for user in users
        if isinstance(user, dict)
        and isinstance(user.get("name"), str)
        and user.get("password") == f"{user['name']}{DEMO_PASSWORD_SUFFIX}"
    ]
    return ", ".join(shown)


def _dev(args: Any, env: dict[str, str], services: dict[str, Service]) -> int:
    refuse_a_busy_port(args.host, args.port)
    pg: EmbeddedPostgres | None = None
    if not env.get("DATABASE_URL"):
        # make run keeps its data: fsync and full-page writes on (docs/architecture.md); a second
        # make run in the same checkout shares the running server (docs/architecture.md)
        pg = EmbeddedPostgres(args.data_dir / "postgres", durable=True)
        env["DATABASE_URL"] = pg.start()
    try:
        env.setdefault("STORAGE_PATH", str(args.data_dir / "storage"))
        env.setdefault("APP_URL", f"http://localhost:{args.port}/")
        settings = Settings.from_env(env)
        asyncio.run(run_migrations(settings.database_url, services))
        _load_once(args, settings, services)
        url = f"http://localhost:{args.port}/"
        ready = f"forge: ready at {url}\n  try: curl {url}healthz"  # once the port is bound
        if args.world is not None:
            ready += (
                f"\n       curl '{url}api/v2/repos/acme/app/releases/update"
                "?version=1.0.0&platform=darwin&arch=arm64'"
            )
            demo = demo_sign_ins(args.world)
            if demo:
                print(f"  sign in at {url}user/login as {demo}", flush=True)
        _install_uvloop()
        serve(settings, list(services.values()), args.host, args.port, banner=ready)
    finally:
        if pg is not None:
            pg.stop()
    return 0


def _load_once(args: Any, settings: Settings, services: dict[str, Service]) -> None:
    """The world file into an empty database (`--world`), or nothing (`--empty`)."""
    empty = asyncio.run(world_is_empty(settings.database_url))
    if args.world is None:
        if empty:
            print("forge: an empty instance: no accounts yet (forge admin user create makes one)")
        else:
            print("forge: the database already has data (make reset removes make run's data)")
    elif empty:
        asyncio.run(run_load(settings, args.world, services))
        print(f"forge: loaded {args.world}")
    else:
        print("forge: the database already has data; demo world not loaded again")


if __name__ == "__main__":
    sys.exit(main())
