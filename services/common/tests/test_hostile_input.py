"""Hostile input that once answered 500 with a traceback (docs/http.md "No input ever produces a
500", "Forms"): each is a 4xx with the documented body (a page for a page, the API's body for the
API), and nothing is logged at ERROR. The same inputs as an attacker sends them, to the whole app
of every installed service (`forge serve --all`)."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from forge_common.accounts.sessions import start_session
from forge_common.app import create_app
from forge_common.service import installed_services
from forge_testing.browser import Browser, csrf_of
from yarl import URL

PASSWORD = "olive-password-1"
TOKEN = "olive-token"
ORIGIN = "http://forge.test"


def _world() -> dict[str, Any]:
    return {
        "users": [
            {"name": "olive", "password": PASSWORD, "tokens": [TOKEN], "admin": True},
            {"name": "mia"},
        ],
        "orgs": [
            {
                "name": "acme",
                "members": [{"user": "olive", "owner": True}, {"user": "mia"}],
                "teams": [{"name": "devs", "permission": "read", "members": ["mia"]}],
            }
        ],
        "repos": [
            {
                "owner": "acme",
                "name": "app",
                "releases": [{"tag": "v1.0.0", "created_at": "2026-01-01T00:00:00Z"}],
            }
        ],
    }


@pytest.fixture
async def forge(settings: Any, load: Any, aiohttp_client: Any) -> Any:
    """Every service in one app. Its client is asked for after the database, so the app stops
    before the database is dropped (fixtures end in the reverse order of their set-up)."""
    await load(_world())
    return await aiohttp_client(create_app(settings, list(installed_services().values())))


@pytest.fixture
def no_errors_logged(caplog: Any) -> Any:
    caplog.set_level(logging.INFO)
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


def _token() -> dict[str, str]:
    return {"Authorization": f"token {TOKEN}"}


def _basic() -> dict[str, str]:
    pair = base64.b64encode(f"olive:{PASSWORD}".encode()).decode()
    return {"Authorization": f"Basic {pair}"}


async def _sign_in_pair(client: Any) -> tuple[dict[str, str], str]:
    """The pre-session cookie and its CSRF token, from the sign-in page."""
    reply = await client.get("/user/login")
    cookie = reply.cookies["forge_presession"].value
    return {"Cookie": f"forge_presession={cookie}", "Origin": ORIGIN}, csrf_of(await reply.text())


def _is_error_page(html: str, status: int) -> bool:
    return "<html" in html.lower() and str(status) in html and "Traceback" not in html


FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize(
    ("content_type", "body", "status"),
    [
        (FORM, b"user_name=\xff\xfe&password=x&_csrf={csrf}", 400),  # raw bytes not UTF-8
        (FORM, b"user_name=%ff%fe&password=x&_csrf={csrf}", 400),  # escapes not UTF-8
        (FORM + "; charset=x-unknown", b"user_name=a&password=x&_csrf={csrf}", 415),
        (FORM + "; charset=latin-1", b"user_name=a&password=x&_csrf={csrf}", 415),
        (FORM, b"user_name=a%00b&password=x&_csrf={csrf}", 400),  # NUL in user_name
        (FORM, b"user_name=a&password=x%00&_csrf={csrf}", 400),  # NUL in the password
        (
            "multipart/form-data; boundary=XX",
            b'--XX\r\nContent-Disposition: form-data; name="user_name"\r\n\r\na\r\n--XX--\r\n',
            415,
        ),
        ("multipart/form-data; boundary=XX", b"--XX\r\nbroken", 415),
        ("text/plain; charset=utf-16", "user_name=a".encode("utf-16"), 415),
    ],
)
async def test_hostile_bodies_to_the_sign_in_form_are_4xx_pages(
    forge, no_errors_logged, content_type, body, status
):
    headers, csrf = await _sign_in_pair(forge)
    reply = await forge.post(
        "/user/login",
        data=body.replace(b"{csrf}", csrf.encode()),
        headers={**headers, "Content-Type": content_type},
        allow_redirects=False,
    )
    assert reply.status == status
    assert _is_error_page(await reply.text(), status)


async def test_hostile_bodies_to_a_signed_in_form_are_4xx_and_change_nothing(
    forge, db, settings, no_errors_logged
):
    async with Browser(forge.make_url("/"), origin=ORIGIN) as browser:
        user_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'olive'")
        secret = await start_session(db, settings, user_id)
        browser.session.cookie_jar.update_cookies(
            {"forge_session": secret}, URL(str(forge.make_url("/")))
        )
        _, html = await browser.get("/acme/app/settings")
        csrf = csrf_of(html)
        bodies = [
            ("multipart/form-data; boundary=XX", b"--XX\r\nContent-Disposition: form-data; "
             b'name="_csrf"\r\n\r\n' + csrf.encode() + b"\r\n--XX\r\nContent-Disposition: "
             b'form-data; name="visibility"\r\n\r\nprivate\r\n--XX--\r\n', 415),
            (FORM + "; charset=utf-7", f"_csrf={csrf}&visibility=private".encode(), 415),
            (FORM, f"_csrf={csrf}&visibility=private&x=\xff".encode("latin-1"), 400),
        ]  # fmt: skip
        for content_type, body, status in bodies:
            async with browser.session.post(
                browser.url("/acme/app/settings"),
                data=body,
                headers={"Origin": ORIGIN, "Content-Type": content_type},
                allow_redirects=False,
            ) as reply:
                assert reply.status == status
                assert _is_error_page(await reply.text(), status)
    assert await db.fetchval("SELECT private FROM core.repositories WHERE name = 'app'") is False


@pytest.mark.parametrize(
    ("method", "path", "auth"),
    [
        ("GET", "/api/v1/teams/%C2%B2", "token"),  # a superscript two: isdigit(), yet no int
        ("GET", "/api/v1/teams/%D9%A3", "token"),  # an Arabic-Indic three
        ("DELETE", "/api/v1/teams/%C2%B2/members/mia", "token"),
        ("DELETE", "/api/v1/users/olive/tokens/%C2%B2", "basic"),
        ("DELETE", "/api/v1/users/olive/tokens/a%00b", "basic"),
    ],
)
async def test_unicode_digits_as_ids_are_404(forge, no_errors_logged, method, path, auth):
    headers = _token() if auth == "token" else _basic()
    reply = await forge.request(method, path, headers=headers)
    assert reply.status == 404
    assert set(await reply.json()) <= {"message", "errors"}


async def test_deleting_a_token_by_a_unicode_digit_from_the_settings_page_deletes_nothing(
    forge, db, settings, no_errors_logged
):
    async with Browser(forge.make_url("/"), origin=ORIGIN) as browser:
        await browser.sign_in("olive", PASSWORD)
        _, html = await browser.get("/user/settings/applications")
        reply = await browser.submit("/user/settings/applications/delete", {"id": "²"}, page=html)
        assert reply.status == 303
    assert await db.fetchval("SELECT count(*) FROM core.access_tokens") == 1


NUL = "a\u0000b"


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/api/v1/orgs", {"username": "neworg", "full_name": NUL}, "full_name"),
        ("POST", "/api/v1/orgs", {"username": "neworg", "location": NUL}, "location"),
        ("POST", "/api/v1/orgs/acme/repos", {"name": "r", "description": NUL}, "description"),
        ("POST", "/api/v1/user/repos", {"name": "r", "description": NUL}, "description"),
        ("POST", "/api/v1/orgs/acme/teams", {"name": "t", "description": NUL}, "description"),
        ("PATCH", "/api/v1/admin/users/mia", {"full_name": NUL}, "full_name"),
        ("PATCH", "/api/v1/admin/users/mia", {"website": NUL}, "website"),
        ("PATCH", "/api/v1/admin/users/mia", {"location": NUL}, "location"),
        (
            "POST",
            "/api/v1/admin/users",
            {"username": "u2", "email": "u2@x.test", "password": "long-pw-1", "full_name": NUL},
            "full_name",
        ),
        ("POST", "/api/v1/orgs/acme/pinned/groups", {"name": NUL, "display_order": 1}, "name"),
        ("PATCH", "/api/v1/repos/acme/app", {"description": NUL}, "description"),
        ("POST", "/api/v2/repos/acme/app/releases", {"tag_name": "v2", "body": NUL}, "body"),
    ],
)
async def test_a_nul_in_an_api_text_field_is_422_naming_it(
    forge, db, no_errors_logged, method, path, body, field
):
    before = await db.fetchval("SELECT count(*) FROM core.accounts")
    reply = await forge.request(method, path, data=json.dumps(body), headers=_token())
    assert reply.status == 422
    answer = await reply.json()
    if path.startswith("/api/v2/"):
        assert answer["error"]["code"] == "ValidationFailed"
        assert field in answer["error"]["message"]
    else:
        assert answer["errors"] == [field]
    assert await db.fetchval("SELECT count(*) FROM core.accounts") == before


@pytest.mark.parametrize(
    "query",
    [
        "to=9999-12-31",
        "from=9999-12-01&to=9999-12-31",
        "from=0001-01-01&to=0001-01-31",
        "interval=hour&to=9999-12-31T23:00:00Z",
    ],
)
async def test_insights_at_the_ends_of_the_calendar_answer(forge, no_errors_logged, query):
    """A window that ends on the last day there is, or starts on the first, is a window like
    another: no step past it is ever taken (nothing beyond 9999-12-31 exists)."""
    reply = await forge.get(f"/api/v2/repos/acme/app/insights?{query}", headers=_token())
    assert reply.status == 200
    body = await reply.json()
    assert body["buckets"][-1].startswith("9999-12-31" if "to=9999" in query else "0001-01-31")
    if "interval=hour" not in query:  # the page shows days only
        page = await forge.get(f"/acme/app/insights?{query}", headers=_token())
        assert page.status == 200


async def test_insights_page_of_a_release_without_checks(forge, no_errors_logged):
    """A repository with a release and not one update check in the window: every chart empty,
    the uptake at 0 % (there were no checks to share)."""
    async with Browser(forge.make_url("/"), origin=ORIGIN) as browser:
        await browser.sign_in("olive", PASSWORD)
        status, html = await browser.get("/acme/app/insights")
    assert status == 200
    assert "Update uptake" in html
