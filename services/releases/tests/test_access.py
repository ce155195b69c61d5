"""docs/access.md "Authentication rules" 1-6 and the access matrix of every endpoint: anonymous,
signed-in stranger, reader, repository admin and site admin × public, private, private with public
landing and private with public releases."""

from __future__ import annotations

from typing import Any

import pytest

from .support import CALLERS, REPO_KINDS, auth, error_of, one_repo, rel

ENDPOINTS = {
    "list": "/api/v2/repos/owner/{repo}/releases",
    "get": "/api/v2/repos/owner/{repo}/releases/v1.0.0",
    "latest": "/api/v2/repos/owner/{repo}/releases/latest",
    "update": "/api/v2/repos/owner/{repo}/releases/update?version=0.1.0&platform=darwin&arch=x64",
    "download": "/owner/{repo}/releases/download/v1.0.0/App-1.0.0-x64.zip",
    "latest-download": "/owner/{repo}/releases/latest/download/App-1.0.0-x64.zip",
}


def expected(caller: str, repo: str) -> tuple[int, str | None]:
    """Rules 3-6: public data for all; plain private: 401 anonymous, 404 strangers."""
    if repo != "priv" or caller in {"reader", "repoadmin", "siteadmin"}:
        return 200, None
    if caller == "anonymous":
        return 401, "AuthTokenMissing"
    return 404, "RepoNotFound"


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
async def test_access_matrix(matrix_client: Any, endpoint: str) -> None:
    """Authentication rules 3-6 for one endpoint, every caller × every repository kind."""
    wrong = []
    for repo in REPO_KINDS:
        for caller in CALLERS:
            resp = await matrix_client.get(
                ENDPOINTS[endpoint].format(repo=repo), headers=auth(caller)
            )
            status, code = expected(caller, repo)
            got_code = None
            if resp.status >= 400:
                got_code = (await resp.json())["error"]["code"]
            if (resp.status, got_code) != (status, code):
                wrong.append((repo, caller, resp.status, got_code))
            elif status == 200:
                # public data may sit in shared caches; the rest varies with the caller
                public = repo != "priv"
                control = resp.headers["Cache-Control"]
                assert control.startswith("public" if public else "private"), (repo, caller)
                if not public:
                    assert resp.headers["Vary"] == "Authorization"
    assert wrong == []


@pytest.mark.parametrize("repo", sorted(REPO_KINDS))
async def test_access_matrix_drafts(matrix_client: Any, repo: str) -> None:
    """Drafts: listed for repository and site admins only; fetched and downloaded by those
    who may publish (the repository admin and site admin here)."""
    for caller in CALLERS:
        status, _ = expected(caller, repo)
        if status != 200:
            continue
        admin = caller in {"repoadmin", "siteadmin"}
        resp = await matrix_client.get(
            f"/api/v2/repos/owner/{repo}/releases?drafts=true", headers=auth(caller)
        )
        listed = [r["tag_name"] for r in await resp.json()]
        assert listed == (["v2.0.0", "v1.0.0"] if admin else ["v1.0.0"]), caller
        if admin:
            assert resp.headers["Cache-Control"].startswith("private")
        resp = await matrix_client.get(
            f"/api/v2/repos/owner/{repo}/releases/v2.0.0", headers=auth(caller)
        )
        assert resp.status == (200 if admin else 404), caller
        resp = await matrix_client.get(
            f"/owner/{repo}/releases/download/v2.0.0/App-2.0.0-x64.zip", headers=auth(caller)
        )
        assert resp.status == (200 if admin else 404), caller


async def test_auth_rule_1_unknown_owner_is_404(matrix_client: Any) -> None:
    for caller in CALLERS:
        for path in ENDPOINTS.values():
            url = path.format(repo="pub").replace("owner", "nobody")
            resp = await matrix_client.get(url, headers=auth(caller))
            assert resp.status == 404
            assert error_of(await resp.json()) == ("RepoNotFound", "Repository not found")


async def test_auth_rule_1_caller_named_like_the_owner_is_the_owner(matrix_client: Any) -> None:
    # owner names compare case-insensitively; the owner is an admin of its repositories
    for owner in ["owner", "OWNER", "Owner"]:
        resp = await matrix_client.get(
            f"/api/v2/repos/{owner}/priv/releases?drafts=true", headers=auth("owner")
        )
        assert resp.status == 200
        assert [r["tag_name"] for r in await resp.json()] == ["v2.0.0", "v1.0.0"]


async def test_auth_rule_2_unknown_repository_is_404(matrix_client: Any) -> None:
    for caller in CALLERS:
        for path in ENDPOINTS.values():
            resp = await matrix_client.get(path.format(repo="nothing"), headers=auth(caller))
            assert resp.status == 404
            assert error_of(await resp.json()) == ("RepoNotFound", "Repository not found")


async def test_auth_rule_2_repository_names_are_case_insensitive(matrix_client: Any) -> None:
    resp = await matrix_client.get("/api/v2/repos/OWNER/PUB/releases/latest")
    assert resp.status == 200
    body = await resp.json()
    # addresses use the canonical spelling
    assert body["url"] == "http://forge.test/owner/pub/releases/tag/v1.0.0"


async def test_auth_rule_3_public_repository_with_or_without_sign_in(matrix_client: Any) -> None:
    for caller in CALLERS:
        resp = await matrix_client.get(ENDPOINTS["list"].format(repo="pub"), headers=auth(caller))
        assert resp.status == 200


async def test_auth_rule_4_public_landing_or_releases_open_a_private_repository(
    matrix_client: Any,
) -> None:
    for repo in ["landing", "relpub"]:
        for path in ENDPOINTS.values():
            assert (await matrix_client.get(path.format(repo=repo))).status == 200


async def test_auth_rule_5_anonymous_on_private_is_auth_token_missing(matrix_client: Any) -> None:
    for path in ENDPOINTS.values():
        resp = await matrix_client.get(path.format(repo="priv"))
        assert resp.status == 401
        body = await resp.json()
        assert body["error"]["code"] == "AuthTokenMissing" and body["error"]["status"] == 401


async def test_auth_rule_5_bad_input_on_private_is_still_auth_token_missing(
    matrix_client: Any,
) -> None:
    resp = await matrix_client.get("/api/v2/repos/owner/priv/releases/update?version=bad")
    assert resp.status == 401


async def test_auth_rule_6_signed_in_without_access_is_404(matrix_client: Any) -> None:
    for path in ENDPOINTS.values():
        resp = await matrix_client.get(path.format(repo="priv"), headers=auth("stranger"))
        assert resp.status == 404
        assert error_of(await resp.json()) == ("RepoNotFound", "Repository not found")


async def test_unknown_token_is_401_never_anonymous(matrix_client: Any) -> None:
    for path in ENDPOINTS.values():
        resp = await matrix_client.get(
            path.format(repo="pub"), headers={"Authorization": "token wrong"}
        )
        assert resp.status == 401
        assert (await resp.json())["error"]["code"] == "AuthTokenInvalid"


async def test_bearer_scheme_works_too(matrix_client: Any) -> None:
    resp = await matrix_client.get(
        ENDPOINTS["list"].format(repo="priv"), headers={"Authorization": "Bearer reader-token"}
    )
    assert resp.status == 200


async def test_public_repository_of_a_hidden_organization_stays_hidden(
    make_client: Any, load: Any
) -> None:
    """**privacy** (docs/access.md "Authentication rules"): a public repository of an organization
    the caller may not see is not public, and the organization does not exist for them (404, not
    401); test_hostile.py covers every route and repository kind."""
    world = one_repo([])
    world["repos"] = [
        {"owner": "secretorg", "name": "app", "releases": [rel("v1.0.0", 1, "App-x64.zip")]},
        {"owner": "limitedorg", "name": "app", "releases": [rel("v1.0.0", 1, "App-x64.zip")]},
    ]
    world["orgs"] = [
        {"name": "secretorg", "visibility": "private", "members": [{"user": "owner"}]},
        {"name": "limitedorg", "visibility": "limited"},
    ]
    await load(world)
    client = await make_client()
    path = "/api/v2/repos/{org}/app/releases/latest"
    assert (await client.get(path.format(org="secretorg"))).status == 404
    resp = await client.get(path.format(org="secretorg"), headers=auth("stranger"))
    assert resp.status == 404
    resp = await client.get(path.format(org="secretorg"), headers=auth("owner"))
    assert resp.status == 200
    assert (await client.get(path.format(org="limitedorg"))).status == 404
    resp = await client.get(path.format(org="limitedorg"), headers=auth("stranger"))
    assert resp.status == 200
