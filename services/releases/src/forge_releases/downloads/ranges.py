"""One byte range of a `Range: bytes=...` header (RFC 9110 §14).

Several ranges, another unit or a malformed header are ignored (the whole file is sent, which the
RFC allows); a well-formed range that starts past the end is unsatisfiable (416).
"""

from __future__ import annotations

from dataclasses import dataclass


class Unsatisfiable(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class ByteRange:
    start: int
    end: int  # exclusive
    partial: bool

    @property
    def length(self) -> int:
        return self.end - self.start


def _number(text: str) -> int | None:
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def parse_range(header: str, size: int) -> ByteRange:
    whole = ByteRange(0, size, partial=False)
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return whole
    first, dash, last = spec.strip().partition("-")
    if not dash:
        return whole
    if first.strip() == "":  # suffix range: the last N bytes
        suffix = _number(last)
        if suffix is None:
            return whole
        if suffix == 0 or size == 0:
            raise Unsatisfiable()
        return ByteRange(max(0, size - suffix), size, partial=True)
    start = _number(first)
    end = _number(last) if last.strip() else None
    if start is None or (last.strip() and (end is None or end < start)):
        return whole
    if start >= size:
        raise Unsatisfiable()
    stop = size if end is None else min(end + 1, size)
    return ByteRange(start, stop, partial=True)
