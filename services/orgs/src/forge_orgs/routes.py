"""The route table of the orgs service: the version-1 organization profile API (docs/orgs.md)."""

from __future__ import annotations

from aiohttp import web
from forge_common.pages.render import CHANGE_PASSWORD_PATH

from . import openapi
from .accounts import api as accounts
from .accounts import settings as account_settings
from .accounts import signin
from .admin import orgs as org_admin
from .admin import repos as repo_admin
from .admin import teams as team_admin
from .groups import handlers as groups
from .pages import create, pins_console
from .pages import handlers as pages
from .pins import handlers as pins
from .profile import handlers as profile

V1 = "/api/v1"
SETTINGS = account_settings.APPLICATIONS
# An organization's page is `/{org}`; the names of top-level routes and prefixes are never orgs.
ORG_SEGMENT = (
    r"(?!(?:api|avatars|healthz|readyz|metrics|internal)\Z)[A-Za-z0-9][A-Za-z0-9._-]{0,38}"
)


def add_routes(app: web.Application) -> None:
    _add_api(app)
    _add_pages(app)


def _add_api(app: web.Application) -> None:
    # Fixed paths before the {repo} pattern they share a prefix with; aiohttp also falls through
    # to the next resource on a method mismatch, so a repository named "groups" can be unpinned.
    app.router.add_routes(
        [
            web.get(f"{V1}/openapi.json", openapi.serve),
            web.get(f"{V1}/orgs/{{org}}/pinned", pins.list_pins),
            web.post(f"{V1}/orgs/{{org}}/pinned", pins.add_pin),
            web.put(f"{V1}/orgs/{{org}}/pinned/reorder", pins.reorder_pins),
            web.get(f"{V1}/orgs/{{org}}/pinned/groups", groups.list_groups),
            web.post(f"{V1}/orgs/{{org}}/pinned/groups", groups.create_group),
            web.put(f"{V1}/orgs/{{org}}/pinned/groups/{{id}}", groups.update_group),
            web.delete(f"{V1}/orgs/{{org}}/pinned/groups/{{id}}", groups.delete_group),
            web.delete(f"{V1}/orgs/{{org}}/pinned/{{repo}}", pins.remove_pin),
            web.get(f"{V1}/orgs/{{org}}/overview", profile.overview),
            # Gitea's account administration (docs/accounts.md)
            web.get(f"{V1}/version", accounts.version),
            web.post(f"{V1}/admin/users", accounts.create_user),
            web.patch(f"{V1}/admin/users/{{username}}", accounts.edit_user),
            web.delete(f"{V1}/admin/users/{{username}}", accounts.delete_user),
            web.get(f"{V1}/user", accounts.current_user),
            web.post(f"{V1}/user/repos", repo_admin.create_user_repo),
            web.get(f"{V1}/users/{{username}}", accounts.get_user),
            web.get(f"{V1}/users/{{username}}/tokens", accounts.list_tokens),
            web.post(f"{V1}/users/{{username}}/tokens", accounts.create_token),
            web.delete(f"{V1}/users/{{username}}/tokens/{{token}}", accounts.delete_token),
            web.post(f"{V1}/orgs", org_admin.create_org),
            web.get(f"{V1}/orgs/{{org}}", org_admin.get_org),
            web.post(f"{V1}/orgs/{{org}}/repos", repo_admin.create_org_repo),
            web.get(f"{V1}/orgs/{{org}}/teams", team_admin.list_teams),
            web.post(f"{V1}/orgs/{{org}}/teams", team_admin.create_team),
            web.delete(f"{V1}/orgs/{{org}}/members/{{username}}", org_admin.remove_member),
            web.get(f"{V1}/teams/{{id}}", team_admin.get_team),
            web.put(f"{V1}/teams/{{id}}/members/{{username}}", team_admin.add_team_member),
            web.delete(f"{V1}/teams/{{id}}/members/{{username}}", team_admin.remove_team_member),
            web.put(f"{V1}/teams/{{id}}/repos/{{org}}/{{repo}}", team_admin.add_team_repo),
            web.delete(f"{V1}/teams/{{id}}/repos/{{org}}/{{repo}}", team_admin.remove_team_repo),
            web.get(f"{V1}/orgs/{{org}}/public_members/roles", profile.public_member_roles),
            web.put(f"{V1}/orgs/{{org}}/public_members/{{username}}", profile.publicize_member),
            web.delete(f"{V1}/orgs/{{org}}/public_members/{{username}}", profile.conceal_member),
        ]
    )


def _add_pages(app: web.Application) -> None:
    # Pages (docs/pages.md), last: `/{org}` is one segment that is not a top-level route's name.
    app.router.add_routes(
        [
            # sign-in and the signed-in user's settings (docs/accounts.md), Gitea's paths
            web.get("/user/login", signin.login_form),
            web.post("/user/login", signin.login),
            web.post("/user/logout", signin.logout),
            web.get(SETTINGS, account_settings.applications),
            web.post(SETTINGS, account_settings.create_token),
            web.post(f"{SETTINGS}/delete", account_settings.delete_token),
            web.get("/user/settings/account", account_settings.account),
            web.post("/user/settings/account", account_settings.change_password),
            web.get(CHANGE_PASSWORD_PATH, account_settings.must_change_form),
            web.post(CHANGE_PASSWORD_PATH, account_settings.must_change),
            web.get("/avatars/{name}", pages.avatar),
            # Gitea's "New organization" and "New repository" (docs/accounts.md)
            web.get(create.ORG_CREATE, create.org_form),
            web.post(create.ORG_CREATE, create.create_org),
            web.get(create.REPO_CREATE, create.repo_form),
            web.post(create.REPO_CREATE, create.create_repo),
            # the organization owner's pins page (docs/console.md "Pins")
            web.get(f"/{{org:{ORG_SEGMENT}}}/settings/pins", pins_console.pins_page),
            web.post(f"/{{org:{ORG_SEGMENT}}}/settings/pins", pins_console.pins_post),
            web.get(f"/{{org:{ORG_SEGMENT}}}", pages.org_page),
        ]
    )
