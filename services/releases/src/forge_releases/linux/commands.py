"""`forge linux-key list|add|promote|retire`: the instance's OpenPGP keys, which sign the apt and
dnf repositories (docs/releases.md "Rotating the OpenPGP key"), run where the service's settings
are (server side, on DATABASE_URL).

A rotation: `add` a new key (generated, or `--secret-key FILE` given by the operator): from then
on both keys sign every `InRelease`, `Release.gpg` and `repomd.xml.asc`, and `key.asc` holds
both, so fleets that trust either key keep updating. After the grace period (the clients have
fetched the new `key.asc`), `promote` the new key and `retire` the old one. Every replica drops
its signed answers at once (NOTIFY `*`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forge_common.config import ConfigError, Settings
from forge_common.db import create_pool

from . import queries
from .openpgp import GpgFailed, Keyring
from .repository import USER_ID


def add_linux_key_commands(commands: Any) -> None:
    keys = commands.add_parser(
        "linux-key",
        help="the OpenPGP keys that sign the apt and dnf repositories (server side)",
        description="Uses DATABASE_URL. Every key listed signs; the first is the current one.",
    )
    actions = keys.add_subparsers(dest="linux_key_command", required=True)
    actions.add_parser("list", help="the keys, the current one first").set_defaults(
        handler=_runner(_list)
    )
    add = actions.add_parser(
        "add", help="a new key that signs beside the current one (a rotation's first step)"
    )
    add.add_argument(
        "--secret-key",
        type=Path,
        metavar="FILE",
        help="an OpenPGP secret key (Ed25519 or RSA-4096, no passphrase) instead of a new one",
    )
    add.set_defaults(handler=_runner(_add))
    for name, help_text in (
        ("promote", "make this key the current one (the others still sign)"),
        ("retire", "stop signing with this key (not the current one)"),
    ):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("fingerprint")
        action.set_defaults(handler=_runner(globals()[f"_{name}"]))


def _runner(action: Any) -> Any:
    def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
        try:
            result: int = asyncio.run(action(Settings.from_env(env), args))
        except (ConfigError, GpgFailed, OSError) as exc:
            print(f"forge: {exc}", file=sys.stderr)
            return 1
        return result

    return run


async def _list(settings: Settings, _: argparse.Namespace) -> int:
    pool = await create_pool(settings.database_url, max_size=1)
    try:
        rows = await queries.openpgp_keys(pool)
    finally:
        await pool.close()
    for row in rows:
        state = "current" if row["signs_first"] else "signing"
        print(f"{row['fingerprint']}  {state}  since {row['updated_at']:%Y-%m-%d %H:%M}")
    if not rows:
        print("forge: no key yet (the first repository request generates one)")
    return 0


async def _add(settings: Settings, args: argparse.Namespace) -> int:
    keyring = Keyring()
    try:
        if args.secret_key is None:
            fingerprint, public, secret = await keyring.generate(USER_ID)
        else:
            given = args.secret_key.read_bytes().decode("ascii", "replace")
            fingerprint, public, secret = await keyring.import_secret(given)
    finally:
        keyring.close()
    pool = await create_pool(settings.database_url, max_size=1)
    try:
        first = not await queries.openpgp_keys(pool)
        added = await queries.add_openpgp_key(pool, fingerprint, public, secret, first)
        await queries.changed(pool)
    finally:
        await pool.close()
    if not added:
        print(f"forge: {fingerprint} is kept already", file=sys.stderr)
        return 1
    print(f"{fingerprint}  {'current' if first else 'signing beside the current key'}")
    return 0


async def _promote(settings: Settings, args: argparse.Namespace) -> int:
    return await _change(settings, args.fingerprint, queries.promote_openpgp_key, "promoted")


async def _retire(settings: Settings, args: argparse.Namespace) -> int:
    return await _change(settings, args.fingerprint, queries.retire_openpgp_key, "retired")


async def _change(settings: Settings, fingerprint: str, change: Any, done: str) -> int:
    pool = await create_pool(settings.database_url, max_size=1)
    try:
        changed = await change(pool, fingerprint.replace(" ", "").upper())
        await queries.changed(pool)
    finally:
        await pool.close()
    if not changed:
        print(
            f"forge: no key {fingerprint} to be {done} (the current key is never retired)",
            file=sys.stderr,
        )
        return 1
    print(f"{fingerprint}  {done}")
    return 0
