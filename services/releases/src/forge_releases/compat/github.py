"""GitHub's shapes (`/api/v3`, the GitHub Enterprise layout): release, release asset and the
repository fields clients read. `upload_url` is a URI template, as GitHub's; `node_id`s are
opaque and stable (a type and our id, base64)."""

from __future__ import annotations

import base64
from typing import Any

from forge_common.accounts.models import Repository

from ..counter import DownloadCounter
from ..models import Asset, Release, RepoRef
from ..read.render import UrlMap, unchanged
from ..urls import repo_url
from . import mapping


def node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"{kind}:{number}".encode()).decode()


def assets_api_url(app_url: str, ref: RepoRef) -> str:
    """The API address of the repository's assets, each at `{this}/{asset_id}`."""
    return f"{mapping.repo_api_url(app_url, mapping.GITHUB_ROOT, ref)}/releases/assets"


def asset(assets_url: str, common: dict[str, Any], stored: Asset) -> dict[str, Any]:
    """An asset from the common core's attachment (`common`, completed in place) and its stored
    row; `assets_url` is `assets_api_url(...)`, computed once per answer."""
    common["url"] = f"{assets_url}/{stored.id}"
    common["node_id"] = node_id("ReleaseAsset", stored.id)
    common["label"] = ""
    common["state"] = "uploaded"
    common["content_type"] = stored.content_type
    common["updated_at"] = stored.created_at
    return common


def release(
    app_url: str,
    ref: RepoRef,
    rel: Release,
    counter: DownloadCounter,
    url_for: UrlMap = unchanged,
) -> dict[str, Any]:
    data = mapping.release(app_url, mapping.GITHUB_ROOT, ref, rel, counter, url_for)
    data["upload_url"] += "{?name,label}"
    data["node_id"] = node_id("Release", rel.id)
    assets_url = assets_api_url(app_url, ref)
    for common, stored in zip(data["assets"], rel.assets, strict=True):
        asset(assets_url, common, stored)
    return data


def repository(app_url: str, ref: RepoRef, repo: Repository) -> dict[str, Any]:
    api = mapping.repo_api_url(app_url, mapping.GITHUB_ROOT, ref)
    return {
        "id": ref.repo_id,
        "node_id": node_id("Repository", ref.repo_id),
        "name": ref.name,
        "full_name": f"{ref.owner}/{ref.name}",
        "owner": {"id": ref.owner_id, "login": ref.owner, "node_id": node_id("User", ref.owner_id)},
        "private": repo.private,
        "visibility": "private" if repo.private else "public",
        "archived": repo.archived,
        "description": repo.description,
        "html_url": repo_url(app_url, ref.owner, ref.name),
        "url": api,
        "releases_url": f"{api}/releases{{/id}}",
        "created_at": repo.created_at,
        "updated_at": repo.updated_at,
    }
