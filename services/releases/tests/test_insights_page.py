"""The insights page (docs/insights.md "Page"): charts as SVG made on the server with their
tables, no script, for admins and publishers only (the page of a missing repository to others)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from .test_insights_api import ALLOWED, REPOS, Client, answer, client, counted, headers

__all__ = ["client"]  # the fixture, shared
OFFER = b'{"name":"v1.0.0"}'


async def test_page_draws_each_chart_with_its_table(client: Client) -> None:
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    await counted(client, today - timedelta(days=1), ("version=0.9.0&platform=darwin", OFFER, 4))
    await counted(client, today, ("version=1.0.0&platform=windows&arch=arm64", b"", 6))
    resp = await client.get("/owner/pub/insights", headers=headers("writer"))
    assert resp.status == 200
    html = await resp.text()
    assert "<script" not in html
    assert "script-src" not in resp.headers["Content-Security-Policy"]
    for chart in ("versions", "uptake", "offers", "platforms", "archs"):
        assert f'id="{chart}-title"' in html, chart
    # downloads: nothing counted, no chart; each other chart drawn for a desktop and a phone
    assert html.count('role="img"') == 10
    assert html.count('<div class="chart-narrow">') == 5
    assert "Nothing counted in this period." in html
    table = re.search(r'<table id="versions-table">.*?</table>', html, re.S)
    assert table is not None
    day = today.date().isoformat()
    row = re.search(rf'<th scope="row">{day}</th>(.*?)</tr>', table.group(0), re.S)
    assert row is not None and re.findall(r">(\d+)<", row.group(1)) == ["6", "0"]
    assert "16 update checks" not in html and "10 update checks" in html


@pytest.mark.parametrize("caller", ["anonymous", "stranger", "reader", "member"])
async def test_page_is_missing_for_everyone_else(client: Client, caller: str) -> None:
    for repo, (owner, *_) in REPOS.items():
        assert repo not in ALLOWED[caller]
        got = _without_return_address(await answer(client, f"/{owner}/{repo}/insights", caller))
        missing = await answer(client, f"/{owner}/no-such-repo/insights", caller)
        assert got == _without_return_address(missing)
        assert got[0] == 404


def _without_return_address(
    got: tuple[int, dict[str, str], bytes],
) -> tuple[int, dict[str, str], bytes]:
    """The page's sign-in link returns to the path asked for, whatever that path names: the one
    difference a visitor already knows."""
    status, kept, body = got
    return status, kept, re.sub(rb'redirect_to=[^"]*', b"", body)


async def test_bad_period_is_a_400_page(client: Client) -> None:
    resp = await client.get("/owner/pub/insights?from=junk", headers=headers("owner"))
    assert resp.status == 400
    assert "from must be a date" in await resp.text()
