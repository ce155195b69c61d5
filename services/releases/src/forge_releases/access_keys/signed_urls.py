"""Short-lived signed URLs for requests authorised by an update key.

A signed URL is the plain download URL plus `key_id`, `expires` (Unix seconds) and `signature`:
HMAC-SHA256 with Settings.url_signing_secret over the key id, the expiry and the URL's path exactly
as sent (percent-encoded). The key id lets revocation invalidate the URL at once (grant.py looks
the key up on every use); the path binds the signature to one file.

`handed_out_url(request, url)` is the one hook through which every URL handed out to an updater
passes: signed when the request came through an update key, unchanged otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from forge_common.config import Settings

KEY_ID, EXPIRES, SIGNATURE = "key_id", "expires", "signature"
# what authorises a read in its query: an update key, or a signed URL's parts
KEY = "key"  # an update key itself (access_keys/grant.py)
CREDENTIAL_PARAMS = frozenset({KEY, KEY_ID, EXPIRES, SIGNATURE})
_MAX_SIGNATURE = 64  # base64url of 32 bytes is 43 characters


@dataclass(frozen=True, slots=True)
class UrlSigner:
    secret: bytes
    seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> UrlSigner:
        # An application built without a secret (tests, embedding) signs with a random one: never
        # a fixed default. `forge serve` fills or requires the secret (forge_common.config).
        secret = settings.url_signing_secret or secrets.token_urlsafe(32)
        return cls(secret.encode(), settings.signed_url_seconds)

    def _mac(self, key_id: int, expires: int, path: str) -> str:
        message = f"{key_id}\n{expires}\n{path}".encode()
        digest = hmac.new(self.secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def query(self, key_id: int, path: str, now: float) -> str:
        """The query string that signs `path` for `seconds` from `now`."""
        expires = int(now + self.seconds)
        return urlencode(
            {KEY_ID: key_id, EXPIRES: expires, SIGNATURE: self._mac(key_id, expires, path)}
        )

    def verify(self, query: Mapping[str, str], path: str, now: float) -> int | None:
        """The key id of a valid, unexpired signature of `path`; None otherwise."""
        raw_id, raw_expires, signature = (query.get(n, "") for n in (KEY_ID, EXPIRES, SIGNATURE))
        if not (raw_id.isdecimal() and raw_expires.isdecimal()) or len(raw_id) > 19:
            return None
        if len(raw_expires) > 12 or len(signature) > _MAX_SIGNATURE:
            return None
        key_id, expires = int(raw_id), int(raw_expires)
        if expires < now:
            return None
        expected = self._mac(key_id, expires, path)
        return key_id if hmac.compare_digest(expected, signature) else None


URL_SIGNER = web.AppKey("releases_url_signer", UrlSigner)
UPDATE_KEY_ID = web.RequestKey("update_key_id", int)  # set by grant.py on key-authorised requests


def signed(request: web.Request) -> bool:
    """Whether the request was authorised by an update key (its URLs must be signed)."""
    return UPDATE_KEY_ID in request


def handed_out_url(request: web.Request, url: str) -> str:
    """`url` (absolute, as built by forge_releases.urls) signed when `request` came through an
    update key; unchanged otherwise."""
    key_id = request.get(UPDATE_KEY_ID)
    if key_id is None:
        return url
    parts = urlsplit(url)
    query = request.app[URL_SIGNER].query(key_id, parts.path, time.time())
    return f"{url}{'&' if parts.query else '?'}{query}"
