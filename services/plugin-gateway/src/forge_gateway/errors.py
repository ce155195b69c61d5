"""The gateway's own HTTP errors, beyond forge_common.errors: a plugin's failure as the caller
sees it. Their messages are fixed and generic; a plugin's error text never reaches the caller."""

from __future__ import annotations

from forge_common.errors import ApiError


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
