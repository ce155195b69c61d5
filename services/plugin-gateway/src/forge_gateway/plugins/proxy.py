"""Mapping between an HTTP request and HandleHTTP, in both directions (docs/plugins.md
"HTTP proxying (HandleHTTP)").

Inbound: only headers a plugin may trust or needs reach it. Credentials (Authorization,
cookies), hop-by-hop headers and any identity header the client sent are dropped; the verified
caller is set in our own X-Forge-User-* headers (absent for anonymous) and X-Request-Id is added.
Outbound: Set-Cookie and hop-by-hop headers are dropped, header values that could split a
response or are too large for the proxies in front of us are dropped, and a status outside
200-599 is a bad gateway.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from forge_common.auth import Viewer
from multidict import CIMultiDict, MultiMapping
from plugin.v1 import plugin_pb2

USER_ID = "X-Forge-User-Id"
USER_LOGIN = "X-Forge-User-Login"
USER_ADMIN = "X-Forge-User-Admin"
REQUEST_ID = "X-Request-Id"

# RFC 9110 §7.6.1 and the classic list; "Proxy-Connection" is non-standard but still sent.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-authenticate",
        "proxy-authorization",
    }
)
CREDENTIALS = frozenset({"authorization", "cookie", "cookie2"})
# Identity headers other proxies and forges trust; a client must never be able to claim one.
IDENTITY = frozenset(
    {
        "remote-user",
        "x-remote-user",
        "x-forwarded-user",
        "x-forwarded-email",
        "x-forwarded-preferred-username",
        "x-forwarded-groups",
        "x-auth-request-user",
        "x-auth-request-email",
        "x-auth-request-preferred-username",
        "x-auth-request-groups",
        "x-webauth-user",
        "x-user",
        "x-user-id",
        "x-user-login",
        "x-user-admin",
        "x-request-id",  # replaced by the id this request was given
    }
)
IDENTITY_PREFIX = "x-forge-"
# Set by the gateway from the body it sends, or meaningless once the body is a bytes field.
OUTBOUND_DROPPED = frozenset({"set-cookie", "set-cookie2", "content-length"})

# Beyond these, proxies in front of us (nginx: 4-8 KB buffers) and clients refuse the response.
MAX_HEADER_VALUE = 4096
MAX_HEADERS = 64
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _utf8(text: str) -> str:
    """Protobuf strings must be UTF-8: bytes a client sent that are not (kept by the HTTP parser
    as lone surrogates) become U+FFFD instead of failing the request."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def _connection_named(headers: MultiMapping[str]) -> set[str]:
    """Headers the client declared hop-by-hop in its Connection header."""
    named: set[str] = set()
    for value in headers.getall("Connection", []):
        named.update(part.strip().lower() for part in value.split(",") if part.strip())
    return named


def inbound_headers(
    headers: MultiMapping[str], viewer: Viewer | None, request_id: str
) -> dict[str, str]:
    """The headers a plugin receives: filtered, repeated names joined with ', '."""
    dropped = _connection_named(headers)
    kept: dict[str, str] = {}
    lowered: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        if (
            key in HOP_BY_HOP
            or key in CREDENTIALS
            or key in IDENTITY
            or key in dropped
            or key.startswith(IDENTITY_PREFIX)
        ):
            continue
        value = _utf8(value)
        if key in lowered:
            kept[lowered[key]] = f"{kept[lowered[key]]}, {value}"
        else:
            lowered[key] = name
            kept[name] = value
    if viewer is not None:
        kept[USER_ID] = str(viewer.id)
        kept[USER_LOGIN] = viewer.login
        kept[USER_ADMIN] = "true" if viewer.is_admin else "false"
    kept[REQUEST_ID] = request_id
    return kept


def query_params(query: MultiMapping[str]) -> dict[str, str]:
    """Decoded query parameters; for a repeated name the first value (see HTTPRequest)."""
    params: dict[str, str] = {}
    for name, value in query.items():
        params.setdefault(_utf8(name), _utf8(value))
    return params


def build_request(
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
    query: Mapping[str, str],
) -> plugin_pb2.HTTPRequest:
    return plugin_pb2.HTTPRequest(
        method=method, path=path, headers=dict(headers), body=body, query_params=dict(query)
    )


def valid_status(status: int) -> bool:
    """A final answer's status. 1xx is informational, never a final answer, so it is refused
    like anything outside 100-599."""
    return 200 <= status <= 599


def outbound_headers(headers: Mapping[str, str]) -> CIMultiDict[str]:
    """The plugin's headers that may reach the client."""
    dropped = {part.strip().lower() for part in headers.get("Connection", "").split(",")}
    for name, value in headers.items():
        if name.lower() == "connection":
            dropped.update(p.strip().lower() for p in value.split(","))
    kept: CIMultiDict[str] = CIMultiDict()
    for name, value in headers.items():
        key = name.lower()
        if key in HOP_BY_HOP or key in OUTBOUND_DROPPED or key in dropped:
            continue
        if not _TOKEN.match(name) or _BAD_VALUE.search(value):
            continue  # would break or split the response
        if len(value.encode()) > MAX_HEADER_VALUE or len(kept) >= MAX_HEADERS:
            continue  # would make the response unreadable for proxies and clients
        kept[name] = value
    return kept


def allowed_methods(methods: Iterable[str]) -> list[str]:
    return sorted(set(methods))
