"""The gateway's HTTP errors, as forge_common.errors subclasses: the 404s of plugins, their routes
and deliveries, and a plugin's failure as the caller sees it. Their messages are fixed and
generic; a plugin's error text never reaches the caller."""

from __future__ import annotations

from forge_common.errors import ApiError, NotFound, ServiceUnavailable


class PluginNotFound(NotFound):
    """No such plugin (disabled ones too, on their routes)."""

    code = "PluginNotFound"

    def __init__(self) -> None:
        super().__init__("Plugin not found")


class PluginRouteNotFound(NotFound):
    """A path the plugin's manifest does not declare."""

    code = "PluginRouteNotFound"

    def __init__(self) -> None:
        super().__init__("Not found")


class DeliveryNotFound(NotFound):
    code = "DeliveryNotFound"

    def __init__(self) -> None:
        super().__init__("Delivery not found")


class PluginNotReady(ServiceUnavailable):
    """The plugin is down, has not joined yet, or its circuit is open: try again later."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("Plugin unavailable", retry_after=retry_after)


class BadGateway(ApiError):
    status = 502
    code = "BadGateway"

    def __init__(self, message: str = "The plugin could not handle the request") -> None:
        super().__init__(message)


class GatewayTimeout(ApiError):
    status = 504
    code = "GatewayTimeout"

    def __init__(self, message: str = "The plugin did not answer in time") -> None:
        super().__init__(message)


class SignatureInvalid(ApiError):
    """An ingest request whose HMAC signature is missing, wrong or stale."""

    status = 401
    code = "EventSignatureInvalid"

    def __init__(self) -> None:
        super().__init__("Invalid or stale event signature")
