"""`forge release keys create|list|revoke OWNER/REPO ...` and `forge release tauri-key
set|show|remove OWNER/REPO ...` (docs/cli-and-world.md): manage a repository's update keys and its
Tauri public key through the HTTP API at FORGE_URL with FORGE_TOKEN (an admin's).

`create` prints the key once (it is stored only as a digest); `list` prints id, name, creator and
creation time, never a key; `revoke` ends a key and every URL signed under it. `tauri-key set`
takes the `.pub` file `tauri signer generate` wrote (or its contents); from then on the server
refuses a `.sig` that does not verify against its file. Exit status 0 on success, 1 with a
one-line `forge: ...` message otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson

from .client import CLIENT_HEADER, TIMEOUT, PublishError
from .connection import Target, target

_MESSAGES = {
    401: "the server did not accept FORGE_TOKEN (401): check the token",
    403: "only an administrator of the repository can manage its keys (403)",
}
_UPDATE_KEYS = "update_keys"
_TAURI_KEY = "tauri_key"


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
    tauri = actions.add_parser(
        "tauri-key",
        help="set, show or remove the repository's Tauri public key (uploads are then checked)",
        description="Uses FORGE_URL (default http://localhost:8080/) and FORGE_TOKEN.",
    )
    tauri_commands = tauri.add_subparsers(dest="tauri_command", required=True)
    set_key = tauri_commands.add_parser(
        "set", help="set or replace it; a .sig that does not verify is then refused at upload"
    )
    set_key.add_argument("repository", metavar="OWNER/REPO")
    set_key.add_argument(
        "public_key", metavar="KEY", help="the .pub file `tauri signer generate` wrote, or its text"
    )
    for name, text in (("show", "print it as tauri.conf.json wants it"), ("remove", "remove it")):
        tauri_commands.add_parser(name, help=text).add_argument("repository", metavar="OWNER/REPO")
    tauri.set_defaults(handler=run)


async def call_api(
    where: Target,
    method: str,
    resource: str = _UPDATE_KEYS,
    suffix: str = "",
    body: Any = None,
    denied: str | None = None,
) -> Any:
    """The API's JSON answer, or PublishError with a message for the user (`denied`: what a 403
    means here, if not "only an administrator")."""
    url = (
        f"{where.base_url}api/v2/repos/{quote(where.owner, safe='')}/"
        f"{quote(where.repo, safe='')}/{resource}{suffix}"
    )
    headers = {
        "Authorization": f"token {where.token}",
        "Accept": "application/json",
        CLIENT_HEADER: "cli",  # the audit log records these changes with the source `cli`
    }
    async with (
        aiohttp.ClientSession(timeout=TIMEOUT) as session,
        session.request(method, url, headers=headers, json=body) as resp,
    ):
        raw = await resp.read()
        if resp.status >= 400:
            if resp.status == 403 and denied:
                raise PublishError(denied)
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
    if code == "TauriKeyNotFound":
        return "this repository has no Tauri public key (404)"
    if code == "ReleaseNotFound":
        return "no such release in this repository (404)"
    if code == "RolloutPlanNotFound":
        return "this release has no rollout plan (404): set one with `forge release rollout plan`"
    if code == "Conflict" or status == 409:
        return f"not now (409): {message}"
    if code == "ValidationFailed":
        return f"the server refused it (422): {message}"
    return _MESSAGES.get(status, f"HTTP {status}: {message or 'request failed'}")


# how a Tauri key's text starts: minisign's `.pub` file, or Tauri's base64 of it
_KEY_STARTS = ("untrusted comment:", "dW50cnVzdGVk")


def _names_a_file(value: str) -> bool:
    """Whether `value` is meant as a file's name rather than a key: no key has a space-free
    text with a path separator or a key file's extension, unless it starts like a key."""
    text = value.strip()
    if text.startswith(_KEY_STARTS) or any(char.isspace() for char in text):
        return False
    return "/" in text or "\\" in text or text.endswith((".pub", ".key"))


def _key_text(value: str) -> str:
    """The key itself, or the contents of the file it names; a file that is not there is said
    to be missing (not sent to the server, which could only call the path "not base64")."""
    path = Path(value).expanduser()
    if path.is_file():
        return path.read_text()
    if _names_a_file(value):
        raise PublishError(
            f"the key file {value} does not exist (KEY is the .pub file "
            "`tauri signer generate` wrote, or its text)"
        )
    return value


async def _run_tauri(args: argparse.Namespace, where: Target) -> None:
    if args.tauri_command == "set":
        body = {"public_key": _key_text(args.public_key)}
        key = await call_api(where, "PUT", _TAURI_KEY, body=body)
        print(f"Tauri public key {key['key_id']} set: a .sig that does not verify is now refused")
    elif args.tauri_command == "show":
        key = await call_api(where, "GET", _TAURI_KEY)
        print(f"{key['key_id']}\t{key['public_key']}")
    else:
        await call_api(where, "DELETE", _TAURI_KEY)
        print("Tauri public key removed: uploads are no longer checked")


async def _run(args: argparse.Namespace, where: Target) -> None:
    if getattr(args, "tauri_command", None):
        await _run_tauri(args, where)
    elif args.keys_command == "create":
        key = await call_api(where, "POST", body={"name": args.name})
        print(f"update key {key['id']} ({key['name']}) created; it is shown only now:")
        print(key["key"])
    elif args.keys_command == "list":
        for key in await call_api(where, "GET"):
            print(f"{key['id']}\t{key['name']}\t{key['creator'] or '-'}\t{key['created_at']}")
    else:
        await call_api(where, "DELETE", suffix=f"/{args.key_id}")
        print(f"update key {args.key_id} revoked")


def run_api_command(
    command: Callable[[argparse.Namespace, Target], Coroutine[Any, Any, None]],
    args: argparse.Namespace,
    env: Mapping[str, str],
) -> int:
    """Run `command` against the repository's server (FORGE_URL, FORGE_TOKEN): the exit status,
    each failure said in one line (`forge release keys`, `tauri-key`, `rollout`, the safety
    commands)."""
    try:
        asyncio.run(command(args, target(str(args.repository), env)))
    except PublishError as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:  # ValueError: not our JSON
        print(f"forge: talking to the server at FORGE_URL failed ({exc})", file=sys.stderr)
        return 1
    except OSError as exc:  # the key file could not be read (after ClientError: also an OSError)
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """The handler of `forge release keys ...` and `forge release tauri-key ...`: exit status."""
    return run_api_command(_run, args, env)
