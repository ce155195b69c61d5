"""Repository resolution for every release endpoint, download and publishing route
(docs/access.md "Authentication rules" 1-6).

In order: the owner by name (404); an owner the caller may not see (a private organization to a
non-member, a limited one to an anonymous caller: `forge_common.access.owner_visible`) is 404 too,
before anything else is decided, so nobody learns that a repository exists inside it; the
repository under the owner (404); then access through `forge_common.access` with
`release_api=True`: public repositories and private ones with a public landing page or public
releases are readable by anyone who can see the owner (rules 3-4); otherwise an anonymous caller
gets AuthTokenMissing (rule 5) and a signed-in caller without access 404 (rule 6). The caller who
is the owner (rule 1) has admin through the same decision. An anonymous read carrying an update
key or a signed URL is decided by access_keys/grant.py instead: read access, or 404.

The path → repository step is cached (cache.py) with what an anonymous caller may do and whether
they may see the owner, so an anonymous request for public data runs no query on a hit; a
signed-in caller's visibility and access are looked up on every request (one query).

A repository that does not exist costs the same work as one the caller may not see (docs/access.md
"Timing"): the lookup runs the same three queries whatever it finds, and a missing repository
still looks up the caller's access or the update key, against an id no repository has, so no
response time tells the two apart.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.access import Access, access_facts, decide, owner_visible
from forge_common.accounts.queries import account_by_name, repository_by_name
from forge_common.auth import Viewer, viewer_of
from forge_common.errors import AuthTokenMissing, RepoNotFound
from forge_common.keys import DB_POOL
from forge_common.names import is_account_name, is_repo_name

from ..access_keys.grant import authorise_by_key, carries_key
from ..keys import RELEASE_CACHE
from ..models import RepoRef, Resolved
from .cache import MISSING, RepoEntry

# No account or repository has this id: the queries run for a missing one find nothing.
NO_ID = 0


async def _as_for_a_hidden_repository(request: web.Request, viewer: Viewer | None) -> None:
    """The work `resolve` does before refusing a repository the caller may not see, done for one
    that does not exist: the update key's lookup, or the signed-in caller's access query."""
    if viewer is None and carries_key(request):
        await authorise_by_key(request, NO_ID)  # finds no key of repository 0: RepoNotFound
    elif viewer is not None:
        await access_facts(request.app[DB_POOL], viewer, [NO_ID])


async def _lookup(app: web.Application, owner: str, repo: str) -> RepoEntry | None:
    cache = app[RELEASE_CACHE]
    # keyed by the path as written: each spelling is one entry, found without any work
    key = (owner, repo)
    cached = cache.get_name(key)
    if cached is not MISSING:
        return cached
    token = cache.token()
    if not (is_account_name(owner) and is_repo_name(repo)):
        # cannot exist (forge_common.names); not cached, so junk paths cannot crowd out real ones
        return None
    pool = app[DB_POOL]
    entry = None
    # the same three queries whether the owner and the repository exist or not (timing)
    account = await account_by_name(pool, owner)
    account_id = account.id if account is not None else NO_ID
    repository = await repository_by_name(pool, account_id, repo)
    repo_id = repository.id if repository is not None else NO_ID
    facts = (await access_facts(pool, None, [repo_id])).get(repo_id)
    if account is not None and repository is not None and facts is not None:
        ref = RepoRef(
            account.id, account.name, repository.id, repository.name, repository.description
        )
        visible = owner_visible(facts, None)
        anonymous = decide(facts, None, release_api=True) if visible else Access.NONE
        entry = RepoEntry(ref, anonymous, owner_visible_to_anonymous=visible)
    cache.put_name(key, entry, token)
    return entry


async def resolve(request: web.Request) -> Resolved:
    """The repository of `{owner}/{repo}` in the path, or the error the rules give."""
    entry = await _lookup(request.app, request.match_info["owner"], request.match_info["repo"])
    viewer = viewer_of(request)
    if entry is None:
        await _as_for_a_hidden_repository(request, viewer)
        raise RepoNotFound()
    if viewer is None and carries_key(request):
        # an update key or a URL signed under one (docs/access.md "Update keys"): read only,
        # and never public, since the answers carry URLs signed for this caller
        await authorise_by_key(request, entry.ref.repo_id)
        return Resolved(entry.ref, Access.READ, False)
    if viewer is None:
        if entry.for_anonymous is not None:
            return entry.for_anonymous
        if not entry.owner_visible_to_anonymous:
            raise RepoNotFound()  # a hidden owner does not exist for this caller
        raise AuthTokenMissing()
    pool = request.app[DB_POOL]
    facts = (await access_facts(pool, viewer, [entry.ref.repo_id])).get(entry.ref.repo_id)
    if facts is None or not owner_visible(facts, viewer):
        raise RepoNotFound()
    level = decide(facts, viewer, release_api=True)
    if level == Access.NONE:
        raise RepoNotFound()
    return Resolved(entry.ref, level, entry.for_anonymous is not None)


# the path → repository step alone, for a request that is not one (insights/proxy_log.py)
lookup = _lookup
