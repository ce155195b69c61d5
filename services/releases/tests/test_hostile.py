"""Hostile input on the releases routes, each answered with a 4xx (or the whole file), never a 500:
huge numbers in `Range`, ids and query values; control characters in multipart part headers;
asset names that are not what they seem; uploader-declared types that would render; and the
existence of repositories inside organizations the caller may not see."""

from __future__ import annotations

from typing import Any

import pytest
from forge_releases.world import validate

from .support import TOKENS, auth, error_of, one_repo, rel

HUGE = "9" * 5000  # beyond Python's integer-string limit (4300 digits)
DOWNLOAD = "/owner/app/releases/download/v1.0.0/App.exe"
RELEASES = "/api/v2/repos/owner/app/releases"


@pytest.fixture
async def client(make_client: Any, load: Any) -> Any:
    await load(one_repo([rel("v1.0.0", 1, "App.exe", "Other.zip"), rel("v1.1.0", 2)]))
    return await make_client()


@pytest.mark.parametrize(
    ("spec", "status"),
    [
        (f"bytes={HUGE}-", 416),  # starts past any end
        (f"bytes=0-{HUGE}", 206),  # to the end: the whole file, as a range
        (f"bytes=-{HUGE}", 206),  # the last N bytes, N beyond the size: the whole file
        (f"bytes={'0' * 5000}1-", 206),  # leading zeros are still one byte in
    ],
)
async def test_range_with_thousands_of_digits(client: Any, spec: str, status: int) -> None:
    resp = await client.get(DOWNLOAD, headers={"Range": spec})
    assert resp.status == status, await resp.text()
    if status == 416:
        assert resp.headers["Content-Range"] == "bytes */10"
    else:
        first = 1 if spec.endswith("1-") else 0
        assert resp.headers["Content-Range"] == f"bytes {first}-9/10"
        assert len(await resp.read()) == 10 - first


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("PATCH", f"{RELEASES}/{HUGE}", "ReleaseNotFound"),
        ("DELETE", f"{RELEASES}/{HUGE}", "ReleaseNotFound"),
        ("POST", f"{RELEASES}/{HUGE}/assets?name=a.bin", "ReleaseNotFound"),
        ("DELETE", f"{RELEASES}/{HUGE}/assets/1", "ReleaseNotFound"),
        ("DELETE", f"{RELEASES}/1/assets/{HUGE}", "AssetNotFound"),
        ("DELETE", f"{RELEASES}/+{HUGE}/assets/1", "ReleaseNotFound"),
        ("PATCH", f"{RELEASES}/+{HUGE}", "ReleaseNotFound"),
    ],
)
async def test_ids_with_thousands_of_digits_are_404(
    client: Any, method: str, path: str, code: str
) -> None:
    resp = await client.request(method, path, json={}, headers=auth("owner"))
    assert resp.status == 404
    assert error_of(await resp.json())[0] == code


@pytest.mark.parametrize("value", [HUGE, "+" + HUGE, "0" * 5000 + "1", "1" + "0" * 30])
async def test_page_and_limit_with_thousands_of_digits_fall_back(client: Any, value: str) -> None:
    """List rules 1-2: a page or limit that is not a usable positive number is the default."""
    resp = await client.get(f"{RELEASES}?limit={value}")
    assert resp.status == 200
    assert [r["tag_name"] for r in await resp.json()] == ["v1.1.0", "v1.0.0"]
    resp = await client.get(f"{RELEASES}?page={value}&limit=1")
    assert resp.status == 200
    assert len(await resp.json()) <= 1


@pytest.mark.parametrize(
    "header",
    [
        b'Content-Disposition: form-data; name="file"; filename="a\x01.bin"',
        b'Content-Disposition: form-data; name="file"; filename="a.bin"\r\nX-\x01: y',
        b'Content-Disposition: form-data; name="file"; filename="a.bin"\r\nX-Y: a\x7fb',
    ],
)
async def test_multipart_part_header_with_a_control_character_is_400(
    client: Any, header: bytes
) -> None:
    body = b"--xyz\r\n" + header + b"\r\n\r\nbytes\r\n--xyz--\r\n"
    resp = await client.post(
        f"{RELEASES}/1/assets",
        data=body,
        headers={**auth("owner"), "Content-Type": "multipart/form-data; boundary=xyz"},
    )
    assert resp.status == 400
    assert error_of(await resp.json()) == ("ValInvalidInput", "Malformed multipart body")


BAD_NAMES = [
    "%ff%fe.bin",  # not UTF-8: decoded to U+FFFD, which would be stored as the name
    "%E2%80%AEexe.txt",  # U+202E RIGHT-TO-LEFT OVERRIDE: shows as "txt.exe"
    "a%E2%80%8Bb.zip",  # U+200B ZERO WIDTH SPACE (Cf)
    "a%EF%BB%BFb.zip",  # U+FEFF (Cf)
    "a%C2%85b.zip",  # U+0085 NEXT LINE (Cc)
    "a%C2%9Bb.zip",  # U+009B (Cc)
    "a%ED%A0%80b.zip",  # an encoded lone surrogate (not UTF-8 either)
]


@pytest.mark.parametrize("raw", BAD_NAMES)
async def test_asset_names_that_are_not_what_they_seem_are_422(client: Any, raw: str) -> None:
    resp = await client.post(
        f"{RELEASES}/1/assets?name={raw}", data=b"bytes", headers=auth("owner")
    )
    assert resp.status == 422, await resp.text()
    body = await resp.json()
    assert body["error"]["code"] == "ValidationFailed"
    assert body["error"]["message"].startswith("name ")


async def test_multipart_file_name_with_a_format_character_is_422(client: Any) -> None:
    body = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; '
        b"filename*=UTF-8''%E2%80%AEexe.txt\r\n\r\nbytes\r\n--xyz--\r\n"
    )
    resp = await client.post(
        f"{RELEASES}/1/assets",
        data=body,
        headers={**auth("owner"), "Content-Type": "multipart/form-data; boundary=xyz"},
    )
    assert resp.status == 422, await resp.text()
    assert (await resp.json())["error"]["message"].startswith("name ")


@pytest.mark.parametrize(
    "name", ["\ufffd\ufffd.bin", "\u202eexe.txt", "a\u200bb", "a\x85b", "a\ud800b", "a\u2066b"]
)
def test_world_loader_refuses_the_same_names(name: str) -> None:
    world = one_repo([{"tag": "v1.0.0", "assets": [{"name": name, "size": 1}]}])
    errors: list[str] = []
    validate(world, errors)
    assert any(".name:" in error for error in errors), errors


async def test_ordinary_unicode_names_are_still_accepted(client: Any) -> None:
    for name in ["Ünïcode 😀 app.zip", "应用-1.0.exe", "a+b (1).tar.gz"]:
        resp = await client.post(
            f"{RELEASES}/1/assets", params={"name": name}, data=b"x", headers=auth("owner")
        )
        assert resp.status == 201, (name, await resp.text())


@pytest.mark.parametrize(
    ("declared", "served"),
    [
        ("text/html", "application/octet-stream"),
        ("image/svg+xml", "application/octet-stream"),
        ("application/xhtml+xml", "application/octet-stream"),
        ("text/javascript", "application/octet-stream"),
        ("application/pdf", "application/octet-stream"),
        ("application/zip", "application/zip"),
        ("application/x-msdownload", "application/x-msdownload"),
    ],
)
async def test_declared_types_are_never_served_to_render(
    client: Any, declared: str, served: str
) -> None:
    resp = await client.post(
        f"{RELEASES}/1/assets?name=page.bin",
        data=b"<script>alert(1)</script>",
        headers={**auth("owner"), "Content-Type": declared},
    )
    assert resp.status == 201
    for method in ("GET", "HEAD"):
        got = await client.request(method, "/owner/app/releases/download/v1.0.0/page.bin")
        assert got.status == 200
        assert got.headers["Content-Type"] == served
        assert got.headers["Content-Disposition"].startswith("attachment;")
        assert got.headers["X-Content-Type-Options"] == "nosniff"


# --- docs/access.md "Authentication rules": an owner the caller may not see does not exist ---

HIDDEN_ROUTES = [
    ("GET", "/api/v2/repos/{org}/{repo}/releases"),
    ("GET", "/api/v2/repos/{org}/{repo}/releases/v1.0.0"),
    ("GET", "/api/v2/repos/{org}/{repo}/releases/latest"),
    ("GET", "/api/v2/repos/{org}/{repo}/releases/update?version=0.1.0&platform=windows"),
    ("GET", "/{org}/{repo}/releases/download/v1.0.0/App.exe"),
    ("GET", "/{org}/{repo}/releases/latest/download/App.exe"),
    ("POST", "/api/v2/repos/{org}/{repo}/releases"),
    ("PATCH", "/api/v2/repos/{org}/{repo}/releases/1"),
    ("DELETE", "/api/v2/repos/{org}/{repo}/releases/1"),
    ("POST", "/api/v2/repos/{org}/{repo}/releases/1/assets?name=a.bin"),
    ("DELETE", "/api/v2/repos/{org}/{repo}/releases/1/assets/1"),
]
# name → (private, public_landing, public_releases)
KINDS = {
    "pub": (False, False, False),
    "priv": (True, False, False),
    "landing": (True, True, False),
    "relpub": (True, False, True),
}


@pytest.fixture
async def orgs_client(make_client: Any, load: Any) -> Any:
    world = one_repo([])
    world["users"] += [
        {"name": "member", "tokens": ["member-token"]},
        {"name": "siteadmin", "tokens": [TOKENS["siteadmin"]], "admin": True},
    ]
    world["orgs"] = [
        {"name": "secretorg", "visibility": "private", "members": [{"user": "member"}]},
        {"name": "limitedorg", "visibility": "limited"},
        {"name": "openorg", "visibility": "public"},
    ]
    world["repos"] = [
        {
            "owner": org,
            "name": name,
            "private": private,
            "public_landing": landing,
            "public_releases": releases,
            "releases": [rel("v1.0.0", 1, "App.exe")],
            # a grant on the repository does not make a private organization visible
            "collaborators": [{"user": "stranger", "permission": "write"}]
            if org == "secretorg"
            else [],
        }
        for org in ("secretorg", "limitedorg", "openorg")
        for name, (private, landing, releases) in KINDS.items()
    ]
    await load(world)
    return await make_client()


def _caller_headers(caller: str) -> dict[str, str]:
    if caller == "member":
        return {"Authorization": "token member-token"}
    return {} if caller == "anonymous" else {"Authorization": f"token {TOKENS[caller]}"}


async def _answers(client: Any, org: str, repo: str, caller: str) -> set[tuple[int, str]]:
    seen = set()
    for method, template in HIDDEN_ROUTES:
        path = template.format(org=org, repo=repo)
        resp = await client.request(method, path, json={}, headers=_caller_headers(caller))
        code = (await resp.json())["error"]["code"] if resp.status >= 400 else ""
        seen.add((resp.status, code))
    return seen


@pytest.mark.parametrize(
    ("org", "caller"),
    [("secretorg", "anonymous"), ("secretorg", "stranger"), ("limitedorg", "anonymous")],
)
async def test_a_hidden_owner_does_not_exist_for_the_caller(
    orgs_client: Any, org: str, caller: str
) -> None:
    """Every repository kind, existing or not, answers the same 404 on every route: nobody
    learns from 401-versus-404 (or a public landing) that it exists."""
    for repo in [*KINDS, "missing"]:
        seen = await _answers(orgs_client, org, repo, caller)
        assert seen == {(404, "RepoNotFound")}, (org, repo, seen)


async def test_visible_owners_keep_rules_2_to_6(orgs_client: Any) -> None:
    path = "/api/v2/repos/{org}/{repo}/releases"
    cases = [
        ("openorg", "priv", "anonymous", 401),  # rule 5 stays for visible owners
        ("openorg", "landing", "anonymous", 200),  # rule 4
        ("openorg", "relpub", "anonymous", 200),
        ("openorg", "missing", "anonymous", 404),
        ("limitedorg", "pub", "stranger", 200),  # limited: visible when signed in
        ("limitedorg", "landing", "stranger", 200),
        ("limitedorg", "priv", "stranger", 404),  # rule 6
        ("secretorg", "pub", "member", 200),
        ("secretorg", "landing", "member", 200),
        ("secretorg", "landing", "siteadmin", 200),
    ]
    for org, repo, caller, status in cases:
        resp = await orgs_client.get(
            path.format(org=org, repo=repo), headers=_caller_headers(caller)
        )
        assert resp.status == status, (org, repo, caller)
    # readable only by those who can see the organization: never publicly cacheable
    resp = await orgs_client.get(
        path.format(org="limitedorg", repo="landing"), headers=_caller_headers("stranger")
    )
    assert resp.headers["Cache-Control"].startswith("private")
