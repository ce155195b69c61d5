"""forge-plugin-sdk: write forge plugins in Python.

Declare a :class:`Plugin`, register ``@plugin.on_event(...)`` and
``@plugin.route(...)`` handlers, then ``plugin.serve(address)`` (or
``await plugin.start(address)`` / ``await plugin.stop()`` in tests). The SDK
speaks plugin.v1 over grpc.aio, with the standard health service and server
reflection.
"""

from .errors import HTTPError, PluginError
from .events import EVENT_TYPES, Event
from .health import RELEASE_HEALTH_PERMISSION, HealthRequest, ReleaseVersion, VersionHealth
from .http import Caller, Headers, Request, Response, ResponseLike
from .manifest import Manifest, Route
from .plugin import Plugin
from .server import MAX_MESSAGE_BYTES
from .service import PROTOCOL_VERSION

__all__ = [
    "EVENT_TYPES",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "RELEASE_HEALTH_PERMISSION",
    "Caller",
    "Event",
    "HTTPError",
    "Headers",
    "HealthRequest",
    "Manifest",
    "Plugin",
    "PluginError",
    "ReleaseVersion",
    "Request",
    "Response",
    "ResponseLike",
    "Route",
    "VersionHealth",
]
