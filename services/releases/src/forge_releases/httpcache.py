"""HTTP caching headers of the releases service: Cache-Control and the ETag of a JSON body.

Data anyone may read is `public`; anything that depends on who asks (a private repository, drafts
shown to an admin) is `private` with `Vary: Authorization`, so a shared cache never hands one
caller's answer to another. `no-cache` makes caches revalidate (cheap with the ETag), so a new
release is seen at once: stale update caches are what users of other servers complain about.

nginx's micro-cache (docs/operations.md "Micro-cache") keeps public answers of the release API; a
public answer says until when with `X-Accel-Expires` (`micro_cache_until`), which nginx reads and
never passes on.
"""

from __future__ import annotations

PUBLIC = {"Cache-Control": "public, no-cache"}
PRIVATE = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}


def cache_headers(public: bool) -> dict[str, str]:
    return dict(PUBLIC if public else PRIVATE)


MICRO_CACHE_UNTIL = "X-Accel-Expires"


def micro_cache_until(second: int) -> str:
    """The end of the whole `second` (`int(time.time())` when the answer is made), as nginx reads
    `X-Accel-Expires`: `@<unix second>`
    is an absolute expiry, fresh while nginx's clock (whole seconds) has not passed it, so an
    answer is kept until the next second starts and a publish shows within 1 s. The relative form
    (or `proxy_cache_valid 1s`) counts from nginx's whole second: 1 to 2 s. nginx and the service
    read the same clock on one machine; across machines their offset (NTP: milliseconds) adds."""
    return f"@{second}"
