"""Token scopes, enforced with Gitea's names and Gitea's rule (docs/accounts.md "Scopes").

Every API path belongs to one category (`repository`, `organization`, `user`, `admin`), as Gitea's
route groups do; a GET or HEAD needs `read:<category>`, anything else `write:<category>`. `all`
holds every scope and `write:X` holds `read:X`. The check runs before the handler looks anything
up, so its answer (403 with Gitea's message) says nothing about the resource: a token that may not
read repositories is refused alike for a private repository, a public one and one that does not
exist. Paths outside the table (plugin routes, health, pages of organizations) need no scope.
"""

from __future__ import annotations

import re

from .errors import PermissionDenied

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# First match wins. Gitea files `POST /user/repos` under `user` and `POST /orgs/{org}/repos`
# under `organization`, and so does this table.
_CATEGORIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^/api/v1/admin(/|$)"), "admin"),
    (re.compile(r"^/api/v1/(user|users)(/|$)"), "user"),
    (re.compile(r"^/api/v1/(orgs|teams)(/|$)"), "organization"),
    (re.compile(r"^/api/v[123]/repos(/|$)"), "repository"),
    # downloads and feeds of a repository's releases
    (re.compile(r"^/[^/]+/[^/]+/releases/(download|latest/download)/"), "repository"),
    (re.compile(r"^/[^/]+/[^/]+/(darwin|win32)-[^/]+/"), "repository"),
)


def category_of(path: str) -> str | None:
    if path.endswith("/openapi.json"):
        return None  # the documents describe; they hold nothing of anyone's
    for pattern, category in _CATEGORIES:
        if pattern.match(path):
            return category
    return None


def required_scope(method: str, path: str) -> str | None:
    """The scope a token needs for this request; None when the path needs none."""
    category = category_of(path)
    if category is None:
        return None
    level = "read" if method in READ_METHODS else "write"
    return f"{level}:{category}"


def allows(scopes: frozenset[str], needed: str) -> bool:
    if "all" in scopes or needed in scopes:
        return True
    level, _, category = needed.partition(":")
    return level == "read" and f"write:{category}" in scopes


class ScopeMissing(PermissionDenied):
    def __init__(self, needed: str) -> None:
        # Gitea's text, word for word (routers/api/v1/api.go tokenRequiresScopes): clients and
        # people match on it
        super().__init__(f"token does not have at least one of required scope(s): [{needed}]")


def check_scopes(scopes: frozenset[str], method: str, path: str) -> None:
    needed = required_scope(method, path)
    if needed is not None and not allows(scopes, needed):
        raise ScopeMissing(needed)
