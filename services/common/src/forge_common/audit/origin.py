"""Who made a change and from where: what every audit entry of one request shares."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from aiohttp import web

from ..auth import BY_SESSION, viewer_of
from ..logs import request_id_var

# The `forge` CLI names itself with this header (forge_common.cli's HTTP client): its changes are
# recorded with the source `cli`. It is the caller's word, like a User-Agent: it says which tool
# was used, never who may do what.
CLIENT_HEADER = "X-Forge-Client"


@dataclass(frozen=True, slots=True)
class Origin:
    """The actor's login (None: the system), the source (audit.SOURCES) and the request id."""

    actor: str | None
    source: str
    request_id: str | None = None


SYSTEM = Origin(None, "system")

# The request being handled (set by forge_common.middleware): code deep below a handler (the
# account functions of forge_common.accounts, tokens.py) records the origin of its change from it.
request_var: contextvars.ContextVar[web.Request | None] = contextvars.ContextVar(
    "forge_audit_request", default=None
)


def current_origin() -> Origin | None:
    """The origin of the request being handled; None outside any request (the CLI)."""
    request = request_var.get()
    return None if request is None else origin_of(request)


def origin_of(request: web.Request, source: str | None = None) -> Origin:
    """The origin of a change made by `request`: `console` for a browser's session (the console's
    forms and uploads), else `cli` when the forge CLI says so, else `api`; `source` overrides."""
    viewer = viewer_of(request)
    if source is None and viewer is not None and viewer.method == BY_SESSION:
        source = "console"
    if source is None:
        source = "cli" if request.headers.get(CLIENT_HEADER, "").lower() == "cli" else "api"
    # the request's id as the middleware set it for this request's task (and its logs)
    return Origin(viewer.login if viewer is not None else None, source, request_id_var.get())
