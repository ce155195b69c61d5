"""A repository's update-check candidates, from the cache or (on a miss) the database."""

from __future__ import annotations

from aiohttp import web
from forge_common.keys import DB_POOL

from ..keys import RELEASE_CACHE
from . import queries
from .cache import RepoReleases


async def repo_releases(app: web.Application, repo_id: int) -> RepoReleases:
    cache = app[RELEASE_CACHE]
    cached = cache.get_repo(repo_id)
    if cached is not None:
        return cached
    token = cache.token()
    stable, everything = await queries.candidates(app[DB_POOL], repo_id)
    loaded = RepoReleases(tuple(stable), tuple(everything))
    cache.put_repo(repo_id, loaded, token)
    return loaded
