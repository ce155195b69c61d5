"""What an attacker tries against sign-in, passwords and sessions (docs/accounts.md): names that
fold or look like another, passwords longer than any can be, guessing through the password-change
form, sessions that outlive an administrator's password reset, strangers locking out an account
from many addresses, and two owners removed at once."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from typing import Any

import pytest
from forge_common.accounts import passwords, sign_in_throttle
from forge_common.cli import main
from forge_orgs.service import create_app
from forge_testing.browser import Browser

ORIGIN = "http://forge.test"
PASSWORD = "olive-password"
LONGEST = "p" * passwords.MAX_LENGTH
ORGS = 6  # organizations with two owners each, for the concurrent removals


def world() -> dict[str, Any]:
    owners = [{"user": "olive", "owner": True}, {"user": "mia", "owner": True}]
    return {
        "users": [
            {"name": "olive", "password": PASSWORD, "tokens": ["olive-token"]},
            {"name": "mia", "password": "mia-password", "tokens": ["mia-token"]},
            {"name": "long", "password": LONGEST},
            {"name": "ada", "admin": True, "tokens": ["ada-token"]},
        ],
        "orgs": [{"name": f"two{i}", "members": owners} for i in range(ORGS)],
    }


@pytest.fixture
async def server(aiohttp_client: Any, settings: Any, load: Any) -> Any:
    await load(world())
    # the test client is the one proxy: X-Forwarded-For names each request's client
    behind = dataclasses.replace(settings, trusted_proxies=_loopback())
    return await aiohttp_client(create_app(behind))


def _loopback() -> tuple[Any, ...]:
    from ipaddress import ip_network

    return (ip_network("127.0.0.0/8"), ip_network("::1/128"))


class From(Browser):
    """A browser at a client address of its own (the X-Forwarded-For the proxy would send)."""

    def __init__(self, server: Any, address: str) -> None:
        super().__init__(server.make_url("/"), origin=ORIGIN)
        self.address = address

    async def get(self, path: str, **kw: Any) -> tuple[int, str]:
        return await super().get(path, headers={"X-Forwarded-For": self.address}, **kw)

    async def post(self, path: str, data: Any, **kw: Any) -> Any:
        headers = {"X-Forwarded-For": self.address, **(kw.pop("headers", None) or {})}
        return await super().post(path, data, headers=headers, **kw)


def basic(name: str, password: str) -> dict[str, str]:
    encoded = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


async def _block(browser: Browser, name: str) -> None:
    for _ in range(sign_in_throttle.PAIR_LIMIT):
        assert (await browser.sign_in(name, "wrong-password")).status == 200
    assert (await browser.sign_in(name, "wrong-password")).status == 429


# --- one normalisation of names ---


async def test_a_folded_or_look_alike_name_is_counted_as_the_name_and_signs_in_as_nobody(
    server: Any,
) -> None:
    """`olİve` (U+0130, which PostgreSQL's lower() folds to `olive`) signs in as nobody, before
    and after `olive` is throttled; upper case and fullwidth look-alikes share olive's count."""
    async with From(server, "203.0.113.5") as browser:
        dotted = "ol\u0130ve"
        assert (await browser.sign_in(dotted, PASSWORD)).status == 200  # "Wrong user name ..."
        assert (await server.get("/api/v1/user", headers=basic(dotted, PASSWORD))).status == 401
        await _block(browser, "olive")
        for look_alike in ("OLIVE", " Olive", "\uff4f\uff4c\uff49\uff56\uff45"):  # ｏｌｉｖｅ
            assert (await browser.sign_in(look_alike, PASSWORD)).status == 429, look_alike
        assert (await browser.sign_in(dotted, PASSWORD)).status != 303
    async with From(server, "203.0.113.6") as elsewhere:  # the owner, elsewhere: not locked out
        assert (await elsewhere.sign_in("olive", PASSWORD)).status == 303


# --- passwords longer than any can be ---


async def test_a_password_longer_than_the_limit_is_refused_never_cut(server: Any) -> None:
    async with From(server, "203.0.113.7") as browser:
        longer = await browser.sign_in("long", LONGEST + "anything")
        assert longer.status == 422
        assert f"at most {passwords.MAX_LENGTH} characters" in await longer.text()
        api = await server.get("/api/v1/user", headers=basic("long", LONGEST + "x"))
        assert api.status == 401
        assert (await api.json())["message"] == (
            f"password must be at most {passwords.MAX_LENGTH} characters"
        )
        assert (await browser.sign_in("long", LONGEST)).status == 303  # the longest one is fine
        _, page = await browser.get("/user/settings/account")
        form = {"old_password": LONGEST + "x", "password": "new-password", "retype": "new-password"}
        changed = await browser.submit("/user/settings/account", form, page=page)
        assert changed.status == 422
    made = await server.post(
        "/api/v1/admin/users",
        json={"username": "longer", "email": "l@example.com", "password": LONGEST + "x"},
        headers={"Authorization": "token ada-token"},
    )
    assert made.status == 400


# --- the password-change form is a password check like a sign-in ---


async def test_the_password_change_form_is_throttled(server: Any) -> None:
    async with From(server, "203.0.113.8") as browser:
        assert (await browser.sign_in("olive", PASSWORD)).status == 303
        _, page = await browser.get("/user/settings/account")
        form = {"old_password": "wrong-guess", "password": "new-password", "retype": "new-password"}
        for _ in range(sign_in_throttle.PAIR_LIMIT):
            assert (await browser.submit("/user/settings/account", form, page=page)).status == 422
        refused = await browser.submit("/user/settings/account", form, page=page)
        assert refused.status == 429
        wait = int(refused.headers["Retry-After"])
        assert 1 <= wait <= sign_in_throttle.FIRST_BLOCK_SECONDS
        assert f"try again in {wait} second" in await refused.text()  # the page says how long
        right = {**form, "old_password": PASSWORD}
        assert (await browser.submit("/user/settings/account", right, page=page)).status == 429


# --- an administrator's password reset ends the user's sessions ---


async def _signed_in(server: Any, browser: Browser) -> bool:
    status, _ = await browser.get("/user/settings/applications")
    return status == 200


async def test_an_admins_password_reset_ends_every_session_of_the_user(
    server: Any, settings: Any
) -> None:
    async with From(server, "203.0.113.9") as first, From(server, "203.0.113.10") as second:
        assert (await first.sign_in("olive", PASSWORD)).status == 303
        assert (await second.sign_in("olive", PASSWORD)).status == 303
        reset = await server.patch(
            "/api/v1/admin/users/olive",
            json={"password": "reset-by-admin"},
            headers={"Authorization": "token ada-token"},
        )
        assert reset.status == 200
        assert not await _signed_in(server, first) and not await _signed_in(server, second)
        # tokens stay (documented): a reset is about the password
        assert (
            await server.get("/api/v1/user", headers={"Authorization": "token olive-token"})
        ).status == 200

        assert (await first.sign_in("olive", "reset-by-admin")).status == 303
        env = {"DATABASE_URL": settings.database_url, "LOG_LEVEL": "WARNING"}
        argv = ["admin", "user", "change-password", "-u", "olive", "-p", "reset-by-cli"]
        assert await asyncio.to_thread(main, argv, env=env) == 0
        assert not await _signed_in(server, first)


# --- strangers cannot lock an account out ---


async def test_a_stranger_at_one_address_locks_out_only_that_address(server: Any) -> None:
    async with From(server, "198.51.100.66") as mallory:
        await _block(mallory, "olive")
        await _block(mallory, "mia")
    for address in ("198.51.100.1", "198.51.100.2"):
        async with From(server, address) as owner:
            assert (await owner.sign_in("olive", PASSWORD)).status == 303


async def test_strangers_at_many_addresses_spend_the_accounts_budget_not_its_owners_access(
    server: Any, monkeypatch: Any
) -> None:
    """Past its budget, an account refuses addresses it has not signed in from; the one its
    owner signs in from keeps working, and the 429 says how long to wait."""
    monkeypatch.setattr(sign_in_throttle, "ACCOUNT_BUDGET", 3)
    async with From(server, "192.0.2.1") as home:
        assert (await home.sign_in("olive", PASSWORD)).status == 303
    for i in range(4):
        async with From(server, f"198.51.100.{100 + i}") as stranger:
            await stranger.sign_in("olive", "wrong-password")
    async with From(server, "198.51.100.200") as new_place:
        refused = await new_place.sign_in("olive", PASSWORD)
        assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    async with From(server, "192.0.2.1") as home:
        assert (await home.sign_in("olive", PASSWORD)).status == 303
    async with From(server, "198.51.100.201") as mia:  # another account: its own budget
        assert (await mia.sign_in("mia", "mia-password")).status == 303


# --- the last owner, under concurrency ---


async def test_two_owners_removed_at_once_leave_one(server: Any, db: Any) -> None:
    """`olive` removes `mia` while `mia` removes `olive`, in every organization at once: one of
    each pair is refused, and every organization keeps an owner."""

    async def remove(org: str, who: str, by: str) -> int:
        reply = await server.delete(
            f"/api/v1/orgs/{org}/members/{who}", headers={"Authorization": f"token {by}-token"}
        )
        return int(reply.status)

    removals = []
    for i in range(ORGS):
        removals += [remove(f"two{i}", "mia", "olive"), remove(f"two{i}", "olive", "mia")]
    statuses = await asyncio.gather(*removals)
    for i in range(ORGS):
        # the other is the last owner now (422), or its caller no longer an owner (403)
        first, second = sorted(statuses[2 * i : 2 * i + 2])
        assert first == 204 and second in (403, 422), statuses
    owners = await db.fetch(
        """SELECT o.name, count(m.user_id) AS owners FROM core.accounts o
             LEFT JOIN core.org_members m ON m.org_id = o.id AND m.role = 'owner'
            WHERE o.kind = 'org' GROUP BY o.name"""
    )
    assert {row["name"]: row["owners"] for row in owners} == {f"two{i}": 1 for i in range(ORGS)}


async def test_signing_in_again_and_again_earns_no_guesses_at_other_accounts(
    server: Any, monkeypatch: Any
) -> None:
    """An address known to one's own account is not counted per address when signing in there,
    so those sign-ins take nothing off the address's count of failures at other names."""
    monkeypatch.setattr(sign_in_throttle, "ADDRESS_LIMIT", 4)
    async with From(server, "198.51.100.77") as browser:
        assert (await browser.sign_in("mia", "mia-password")).status == 303  # now known
        browser.session.cookie_jar.clear()  # signed out: the sign-in form again
        for name in ("n1", "n2", "n3"):
            assert (await browser.sign_in(name, "wrong-password")).status == 200
        for _ in range(3):
            browser.session.cookie_jar.clear()
            assert (await browser.sign_in("mia", "mia-password")).status == 303
        browser.session.cookie_jar.clear()
        assert (await browser.sign_in("n4", "wrong-password")).status == 200
        assert (await browser.sign_in("n5", "wrong-password")).status == 429
