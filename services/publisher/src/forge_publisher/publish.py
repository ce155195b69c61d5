"""`forge release publish OWNER/REPO TAG FILE... [--title T] [--notes-file F] [--draft]
[--prerelease]` (docs/cli-and-world.md): publishes through the HTTP API at FORGE_URL with
FORGE_TOKEN.

The handler gets the environment as a mapping (the CLI entry point is the only reader of
`os.environ`). Exit status 0 on success, 1 with a one-line `forge: ...` message on stderr
otherwise (bad token, missing repository, unreachable server, missing file, a file that clashes
with an existing asset).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import aiohttp

from .arch_warnings import arch_warnings
from .client import TIMEOUT, Publisher, PublishError, Request
from .connection import target
from .publish_warnings import tag_warnings, yml_warnings


def _request(args: argparse.Namespace, env: Mapping[str, str]) -> Request:
    """The publishing request, or PublishError for anything wrong before the network."""
    where = target(str(args.repository), env)
    files: list[Path] = args.files
    for path in files:
        if not path.is_file():
            raise PublishError(f"{path}: no such file")
    names = [path.name for path in files]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise PublishError(f"two files are named {', '.join(duplicates)}: asset names must differ")
    notes = None
    if args.notes_file is not None:
        try:
            notes = args.notes_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PublishError(f"{args.notes_file}: cannot read the notes ({exc})") from None
    return Request(
        base_url=where.base_url,
        token=where.token,
        owner=where.owner,
        repo=where.repo,
        tag=args.tag,
        files=files,
        title=args.title,
        notes=notes,
        draft=args.draft,
        prerelease=args.prerelease,
        rollout=args.rollout,
    )


async def _publish(req: Request, out: TextIO, err: TextIO) -> None:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        await Publisher(session, req, out, err).run()


def run(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """The handler of `forge release publish`: exit status."""
    try:
        req = _request(args, env)
        warnings = tag_warnings(req.tag) + yml_warnings(req.files)
        for line in [*warnings, *arch_warnings([path.name for path in req.files])]:
            print(f"forge: {line}", file=sys.stderr)
        asyncio.run(_publish(req, sys.stdout, sys.stderr))
    except PublishError as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    except aiohttp.ClientConnectionError as exc:
        print(f"forge: cannot reach the server at FORGE_URL ({exc})", file=sys.stderr)
        return 1
    except aiohttp.ClientError as exc:
        print(f"forge: talking to the server at FORGE_URL failed ({exc})", file=sys.stderr)
        return 1
    except TimeoutError:
        print("forge: the server at FORGE_URL did not answer in time", file=sys.stderr)
        return 1
    except OSError as exc:  # a file vanished or became unreadable while publishing
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("forge: interrupted; run the same command again to finish", file=sys.stderr)
        return 130
    return 0
