"""The client's address behind trusted proxies (docs/accounts.md "The client's address"): the
X-Forwarded-For chains an Ingress and forge's nginx send, and what a client writes itself."""

from __future__ import annotations

from ipaddress import ip_network

import pytest
from forge_common.client_address import client_of
from forge_common.config import ConfigError, Settings

PODS = (ip_network("10.0.0.0/8"),)
ANY = (ip_network("0.0.0.0/0"), ip_network("::/0"))


@pytest.mark.parametrize(
    ("peer", "forwarded", "proxies", "hops", "client"),
    [
        # no proxy trusted: the header is the caller's own words
        ("203.0.113.9", ["198.51.100.1"], (), 1, "203.0.113.9"),
        # forge's nginx alone (compose): its entry
        ("10.1.0.2", ["203.0.113.9"], ANY, 1, "203.0.113.9"),
        ("10.1.0.2", ["6.6.6.6", "203.0.113.9"], ANY, 1, "203.0.113.9"),
        # Ingress, then nginx (Kubernetes): the entry the Ingress appended, two back
        ("10.1.0.2", ["203.0.113.9", "10.2.0.7"], PODS, 2, "203.0.113.9"),
        ("10.1.0.2", ["6.6.6.6", "203.0.113.9", "10.2.0.7"], PODS, 2, "203.0.113.9"),
        # the old rule, last entry only, behind an Ingress: the controller, for everybody
        ("10.1.0.2", ["203.0.113.9", "10.2.0.7"], ANY, 1, "10.2.0.7"),
        # a client on the pod network itself is not walked past the hops
        ("10.1.0.2", ["6.6.6.6", "10.9.9.9", "10.2.0.7"], PODS, 2, "10.9.9.9"),
        # a peer that is no trusted proxy: its header is ignored
        ("203.0.113.50", ["10.2.0.7"], PODS, 2, "203.0.113.50"),
        # a junk entry ends the walk at the proxy that passed it on
        ("10.1.0.2", ["junk", "10.2.0.7"], PODS, 2, "10.2.0.7"),
        # IPv6 by its /64; bracketed; IPv4-mapped
        ("10.1.0.2", ["2001:db8::1:2"], ANY, 1, "2001:db8::/64"),
        ("10.1.0.2", ["[2001:db8::5]:443"], ANY, 1, "2001:db8::/64"),
        ("::ffff:203.0.113.9", [], (), 1, "203.0.113.9"),
    ],
)
def test_the_client_is_the_first_address_no_trusted_proxy_holds(
    peer: str, forwarded: list[str], proxies: tuple, hops: int, client: str
) -> None:
    assert client_of(peer, forwarded, proxies, hops) == client


def test_settings_read_the_proxies_and_keep_the_older_variable() -> None:
    base = {"DATABASE_URL": "postgresql://x/y"}
    assert Settings.from_env(base).trusted_proxies == ()
    read = Settings.from_env(
        {**base, "TRUSTED_PROXIES": "10.0.0.0/8, ::1", "TRUSTED_PROXY_HOPS": "2"}
    )
    assert read.trusted_proxies == (ip_network("10.0.0.0/8"), ip_network("::1/128"))
    assert read.trusted_proxy_hops == 2
    old = Settings.from_env({**base, "TRUST_FORWARDED_FOR": "true"})
    assert old.trusted_proxies == ANY and old.trusted_proxy_hops == 1
    with pytest.raises(ConfigError, match="TRUSTED_PROXIES"):
        Settings.from_env({**base, "TRUSTED_PROXIES": "the ingress"})
