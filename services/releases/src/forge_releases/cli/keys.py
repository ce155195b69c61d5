"""`forge release keys create|list|revoke OWNER/REPO ...` (docs/cli-and-world.md): manage a
repository's update keys through the HTTP API at FORGE_URL with FORGE_TOKEN (an admin's).

`create` prints the key once (it is stored only as a digest); `list` prints id, name, creator and
creation time, never a key; `revoke` ends a key and every URL signed under it. Exit status 0 on
success, 1 with a one-line `forge: ...` message otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson

from .client import TIMEOUT, PublishError
from .connection import Target, target

_MESSAGES = {
    401: "the server did not accept FORGE_TOKEN (401): check the token",
    403: "only an administrator of the repository can manage its update keys (403)",
}


def add_keys_commands(actions: Any) -> None:
    keys = actions.add_parser(
        "keys",
        help="create, list and revoke update keys (read-only keys for updaters)",
        description="Uses FORGE_URL (default http://localhost:8080/) and FORGE_TOKEN.",
    )
    commands = keys.add_subparsers(dest="keys_command", required=True)
    create = commands.add_parser("create", help="create a key; it is printed only this once")
    create.add_argument("repository", metavar="OWNER/REPO")
    create.add_argument("name", metavar="NAME", help="what the key is for (e.g. 'desktop app')")
    listing = commands.add_parser("list", help="list the keys (never their secrets)")
    listing.add_argument("repository", metavar="OWNER/REPO")
    revoke = commands.add_parser("revoke", help="revoke a key and the URLs signed under it")
    revoke.add_argument("repository", metavar="OWNER/REPO")
    revoke.add_argument("key_id", metavar="ID", type=int)
    keys.set_defaults(handler=run)


async def _call(where: Target, method: str, suffix: str = "", body: Any = None) -> Any:
    url = (
        f"{where.base_url}api/v2/repos/{quote(where.owner, safe='')}/"
        f"{quote(where.repo, safe='')}/update_keys{suffix}"
    )
    headers = {"Authorization": f"token {where.token}", "Accept": "application/json"}
    async with (
        aiohttp.ClientSession(timeout=TIMEOUT) as session,
        session.request(method, url, headers=headers, json=body) as resp,
    ):
        raw = await resp.read()
        if resp.status >= 400:
            raise PublishError(_failure(where, resp.status, raw))
        return orjson.loads(raw) if raw else None


def _failure(where: Target, status: int, raw: bytes) -> str:
    try:
        error = orjson.loads(raw).get("error", {})
        code, message = str(error.get("code", "")), str(error.get("message", ""))
    except (ValueError, AttributeError):
        code, message = "", ""
    if code == "RepoNotFound":
        return f"repository {where.owner}/{where.repo} not found (404), or this token cannot see it"
    if code == "UpdateKeyNotFound":
        return "no such update key in this repository (404)"
    return _MESSAGES.get(status, f"HTTP {status}: {message or 'request failed'}")


async def _run(args: argparse.Namespace, where: Target) -> None:
    if args.keys_command == "create":
        key = await _call(where, "POST", body={"name": args.name})
        print(f"update key {key['id']} ({key['name']}) created; it is shown only now:")
        print(key["key"])
    elif args.keys_command == "list":
        for key in await _call(where, "GET"):
            print(f"{key['id']}\t{key['name']}\t{key['creator'] or '-'}\t{key['created_at']}")
    else:
        await _call(where, "DELETE", f"/{args.key_id}")
        print(f"update key {args.key_id} revoked")


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """The handler of `forge release keys ...`: exit status."""
    try:
        asyncio.run(_run(args, target(str(args.repository), env)))
    except PublishError as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:  # ValueError: not our JSON
        print(f"forge: talking to the server at FORGE_URL failed ({exc})", file=sys.stderr)
        return 1
    return 0
