"""The pages' forms under fuzzing (run.py; schemathesis cannot: forms are not in the OpenAPI
documents, and a form is reached only with a session cookie and its CSRF token).

Every form route of every installed service (the route table, as
services/common/tests/test_form_sessions.py enumerates it) is sent seeded random bodies:
urlencoded with hostile charsets, raw bytes and broken escapes; multipart with odd boundaries,
part headers and charsets; other types. Mostly as the signed-in owner with the page's CSRF token,
so the handlers themselves are reached, sometimes anonymously (the pre-session pair) or with a
token besides. Any 5xx is a failure (and run.py fails on any error line the service logged).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from urllib.parse import quote

import aiohttp
from forge_common.app import create_app
from forge_common.config import Settings
from forge_common.service import installed_services

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
NOT_FORMS = ("/api/", "/internal/")
PATH_VALUES = {
    "org": ["acme", "hidden", "nobody"],
    "owner": ["acme", "owner"],
    "repo": ["app", "tools", "nothing"],
    "tag": ["v1.0.0", "v1.1.0-beta.1", "v2.0.0", "nope"],
}
FIELDS = [
    "_csrf",
    "action",
    "id",
    "name",
    "repo_name",
    "repo_id",
    "group_id",
    "tag_name",
    "target_commitish",
    "body",
    "rollout",
    "prerelease",
    "visibility",
    "public_landing",
    "public_releases",
    "asset_id",
    "public_key",
    "user_name",
    "password",
    "retype",
    "old_password",
    "redirect_to",
    "scope",
    "back",
]
ACTIONS = [
    "pin",
    "unpin",
    "up",
    "down",
    "move",
    "create_group",
    "rename_group",
    "collapse_group",
    "expand_group",
    "group_up",
    "group_down",
    "delete_group",
    "publicize",
    "conceal",
    "publish",
    "save",
    "preview",
    "remove",
    "draft",
]
VALUES = [
    "", "\x00", "a\x00b", "²", "٣", "9" * 40, "-1", "0", "1", "+1", "1_0", " 1", "\u202eexe",
    "\u200b", "\x07", "\ufffd", "a" * 3000, "<b>x</b>", "//evil.test", "/\\evil", "\r\nX: y",
    "NaN", "1e400", "v1.0.0", "app", "tools", "Featured", "private", "public", "on", "off",
    "100%", "50", "owner", "read:repository", "all", "🙂", "%", "%ff",
]  # fmt: skip
CHARSETS = [
    None, "utf-8", "UTF-8", "latin-1", "x-unknown", "utf-16", "utf-7", "", '"utf-8"', "ascii",
    "utf-8; x=y", "\x7f",
]  # fmt: skip
_CSRF = re.compile(r'name="_csrf" value="([^"]*)"')


def form_routes() -> list[tuple[str, str]]:
    """(method, route) of every form, from the route table of every installed service."""
    app = create_app(
        Settings(database_url="postgresql://unused/db"), list(installed_services().values())
    )
    found = set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if route.method not in SAFE and not path.startswith(NOT_FORMS):
            found.add((route.method, path))
    return sorted(found)


@dataclass
class Outcome:
    cases: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


class _Caller:
    """A browser: the owner signed in, or an anonymous visitor with the pre-session pair."""

    def __init__(self, origin: str, owner: tuple[str, str] | None) -> None:
        self.origin = origin
        self.owner = owner
        self.session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""

    async def ready(self) -> None:
        """Sign in again (a fuzzed sign-out or password form may have ended the session)."""
        async with self.session.get(f"{self.origin}/user/login") as reply:
            found = _CSRF.search(await reply.text())
        self.csrf = found.group(1) if found else ""
        if self.owner is None:
            return
        data = {"_csrf": self.csrf, "user_name": self.owner[0], "password": self.owner[1]}
        headers = {"Origin": self.origin}
        async with self.session.post(
            f"{self.origin}/user/login", data=data, headers=headers, allow_redirects=False
        ):
            pass
        async with self.session.get(f"{self.origin}/user/settings/applications") as reply:
            found = _CSRF.search(await reply.text())
        self.csrf = found.group(1) if found else self.csrf


def _value(rng: random.Random) -> str:
    return rng.choice(VALUES + ACTIONS) if rng.random() < 0.9 else chr(rng.randrange(0x110000))


def _urlencoded(rng: random.Random, csrf: str) -> tuple[bytes, str]:
    pairs = [(rng.choice(FIELDS), _value(rng)) for _ in range(rng.randrange(0, 8))]
    if csrf and rng.random() < 0.8:
        pairs.insert(0, ("_csrf", csrf))
    text = "&".join(
        f"{quote(k, errors='surrogatepass')}={quote(v, errors='surrogatepass')}" for k, v in pairs
    )
    raw = text.encode()
    for _ in range(rng.choice((0, 0, 1, 3))):  # raw bytes, broken escapes
        at = rng.randrange(len(raw) + 1)
        raw = raw[:at] + rng.choice((b"\xff", b"\xc3", b"%", b"%z", b"%ff%fe", b"\x00")) + raw[at:]
    charset = rng.choice(CHARSETS)
    kind = "application/x-www-form-urlencoded" + (f"; charset={charset}" if charset else "")
    return raw, kind


def _multipart(rng: random.Random, csrf: str) -> tuple[bytes, str]:
    boundary = rng.choice(["XX", "----forge", "a" * 70, "b\x01", "", '"q"'])
    parts = []
    names = ["_csrf", *rng.sample(FIELDS, 3), "attachment", "n\x1a", 'q"uote']
    for name in names[: rng.randrange(1, len(names))]:
        value = csrf if name == "_csrf" else _value(rng)
        head = f'Content-Disposition: form-data; name="{name}"'
        if rng.random() < 0.3:
            head += f'; filename="{_value(rng)[:40]}"'
        if rng.random() < 0.3:
            head += f"\r\nContent-Type: text/plain; charset={rng.choice(CHARSETS) or 'x'}"
        parts.append(
            f"--{boundary}\r\n{head}\r\n\r\n".encode(errors="surrogatepass")
            + value.encode(errors="surrogatepass")
            + b"\r\n"
        )
    tail = f"--{boundary}--\r\n".encode() if rng.random() < 0.8 else b"--trunc"
    return b"".join(parts) + tail, f"multipart/form-data; boundary={boundary}"


def _other(rng: random.Random, csrf: str) -> tuple[bytes, str]:
    raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    kind = rng.choice(["application/json", "text/plain; charset=utf-16", "", "x/y", "*/*"])
    return raw, kind


def _path(rng: random.Random, route: str) -> str:
    path = route
    for name, values in PATH_VALUES.items():
        value = values[0] if rng.random() < 0.6 else rng.choice([*values, _value(rng)])
        path = path.replace("{" + name + "}", quote(value, safe="", errors="surrogatepass"))
    return path


async def fuzz_forms(origin: str, owner: tuple[str, str], seconds: float, seed: int) -> Outcome:
    rng = random.Random(seed)
    routes = form_routes()
    outcome = Outcome()
    callers = [_Caller(origin, owner), _Caller(origin, None)]
    deadline = time.monotonic() + seconds
    try:
        for caller in callers:
            await caller.ready()
        while time.monotonic() < deadline:
            for method, route in routes:
                caller = callers[0] if rng.random() < 0.75 else callers[1]
                make = rng.choice((_urlencoded, _urlencoded, _multipart, _other))
                body, kind = make(rng, caller.csrf)
                headers = {"Origin": origin}
                if kind:
                    headers["Content-Type"] = kind
                if rng.random() < 0.1:
                    headers["Authorization"] = "token fuzz-owner-token"
                path = _path(rng, route)
                try:
                    async with caller.session.request(
                        method,
                        f"{origin}{path}",
                        data=body,
                        headers=headers,
                        allow_redirects=False,
                        timeout=aiohttp.ClientTimeout(total=10),
                    ) as reply:
                        await reply.read()
                        status = reply.status
                except ValueError:
                    continue  # a header the client itself will not send (a control character)
                except (TimeoutError, aiohttp.ClientError) as exc:
                    outcome.failures.append(f"{method} {path} [{kind!r}] {body[:200]!r}: {exc!r}")
                    continue
                if status == 401 and caller.owner is not None:
                    await caller.ready()  # a fuzzed sign-out or password change ended it
                outcome.cases += 1
                outcome.statuses[status] = outcome.statuses.get(status, 0) + 1
                if status >= 500:
                    outcome.failures.append(f"{method} {path} {status} [{kind!r}] {body[:200]!r}")
    finally:
        for caller in callers:
            await caller.session.close()
    return outcome
