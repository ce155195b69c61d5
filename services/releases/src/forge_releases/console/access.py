"""Who may use a console page: the API's own resolution, then the access the action needs."""

from __future__ import annotations

from aiohttp import web
from forge_common.access import Access
from forge_common.accounts.sessions import session_of
from forge_common.auth import Viewer, viewer_of
from forge_common.errors import AuthTokenMissing

from ..errors import NoPublishAccess
from ..models import Resolved
from ..read.resolve import resolve


async def console_repo(
    request: web.Request, need: Access = Access.WRITE
) -> tuple[Resolved, Viewer]:
    """The repository of the path for a caller with `need`: RepoNotFound (404) to whoever may not
    see it, AuthTokenMissing (401, the page links to sign-in) to an anonymous visitor,
    NoPublishAccess (403) to whoever may see it but lacks `need` (publish/handlers.publisher's
    rules, which the API applies)."""
    resolved = await resolve(request)
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    if resolved.access < need:
        raise NoPublishAccess(need)
    return resolved, viewer


def console_links(request: web.Request, resolved: Resolved) -> dict[str, bool]:
    """What console links a public page shows its visitor: only to a signed-in browser whose
    user may act (never to anonymous visitors, update-key callers or readers)."""
    signed_in = session_of(request) is not None
    return {
        "publish": signed_in and resolved.access >= Access.WRITE,
        "admin": signed_in and resolved.access >= Access.ADMIN,
    }
