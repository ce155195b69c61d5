"""Helpers of the releases tests: a world with every access case, callers and their tokens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_common.notifications import NotificationOptions

TOKENS = {
    "stranger": "stranger-token",
    "reader": "reader-token",
    "repoadmin": "repoadmin-token",
    "siteadmin": "siteadmin-token",
    "owner": "owner-token",
}
CALLERS = ("anonymous", "stranger", "reader", "repoadmin", "siteadmin")
# name → (private, public_landing, public_releases)
REPO_KINDS = {
    "pub": (False, False, False),
    "priv": (True, False, False),
    "landing": (True, True, False),
    "relpub": (True, False, True),
}

STANDARD_RELEASES: list[dict[str, Any]] = [
    {"tag": "v0.9.0", "tag_only": True, "created_at": "2025-12-01T00:00:00Z"},
    {
        "tag": "v1.0.0",
        "title": "One",
        "note": "First",
        "created_at": "2026-01-01T00:00:00Z",
        "assets": [
            {"name": "App-1.0.0-x64.zip", "size": 100},
            {"name": "App-1.0.0-arm64.zip", "size": 120},
        ],
    },
    {
        "tag": "v1.1.0-beta.1",
        "prerelease": True,
        "note": "Beta",
        "created_at": "2026-02-01T00:00:00Z",
        "assets": [{"name": "App-1.1.0-beta.1-x64.zip", "size": 50}],
    },
    {
        "tag": "v2.0.0",
        "draft": True,
        "note": "Draft",
        "created_at": "2026-03-01T00:00:00Z",
        "assets": [{"name": "App-2.0.0-x64.zip", "size": 10}],
    },
]


def access_world() -> dict[str, Any]:
    """Users for every caller kind; one repository per access kind, all with the same releases."""
    users = [
        {"name": name, "tokens": [token], "admin": name == "siteadmin"}
        for name, token in TOKENS.items()
    ]
    repos = [
        {
            "owner": "owner",
            "name": name,
            "private": private,
            "public_landing": landing,
            "public_releases": releases,
            "collaborators": [
                {"user": "reader", "permission": "read"},
                {"user": "repoadmin", "permission": "admin"},
            ],
            "releases": STANDARD_RELEASES,
        }
        for name, (private, landing, releases) in REPO_KINDS.items()
    ]
    return {"users": users, "repos": repos}


def auth(caller: str) -> dict[str, str]:
    return {} if caller == "anonymous" else {"Authorization": f"token {TOKENS[caller]}"}


# a LISTEN connection that notices a lost or deaf connection and reconnects within a fraction of
# a second
FAST = NotificationOptions(
    probe_interval=0.2, probe_timeout=1.0, backoff_initial=0.05, backoff_max=0.2
)


def error_of(body: Mapping[str, Any]) -> tuple[str, str]:
    return body["error"]["code"], body["error"]["message"]


def rel(tag: str, minute: int, *assets: str, **flags: Any) -> dict[str, Any]:
    """A world-file release created `minute` minutes into 2026, with small assets."""
    created = f"2026-01-01T{minute // 60:02d}:{minute % 60:02d}:00Z"
    return {
        "tag": tag,
        "title": tag,
        "note": f"notes of {tag}",
        "created_at": created,
        "assets": [{"name": name, "size": 10 + i} for i, name in enumerate(assets)],
        **flags,
    }


def one_repo(releases: list[dict[str, Any]], **repo: Any) -> dict[str, Any]:
    """A world with user `owner` (token owner-token) and its repository `app`."""
    return {
        "users": [
            {"name": "owner", "tokens": [TOKENS["owner"]]},
            {"name": "stranger", "tokens": [TOKENS["stranger"]]},
        ],
        "repos": [{"owner": "owner", "name": "app", "releases": releases, **repo}],
    }


UPDATE = "/api/v2/repos/owner/app/releases/update"
