"""The access step of update keys, called by the repository resolver (read/resolve.py) for an
anonymous read (GET or HEAD, no `Authorization`) that carries `key` or `signature`, and for a
read that sends the key itself as `Authorization: token forge_uk_...` (Velopack's clients can
send it no other way; forge_common.auth leaves such a request anonymous in this service).

A valid key of this repository, or a valid unexpired signature under a key of this repository that
still exists, gives read access and marks the request (signed_urls.UPDATE_KEY_ID) so every URL it
hands out is signed. Anything else is 404 `Repository not found`: a bad, revoked or foreign key
answers exactly as a repository that does not exist (**privacy**). A token in `Authorization`
takes precedence: the key is then ignored, and so are writes (keys are read-only).
"""

from __future__ import annotations

import time

from aiohttp import hdrs, web
from forge_common.auth import HEADER_UPDATE_KEY, hash_token, is_anonymous
from forge_common.errors import RepoNotFound
from forge_common.keys import DB_POOL

from . import queries
from .signed_urls import KEY, SIGNATURE, UPDATE_KEY_ID, URL_SIGNER

_READS = frozenset({hdrs.METH_GET, hdrs.METH_HEAD})
_MAX_KEY = 200


def names_key(request: web.BaseRequest) -> bool:
    """Whether the query names an update key or a URL signature, whoever sends it."""
    query = request.query
    return KEY in query or SIGNATURE in query


def carries_key(request: web.Request) -> bool:
    """Whether this request asks to be authorised by an update key or a signed URL."""
    if request.method not in _READS:
        return False
    if HEADER_UPDATE_KEY in request:
        return True
    return is_anonymous(request) and names_key(request)


async def authorise_by_key(request: web.Request, repo_id: int) -> None:
    """Read access to repository `repo_id` for this request, or RepoNotFound."""
    pool = request.app[DB_POOL]
    query = request.query
    key_id: int | None
    if HEADER_UPDATE_KEY in request or KEY in query:
        key = request[HEADER_UPDATE_KEY] if HEADER_UPDATE_KEY in request else query[KEY]
        if not key or len(key) > _MAX_KEY or not key.isprintable():
            raise RepoNotFound()
        key_id = await queries.key_by_digest(pool, repo_id, hash_token(key))
    else:
        signer = request.app[URL_SIGNER]
        key_id = signer.verify(query, request.rel_url.raw_path, time.time())
        if key_id is not None and not await queries.key_exists(pool, repo_id, key_id):
            key_id = None
    if key_id is None:
        raise RepoNotFound()
    request[UPDATE_KEY_ID] = key_id
    await _note_use(request.app, key_id)


# When this process last wrote each key's last use: the column is written at most once a minute
# per key, so a busy updater costs no write per request.
LAST_USE_EVERY = 60.0
LAST_USE_WRITTEN = web.AppKey("forge_update_key_last_use", dict[int, float])  # service.setup


async def _note_use(app: web.Application, key_id: int) -> None:
    written = app[LAST_USE_WRITTEN]
    now = time.monotonic()
    if now - written.get(key_id, -LAST_USE_EVERY) < LAST_USE_EVERY:
        return
    written[key_id] = now
    if len(written) > 10_000:  # revoked keys' entries: forget them all now and then
        written.clear()
        written[key_id] = now
    await queries.mark_used(app[DB_POOL], key_id)
