"""The errors a handler raises; the error middleware renders them.

    ApiError                      status, code, message (never internals)
    ├── InvalidInput              400 ValInvalidInput (malformed JSON, bad query values)
    ├── AuthTokenMissing          401 (private resource, nobody signed in)
    ├── AuthTokenInvalid          401 (a token we do not know: never treated as anonymous)
    ├── PermissionDenied          403
    ├── NotFound                  404 (code names what: RepoNotFound, ReleaseNotFound, ...)
    │   └── RepoNotFound          404 RepoNotFound (shared by the release and organization APIs)
    ├── MethodNotAllowed          405 (with the allowed methods)
    ├── RequestTimeout            408 (the body did not arrive in time)
    ├── Conflict                  409
    ├── PayloadTooLarge           413
    ├── UnsupportedMediaType      415 (a form body that is not urlencoded UTF-8)
    ├── Unprocessable             422 (validation; names the field)
    └── ServiceUnavailable        503 (with Retry-After)

Version-1 routes render `{"message", "errors"?}`; version-2 routes render
`{"error": {"code", "message", "status", "request_id"}}` (docs/http.md "Errors").
"""

from __future__ import annotations

from collections.abc import Sequence


class ApiError(Exception):
    status = 500
    code = "InternalError"
    close_connection = False  # True when what is left of the request cannot be trusted

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        errors: Sequence[str] = (),
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.errors = list(errors)
        self.headers = dict(headers or {})


class InvalidInput(ApiError):
    status = 400
    code = "ValInvalidInput"


class AuthTokenMissing(ApiError):
    status = 401
    code = "AuthTokenMissing"

    def __init__(self, message: str = "Authentication required", **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]


class AuthTokenInvalid(ApiError):
    status = 401
    code = "AuthTokenInvalid"

    def __init__(self, message: str = "Invalid access token") -> None:
        super().__init__(message)


class PermissionDenied(ApiError):
    status = 403
    code = "PermissionDenied"


class NotFound(ApiError):
    status = 404
    code = "NotFound"


class RepoNotFound(NotFound):
    """No such repository, or one the caller may not see: the two answer alike."""

    code = "RepoNotFound"

    def __init__(self) -> None:
        super().__init__("Repository not found")


class MethodNotAllowed(ApiError):
    status = 405
    code = "MethodNotAllowed"

    def __init__(self, allowed: Sequence[str]) -> None:
        super().__init__("Method not allowed", headers={"Allow": ", ".join(sorted(allowed))})


class RequestTimeout(ApiError):
    status = 408
    code = "RequestTimeout"
    close_connection = True  # the rest of the body may still come: it must not read as a request

    def __init__(self, message: str = "Request body not received in time") -> None:
        super().__init__(message)


class Conflict(ApiError):
    status = 409
    code = "Conflict"


class PayloadTooLarge(ApiError):
    status = 413
    code = "PayloadTooLarge"


class UnsupportedMediaType(ApiError):
    status = 415
    code = "UnsupportedMediaType"


class Unprocessable(ApiError):
    status = 422
    code = "ValidationFailed"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message, code=code, errors=[field] if field else [])
        self.field = field


class ServiceUnavailable(ApiError):
    status = 503
    code = "ServiceUnavailable"

    def __init__(self, message: str = "Service unavailable", *, retry_after: int = 5) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after)})
