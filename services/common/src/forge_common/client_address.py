"""The client's address behind reverse proxies (docs/accounts.md "The client's address"), for the
sign-in throttle: nginx's `real_ip` with `real_ip_recursive on`, Gitea's
`REVERSE_PROXY_TRUSTED_PROXIES` and `REVERSE_PROXY_LIMIT`.

`X-Forwarded-For` is believed only from a proxy we were told to trust (TRUSTED_PROXIES), and only
as far back as trusted proxies wrote it: walking from its last entry, each entry is the address
the proxy on its right saw, so the walk stops at the first address that is not a trusted proxy (the
client), or after TRUSTED_PROXY_HOPS entries. Anything to the left of that was written by the
client itself and names whatever it likes. Taking "the last entry" alone is wrong behind an
Ingress: it is the Ingress controller's address, the same for everybody.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from .config import ProxyNetwork


def _parse(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _trusted(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: Sequence[ProxyNetwork]
) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def forwarded_entries(headers: Iterable[str]) -> list[str]:
    """Every X-Forwarded-For entry, in order, over all the header's lines."""
    return [entry for line in headers for entry in line.split(",")]


def client_of(
    peer: str | None,
    forwarded: Sequence[str],
    proxies: Sequence[ProxyNetwork],
    hops: int,
) -> str:
    """The client's address: the connection's peer, or the first address (from the right) of the
    X-Forwarded-For entries that no trusted proxy holds, when the peer is a trusted proxy. An entry
    that is not an address ends the walk at the proxy that passed it on. IPv6 by its /64 (one
    machine commonly holds a whole /64)."""
    address = _parse(peer or "")
    if address is None:
        return (peer or "")[:64] or "unknown"
    believed = 0
    while _trusted(address, proxies) and believed < hops and believed < len(forwarded):
        entry = _parse(forwarded[len(forwarded) - 1 - believed])
        if entry is None:
            break
        address = entry
        believed += 1
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
