"""The signature of the events the outbox relay sends the gateway (docs/events.md).

Signature: `X-Forge-Timestamp: <unix seconds>` and `X-Forge-Signature: sha256=<hex>`, an
HMAC-SHA256 with EVENTS_SECRET over `<timestamp>.` followed by the body. The gateway refuses a
timestamp more than MAX_SKEW_SECONDS away from its clock, so a captured request cannot be replayed
later.
"""

from __future__ import annotations

import hashlib
import hmac

TIMESTAMP_HEADER = "X-Forge-Timestamp"
SIGNATURE_HEADER = "X-Forge-Signature"
MAX_SKEW_SECONDS = 300


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header value for `body` sent at `timestamp`."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def signature_problem(
    secret: str,
    timestamp: str | None,
    signature: str | None,
    body: bytes,
    *,
    now: float,
    max_skew: int = MAX_SKEW_SECONDS,
) -> str | None:
    """Why a signed request must be refused, or None when it is genuine and fresh."""
    if not timestamp or not signature:
        return "missing signature headers"
    if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > 12:
        return "malformed timestamp"
    if abs(now - int(timestamp)) > max_skew:
        return "stale timestamp"
    expected = sign(secret, int(timestamp), body)
    if not hmac.compare_digest(expected.encode(), signature.strip().encode()):
        return "bad signature"
    return None
