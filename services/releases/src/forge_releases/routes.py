"""The one route table of the releases service: the read side, the OpenAPI document, downloads
and the write side, in the order the router tries them."""

from __future__ import annotations

from functools import partial

from aiohttp import web
from forge_common.fast_path import Answerer, add_fast_path

from .access_keys import handlers as update_keys
from .audit_log import handlers as audit_log
from .compat import atom as compat_atom
from .compat import handlers as compat
from .compat import openapi as compat_openapi
from .compat import repo_admin
from .compat import writes as compat_writes
from .console.routes import console_routes
from .downloads import archives
from .downloads import handlers as downloads
from .feeds.registry import FEEDS, FILES
from .feeds.serving import fast_key
from .insights import handlers as insights
from .insights import page as insights_page
from .openapi import handler as openapi
from .pages import handlers as pages
from .pages import start
from .publish import handlers as publish
from .read import handlers as read
from .read.update_check import kept_response, update_check, update_check_key
from .rollouts import handlers as rollouts
from .safety.check import safe_update_check
from .signing_keys.handlers import routes_of
from .signing_keys.kinds import KINDS

API = "/api/v2/repos/{owner}/{repo}/releases"
# Pages (docs/pages.md) live at `/{owner}/{repo}...`: an owner is never a top-level route's name.
OWNER = r"(?!(?:api|avatars|healthz|readyz|metrics|internal|user)/)[A-Za-z0-9][A-Za-z0-9._-]{0,38}"
PAGE = f"/{{owner:{OWNER}}}/{{repo}}"
# The page routes (not in the OpenAPI document, which describes the API); the download page
# first: it is the one visited most, and the router tries routes in order.
PAGE_PATHS = (
    f"{PAGE}/download",
    PAGE,
    f"{PAGE}/releases",
    f"{PAGE}/releases/tag/{{tag}}",
    f"{PAGE}/insights",
)
KEYS = "/api/v2/repos/{owner}/{repo}/update_keys"
# forge's own update check with the rules of release safety (safety/check.py)
SAFE_UPDATE = "/api/v2/repos/{owner}/{repo}/update"
INSIGHTS = "/api/v2/repos/{owner}/{repo}/insights"
PLAN = f"{API}/{{release_id}}/rollout_plan"


def add_routes(app: web.Application) -> None:
    # the update check first: the router tries routes in order, and it is the hot path; its kept
    # answers, and the list's kept pages, are also given before routing (forge_common.fast_path)
    update, _, listing = app.router.add_routes(
        [
            web.get(f"{API}/update", update_check),
            web.get("/api/v2/openapi.json", openapi.serve),
            web.get(API, read.list_releases),
        ]
    )
    kept = partial(kept_response, app)
    add_fast_path(app, update, update_check_key, kept)
    add_fast_path(app, listing, read.list_key, partial(read.fast_list, app))
    _add_reads(app, kept)
    _add_writes(app)
    add_compat_routes(app)
    _add_pages(app)


def _add_reads(app: web.Application, kept: Answerer) -> None:
    """A release, its files, and the update feeds (the router tries routes in order)."""
    app.router.add_routes(
        [
            # literal suffixes before {tag}: `update` and `latest` are not tags here
            web.get(f"{API}/latest", read.latest_release),
            web.get(f"{API}/{{tag}}", read.get_release),
            web.get(SAFE_UPDATE, safe_update_check),
            web.get("/{owner}/{repo}/releases/download/{tag}/{name}", downloads.download),
            web.get("/{owner}/{repo}/releases/latest/download/{name}", downloads.latest_download),
            # tarball_url / zipball_url (downloads/archives.py)
            web.get(f"{PAGE}/archive/{{file}}", archives.archive),
        ]
    )
    # update feeds (feeds/): literal prefixes keep them off the download routes above; each one's
    # kept answers are given before routing too, as the update check's (docs/decisions.md)
    for feed in FEEDS:  # feeds/registry.py
        route = app.router.add_get(feed.path, feed.handler)
        answer = (
            kept if feed.stepped is None else partial(kept_response, app, kept_as=feed.kept_key)
        )
        add_fast_path(app, route, fast_key(feed), answer)
    app.router.add_routes([web.get(files.path, files.handler) for files in FILES])


def _add_writes(app: web.Application) -> None:
    app.router.add_routes(
        [
            # write side (publish/handlers.py)
            web.post(API, publish.create_release),
            web.patch(f"{API}/{{release_id}}", publish.update_release),
            web.delete(f"{API}/{{release_id}}", publish.delete_release),
            web.post(
                f"{API}/{{release_id}}/assets",
                publish.upload_asset,
                expect_handler=publish.defer_continue,
            ),
            web.delete(f"{API}/{{release_id}}/assets/{{asset_id}}", publish.delete_asset),
            # update keys (access_keys/handlers.py): beside releases/, never a {tag} of it
            web.post(KEYS, update_keys.create_key),
            web.get(KEYS, update_keys.list_keys),
            web.delete(f"{KEYS}/{{key_id}}", update_keys.revoke_key),
            # the repository's signing keys, one path per kind (signing_keys/kinds.py)
            *(route for kind in KINDS for route in routes_of(kind)),
            # insights for admins and publishers (insights/handlers.py)
            web.get(INSIGHTS, insights.insights),
            # the audit log (audit_log/handlers.py): repository admins, site admins
            web.get("/api/v2/repos/{owner}/{repo}/audit", audit_log.repo_audit),
            web.get("/api/v2/admin/audit", audit_log.admin_audit),
            # rollout plans (rollouts/handlers.py)
            web.put(PLAN, rollouts.put_plan),
            web.get(PLAN, rollouts.get_plan),
            web.post(f"{PLAN}/pause", rollouts.pause_plan),
            web.post(f"{PLAN}/resume", rollouts.resume_plan),
            web.post(f"{PLAN}/jump", rollouts.jump_plan),
            web.post(f"{PLAN}/finish", rollouts.finish_plan),
            web.post(f"{API}/{{release_id}}/health", rollouts.post_health),
        ]
    )


def _add_pages(app: web.Application) -> None:
    # The release console (console/): literal suffixes under `/{owner}/{repo}`, before the pages.
    app.router.add_routes(console_routes(PAGE))
    # Pages last: literal suffixes only, so feeds and other `/{owner}/{repo}/...` routes stay free.
    app.router.add_routes([web.get("/", start.start_page)])
    app.router.add_routes(
        [
            web.get(path, handler)
            for path, handler in zip(
                PAGE_PATHS,
                (
                    pages.download_page,
                    pages.repo_page,
                    pages.releases_page,
                    pages.release_page,
                    insights_page.insights_page,
                ),
                strict=True,
            )
        ]
    )


# The Gitea (`/api/v1`) and GitHub Enterprise (`/api/v3`) shapes of the same API (docs/compat.md),
# at the repository paths their documents name.
GITEA, GITHUB = compat_openapi.GITEA, compat_openapi.GITHUB


def add_compat_routes(app: web.Application) -> None:
    upload = {"expect_handler": publish.defer_continue}
    app.router.add_routes(
        [
            web.get(compat_openapi.GITEA_DOC, compat_openapi.serve_gitea),
            web.get(compat_openapi.GITHUB_DOC, compat_openapi.serve_github),
            web.get(f"{GITEA}/releases", compat.gitea_list),
            web.get(f"{GITEA}/releases/latest", compat.gitea_latest),
            web.get(f"{GITEA}/releases/tags/{{tag}}", compat.gitea_by_tag),
            web.get(f"{GITEA}/releases/{{release_id}}", compat.gitea_by_id),
            web.get(f"{GITEA}/releases/{{release_id}}/assets", compat.gitea_assets),
            web.get(f"{GITEA}/releases/{{release_id}}/assets/{{asset_id}}", compat.gitea_asset),
            web.get(GITEA, compat.gitea_repo),
            # Gitea's repository administration (docs/accounts.md)
            web.patch(GITEA, repo_admin.edit_repo),
            web.delete(GITEA, repo_admin.delete_repo),
            web.put(f"{GITEA}/collaborators/{{collaborator}}", repo_admin.add_collaborator),
            web.delete(f"{GITEA}/collaborators/{{collaborator}}", repo_admin.remove_collaborator),
            web.post(f"{GITEA}/releases", compat_writes.gitea_create),
            web.patch(f"{GITEA}/releases/{{release_id}}", compat_writes.gitea_edit),
            web.delete(f"{GITEA}/releases/{{release_id}}", publish.delete_release),
            web.post(
                f"{GITEA}/releases/{{release_id}}/assets", compat_writes.gitea_upload, **upload
            ),
            web.delete(
                f"{GITEA}/releases/{{release_id}}/assets/{{asset_id}}", publish.delete_asset
            ),
            web.get(f"{GITHUB}/releases", compat.github_list),
            web.get(f"{GITHUB}/releases/latest", compat.github_latest),
            web.get(f"{GITHUB}/releases/tags/{{tag}}", compat.github_by_tag),
            web.get(f"{GITHUB}/releases/assets/{{asset_id}}", compat.github_asset),
            web.get(f"{GITHUB}/releases/{{release_id}}", compat.github_by_id),
            web.get(f"{GITHUB}/releases/{{release_id}}/assets", compat.github_assets),
            web.get(GITHUB, compat.github_repo),
            web.post(f"{GITHUB}/releases", compat_writes.github_create),
            web.patch(f"{GITHUB}/releases/{{release_id}}", compat_writes.github_edit),
            web.delete(f"{GITHUB}/releases/assets/{{asset_id}}", compat_writes.github_delete_asset),
            web.delete(f"{GITHUB}/releases/{{release_id}}", publish.delete_release),
            web.post(
                f"{GITHUB}/releases/{{release_id}}/assets", compat_writes.github_upload, **upload
            ),
            # before the pages: `releases.atom` is not a page
            web.get(f"{PAGE}/releases.atom", compat_atom.releases_atom),
        ]
    )
