"""`forge release publish` end to end: the real `forge` command (a subprocess) against a running
releases server on 127.0.0.1, then the update check and the download over HTTP
(docs/cli-and-world.md).

Also: re-running is safe (only missing files are uploaded, identical ones skipped), a file that
differs from an existing asset is refused before anything is uploaded, and clear messages with a
non-zero exit for a bad token, a missing repository, an unreachable server and a missing file.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from forge_common.accounts import tokens
from forge_common.accounts.users import user_by_name
from forge_common.cli import build_parser
from forge_common.config import Settings
from forge_common.service import installed_services
from forge_releases.service import create_app
from forge_testing.ports import free_port

from .publish_support import TOKENS, api, forge_release, outbox, publish_world


@pytest.fixture
async def server(settings: Settings, aiohttp_server: Any, load: Any) -> TestServer:
    await load(publish_world())
    result: TestServer = await aiohttp_server(create_app(settings), host="127.0.0.1")
    return result


async def forge(*args: str | Path, url: str, token: str | None = TOKENS["writer"]) -> Any:
    """Run `forge release publish ...`: (exit status, stdout, stderr)."""
    return await forge_release("publish", *args, url=url, token=token)


def write(path: Path, size: int, seed: bytes) -> Path:
    block = hashlib.sha512(seed).digest() * 1024
    path.write_bytes((block * (size // len(block) + 1))[:size])
    return path


async def test_publish_then_update_check_and_download_match(
    server: TestServer, tmp_path: Path, db: Any
) -> None:
    url = str(server.make_url("/"))
    mac = write(tmp_path / "App-1.2.0-arm64.zip", 3 * 1024 * 1024 + 7, b"mac")
    linux = write(tmp_path / "App-1.2.0.AppImage", 200_000, b"linux")
    notes = tmp_path / "notes.md"
    notes.write_text("## Fixed\n- everything\n", encoding="utf-8")

    code, out, err = await forge(
        "owner/pub", "v1.2.0", mac, linux, "--title", "One two", "--notes-file", notes, url=url
    )
    assert code == 0, err
    # not a terminal: no progress bar noise; only the true warning that the spec's `.zip`
    # fallback hands the only (arm64) zip to Intel Macs too (cli/arch_warnings.py)
    assert err.splitlines() == [
        "forge: warning: the update check (?platform=darwin&arch=x64) would send "
        "App-1.2.0-arm64.zip: rename it with a suffix of docs/releases.md's table"
    ]
    assert "uploaded App-1.2.0-arm64.zip" in out and "uploaded App-1.2.0.AppImage" in out
    assert "http://forge.test/owner/pub/releases/tag/v1.2.0" in out

    async with aiohttp.ClientSession() as http:
        check = f"{api('owner/pub')}/update?version=1.0.0&platform=darwin&arch=arm64"
        async with http.get(server.make_url(check)) as resp:
            assert resp.status == 200
            update = await resp.json()
        assert update["name"] == "v1.2.0" and update["notes"] == "## Fixed\n- everything\n"
        assert update["platform"]["size"] == mac.stat().st_size
        async with http.get(server.make_url(urlsplit(update["url"]).path)) as resp:
            downloaded = await resp.read()
        assert hashlib.sha256(downloaded).digest() == hashlib.sha256(mac.read_bytes()).digest()
        async with http.get(server.make_url(f"{api('owner/pub')}/v1.2.0")) as resp:
            release = await resp.json()
        assert release["name"] == "One two" and release["draft"] is False

    # the updaters never saw a release without its files: it was a draft until they were up
    types = [e["type"] for e in await outbox(db)]
    assert types == [
        "release.created",
        "release.asset.uploaded",
        "release.asset.uploaded",
        "release.published",  # with the update that ends the draft, in one transaction
        "release.updated",
    ]

    # re-run: nothing to do
    code, out, err = await forge("owner/pub", "v1.2.0", mac, linux, url=url)
    assert code == 0, err
    assert "skipped App-1.2.0-arm64.zip" in out and "skipped App-1.2.0.AppImage" in out
    assert len(await outbox(db)) == len(types)

    # a new file: only it is uploaded
    windows = write(tmp_path / "App-Setup-1.2.0.exe", 1000, b"win")
    code, out, err = await forge("owner/pub", "v1.2.0", mac, linux, windows, url=url)
    assert code == 0, err
    assert "uploaded App-Setup-1.2.0.exe" in out and "uploaded App-1.2.0" not in out
    assert [e["type"] for e in await outbox(db)][len(types) :] == ["release.asset.uploaded"]

    # the same name with other bytes: refused, nothing uploaded
    events = len(await outbox(db))
    write(linux, 200_000, b"linux, rebuilt")
    extra = write(tmp_path / "extra.txt", 10, b"x")
    code, out, err = await forge("owner/pub", "v1.2.0", extra, linux, url=url)
    assert code == 1
    assert "App-1.2.0.AppImage" in err and "different content" in err and "delete" in err
    assert len(await outbox(db)) == events


async def test_draft_and_prerelease_flags(server: TestServer, tmp_path: Path, db: Any) -> None:
    url = str(server.make_url("/"))
    f = write(tmp_path / "a.zip", 10, b"a")
    code, _, err = await forge("owner/pub", "v3.0.0-rc.1", f, "--draft", "--prerelease", url=url)
    assert code == 0, err
    row = await db.fetchrow(
        "SELECT draft, prerelease, title FROM releases.releases WHERE tag = 'v3.0.0-rc.1'"
    )
    assert (row["draft"], row["prerelease"], row["title"]) == (True, True, "v3.0.0-rc.1")
    # re-running without --draft finishes the job: the draft is published
    code, out, err = await forge("owner/pub", "v3.0.0-rc.1", f, url=url)
    assert code == 0, err
    assert "published" in out
    assert (
        await db.fetchval("SELECT draft FROM releases.releases WHERE tag = 'v3.0.0-rc.1'") is False
    )


async def test_existing_release_gets_only_missing_assets(
    server: TestServer, tmp_path: Path
) -> None:
    """The world's v1.0.0 has App-1.0.0-x64.zip with the bytes `one`."""
    url = str(server.make_url("/"))
    same = tmp_path / "App-1.0.0-x64.zip"
    same.write_bytes(b"one")
    new = write(tmp_path / "App-1.0.0-arm64.zip", 100, b"arm")
    code, out, err = await forge("owner/pub", "v1.0.0", same, new, url=url)
    assert code == 0, err
    assert "skipped App-1.0.0-x64.zip" in out and "uploaded App-1.0.0-arm64.zip" in out
    assert "created release" not in out


async def test_tags_with_a_slash_and_numeric_tags(server: TestServer, tmp_path: Path) -> None:
    url = str(server.make_url("/"))
    f = write(tmp_path / "a.zip", 10, b"a")
    for tag in ("app/v2.0.0", "2024"):
        for _ in range(2):  # the second run finds the release and skips the file
            code, out, err = await forge("owner/pub", tag, f, url=url)
            assert code == 0, err
        assert "skipped a.zip" in out


async def publish_in_process(
    capsys: pytest.CaptureFixture[str], *args: Any, url: str, token: str | None = TOKENS["writer"]
) -> tuple[int, str, str]:
    """`forge release publish` through the real parser and handler, without a new interpreter
    (the command runs its own event loop, so in a thread)."""
    env = {"FORGE_URL": url} | ({"FORGE_TOKEN": token} if token is not None else {})
    parsed = build_parser(installed_services()).parse_args(["release", "publish", *map(str, args)])
    code = await asyncio.to_thread(parsed.handler, parsed, env)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_clear_errors_and_exit_status(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(server.make_url("/"))
    f = write(tmp_path / "a.zip", 10, b"a")
    cases: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        (("owner/pub", "v5", f), {"token": "wrong"}, "did not accept FORGE_TOKEN"),
        (("owner/pub", "v5", f), {"token": None}, "FORGE_TOKEN is not set"),
        (("owner/nope", "v5", f), {}, "repository owner/nope not found"),
        (("owner/priv", "v5", f), {"token": TOKENS["stranger"]}, "not found"),
        (("owner/pub", "v5", f), {"token": TOKENS["reader"]}, "no permission"),
        (("owner/pub", "v5", tmp_path / "missing.zip"), {}, "missing.zip: no such file"),
        (("ownerpub", "v5", f), {}, "is not OWNER/REPO"),
        (("owner/pub", "bad tag", f), {}, "tag_name"),
        (("owner/pub", "v5", f, f), {}, "two files are named a.zip"),
        (("owner/pub", "v5", f, "--notes-file", tmp_path / "nope.md"), {}, "cannot read"),
        (("owner/pub", "v5", f), {"url": f"http://127.0.0.1:{free_port()}/"}, "cannot reach"),
    ]
    for args, options, message in cases:
        code, out, err = await publish_in_process(capsys, *args, **{"url": url, **options})
        assert code == 1, (args, out, err)
        assert message in err, (args, err)
        assert err.startswith("forge: ") and "Traceback" not in err
    # the same through the installed command: an unreachable server
    code, _, err = await forge("owner/pub", "v5", f, url=f"http://127.0.0.1:{free_port()}/")
    assert code == 1 and "cannot reach the server" in err


async def test_upload_over_the_server_limit_is_reported(
    settings: Settings, aiohttp_server: Any, load: Any, tmp_path: Path
) -> None:
    await load(publish_world())
    app = create_app(replace(settings, max_upload_bytes=1000))
    server = await aiohttp_server(app, host="127.0.0.1")
    big = write(tmp_path / "big.zip", 5000, b"big")
    code, _, err = await forge("owner/pub", "v6", big, url=str(server.make_url("/")))
    assert code == 1
    assert "big.zip" in err and "upload limit" in err


async def test_a_proxy_error_page_is_reported_not_a_traceback(
    aiohttp_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Something that is not our API answers (a proxy's error page, broken JSON)."""

    async def bad_gateway(request: web.Request) -> web.Response:
        return web.Response(status=502, text="<html>Bad gateway</html>", content_type="text/html")

    async def broken_json(request: web.Request) -> web.Response:
        return web.Response(status=200, text="{not json", content_type="application/json")

    f = write(tmp_path / "a.zip", 10, b"a")
    for handler, message in [(bad_gateway, "HTTP 502"), (broken_json, "HTTP 200")]:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        server = await aiohttp_server(app, host="127.0.0.1")
        code, _, err = await publish_in_process(
            capsys, "owner/pub", "v5", f, url=str(server.make_url("/"))
        )
        assert code == 1 and message in err and "Traceback" not in err, err


async def test_rollout_flag_stages_and_raises(server: TestServer, tmp_path: Path) -> None:
    url = str(server.make_url("/"))
    app = write(tmp_path / "App-3.0.0-x86_64.AppImage", 1000, b"staged")
    feed = server.make_url(f"{api('owner/pub')}/feeds/electron/latest-linux.yml")

    async def staging() -> Any:
        async with aiohttp.ClientSession() as http, http.get(feed) as resp:
            return (await resp.json(content_type=None)).get("stagingPercentage")

    assert (await forge("owner/pub", "v3.0.0", app, "--rollout", "20", url=url))[0] == 0
    assert await staging() == 20
    code, out, _ = await forge("owner/pub", "v3.0.0", app, "--rollout", "70", url=url)
    assert code == 0 and "now rolls out to 70%" in out
    assert await staging() == 70
    code, _, err = await forge("owner/pub", "v3.0.0", app, "--rollout", "0", url=url)
    assert code == 2 and "--rollout" in err  # argparse: 1 to 100 only


@pytest.mark.parametrize("scopes", [("read:user",), ("read:repository",)])
async def test_a_token_without_the_scope_is_told_the_scope_publishing_needs(
    server: TestServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    db: Any,
    scopes: tuple[str, ...],
) -> None:
    """The server refuses the first request the token may not make (a look-up needs only
    `read:repository`); the command names the scope publishing needs, not that one."""
    user = await user_by_name(db, "writer")
    assert user is not None
    made = await tokens.create_token(db, user.id, "narrow", scopes)
    assert made is not None
    url = str(server.make_url("/"))
    f = write(tmp_path / "a.zip", 10, b"a")
    code, _, err = await publish_in_process(capsys, "owner/pub", "v5", f, url=url, token=made[1])
    assert code == 1 and "publishing needs a token with the write:release scope" in err, err
    assert "[read:repository]" not in err
