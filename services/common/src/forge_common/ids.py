"""Numeric ids taken from paths: one rule for every route that names a row by its id."""

from __future__ import annotations

INT64_MAX = 2**63 - 1
_MAX_DIGITS = len(str(INT64_MAX))


def positive_int64(raw: str) -> int | None:
    """The positive int64 that `raw` spells in ASCII decimal (an optional leading `+`, as Go's
    `strconv.ParseInt` takes it), or None: the caller then answers 404 or treats `raw` as a name.

    The length is checked before `int()`, so thousands of digits cost nothing and never reach
    Python's integer-string limit; `int()` alone would also take `1_0`, spaces and non-ASCII digits.
    """
    digits = raw[1:] if raw[:1] == "+" else raw
    if not (0 < len(digits) <= _MAX_DIGITS and digits.isascii() and digits.isdigit()):
        return None
    value = int(digits)
    return value if 0 < value <= INT64_MAX else None
