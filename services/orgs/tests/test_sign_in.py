"""Browser sign-in (docs/accounts.md): sessions, CSRF, throttling, return addresses, sign-out,
against the real database through the orgs service's routes."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from typing import Any

import pytest
from forge_common.accounts import passwords, sign_in_throttle
from forge_orgs.service import create_app
from forge_testing.browser import Browser, csrf_of

ORIGIN = "http://forge.test"
PASSWORDS = {"olive": "olive-password", "mia": "mia-password-1"}


def world() -> dict[str, Any]:
    return {
        "users": [
            {"name": "olive", "password": PASSWORDS["olive"], "tokens": ["olive-token"]},
            {"name": "mia", "password": PASSWORDS["mia"]},
            {"name": "stan", "tokens": ["stan-token"]},
        ],
        "orgs": [
            {
                "name": "priv",
                "visibility": "private",
                "members": [{"user": "olive", "owner": True, "public": True}],
            }
        ],
        "repos": [{"owner": "priv", "name": "vault", "private": True}],
    }


@pytest.fixture
async def server(aiohttp_client: Any, settings: Any, load: Any) -> Any:
    await load(world())
    return await aiohttp_client(create_app(settings))


@pytest.fixture
async def browser(server: Any) -> Any:
    async with Browser(server.make_url("/"), origin=ORIGIN) as b:
        yield b


async def test_sign_in_starts_a_session_stored_only_as_a_digest(server, browser, db):
    status, html = await browser.get("/user/login")
    assert status == 200 and 'name="user_name"' in html and 'name="password"' in html
    assert csrf_of(html)
    reply = await browser.sign_in("olive", PASSWORDS["olive"])
    assert reply.status == 303 and reply.headers["Location"] == "/"
    cookie = reply.cookies["forge_session"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/"
    assert not cookie["secure"]  # APP_URL is http here
    secret = cookie.value
    rows = await db.fetch("SELECT id_sha256 FROM core.sessions")
    assert [bytes(r["id_sha256"]) for r in rows] == [hashlib.sha256(secret.encode()).digest()]
    status, html = await browser.get("/priv")  # a private org: only its members see it
    assert status == 200 and ">olive</a>" in html and "Sign out" in html


async def test_the_cookies_are_secure_and_host_prefixed_under_https(aiohttp_client, settings, load):
    await load(world())
    client = await aiohttp_client(
        create_app(dataclasses.replace(settings, app_url="https://forge.test/"))
    )
    form = await client.get("/user/login")
    pre = form.cookies["__Host-forge_presession"]
    assert pre["secure"] and pre["httponly"] and pre["samesite"] == "Strict"
    data = {
        "_csrf": csrf_of(await form.text()),
        "user_name": "olive",
        "password": PASSWORDS["olive"],
    }
    # the test client speaks plain http, so it would not send a Secure cookie back by itself
    client.session.cookie_jar.clear()
    headers = {"Origin": "https://forge.test", "Cookie": f"__Host-forge_presession={pre.value}"}
    reply = await client.post("/user/login", data=data, headers=headers, allow_redirects=False)
    assert reply.status == 303
    cookie = reply.cookies["__Host-forge_session"]
    assert cookie["secure"] and cookie["httponly"] and cookie["path"] == "/"
    assert not cookie["domain"]


async def test_a_new_session_id_at_every_sign_in(server, browser, db):
    await browser.sign_in("olive", PASSWORDS["olive"])
    first = browser.cookie("forge_session")
    # signed in, the sign-in page sends the visitor on; a form bound to the session still works
    assert (await browser.get("/user/login?redirect_to=/priv"))[0] == 303
    _, html = await browser.get("/priv")
    data = {"user_name": "olive", "password": PASSWORDS["olive"]}
    assert (await browser.submit("/user/login", data, page=html)).status == 303
    second = browser.cookie("forge_session")
    assert first and second and first != second
    assert await db.fetchval("SELECT count(*) FROM core.sessions") == 1  # the old one ended


async def test_a_planted_session_id_is_never_adopted(server, browser, db):
    browser.session.cookie_jar.update_cookies({"forge_session": "planted-by-an-attacker"})
    reply = await browser.sign_in("olive", PASSWORDS["olive"])
    assert reply.cookies["forge_session"].value != "planted-by-an-attacker"
    planted = hashlib.sha256(b"planted-by-an-attacker").digest()
    assert not await db.fetchval("SELECT count(*) FROM core.sessions WHERE id_sha256 = $1", planted)


@pytest.mark.parametrize("name", ["olive", "nobody-here"])
async def test_a_wrong_password_and_a_missing_account_answer_alike(server, browser, name):
    reply = await browser.sign_in(name, "wrong-password")
    assert reply.status == 200 and "Wrong user name or password." in await reply.text()
    assert browser.cookie("forge_session") is None


async def _failures(browser: Browser, name: str, count: int) -> list[Any]:
    return [await browser.sign_in(name, "wrong-password") for _ in range(count)]


@pytest.mark.parametrize("name", ["olive", "nobody-here"])
async def test_sign_in_is_throttled_per_account_alike_for_missing_ones(server, browser, name):
    replies = await _failures(browser, name, sign_in_throttle.PAIR_LIMIT + 1)
    assert [r.status for r in replies[:-1]] == [200] * sign_in_throttle.PAIR_LIMIT
    last = replies[-1]
    assert last.status == 429 and 1 <= int(last.headers["Retry-After"]) <= 30
    # the sign-in page itself says how long to wait, in the words of its Retry-After
    wait = int(last.headers["Retry-After"])
    assert f"try again in {wait} second" in await last.text()
    # even the right password is refused while blocked: no password is checked at all
    assert (await browser.sign_in(name, PASSWORDS.get(name, "x" * 12))).status == 429


async def test_parallel_guesses_are_all_counted(server, browser):
    _, html = await browser.get("/user/login")
    data = {"_csrf": csrf_of(html), "user_name": "olive", "password": "wrong-password"}
    replies = await asyncio.gather(*(browser.post("/user/login", data) for _ in range(12)))
    statuses = sorted(r.status for r in replies)
    assert statuses.count(200) == sign_in_throttle.PAIR_LIMIT and statuses.count(429) == 7


async def test_sign_in_is_throttled_per_address(server, browser):
    names = [f"name{i}" for i in range(sign_in_throttle.ADDRESS_LIMIT)]
    for name in names:
        assert (await browser.sign_in(name, "wrong-password")).status == 200
    assert (await browser.sign_in("olive", PASSWORDS["olive"])).status == 429


async def test_a_success_clears_the_account_count(server, browser, db):
    await _failures(browser, "olive", sign_in_throttle.PAIR_LIMIT - 1)
    assert (await browser.sign_in("olive", PASSWORDS["olive"])).status == 303
    key = sign_in_throttle.pair_key("olive", "127.0.0.1")
    assert await db.fetchval("SELECT count(*) FROM core.sign_in_attempts WHERE key = $1", key) == 0


@pytest.mark.parametrize(
    ("origin", "extra"),
    [
        ("http://evil.test", {}),
        ("null", {}),
        ("", {}),  # no Origin and no Referer
        (ORIGIN, {"Sec-Fetch-Site": "cross-site"}),
    ],
)
async def test_a_cross_site_sign_in_post_is_refused(server, browser, origin, extra):
    _, html = await browser.get("/user/login")
    data = {"_csrf": csrf_of(html), "user_name": "olive", "password": PASSWORDS["olive"]}
    reply = await browser.post("/user/login", data, origin=origin, headers=extra)
    assert reply.status == 403 and reply.headers["Content-Type"].startswith("text/html")
    assert browser.cookie("forge_session") is None


@pytest.mark.parametrize("token", ["", "0" * 64, "forged"])
async def test_a_sign_in_post_without_its_token_is_refused(server, browser, token):
    await browser.get("/user/login")
    data = {"_csrf": token, "user_name": "olive", "password": PASSWORDS["olive"]}
    assert (await browser.post("/user/login", data)).status == 403


async def test_a_referer_of_this_site_stands_for_a_missing_origin(server, browser):
    _, html = await browser.get("/user/login")
    data = {"_csrf": csrf_of(html), "user_name": "olive", "password": PASSWORDS["olive"]}
    headers = {"Referer": f"{ORIGIN}/user/login"}
    async with browser.session.post(
        browser.url("/user/login"), data=data, headers=headers, allow_redirects=False
    ) as reply:
        assert reply.status == 303


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("/priv", "/priv"),
        ("/priv/vault/releases?page=2", "/priv/vault/releases?page=2"),
        ("https://evil.test/", "/"),
        ("//evil.test/", "/"),
        ("/\\evil.test/", "/"),
        ("/%2F%2Fevil.test", "/%2F%2Fevil.test"),  # a path of ours, however odd
        ("javascript:alert(1)", "/"),
        ("/ok\r\nSet-Cookie: x=1", "/"),
        ("\t//evil.test", "/"),
        ("http:/evil.test", "/"),
        ("/user/login?redirect_to=//evil.test", "/"),
        ("", "/"),
        # credentials never become part of a return address, in any letter case
        ("/priv/vault?key=forge_uk_secret", "/priv/vault"),
        ("/priv/vault/releases?page=2&KEY=forge_uk_secret", "/priv/vault/releases?page=2"),
        ("/priv/vault?key_id=1&expires=9&signature=abc&channel=beta", "/priv/vault?channel=beta"),
        ("/priv?token=t&access_token=t&private_token=t", "/priv"),
    ],
)
async def test_the_return_address_is_only_ever_a_path_of_this_server(
    server, browser, given, expected
):
    reply = await browser.sign_in("olive", PASSWORDS["olive"], redirect_to=given)
    assert reply.status == 303 and reply.headers["Location"] == expected


async def test_the_401_page_links_to_the_sign_in_and_back(server, browser):
    # a signed-in stranger would get 404; anonymous gets the sign-in link with a return address
    status, html = await browser.get("/user/settings/applications")
    assert status == 401
    assert 'href="/user/login?redirect_to=/user/settings/applications"' in html


async def test_sign_out_ends_the_session_on_the_server(server, browser, db):
    await browser.sign_in("olive", PASSWORDS["olive"])
    secret = browser.cookie("forge_session")
    _, html = await browser.get("/priv")
    reply = await browser.submit("/user/logout", {}, page=html)
    assert reply.status == 303 and reply.headers["Location"] == "/"
    assert reply.headers["Clear-Site-Data"] == '"cache"'
    assert reply.cookies["forge_session"].value == ""  # the cookie is cleared too
    assert await db.fetchval("SELECT count(*) FROM core.sessions") == 0
    # the old cookie, replayed, is nobody
    async with Browser(server.make_url("/"), origin=ORIGIN) as replay:
        replay.session.cookie_jar.update_cookies({"forge_session": secret})
        assert (await replay.get("/priv"))[0] == 404


async def test_sign_out_needs_the_session_token(server, browser, db):
    await browser.sign_in("olive", PASSWORDS["olive"])
    reply = await browser.post("/user/logout", {"_csrf": "forged"})
    assert reply.status == 403
    assert await db.fetchval("SELECT count(*) FROM core.sessions") == 1


@pytest.mark.parametrize(
    "lapse",
    [
        "last_seen_at = now() - interval '2 hours'",  # idle past SESSION_IDLE_SECONDS
        "created_at = now() - interval '13 hours'",  # past SESSION_ABSOLUTE_SECONDS
    ],
)
async def test_a_lapsed_session_is_nobody(server, browser, db, lapse):
    await browser.sign_in("olive", PASSWORDS["olive"])
    assert (await browser.get("/priv"))[0] == 200
    await db.execute(f"UPDATE core.sessions SET {lapse}")
    assert (await browser.get("/priv"))[0] == 404


async def test_a_page_view_restarts_the_idle_clock(server, browser, db):
    await browser.sign_in("olive", PASSWORDS["olive"])
    await db.execute("UPDATE core.sessions SET last_seen_at = now() - interval '30 minutes'")
    assert (await browser.get("/priv"))[0] == 200
    assert await db.fetchval("SELECT last_seen_at > now() - interval '1 minute' FROM core.sessions")


async def test_the_api_never_accepts_the_session_cookie(server, browser):
    await browser.sign_in("olive", PASSWORDS["olive"])
    status, _ = await browser.get("/api/v1/orgs/priv/overview")
    assert status == 404  # anonymous to the API: a private org does not exist
    status, _ = await browser.get(
        "/api/v1/orgs/priv/overview", headers={"Authorization": "token olive-token"}
    )
    assert status == 200


async def test_a_token_on_a_page_wins_over_a_session(server, browser):
    await browser.sign_in("olive", PASSWORDS["olive"])
    status, _ = await browser.get("/priv", headers={"Authorization": "token stan-token"})
    assert status == 404


async def test_successful_sign_ins_never_block_their_address(server, browser):
    for _ in range(sign_in_throttle.ADDRESS_LIMIT + 2):
        assert (await browser.sign_in("mia", PASSWORDS["mia"])).status == 303
        browser.session.cookie_jar.clear()


async def test_sessions_and_sign_in_counts_are_shared_by_replicas(aiohttp_client, settings, load):
    await load(world())
    first = await aiohttp_client(create_app(settings))
    second = await aiohttp_client(create_app(settings))
    async with Browser(first.make_url("/"), origin=ORIGIN) as browser:
        await browser.sign_in("olive", PASSWORDS["olive"])
        browser.base = second.make_url("/")  # the next request lands on another replica
        status, html = await browser.get("/priv")
        assert status == 200
        await browser.submit("/user/logout", {}, page=html)
        browser.base = first.make_url("/")
        assert (await browser.get("/priv"))[0] == 404  # ended everywhere
        # failures on one replica count on the other
        for replica in (first, second) * 3:
            browser.base = replica.make_url("/")
            last = await browser.sign_in("mia", "wrong-password")
        assert last.status == 429


async def test_signing_out_of_a_lapsed_session_just_goes_home(server, browser, db):
    await browser.sign_in("olive", PASSWORDS["olive"])
    _, html = await browser.get("/priv")
    await db.execute("DELETE FROM core.sessions")
    reply = await browser.submit("/user/logout", {}, page=html)
    assert reply.status == 303 and reply.headers["Location"] == "/"


async def test_a_missing_account_costs_the_same_argon2_work_as_a_wrong_password(
    server, browser, monkeypatch
):
    """The same answer in the same time: every attempt that is not refused verifies one argon2
    hash (a dummy one for a name nobody has), and a refused one verifies none, either way."""
    calls: list[str] = []

    class Counting:
        """forge_common.accounts.passwords' hasher, counting its verifications."""

        def __init__(self, real: Any) -> None:
            self.real = real

        def verify(self, stored: str, password: str) -> bool:
            calls.append(stored)
            return bool(self.real.verify(stored, password))

    monkeypatch.setattr(passwords, "_HASHER", Counting(passwords._HASHER))
    for name in ("olive", "nobody-here"):
        calls.clear()
        reply = await browser.sign_in(name, "wrong-password")
        assert reply.status == 200 and len(calls) == 1 and calls[0].startswith("$argon2id$")
    for name in ("olive", "nobody-here"):
        await _failures(browser, name, sign_in_throttle.PAIR_LIMIT)
        calls.clear()
        assert (await browser.sign_in(name, "wrong-password")).status == 429
        assert calls == []
