"""The audit log (docs/audit.md) after API and CLI-side actions: an entry of every kind, with who,
what before and after, the request id and the source; read back newest first, paged and filtered,
by repository admins and site admins only (404 for a reader, a writer, a stranger); no secret
value in any entry or its event; retention deletes whole old entries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from forge_common import tasks
from forge_common.accounts import orgs as org_admin
from forge_common.accounts import tokens
from forge_common.accounts.queries import account_by_name
from forge_common.auth import hash_token
from forge_common.db import transaction
from forge_common.keys import DB_POOL
from forge_releases.audit_log.lifecycle import prune
from forge_releases.keys import AUDIT_PRUNING

from .minisign_support import Signer
from .publish_support import api, auth, publish_world

AUDIT = "/api/v2/repos/owner/pub/audit"
ADMIN = "/api/v2/admin/audit"
GITEA = "/api/v1/repos/owner/pub"


def as_(caller: str, request_id: str = "") -> dict[str, str]:
    return {**auth(caller), **({"X-Request-Id": request_id} if request_id else {})}


async def _release_story(client: Any) -> dict[str, str]:
    """Every release change through the API, as the `owner` user; returns the secrets seen."""
    made = await client.post(
        api("owner/pub"), json={"tag_name": "v2.0.0", "draft": True}, headers=as_("owner", "r-1")
    )
    rid = (await made.json())["id"]
    release = f"{api('owner/pub')}/{rid}"
    up = await client.post(
        f"{release}/assets?name=App-2.0.0.zip", data=b"zip", headers=as_("owner")
    )
    asset_id = (await up.json())["id"]
    for body in (
        {"name": "Two"},
        {"draft": False},
        {"rollout": 20},
        {"required": True},
        {"critical": True},
        {"withdrawn": True, "withdrawn_reason": "bad build"},
    ):
        assert (await client.patch(release, json=body, headers=as_("owner"))).status == 200
    deleted = await client.delete(f"{release}/assets/{asset_id}", headers=as_("owner"))
    assert deleted.status == 204
    assert (await client.delete(release, headers=as_("owner"))).status == 204
    key = await client.post(
        "/api/v2/repos/owner/pub/update_keys", json={"name": "ci"}, headers=as_("owner")
    )
    secret_key = (await key.json())["key"]
    key_id = (await key.json())["id"]
    revoked = await client.delete(
        f"/api/v2/repos/owner/pub/update_keys/{key_id}", headers=as_("owner")
    )
    assert revoked.status == 204
    tauri = "/api/v2/repos/owner/pub/tauri_key"
    put = await client.put(
        tauri, json={"public_key": Signer.new().tauri_form}, headers=as_("owner")
    )
    assert put.status == 200
    assert (await client.delete(tauri, headers=as_("owner"))).status == 204
    edit = await client.patch(GITEA, json={"description": "Now audited"}, headers=as_("owner"))
    assert edit.status == 200
    added = await client.put(
        f"{GITEA}/collaborators/stranger", json={"permission": "read"}, headers=as_("owner")
    )
    assert added.status == 204
    return {"update key": secret_key}


async def _accounts_story(pool: Any) -> dict[str, str]:
    """Tokens and an organization membership through forge_common, as the CLI makes them."""
    async with transaction(pool) as conn:
        made = await tokens.create_token(conn, await _id(conn, "reader"), "laptop", ("all",))
        assert made is not None
        assert await tokens.delete_token(conn, await _id(conn, "reader"), "laptop")
        org = await account_by_name(conn, "acme")
        user = await account_by_name(conn, "stranger")
        assert org is not None and user is not None
        await org_admin.ensure_member(conn, org, user, await _id(conn, "siteadmin"))
    return {"token": made[1]}


async def _id(conn: Any, login: str) -> int:
    return int(await conn.fetchval("SELECT id FROM core.accounts WHERE name = $1", login))


async def test_every_kind_is_recorded_and_read_back_by_admins(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(publish_world())
    client = await make_client()
    secrets = await _release_story(client)
    secrets |= await _accounts_story(client.app[DB_POOL])

    resp = await client.get(f"{AUDIT}?limit=100", headers=auth("repoadmin"))
    assert resp.status == 200 and resp.headers["Cache-Control"] == "no-store"
    entries = await resp.json()
    kinds = [e["kind"] for e in entries]
    assert set(kinds) >= {
        "release.created",
        "release.asset.uploaded",
        "release.edited",
        "release.published",
        "release.rollout",
        "release.required",
        "release.critical",
        "release.withdrawn",
        "release.asset.deleted",
        "release.deleted",
        "update_key.created",
        "update_key.revoked",
        "signing_key.set",
        "signing_key.removed",
        "repository.settings",
        "membership.added",
    }
    assert [e["id"] for e in entries] == sorted((e["id"] for e in entries), reverse=True)
    created = entries[kinds.index("release.created")]
    assert (created["actor"], created["source"], created["request_id"]) == ("owner", "api", "r-1")
    assert created["target"] == "owner/pub@v2.0.0"
    edited = entries[kinds.index("release.edited")]
    assert edited["changes"] == {"title": {"before": "", "after": "Two"}}
    settings = entries[kinds.index("repository.settings")]
    assert settings["changes"]["description"]["after"] == "Now audited"
    collaborator = entries[kinds.index("membership.added")]
    assert collaborator["changes"]["collaborator"] == {"before": None, "after": "stranger"}

    site = await (await client.get(f"{ADMIN}?limit=100", headers=auth("siteadmin"))).json()
    site_kinds = {e["kind"] for e in site}
    assert {"token.created", "token.deleted", "membership.added"} <= site_kinds
    token_entry = next(e for e in site if e["kind"] == "token.created")
    assert (token_entry["actor"], token_entry["source"]) == ("reader", "cli")
    assert token_entry["target"] == "user reader"
    assert token_entry["changes"]["scopes"] == {"before": None, "after": ["all"]}

    # no secret value anywhere: not in an entry, not in the events that carry them to plugins
    stored = await db.fetchval("SELECT string_agg(to_jsonb(a)::text, ' ') FROM core.audit_log a")
    events = await db.fetchval(
        "SELECT string_agg(payload::text, ' ') FROM core.outbox WHERE type = 'audit.recorded'"
    )
    for name, value in secrets.items():
        assert value not in stored and value not in events, name
        assert value[-8:] not in stored, name  # not even the part shown to tell tokens apart
        assert hash_token(value).hex() not in stored, name  # nor the digest kept of it


async def test_nobody_but_admins_sees_a_log(make_client: Any, load: Any) -> None:
    await load(publish_world())
    client = await make_client()
    body = {"tag_name": "v3.0.0"}
    assert (await client.post(api("owner/priv"), json=body, headers=auth("owner"))).status == 201
    for repo in ("pub", "priv", "relpub"):
        path = f"/api/v2/repos/owner/{repo}/audit"
        for caller in ("reader", "writer", "stranger", "orgwriter"):
            resp = await client.get(path, headers=auth(caller))
            assert resp.status == 404, (repo, caller)
            assert (await resp.json())["error"]["code"] == "RepoNotFound"
        anonymous = await client.get(path)  # sign in first, public or private
        assert anonymous.status == 401, repo
        assert (await anonymous.json())["error"]["code"] == "AuthTokenMissing"
        for caller in ("owner", "repoadmin", "siteadmin"):
            assert (await client.get(path, headers=auth(caller))).status == 200, (repo, caller)
    for caller, status in (("owner", 404), ("writer", 404), ("anonymous", 401), ("siteadmin", 200)):
        assert (await client.get(ADMIN, headers=auth(caller))).status == status, caller


async def test_paged_and_filtered_like_the_release_list(make_client: Any, load: Any) -> None:
    await load(publish_world())
    client = await make_client()
    for n in range(3):
        body = {"tag_name": f"v4.{n}.0"}
        await client.post(api("owner/pub"), json=body, headers=auth("writer" if n else "owner"))
    first = await client.get(f"{AUDIT}?limit=2", headers=auth("owner"))
    assert first.headers["X-Total-Count"] == "6"  # created and published, three times
    assert 'rel="next"' in first.headers["Link"] and len(await first.json()) == 2
    page3 = await (await client.get(f"{AUDIT}?limit=2&page=3", headers=auth("owner"))).json()
    assert [e["target"] for e in page3] == ["owner/pub@v4.0.0"] * 2
    mine = await (await client.get(f"{AUDIT}?actor=OWNER", headers=auth("owner"))).json()
    assert {e["actor"] for e in mine} == {"owner"} and len(mine) == 2
    created = await (
        await client.get(f"{AUDIT}?kind=release.created", headers=auth("owner"))
    ).json()
    assert len(created) == 3
    later = (datetime.now(UTC) + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert await (await client.get(f"{AUDIT}?since={later}", headers=auth("owner"))).json() == []
    bad = await client.get(f"{AUDIT}?since=yesterday", headers=auth("owner"))
    assert bad.status == 422
    other = await (await client.get(f"{ADMIN}?repo=owner/priv", headers=auth("siteadmin"))).json()
    assert other == []


async def test_retention_deletes_whole_old_entries(make_client: Any, load: Any, db: Any) -> None:
    await load(publish_world())
    client = await make_client()
    await client.post(api("owner/pub"), json={"tag_name": "v5.0.0"}, headers=auth("owner"))
    # the service's own hourly pruning, whose first round at start could take the old entry
    # before the prune below does
    await tasks.stop(client.app[AUDIT_PRUNING])
    await db.execute(
        "INSERT INTO core.audit_log (actor, kind, target, source, created_at) "
        "VALUES ('owner', 'release.created', 'owner/pub@old', 'api', now() - interval '800 days')"
    )
    assert await prune(client.app) == 1  # AUDIT_RETENTION_DAYS defaults to 730
    assert await db.fetchval("SELECT count(*) FROM core.audit_log") == 2
