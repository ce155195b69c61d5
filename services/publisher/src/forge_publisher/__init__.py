"""The publishing client, `forge release publish`: it runs on a publisher's machine and talks to
the service over HTTP only. A package of its own (forge-publisher): it imports no service, only
forge_common (the `forge` command, and the pure asset matchers it shares with the releases service,
forge_common.asset_match).

`add_commands` is registered under the entry point group `forge.commands`: the `forge` command
calls it to add `release publish`, `release keys` and `release tauri-key` (keys.py),
`release withdraw|restore|required|critical|audit` (safety.py) and `release rollout`
(rollout.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .keys import add_keys_commands
from .publish import run
from .rollout import add_rollout_commands
from .safety import add_safety_commands


def add_commands(commands: Any) -> None:
    """Adds `release publish` to the `forge` command's subcommands."""
    release = commands.add_parser("release", help="publish releases through the HTTP API")
    actions = release.add_subparsers(dest="release_command", required=True)
    publish = actions.add_parser(
        "publish",
        help="create the release if needed and upload the files that are missing (re-runnable)",
        description="Uses FORGE_URL (default http://localhost:8080/) and FORGE_TOKEN.",
    )
    publish.add_argument("repository", metavar="OWNER/REPO")
    publish.add_argument("tag", metavar="TAG")
    publish.add_argument("files", metavar="FILE", nargs="+", type=Path)
    publish.add_argument("--title", help="release title (default: the tag)")
    publish.add_argument("--notes-file", type=Path, help="file holding the release notes")
    publish.add_argument("--draft", action="store_true", help="keep the release a draft")
    publish.add_argument("--prerelease", action="store_true", help="mark it a prerelease")
    publish.add_argument(
        "--rollout",
        type=int,
        choices=range(1, 101),
        metavar="PERCENT",
        help="staged rollout: offer it through the update feeds to PERCENT%% of installs",
    )
    publish.set_defaults(handler=run)
    add_keys_commands(actions)
    add_rollout_commands(actions)
    add_safety_commands(actions)
