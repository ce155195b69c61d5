"""Bad input: a non-integer group id is 404, wrong JSON types are 422 naming the field,
unknown fields are ignored, and nothing — huge or negative ids, unicode, NUL, null or array
bodies, malformed JSON — yields a 500. Every reply is also checked against the OpenAPI document."""

from __future__ import annotations

import pytest

WRITES = [
    ("post", "/orgs/pub/pinned"),
    ("put", "/orgs/pub/pinned/reorder"),
    ("post", "/orgs/pub/pinned/groups"),
    ("put", "/orgs/pub/pinned/groups/1"),
]
RAW_BODIES = [
    b"null",
    b"[]",
    b'[{"repo_name": "spare"}]',
    b'"text"',
    b"42",
    b"true",
    b"",
    b"{",
    b'{"name": "\\ud800"}',
    b"\xff\xfe",
    b'{"repo_name": "spare"' + b", " * 10 + b"}",
    b"[" * 5000 + b"]" * 5000,
]
TYPED_BODIES = [
    {"repo_name": None, "name": None, "orders": None},
    {"repo_name": ["spare"], "name": {"a": 1}, "orders": "x"},
    {"repo_name": "spare\u0000", "name": "a\u0000b"},
    {"repo_name": "sp\u00e4re", "name": 1.5},
    {"group_id": 2**63, "display_order": 2**31, "orders": [{"repo_id": 2**63}]},
    {"group_id": -(2**63), "display_order": -(2**31) - 1, "orders": [{"repo_id": -1}]},
    {"group_id": 18446744073709551615, "orders": [{"repo_id": 0}]},
    {"repo_name": "x" * 100_000, "name": "y" * 100_000},
    {"orders": [None, [], "a"]},
    {"collapsed": "false", "name": "ok", "orders": [{"repo_id": 1, "group_id": True}]},
]


def assert_no_500(reply, what):
    assert reply.status < 500, what
    if reply.status >= 400:
        assert "message" in reply.json, what
        assert "Traceback" not in reply.raw.decode(errors="replace")


@pytest.mark.parametrize(("method", "path"), WRITES)
async def test_malformed_or_non_object_bodies_never_500(ro_api, method, path):
    for raw in RAW_BODIES:
        reply = await ro_api.call(method.upper(), path, as_="owner", data=raw)
        assert_no_500(reply, raw[:40])
        assert reply.status in (400, 404, 422), raw[:40]


@pytest.mark.parametrize(("method", "path"), WRITES)
async def test_wrongly_typed_fields_are_422_naming_the_field(ro_api, method, path):
    for body in TYPED_BODIES:
        reply = await ro_api.call(method.upper(), path, as_="owner", json=body)
        assert_no_500(reply, body)
        if reply.status == 422:
            assert reply.json["errors"], body


async def test_body_over_the_size_limit_is_413(ro_api):
    reply = await ro_api.post(
        "/orgs/pub/pinned/groups", as_="owner", data=b'{"name": "' + b"a" * 2_000_000 + b'"}'
    )
    assert reply.status == 413


PATH_VALUES = [
    "%00",
    "a%00b",
    "%C3%A9",
    "%F0%9F%9A%80",
    "x" * 2000,
    "-1",
    "99999999999999999999999",
    "..",
    "%2E%2E",
    "a%2Fb",
    "%FF",
    "%20",
    "null",
]


async def test_odd_path_values_are_404_never_500(ro_api):
    for value in PATH_VALUES:
        for method, path in [
            ("GET", f"/orgs/{value}/overview"),
            ("GET", f"/orgs/{value}/pinned"),
            ("GET", f"/orgs/{value}/pinned/groups"),
            ("GET", f"/orgs/{value}/public_members/roles"),
            ("DELETE", f"/orgs/pub/pinned/{value}"),
            ("DELETE", f"/orgs/pub/pinned/groups/{value}"),
            ("PUT", f"/orgs/pub/public_members/{value}"),
            ("DELETE", f"/orgs/pub/public_members/{value}"),
        ]:
            reply = await ro_api.call(method, path, as_="owner", json={"name": "n"})
            assert_no_500(reply, (method, path))
            assert reply.status == 404, (method, path)


async def test_unknown_fields_are_ignored(api, ids):
    reply = await api.post(
        "/orgs/pub/pinned",
        as_="owner",
        json={"repo_name": "spare", "RepoName": "other", "extra": {"deep": [1, 2]}},
    )
    assert reply.status == 201 and reply.json["repo"]["name"] == "spare"


async def test_odd_headers_never_500(ro_api):
    for header in ("token", "Bearer ", "Basic abc", "token " + "x" * 600, "token \u00e9"):
        reply = await ro_api.get(
            "/orgs/pub/overview", headers={"Authorization": header.encode().decode("latin-1")}
        )
        assert reply.status == 401
    for header in ("", ",,,", 'W/"', "*, *", "x" * 5000):
        reply = await ro_api.get("/orgs/pub/overview", headers={"If-None-Match": header})
        assert reply.status == 200 if header != "*, *" else reply.status in (200, 304)
