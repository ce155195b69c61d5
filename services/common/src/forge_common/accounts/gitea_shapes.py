"""Gitea's JSON shapes for accounts (modules/structs: User, Organization, Repository, Team,
AccessToken), with the fields gitea-js, tea and Gitea's Terraform provider read. Fields forge has
no notion of carry Gitea's neutral values (no followers, no stars, no forks).

Privacy: a user's e-mail, admin flag and login details are shown only to that user and to site
admins, as Gitea's convert.ToUser does for callers who are neither.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ..auth import Viewer
from .models import Account, Repository
from .tokens import AccessToken

JSON = dict[str, Any]
# What `GET /api/v1/version` answers: the Gitea release whose API shapes forge follows (gitea-js
# 1.23 is the client the tests drive). Gitea's Go SDK, tea and the Terraform provider read it to
# decide which calls the server has.
GITEA_API_VERSION = "1.23.0"
# Gitea's "never" (Go's zero time), for timestamps forge does not keep
ZERO_TIME = "0001-01-01T00:00:00Z"


def _segment(name: str) -> str:
    return quote(name, safe="")


def user(app_url: str, account: Account, viewer: Viewer | None) -> JSON:
    authed = viewer is not None and (viewer.id == account.id or viewer.is_admin)
    return {
        "id": account.id,
        "login": account.name,
        "login_name": "",
        "source_id": 0,
        "full_name": account.full_name,
        "email": account.email if authed else "",
        "avatar_url": f"{app_url}avatars/{_segment(account.name)}",
        "html_url": f"{app_url}{_segment(account.name)}",
        "language": "",
        "is_admin": account.is_admin if authed else False,
        "last_login": ZERO_TIME,
        "created": account.created_at,
        "restricted": False,
        "active": True,
        "prohibit_login": False,
        "location": account.location,
        "website": account.website,
        "description": account.description,
        "visibility": "public",
        "followers_count": 0,
        "following_count": 0,
        "starred_repos_count": 0,
        "username": account.name,
    }


def owner(app_url: str, account: Account, viewer: Viewer | None) -> JSON:
    """A repository's owner: Gitea renders organizations as users there."""
    data = user(app_url, account, viewer)
    if account.is_org:
        data["visibility"] = account.visibility
        data["email"] = account.email
    return data


def organization(app_url: str, org: Account) -> JSON:
    return {
        "id": org.id,
        "name": org.name,
        "full_name": org.full_name,
        "email": org.email,
        "avatar_url": f"{app_url}avatars/{_segment(org.name)}",
        "description": org.description,
        "website": org.website,
        "location": org.location,
        "visibility": org.visibility,
        "repo_admin_change_team_access": False,
        "username": org.name,
    }


def repository(
    app_url: str,
    owner_account: Account,
    repo: Repository,
    viewer: Viewer | None,
    *,
    admin: bool,
    push: bool,
) -> JSON:
    full_name = f"{owner_account.name}/{repo.name}"
    html_url = f"{app_url}{_segment(owner_account.name)}/{_segment(repo.name)}"
    return {
        "id": repo.id,
        "owner": owner(app_url, owner_account, viewer),
        "name": repo.name,
        "full_name": full_name,
        "description": repo.description,
        "empty": True,
        "private": repo.private,
        "fork": False,
        "template": False,
        "mirror": False,
        "size": 0,
        "language": "",
        "languages_url": "",
        "html_url": html_url,
        "url": f"{app_url}api/v1/repos/{_segment(owner_account.name)}/{_segment(repo.name)}",
        "link": "",
        "ssh_url": "",
        "clone_url": "",
        "original_url": "",
        "website": "",
        "stars_count": 0,
        "forks_count": 0,
        "watchers_count": 0,
        "open_issues_count": 0,
        "open_pr_counter": 0,
        "release_counter": 0,
        "default_branch": "main",
        "archived": repo.archived,
        "created_at": repo.created_at,
        "updated_at": repo.updated_at,
        "archived_at": repo.updated_at if repo.archived else "1970-01-01T00:00:00Z",
        "permissions": {"admin": admin, "push": push, "pull": True},
        "has_issues": False,
        "has_wiki": False,
        "has_pull_requests": False,
        "has_projects": False,
        "has_releases": True,
        "has_packages": False,
        "has_actions": False,
        "internal": False,
        "mirror_interval": "",
        "object_format_name": "sha1",
        "avatar_url": "",
        # forge's own: who may read a private repository's landing page and releases
        "public_landing": repo.public_landing,
        "public_releases": repo.public_releases,
    }


# Gitea's units a team's permission applies to; forge has releases and code pages only, but
# clients that read `units_map` expect Gitea's keys.
_UNITS = (
    "repo.code",
    "repo.issues",
    "repo.ext_issues",
    "repo.wiki",
    "repo.ext_wiki",
    "repo.pulls",
    "repo.releases",
    "repo.projects",
    "repo.packages",
    "repo.actions",
)


def team(
    app_url: str,
    team_id: int,
    name: str,
    description: str,
    permission: str,
    org: Account,
    includes_all_repositories: bool = False,
) -> JSON:
    return {
        "id": team_id,
        "name": name,
        "description": description,
        "organization": organization(app_url, org),
        "includes_all_repositories": includes_all_repositories,
        "permission": permission,
        "units": list(_UNITS),
        "units_map": dict.fromkeys(_UNITS, permission),
        "can_create_org_repo": permission == "admin",
    }


def access_token(token: AccessToken, secret: str = "") -> JSON:
    """`sha1` holds the token itself only in the answer that created it, as in Gitea."""
    return {
        "id": token.id,
        "name": token.name,
        "sha1": secret,
        "token_last_eight": token.token_last_eight,
        "scopes": list(token.scopes),
        "created_at": token.created_at,
        "last_used_at": token.last_used_at or ZERO_TIME,
    }
