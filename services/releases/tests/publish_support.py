"""Helpers of the publishing tests: a world with every kind of caller, outbox/storage probes, and
the `forge release` client run as a process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

TOKENS = {
    "owner": "owner-token",
    "writer": "writer-token",
    "reader": "reader-token",
    "repoadmin": "repoadmin-token",
    "siteadmin": "siteadmin-token",
    "stranger": "stranger-token",
    "orgwriter": "orgwriter-token",
}
API = "/api/v2/repos/{}/releases"
FORGE = str(Path(sys.executable).parent / "forge")


def publish_world() -> dict[str, Any]:
    """`owner/pub` (public), `owner/priv` (private), `owner/relpub` (private with public
    releases), `owner/old` (archived), `acme/app` (an organization's); collaborators with read,
    write and admin on each of owner's repositories."""
    users = [
        {"name": name, "tokens": [token], "admin": name == "siteadmin"}
        for name, token in TOKENS.items()
    ]
    collaborators = [
        {"user": "reader", "permission": "read"},
        {"user": "writer", "permission": "write"},
        {"user": "repoadmin", "permission": "admin"},
    ]
    repos: list[dict[str, Any]] = [
        {
            "owner": "owner",
            "name": name,
            "private": name in ("priv", "relpub"),
            "public_releases": name == "relpub",
            "archived": name == "old",
            "collaborators": collaborators,
            "releases": [
                {
                    "tag": "v1.0.0",
                    "title": "One",
                    "note": "First",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.0.0-x64.zip", "content": "one"}],
                },
                {"tag": "v0.1.0", "tag_only": True, "created_at": "2025-01-01T00:00:00Z"},
            ],
        }
        for name in ("pub", "priv", "relpub", "old")
    ]
    repos.append({"owner": "acme", "name": "app", "collaborators": [], "releases": []})
    orgs = [
        {
            "name": "acme",
            "members": [{"user": "orgwriter"}],
            "teams": [
                {"name": "devs", "permission": "write", "members": ["orgwriter"], "repos": ["app"]}
            ],
        }
    ]
    return {"users": users, "orgs": orgs, "repos": repos}


def auth(caller: str) -> dict[str, str]:
    return {} if caller == "anonymous" else {"Authorization": f"token {TOKENS[caller]}"}


def api(repo: str) -> str:
    return API.format(repo)


async def outbox(db: Any) -> list[dict[str, Any]]:
    """Every release event written so far, oldest first (the audit log's `audit.recorded`
    events beside them are asserted with the audit log: test_audit_log.py). The events of one
    transaction share its moment and have no order of their own (docs/events.md: delivery is
    not ordered): by type among themselves, never by where the rows happen to lie."""
    rows = await db.fetch(
        "SELECT type, source, repo_id, org_id, actor_id, payload FROM core.outbox "
        "WHERE type <> 'audit.recorded' ORDER BY occurred_at, type, payload::text"
    )
    return [dict(row) for row in rows]


def stored_files(storage: Path) -> list[Path]:
    """Files in storage, including unfinished uploads."""
    return sorted(p for p in storage.rglob("*") if p.is_file()) if storage.exists() else []


async def forge_release(*args: str | Path, url: str, token: str | None) -> tuple[int, str, str]:
    """Run `forge release ARGS...` as a publisher's machine does, against `url` with `token` as
    FORGE_TOKEN (None: unset) and no other FORGE_ variable: (exit status, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    env["FORGE_URL"] = url
    if token is not None:
        env["FORGE_TOKEN"] = token
    proc = await asyncio.create_subprocess_exec(
        FORGE,
        "release",
        *map(str, args),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
