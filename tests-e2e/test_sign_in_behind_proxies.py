"""Sign-in throttling behind the Kubernetes recipe's two proxies (docs/accounts.md "The client's
address", docs/deploy.md "Ingress and TLS"), with the real nginx of deploy/nginx and the three
services as processes: this test plays the Ingress controller, which appends each client's address
to X-Forwarded-For, and forge's nginx appends the controller's (127.0.0.1). The services trust
127.0.0.1 for two hops, as `forge-config` of overlays/example does for the pod network.

Many people mistyping their passwords, each at their own address, lock out nobody; a stranger
guessing from one address, even one who writes somebody else's address into the header, locks
out only that address, and the 429 says how long to wait. Counting the last entry alone (what
TRUST_FORWARDED_FOR did) counts the controller for everybody: twenty mistakes anywhere locked
every account."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest
from forge_testing.browser import csrf_of
from forge_testing.loopback import Response

pytestmark = pytest.mark.e2e

PASSWORDS = {"ann": "ann-password", "bob": "bob-password", "cat": "cat-password"}
WORLD: dict[str, Any] = {
    "users": [{"name": name, "password": password} for name, password in PASSWORDS.items()]
}
STACK_ENV = {"TRUSTED_PROXIES": "127.0.0.1", "TRUSTED_PROXY_HOPS": "2"}
MISTAKES = 21  # more than the 20 one address may make


def sign_in(stack: Any, name: str, password: str, forwarded_for: str) -> Response:
    """The browser's sign-in form through the Ingress (this test) and nginx: the page, then its
    post with the pre-session cookie and CSRF token the page gave."""
    ingress = {"X-Forwarded-For": forwarded_for}
    page = stack.request("GET", "/user/login", ingress)
    assert page.status == 200
    cookies = [c.split(";", 1)[0] for c in page.headers.get_all("Set-Cookie") or []]
    form = {"_csrf": csrf_of(page.body.decode()), "user_name": name, "password": password}
    headers = {
        **ingress,
        "Cookie": "; ".join(cookies),
        "Origin": stack.base_url.rstrip("/"),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return stack.request("POST", "/user/login", headers, urlencode(form).encode())


def test_mistakes_of_many_people_behind_one_proxy_lock_out_nobody(stack: Any) -> None:
    names = sorted(PASSWORDS)
    for i in range(MISTAKES):
        reply = sign_in(stack, names[i % len(names)], "mistyped", f"198.51.100.{i + 1}")
        assert reply.status == 200, (i, reply.status)  # "Wrong user name or password."
        assert b"Wrong user name or password." in reply.body
    for i, name in enumerate(names):
        reply = sign_in(stack, name, PASSWORDS[name], f"192.0.2.{i + 1}")
        assert reply.status == 303, (name, reply.status)


def test_a_stranger_locks_out_only_their_own_address(stack: Any) -> None:
    mallory = "203.0.113.66"
    statuses = [sign_in(stack, "ann", "guess", mallory).status for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    # writing ann's own address into the header changes nothing: the Ingress appends the real one
    spoofed = sign_in(stack, "ann", PASSWORDS["ann"], f"192.0.2.50, {mallory}")
    assert spoofed.status == 429
    wait = int(spoofed.headers["Retry-After"])
    assert 1 <= wait <= 15 * 60
    said = re.search(rb"try again in (\d+) (second|minute)", spoofed.body)
    assert said is not None, spoofed.body[:500]
    # ann, at her own address (the one mallory wrote), signs in
    assert sign_in(stack, "ann", PASSWORDS["ann"], "192.0.2.50").status == 303
    # and so does anybody at any other address
    assert sign_in(stack, "ann", PASSWORDS["ann"], "192.0.2.51").status == 303
