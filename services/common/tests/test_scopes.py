"""Gitea's scope rule (docs/accounts.md "Scopes"): which category a path belongs to, which level a
method needs, and what each scope holds."""

from __future__ import annotations

import pytest
from forge_common.accounts.tokens import ScopeError, normalize_scopes
from forge_common.scopes import ScopeMissing, allows, check_scopes, required_scope


@pytest.mark.parametrize(
    ("method", "path", "needed"),
    [
        ("GET", "/api/v1/user", "read:user"),
        ("POST", "/api/v1/user/repos", "write:user"),
        ("DELETE", "/api/v1/users/ann/tokens/3", "write:user"),
        ("POST", "/api/v1/admin/users", "write:admin"),
        ("GET", "/api/v1/admin/plugins", "read:admin"),
        ("POST", "/api/v1/orgs", "write:organization"),
        ("POST", "/api/v1/orgs/acme/repos", "write:organization"),
        ("PUT", "/api/v1/teams/4/members/bob", "write:organization"),
        ("HEAD", "/api/v2/repos/acme/app/releases", "read:repository"),
        ("POST", "/api/v2/repos/acme/app/releases", "write:repository"),
        ("PATCH", "/api/v1/repos/acme/app", "write:repository"),
        ("GET", "/api/v3/repos/acme/app/releases/latest", "read:repository"),
        ("GET", "/acme/app/releases/download/v1/a.zip", "read:repository"),
        ("GET", "/acme/app/darwin-arm64/1.0.0", "read:repository"),
        ("GET", "/api/v1/plugins/notify/x", None),
        ("GET", "/api/v1/repos/openapi.json", None),
        ("GET", "/acme", None),
        ("GET", "/healthz", None),
    ],
)
def test_each_path_needs_its_categorys_level(method: str, path: str, needed: str | None) -> None:
    assert required_scope(method, path) == needed


def test_write_holds_read_and_all_holds_everything() -> None:
    assert allows(frozenset({"write:repository"}), "read:repository")
    assert not allows(frozenset({"read:repository"}), "write:repository")
    assert not allows(frozenset({"write:organization"}), "read:repository")
    assert allows(frozenset({"all"}), "write:admin")
    with pytest.raises(ScopeMissing) as refused:
        check_scopes(frozenset({"read:repository"}), "POST", "/api/v2/repos/a/b/releases")
    assert refused.value.status == 403
    assert refused.value.message == (
        "token does not have at least one of required scope(s): [write:repository]"
    )


def test_scopes_are_normalised_as_gitea_does() -> None:
    assert normalize_scopes(["read:user", "write:user", " ", "read:repository"]) == (
        "read:repository",
        "write:user",
    )
    assert normalize_scopes(["write:admin", "all"]) == ("all",)
    assert normalize_scopes([]) == ()
    with pytest.raises(ScopeError, match="invalid access token scope: write:issue"):
        normalize_scopes(["write:issue"])


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("POST", "/api/v2/repos/acme/app/releases", True),
        ("PATCH", "/api/v1/repos/acme/app/releases/3", True),
        ("POST", "/api/v3/repos/acme/app/releases/3/assets", True),
        ("DELETE", "/api/v2/repos/acme/app/releases/3/assets/9", True),
        ("GET", "/api/v2/repos/acme/app/releases/v1", True),
        ("GET", "/acme/app/releases/download/v1/a.zip", True),
        ("GET", "/acme/app/darwin-arm64/1.0.0", True),
        ("DELETE", "/api/v1/repos/acme/app", False),
        ("PATCH", "/api/v1/repos/acme/app", False),
        ("GET", "/api/v1/repos/acme/app", False),
        ("PUT", "/api/v1/repos/acme/app/collaborators/bob", False),
        ("POST", "/api/v2/repos/acme/app/update_keys", False),
        ("PUT", "/api/v2/repos/acme/app/tauri_key", False),
        ("GET", "/api/v2/repos/acme/app/insights", False),
        ("POST", "/api/v1/orgs", False),
        ("POST", "/api/v1/users/ann/tokens", False),
        ("PATCH", "/api/v1/admin/users/ann", False),
    ],
)
def test_write_release_publishes_and_does_nothing_else(
    method: str, path: str, allowed: bool
) -> None:
    from forge_common.scopes import token_allows

    assert token_allows(frozenset({"write:release"}), method, path) is allowed
    # the encoded slash of a repository name never turns a repository route into a release one
    assert not token_allows(
        frozenset({"write:release"}), "DELETE", "/api/v1/repos/acme/app/releases",
        "/api/v1/repos/acme%2Fapp/releases",
    )  # fmt: skip


def test_write_release_is_a_known_scope_held_by_write_repository() -> None:
    assert normalize_scopes(["write:release"]) == ("write:release",)
    assert normalize_scopes(["write:release", "write:repository"]) == ("write:repository",)
