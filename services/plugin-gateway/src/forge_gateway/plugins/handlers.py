"""Plugin HTTP handlers: plugin routes proxied to HandleHTTP, and the admin plugin listing."""

from __future__ import annotations

import logging

from aiohttp import web
from forge_common.auth import viewer_of
from forge_common.errors import (
    AuthTokenMissing,
    MethodNotAllowed,
    PayloadTooLarge,
    PermissionDenied,
)
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.middleware import REQUEST_ID
from forge_common.render import json_response
from plugin.v1 import plugin_pb2

from ..errors import (
    BadGateway,
    GatewayTimeout,
    PluginNotFound,
    PluginNotReady,
    PluginRouteNotFound,
)
from ..events import queries
from ..keys import OPTIONS, PLUGIN_MANAGER
from . import proxy
from .client import PluginCallError, PluginDeadline, PluginUnavailable
from .plugin import ManagedPlugin
from .state import PluginState
from .status import plugin_status

log = logging.getLogger(__name__)
_NO_BODY_STATUSES = frozenset({204, 304})


async def plugin_route(request: web.Request) -> web.Response:
    """`/api/v1/plugins/{plugin}/{path}`: proxy a declared route to the plugin's HandleHTTP."""
    plugin = _plugin(request)
    path = "/" + request.match_info["path"]
    manifest = plugin.manifest
    if manifest is None:  # never joined yet: its routes are unknown
        raise PluginNotReady(plugin.retry_after())
    methods = manifest.methods_for(path)
    if not methods:
        raise PluginRouteNotFound()
    if request.method not in methods:
        raise MethodNotAllowed(proxy.allowed_methods(methods))
    # Requests obey the site's body limit too; responses only the gateway's own cap.
    cap = request.app[OPTIONS].max_http_body_bytes
    body = await _read_body(request, min(request.app[SETTINGS].max_body_bytes, cap))
    message = proxy.build_request(
        request.method,
        path,
        proxy.inbound_headers(request.headers, viewer_of(request), request[REQUEST_ID]),
        body,
        proxy.query_params(request.query),
    )
    reply = await _handle_http(plugin, request.method, path, message, cap)
    status = reply.status_code
    return web.Response(
        status=status,
        body=None if status in _NO_BODY_STATUSES else reply.body,
        headers=proxy.outbound_headers(reply.headers),
    )


async def _handle_http(
    plugin: ManagedPlugin, method: str, path: str, message: plugin_pb2.HTTPRequest, cap: int
) -> plugin_pb2.HTTPResponse:
    """The plugin's HandleHTTP answer, or the error a caller gets instead: 503 while it is not
    ready, 504 past its deadline, 502 for a failed call, a status HTTP has not or a body over
    `cap` bytes (each logged with the plugin's name, never the request's content)."""
    try:
        reply = await plugin.call("HandleHTTP", message, plugin_pb2.HTTPResponse)
    except PluginUnavailable as error:
        raise PluginNotReady(error.retry_after) from None
    except PluginDeadline as error:
        log.warning("plugin %s: HandleHTTP %s %s: %s", plugin.name, method, path, error.detail)
        raise GatewayTimeout() from None
    except PluginCallError as error:
        log.warning("plugin %s: HandleHTTP %s %s: %s", plugin.name, method, path, error.detail)
        raise BadGateway() from None
    if not proxy.valid_status(reply.status_code):
        log.warning(
            "plugin %s answered %s %s with status %d", plugin.name, method, path, reply.status_code
        )
        raise BadGateway()
    if len(reply.body) > cap:
        log.warning(
            "plugin %s answered %s %s with %d bytes (cap %d)",
            plugin.name,
            method,
            path,
            len(reply.body),
            cap,
        )
        raise BadGateway()
    return reply


async def admin_plugins(request: web.Request) -> web.Response:
    """`GET /api/v1/admin/plugins`: every configured plugin's state, for site admins."""
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    if not viewer.is_admin:
        raise PermissionDenied("Only site administrators can list plugins")
    counts = await queries.open_counts(request.app[DB_POOL])
    return json_response(
        [
            {**plugin_status(p), "deliveries": _counts(counts.get(p.name, {}))}
            for p in request.app[PLUGIN_MANAGER]
        ]
    )


def _counts(found: dict[str, int]) -> dict[str, int]:
    return {"pending": found.get("pending", 0), "dead": found.get("dead", 0)}


def _plugin(request: web.Request) -> ManagedPlugin:
    plugin = request.app[PLUGIN_MANAGER].get(request.match_info["plugin"])
    if plugin is None or plugin.state is PluginState.DISABLED:
        raise PluginNotFound()
    return plugin


async def _read_body(request: web.Request, cap: int) -> bytes:
    """The request body, refused with 413 past `cap`. The middleware has already received it
    within the body-read deadline and the site's limit, so this costs no wait."""
    if request.content_length is not None and request.content_length > cap:
        raise PayloadTooLarge("Request body too large")
    body = await request.read()
    if len(body) > cap:
        raise PayloadTooLarge("Request body too large")
    return body
