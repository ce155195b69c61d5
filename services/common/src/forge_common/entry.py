"""The `forge` command's entry point. A client command (`forge release ...`: a package in the
entry point group `forge.commands`, not a service) runs with only its own package imported; every
other command goes to cli.py, which imports every installed service to build its parser. A
publisher's CI job never needs the services, and importing them cost it about a second per
command (docs/cli-and-world.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points


def main(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    clients = {entry.name: entry for entry in entry_points(group="forge.commands")}
    if args and args[0] in clients:
        return _run_client_command(clients[args[0]], args, env)
    from .cli import main as main_with_services

    return main_with_services(args, env)


def _run_client_command(entry: EntryPoint, argv: list[str], env: dict[str, str] | None) -> int:
    from . import logs
    from .config import ConfigError

    environment = dict(os.environ if env is None else env)
    parser = argparse.ArgumentParser(prog="forge", description="Run and manage the forge services.")
    commands = parser.add_subparsers(dest="command", required=True)
    entry.load()(commands)
    args = parser.parse_args(argv)
    logs.configure(
        environment.get("LOG_LEVEL", "INFO").upper(), environment.get("LOG_FORMAT", "json")
    )
    try:
        result: int = args.handler(args, environment)
    except (ConfigError, OSError) as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    return result


if __name__ == "__main__":
    sys.exit(main())
