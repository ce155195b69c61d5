"""The OpenAPI 3.1 document at /api/v1/openapi.json is true: it lists exactly the routes served,
its schemas are valid JSON Schema, and every operation's success answer matches it (every other
test's answers are checked against it too, by the `Api` client)."""

from __future__ import annotations

import jsonschema
from forge_orgs.service import create_app

from .accounts_support import basic, give_password


async def test_openapi_document_is_openapi_3_1_with_valid_schemas(ro_api):
    doc = await ro_api.document()
    assert doc["openapi"].startswith("3.1")
    assert doc["servers"] == [{"url": "/api/v1"}]
    for schema in doc["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


async def test_openapi_lists_exactly_the_routes_the_app_serves(ro_api, shared_world):
    doc = await ro_api.document()
    documented = {
        (method.upper(), "/api/v1" + path)
        for path, item in doc["paths"].items()
        for method in item
        if method != "parameters"
    }
    app = create_app(shared_world.settings)
    served = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None
        # the API only: not forge_common's /healthz, /readyz, /metrics, nor the pages (pages.md)
        and route.resource.canonical.startswith("/api/")
        and route.method != "HEAD"
    }
    assert served == documented


async def test_openapi_every_operation_answers_as_documented(api, ids):
    gid = (await api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": "G"})).json["id"]
    calls = [
        ("GET", "/orgs/pub/pinned", None, 200),
        ("POST", "/orgs/pub/pinned", {"repo_name": "spare", "group_id": gid}, 201),
        (
            "PUT",
            "/orgs/pub/pinned/reorder",
            {"orders": [{"repo_id": ids.repos[("pub", "spare")]}]},
            204,
        ),
        ("DELETE", "/orgs/pub/pinned/spare", None, 204),
        ("GET", "/orgs/pub/pinned/groups", None, 200),
        ("POST", "/orgs/pub/pinned/groups", {"name": "H"}, 201),
        ("PUT", f"/orgs/pub/pinned/groups/{gid}", {"name": "G2"}, 200),
        ("DELETE", f"/orgs/pub/pinned/groups/{gid}", None, 204),
        ("GET", "/orgs/pub/overview", None, 200),
        ("GET", "/orgs/pub/public_members/roles", None, 200),
        ("PUT", "/orgs/pub/public_members/cora", None, 204),
        ("DELETE", "/orgs/pub/public_members/cora", None, 204),
        ("GET", "/openapi.json", None, 200),
    ]
    for method, path, body, status in calls:
        reply = await api.call(method, path, as_="owner", json=body)
        assert reply.status == status, (method, path, reply.raw)
    await _exercise_account_administration(api)
    doc = await api.document()
    operations = {
        (m.upper(), p) for p, item in doc["paths"].items() for m in item if m != "parameters"
    }
    exercised = {(m, t) for m, t, s in api.checked if s.startswith("2")}
    assert operations <= exercised


async def _exercise_account_administration(api):
    """Every operation of docs/accounts.md once, with its success status."""
    new_user = {"username": "newbie", "email": "newbie@example.com", "password": "newbie-pass-1"}
    await give_password(api, "olive", "olive-password")
    olive = {"Authorization": basic("olive", "olive-password")}
    calls = [
        ("POST", "/admin/users", "admin", None, new_user, 201),
        ("GET", "/user", "owner", None, None, 200),
        ("POST", "/user/repos", "owner", None, {"name": "mine"}, 201),
        ("POST", "/orgs", "owner", None, {"username": "fresh"}, 201),
        ("POST", "/orgs/fresh/repos", "owner", None, {"name": "app", "private": True}, 201),
        ("GET", "/orgs/fresh/teams", "owner", None, None, 200),
        ("POST", "/orgs/fresh/teams", "owner", None, {"name": "ci", "permission": "write"}, 201),
    ]
    team_id = None
    for method, path, as_, headers, body, status in calls:
        reply = await api.call(method, path, as_=as_, headers=headers, json=body)
        assert reply.status == status, (method, path, reply.raw)
        if path.endswith("/teams") and method == "POST":
            team_id = reply.json["id"]
    calls = [
        ("GET", "/users/olive", None, None, None, 200),
        ("GET", "/version", None, None, None, 200),
        ("GET", "/orgs/fresh", "owner", None, None, 200),
        ("GET", f"/teams/{team_id}", "owner", None, None, 200),
        ("PUT", f"/teams/{team_id}/members/mia", "owner", None, None, 204),
        ("PUT", f"/teams/{team_id}/repos/fresh/app", "owner", None, None, 204),
        ("DELETE", f"/teams/{team_id}/repos/fresh/app", "owner", None, None, 204),
        ("DELETE", f"/teams/{team_id}/members/mia", "owner", None, None, 204),
        ("DELETE", "/orgs/fresh/members/mia", "owner", None, None, 204),
        ("GET", "/users/olive/tokens", None, olive, None, 200),
        ("POST", "/users/olive/tokens", None, olive, {"name": "ci", "scopes": ["all"]}, 201),
        ("DELETE", "/users/olive/tokens/ci", None, olive, None, 204),
        ("PATCH", "/admin/users/newbie", "admin", None, {"full_name": "New Bie"}, 200),
        ("DELETE", "/admin/users/newbie", "admin", None, None, 204),
    ]
    for method, path, as_, headers, body, status in calls:
        reply = await api.call(method, path, as_=as_, headers=headers, json=body)
        assert reply.status == status, (method, path, reply.raw)
