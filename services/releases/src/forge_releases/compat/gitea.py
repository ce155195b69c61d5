"""Gitea's shapes (`/api/v1`): Release, Attachment and the Repository fields clients read."""

from __future__ import annotations

from typing import Any

from forge_common.accounts.models import Repository

from ..counter import DownloadCounter
from ..models import Release, RepoRef
from ..read.render import UrlMap, unchanged
from ..urls import repo_url
from . import mapping


def release(
    app_url: str,
    ref: RepoRef,
    rel: Release,
    counter: DownloadCounter,
    url_for: UrlMap = unchanged,
) -> dict[str, Any]:
    # Gitea's attachments are already the common core's (read/render.py attachment)
    return mapping.release(app_url, mapping.GITEA_ROOT, ref, rel, counter, url_for)


def repository(app_url: str, ref: RepoRef, repo: Repository) -> dict[str, Any]:
    html = repo_url(app_url, ref.owner, ref.name)
    return {
        "id": ref.repo_id,
        "name": ref.name,
        "full_name": f"{ref.owner}/{ref.name}",
        "owner": {"id": ref.owner_id, "login": ref.owner, "username": ref.owner},
        "description": repo.description,
        "private": repo.private,
        "archived": repo.archived,
        "html_url": html,
        "url": mapping.repo_api_url(app_url, mapping.GITEA_ROOT, ref),
        "has_releases": True,
        "created_at": repo.created_at,
        "updated_at": repo.updated_at,
    }
