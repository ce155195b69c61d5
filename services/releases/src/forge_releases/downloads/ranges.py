"""One byte range of a `Range: bytes=...` header (RFC 9110 §14).

Several ranges, another unit or a malformed header are ignored (the whole file is sent, which the
RFC allows); a well-formed range that starts past the end is unsatisfiable (416). Numbers of any
length are read without `int()` on thousands of digits: a number beyond any file size is `BEYOND`.
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


# Larger than any file (sizes are int64); a number with more digits than this is compared as it.
BEYOND = 2**63
_MAX_DIGITS = len(str(BEYOND))


def _number(text: str) -> int | None:
    """A byte position or count in ASCII decimal, capped at BEYOND; None when malformed.

    The digit count is checked before `int()`, which refuses more than 4,300 digits (Python's
    integer-string limit) and would cost quadratic time well before that."""
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"
    return BEYOND if len(digits) > _MAX_DIGITS else min(int(digits), BEYOND)


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
