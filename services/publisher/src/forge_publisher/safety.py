"""`forge release withdraw|restore|required|critical OWNER/REPO TAG` and `forge release audit
OWNER/REPO` (docs/cli-and-world.md, docs/release-safety.md): release safety through the HTTP API
at FORGE_URL with FORGE_TOKEN (a publisher's; the audit log needs a repository admin's).

`withdraw` takes the release out of every feed (installs on it roll back where their updater can)
with a reason the pages show; `restore` offers it again; `required` makes it a step every install
below passes through; `critical` makes updating mandatory below it; `--off` undoes the last two.
`audit` prints the repository's audit log, newest first, one entry a line. Every change is
recorded with the source `cli`. Exit status 0 on success, 1 with a one-line `forge: ...` message.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from .connection import Target
from .keys import call_api, run_api_command

_HELP = {
    "withdraw": "take a release out of every feed; installs on it roll back where they can",
    "restore": "offer a withdrawn release again",
    "required": "make a release a step every install below it passes through",
    "critical": "make updating mandatory for installs below this release",
}


def add_safety_commands(actions: Any) -> None:
    for name, text in _HELP.items():
        command = actions.add_parser(name, help=text, description="Uses FORGE_URL and FORGE_TOKEN.")
        command.add_argument("repository", metavar="OWNER/REPO")
        command.add_argument("tag", metavar="TAG")
        if name == "withdraw":
            command.add_argument("--reason", default="", help="shown on the release's page")
        if name in ("required", "critical"):
            command.add_argument("--off", action="store_true", help="undo it")
        command.set_defaults(handler=run, safety_command=name)
    audit = actions.add_parser(
        "audit",
        help="print the repository's audit log, newest first (repository admins)",
        description="Uses FORGE_URL and FORGE_TOKEN.",
    )
    audit.add_argument("repository", metavar="OWNER/REPO")
    audit.add_argument("--actor", help="only this login's changes")
    audit.add_argument("--kind", help="only this kind (release, release.withdrawn, token, ...)")
    audit.add_argument("--since", help="only from this RFC 3339 time")
    audit.add_argument("--limit", type=int, default=30, choices=range(1, 101), metavar="N")
    audit.set_defaults(handler=run, safety_command="audit")


def _body(args: argparse.Namespace) -> dict[str, Any]:
    command = args.safety_command
    if command == "withdraw":
        return {"withdrawn": True, "withdrawn_reason": args.reason}
    if command == "restore":
        return {"withdrawn": False}
    return {command: not args.off}


def _line(entry: Mapping[str, Any]) -> str:
    changes = ", ".join(
        f"{name}: {orjson.dumps(change.get('before')).decode()} → "
        f"{orjson.dumps(change.get('after')).decode()}"
        for name, change in entry["changes"].items()
    )
    actor = entry["actor"] or "(system)"
    return (
        f"{entry['created_at']}\t{actor}\t{entry['source']}\t{entry['kind']}\t"
        f"{entry['target']}\t{changes}"
    )


async def _run(args: argparse.Namespace, where: Target) -> None:
    if args.safety_command == "audit":
        query = {k: v for k in ("actor", "kind", "since") if (v := getattr(args, k))}
        query["limit"] = str(args.limit)
        for entry in await call_api(where, "GET", "audit", f"?{urlencode(query)}"):
            print(_line(entry))
        return
    release = await call_api(where, "GET", "releases", f"/{quote(args.tag, safe='')}")
    done = await call_api(where, "PATCH", "releases", f"/{release['id']}", body=_body(args))
    state = [name for name in ("withdrawn", "required", "critical") if done.get(name)]
    print(f"{args.tag}: {', '.join(state) if state else 'offered normally'}")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """The handler of the release safety commands and `forge release audit`: exit status."""
    return run_api_command(_run, args, env)
