"""Errors a plugin raises on purpose.

Any other exception escaping a handler is logged and answered with a generic
message: its text may hold internals, and the gateway shows plugin errors to
operators.
"""

from __future__ import annotations


class PluginError(Exception):
    """A deliberate failure whose message is safe to report to the gateway.

    Raised from an event handler it answers ``handled=false`` with this
    message (the gateway retries later); from an initialize hook it answers
    ``success=false`` with this message.
    """


class HTTPError(Exception):
    """Raised from a route handler to answer with ``status`` and a JSON message.

    The body is ``{"message": message}``, the shape of the forge's version-1
    errors, so the gateway can pass it through unchanged.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
