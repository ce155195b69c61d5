"""HTTP requests proxied through HandleHTTP, and the responses handlers return."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from plugin.v1 import plugin_pb2

# Identity headers set by the gateway (it drops any the client sent).
USER_ID_HEADER = "X-Forge-User-Id"
USER_LOGIN_HEADER = "X-Forge-User-Login"
USER_ADMIN_HEADER = "X-Forge-User-Admin"
REQUEST_ID_HEADER = "X-Request-Id"


class Headers(Mapping[str, str]):
    """Read-only, case-insensitive header map (HTTP header names ignore case)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        self._items = {key.lower(): (key, value) for key, value in (items or {}).items()}

    def __getitem__(self, key: str) -> str:
        return self._items[key.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (original for original, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who made the request, as verified by the gateway; anonymous when no user."""

    user_id: int | None = None
    login: str | None = None
    admin: bool = False

    @property
    def anonymous(self) -> bool:
        """True when the request carries no signed-in user."""
        return self.user_id is None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> Caller:
        """Read the identity headers; malformed or missing ones mean anonymous."""
        try:
            user_id = int(headers.get(USER_ID_HEADER, ""))
        except ValueError:
            return cls()
        login = headers.get(USER_LOGIN_HEADER) or None
        return cls(
            user_id=user_id, login=login, admin=headers.get(USER_ADMIN_HEADER, "").lower() == "true"
        )


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request to a plugin route; ``path`` is below the plugin's mount point."""

    method: str
    path: str
    headers: Headers = field(default_factory=Headers)
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    caller: Caller = field(default_factory=Caller)

    @property
    def request_id(self) -> str:
        """The gateway's request id (empty when absent), for log correlation."""
        return self.headers.get(REQUEST_ID_HEADER, "")

    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.body.decode("utf-8")

    def json(self) -> Any:
        """The body parsed as JSON (raises ValueError when it is not)."""
        return json.loads(self.body)

    @classmethod
    def from_proto(cls, message: plugin_pb2.HTTPRequest) -> Request:
        """Build a request from the wire message."""
        headers = Headers(dict(message.headers))
        return cls(
            method=message.method.upper(),
            path=message.path,
            headers=headers,
            query=dict(message.query_params),
            body=message.body,
            caller=Caller.from_headers(headers),
        )


@dataclass(frozen=True, slots=True)
class Response:
    """An HTTP response from a route handler."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    @classmethod
    def json(
        cls, data: Any, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> Response:
        """A JSON response; datetimes are written in RFC 3339, UTC."""
        body = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=_json_default)
        return cls(
            status,
            {"Content-Type": "application/json; charset=utf-8", **(headers or {})},
            body.encode(),
        )

    @classmethod
    def text(
        cls, text: str, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> Response:
        """A plain-text response."""
        return cls(
            status, {"Content-Type": "text/plain; charset=utf-8", **(headers or {})}, text.encode()
        )

    def to_proto(self) -> plugin_pb2.HTTPResponse:
        """The wire form; refuses a status the gateway would turn into a 502."""
        if not 100 <= self.status <= 599:
            raise ValueError(f"HTTP status {self.status} is outside 100-599")
        return plugin_pb2.HTTPResponse(
            status_code=self.status, headers=dict(self.headers), body=self.body
        )


#: What a route handler may return.
ResponseLike = Response | Mapping[str, Any] | list[Any] | bytes | str


def to_response(result: ResponseLike) -> Response:
    """Turn a handler's return value into a :class:`Response`.

    dict and list become JSON, str becomes text/plain, bytes become
    application/octet-stream.
    """
    if isinstance(result, Response):
        return result
    if isinstance(result, bytes):
        return Response(200, {"Content-Type": "application/octet-stream"}, result)
    if isinstance(result, str):
        return Response.text(result)
    if isinstance(result, Mapping | list):
        return Response.json(result if isinstance(result, list) else dict(result))
    raise TypeError(
        f"route handler returned {type(result).__name__}: need Response, dict, list, bytes, str"
    )


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
