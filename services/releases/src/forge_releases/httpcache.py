"""HTTP caching headers of the releases service: Cache-Control and the ETag of a JSON body.

Data anyone may read is `public`; anything that depends on who asks (a private repository, drafts
shown to an admin) is `private` with `Vary: Authorization`, so a shared cache never hands one
caller's answer to another. `no-cache` makes caches revalidate (cheap with the ETag), so a new
release is seen at once: stale update caches are what users of other servers complain about.
"""

from __future__ import annotations

import hashlib

from forge_common.conditional import quoted

PUBLIC = {"Cache-Control": "public, no-cache"}
PRIVATE = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}


def cache_headers(public: bool) -> dict[str, str]:
    return dict(PUBLIC if public else PRIVATE)


def etag_of(body: bytes) -> str:
    """A strong ETag derived from the bytes sent."""
    return quoted(hashlib.blake2b(body, digest_size=12).hexdigest())
