"""`forge plugins check [FILE]`: validate a PLUGINS_FILE without starting anything.

Operators run it before a deploy; it reports every problem the gateway would refuse to start
with, one line per bad entry, and lists the plugins of a good file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .plugins.config import PluginsFileError, load_plugins_file


def add_commands(commands: Any) -> None:
    """Adds `plugins check` to the `forge` command's subcommands."""
    plugins = commands.add_parser("plugins", help="plugin gateway commands")
    actions = plugins.add_subparsers(dest="plugins_command", required=True)
    check = actions.add_parser(
        "check",
        help="validate a plugins file (default: $PLUGINS_FILE) without connecting to plugins",
    )
    check.add_argument("file", nargs="?", type=Path, metavar="FILE")
    check.set_defaults(handler=run_check)


def run_check(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    path = args.file or (Path(env["PLUGINS_FILE"]) if env.get("PLUGINS_FILE") else None)
    if path is None:
        print("forge: no file given and PLUGINS_FILE is not set", file=sys.stderr)
        return 2
    try:
        plugins = load_plugins_file(path)
    except PluginsFileError as error:
        print(f"forge: {error}", file=sys.stderr)
        return 1
    print(f"forge: {path}: {len(plugins)} plugin(s)")
    for plugin in plugins:
        extras = [
            "disabled" if not plugin.enabled else "",
            "tls" if plugin.tls is not None else "",
            f"release health of {', '.join(plugin.health_repositories)}"
            if plugin.health_repositories
            else "",
        ]
        notes = ", ".join(e for e in extras if e)
        print(f"  {plugin.name} at {plugin.address}" + (f" ({notes})" if notes else ""))
    return 0
