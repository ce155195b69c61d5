"""The byte ranges of a `Range: bytes=...` header (RFC 9110 §14).

One range is answered 206 with `Content-Range`; several (electron-updater's differential download
asks for up to 1,000 at once and reads the parts in order) 206 `multipart/byteranges`, each part in
the order asked, never merged or reordered. The whole file is sent (200, which the RFC allows) for
another unit, a malformed header, more than MAX_RANGES ranges, or ranges adding up to more than the
file (overlaps asking for the same bytes again and again: nginx's rule too). A header whose ranges
all start past the end is unsatisfiable (416); unsatisfiable ranges beside satisfiable ones are
dropped. Numbers of any length are read without `int()` on thousands of digits: a number beyond
any file size is `BEYOND`.
"""

from __future__ import annotations

from dataclasses import dataclass


class Unsatisfiable(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class ByteRange:
    start: int
    end: int  # exclusive

    @property
    def length(self) -> int:
        return self.end - self.start

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end - 1}/{size}"


# electron-updater sends at most 1,000 ranges a request (multipleRangeDownloader.ts)
MAX_RANGES = 1024
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


class _Malformed(ValueError):
    pass


def _one(spec: str, size: int) -> ByteRange | None:
    """One range-spec; None when unsatisfiable. Raises _Malformed."""
    first, dash, last = spec.strip().partition("-")
    if not dash:
        raise _Malformed()
    if first.strip() == "":  # suffix range: the last N bytes
        suffix = _number(last)
        if suffix is None:
            raise _Malformed()
        if suffix == 0 or size == 0:
            return None
        return ByteRange(max(0, size - suffix), size)
    start = _number(first)
    end = _number(last) if last.strip() else None
    if start is None or (last.strip() and (end is None or end < start)):
        raise _Malformed()
    if start >= size:
        return None
    return ByteRange(start, size if end is None else min(end + 1, size))


def parse_ranges(header: str, size: int) -> list[ByteRange] | None:
    """The ranges to send, in the order asked; None for the whole file. Raises Unsatisfiable."""
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes":
        return None
    specs = [s for s in spec.split(",") if s.strip()]
    if not specs or len(specs) > MAX_RANGES:
        return None
    try:
        parsed = [_one(s, size) for s in specs]
    except _Malformed:
        return None
    ranges = [r for r in parsed if r is not None]
    if not ranges:
        raise Unsatisfiable()
    if len(ranges) > 1 and sum(r.length for r in ranges) > size:
        return None
    return ranges
