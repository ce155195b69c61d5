"""Token scopes, enforced with Gitea's names and Gitea's rule, and forge's own `write:release`
(docs/accounts.md "Scopes").

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


# forge's own scope, beside Gitea's (which keep Gitea's meaning: `write:repository` is every write
# to a repository, its deletion included). It publishes and does nothing else: every method on a
# repository's releases and their assets (the three API shapes, and so `forge release publish`,
# electron-builder, Electron Forge, gitea-js), and reading what it published (downloads, feeds).
# Not the repository itself, its settings, collaborators, update keys, Tauri key or insights.
SCOPE_PUBLISH = "write:release"
_PUBLISH_PATHS = re.compile(r"^/api/v[123]/repos/[^/]+/[^/]+/releases(/|$)")


def publishes(method: str, path: str) -> bool:
    """Whether `write:release` allows this request: anything on a repository's releases, and
    reading the repository-category paths outside the API (downloads, Squirrel's feeds)."""
    if _PUBLISH_PATHS.match(path):
        return True
    return (
        method in READ_METHODS
        and category_of(path) == "repository"
        and not path.startswith("/api/")
    )


def token_allows(scopes: frozenset[str], method: str, path: str, raw_path: str = "") -> bool:
    """The one scope decision of a request made with a token: Gitea's rule, or forge's own
    `write:release` for publishing. `path` is decoded; `raw_path`, as sent, must be a release
    path too, so that no `%2F` turns `DELETE /api/v1/repos/acme%2Fapp/releases` into one."""
    needed = required_scope(method, path)
    if needed is None or allows(scopes, needed):
        return True
    return (
        SCOPE_PUBLISH in scopes
        and publishes(method, path)
        and publishes(method, raw_path.split("?", 1)[0] or path)
    )


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


def check_scopes(scopes: frozenset[str], method: str, path: str, raw_path: str = "") -> None:
    if not token_allows(scopes, method, path, raw_path):
        needed = required_scope(method, path)
        assert needed is not None
        raise ScopeMissing(needed)


# A page shows what the API calls behind it show the same caller (docs/pages.md "Privacy"):
# repositories and their releases, organizations and their members, users' profiles. A token on a
# page is held to the scopes of all of them, before anything is looked up, as the API holds it to
# one call's.
PAGE_SCOPES = ("read:repository", "read:organization", "read:user")


def check_page_scopes(scopes: frozenset[str]) -> None:
    """403 ScopeMissing naming the first scope a page needs that `scopes` lack (a session's viewer
    holds every scope)."""
    for needed in PAGE_SCOPES:
        if not allows(scopes, needed):
            raise ScopeMissing(needed)
