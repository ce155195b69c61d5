"""Structured logs: one JSON object a line, carrying the request id of the request being served."""

from __future__ import annotations

import contextvars
import logging
import sys

import orjson

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = request_id_var.get()
        return f"{line} request_id={request_id}" if request_id else line


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is at the time of the record (test runners swap it)."""

    def __init__(self) -> None:
        super().__init__()

    @property  # type: ignore[override,unused-ignore]
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def configure(level: str = "INFO", fmt: str = "json") -> None:
    """Configure the root logger once, for the process."""
    handler = _StderrHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # There is no access log: `forge serve` runs aiohttp with `access_log=None`, and the middleware
    # logs only unhandled errors (with the request id). An app run another way (tests, aiohttp's
    # own runners) would get aiohttp's access logger, which this keeps quiet below warnings.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
