"""The audit log's console page (docs/audit.md "In the console"): a repository's admins and site
admins read its entries (who, when, kind, target, each change with the reason), newest first,
paged and filtered by kind and actor as the API is; everyone else gets the API's own answer (404
as for a repository that does not exist, 401 to an anonymous visitor) and learns
nothing; no secret value is ever on the page; the repository's pages link it for admins only."""

from __future__ import annotations

import re
from typing import Any

import pytest

from .console_support import signed_in
from .publish_support import api, auth, publish_world

CALLERS = ("anonymous", "stranger", "reader", "writer", "orgwriter", "repoadmin", "owner")


@pytest.fixture
async def world(make_client: Any, load: Any) -> Any:
    await load(publish_world())
    return await make_client()


async def _story(client: Any, repo: str) -> str:
    """A release created, published and withdrawn with a reason, and an update key made, in
    `repo` through the API; returns the key's secret value."""
    made = await client.post(api(repo), json={"tag_name": "v2.0.0"}, headers=auth("owner"))
    rid = (await made.json())["id"]
    body = {"withdrawn": True, "withdrawn_reason": "crashes on start"}
    changed = await client.patch(f"{api(repo)}/{rid}", json=body, headers=auth("writer"))
    assert changed.status == 200
    key = await client.post(
        f"/api/v2/repos/{repo}/update_keys", json={"name": "desktop"}, headers=auth("owner")
    )
    secret: str = (await key.json())["key"]
    return secret


def _rows(html: str) -> list[tuple[str, str, str]]:
    """(actor, kind, target) of each entry on the page, in its order."""
    return re.findall(
        r'<td class="actor">([^<]*)</td>\s*<td class="kind"><code>([^<]*)</code></td>\s*'
        r'<td class="target">([^<]*)</td>',
        html,
    )


def _scrubbed(html: str) -> str:
    """A page without what differs between any two requests (its request id, its CSRF token)."""
    html = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", html)
    return re.sub(r'name="_csrf" value="[^"]*"', "CSRF", html)


async def test_the_page_answers_whoever_the_api_answers_and_tells_the_others_nothing(
    world: Any, db: Any, settings: Any
) -> None:
    for repo in ("owner/pub", "owner/priv", "owner/relpub"):
        await _story(world, repo)
    for repo in ("pub", "priv", "relpub"):
        for caller in (*CALLERS, "siteadmin"):
            headers = auth(caller) if caller != "anonymous" else {}
            answer = await world.get(f"/api/v2/repos/owner/{repo}/audit", headers=headers)
            api_status = answer.status
            async with await signed_in(world, db, settings, caller) as browser:
                status, html = await browser.get(f"/owner/{repo}/audit")
                _, missing = await browser.get("/owner/no-such-repo/audit")
            assert status == api_status, (repo, caller, status, api_status)
            assert "<html" in html
            if status == 200:
                assert ("owner", "release.created", f"owner/{repo}@v2.0.0") in _rows(html)
                continue
            assert "v2.0.0" not in html and "crashes on start" not in html, (repo, caller)
            assert "release.created" not in html and "Audit log" not in html, (repo, caller)
            if status == 404:  # the very page a repository that does not exist gets
                assert _scrubbed(html) == _scrubbed(missing).replace("no-such-repo", repo)


async def test_admins_read_every_entry_with_its_reason_and_no_secret(
    world: Any, db: Any, settings: Any
) -> None:
    secret = await _story(world, "owner/pub")
    async with await signed_in(world, db, settings, "repoadmin") as browser:
        status, html = await browser.get("/owner/pub/audit")
    assert status == 200
    rows = _rows(html)
    assert rows[:4] == [
        ("owner", "update_key.created", "owner/pub"),
        ("writer", "release.withdrawn", "owner/pub@v2.0.0"),
        ("owner", "release.published", "owner/pub@v2.0.0"),
        ("owner", "release.created", "owner/pub@v2.0.0"),
    ]
    assert "<code>withdrawn_reason</code>:  → crashes on start" in html.replace("none", "")
    assert '<td class="source">api' in html and "4 entries" in html
    stored = await db.fetchval("SELECT string_agg(changes::text, ' ') FROM core.audit_log")
    for text in (stored, html):
        assert secret not in text and secret[-8:] not in text  # never stored, so never shown
    assert "desktop" in html  # the key is named by its name


async def test_filtered_by_kind_and_actor_and_paged_like_the_api(
    world: Any, db: Any, settings: Any
) -> None:
    await _story(world, "owner/pub")
    for n in range(3):
        await world.post(api("owner/pub"), json={"tag_name": f"v4.{n}.0"}, headers=auth("writer"))
    async with await signed_in(world, db, settings, "owner") as browser:
        _, withdrawn = await browser.get("/owner/pub/audit?kind=release.withdrawn")
        _, releases = await browser.get("/owner/pub/audit?kind=release&actor=WRITER")
        _, first = await browser.get("/owner/pub/audit?limit=4")
        older = re.search(r'href="([^"]+)" rel="next"', first)
        assert older is not None
        _, second = await browser.get(older.group(1).replace("&amp;", "&"))
        _, empty = await browser.get("/owner/pub/audit?actor=nobody")
        bad_status, bad = await browser.get("/owner/pub/audit?since=yesterday")
    assert [kind for _, kind, _ in _rows(withdrawn)] == ["release.withdrawn"]
    assert {actor for actor, _, _ in _rows(releases)} == {"writer"}
    assert len(_rows(releases)) == 7  # withdrawn, then three releases created and published
    assert 'value="release"' in releases and 'value="WRITER"' in releases  # the form keeps them
    api_page = await (
        await world.get("/api/v2/repos/owner/pub/audit?limit=4", headers=auth("owner"))
    ).json()
    assert [(e["actor"], e["kind"], e["target"]) for e in api_page] == _rows(first)
    assert "10 entries" in first and "page 1 of 3" in first
    assert len(_rows(second)) == 4 and set(_rows(second)).isdisjoint(_rows(first))
    assert 'rel="prev"' in second
    assert _rows(empty) == [] and "No entries match these filters" in empty
    assert bad_status == 422 and "since" in bad and "<html" in bad


async def test_the_repository_pages_link_it_for_admins_only(
    world: Any, db: Any, settings: Any
) -> None:
    for caller, linked in (("repoadmin", True), ("writer", False), ("reader", False)):
        async with await signed_in(world, db, settings, caller) as browser:
            _, releases = await browser.get("/owner/pub/releases")
            _, repo_page = await browser.get("/owner/pub")
        for html in (releases, repo_page):
            assert ('href="http' in html) and (("/owner/pub/audit" in html) == linked), caller
    async with await signed_in(world, db, settings, "repoadmin") as browser:
        _, settings_page = await browser.get("/owner/pub/settings")
    assert 'href="/owner/pub/audit">Audit log</a>' in settings_page
