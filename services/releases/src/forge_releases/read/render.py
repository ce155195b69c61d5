"""Release and attachment JSON with the wire names of docs/http.md (Gitea's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..counter import DownloadCounter
from ..models import Asset, Release, RepoRef
from ..urls import archive_url, download_url, release_page_url

UrlMap = Callable[[str], str]


def unchanged(url: str) -> str:
    return url


def attachment(
    app_url: str,
    ref: RepoRef,
    tag: str,
    asset: Asset,
    counter: DownloadCounter,
    url_for: UrlMap = unchanged,
) -> dict[str, Any]:
    return {
        "id": asset.id,
        "name": asset.name,
        "size": asset.size,
        # downloads not yet written by the batched counter are included
        "download_count": asset.download_count + counter.pending(asset.id),
        "created_at": asset.created_at,
        "uuid": asset.uuid,
        "browser_download_url": url_for(
            download_url(app_url, ref.owner, ref.name, tag, asset.name)
        ),
    }


# release safety's fields (docs/release-safety.md): version 2 only
SAFETY_FIELDS = ("withdrawn", "withdrawn_reason", "required", "critical")


def release(
    app_url: str,
    ref: RepoRef,
    rel: Release,
    counter: DownloadCounter,
    url_for: UrlMap = unchanged,
) -> dict[str, Any]:
    """`url_for` maps each download URL (signed for update keys: access_keys/signed_urls.py)."""
    page = release_page_url(app_url, ref.owner, ref.name, rel.tag)
    return {
        "id": rel.id,
        "tag_name": rel.tag,
        "target_commitish": rel.target,
        "name": rel.title,
        "body": rel.note,
        "url": page,
        "html_url": page,
        "tarball_url": archive_url(app_url, ref.owner, ref.name, rel.tag, ".tar.gz"),
        "zipball_url": archive_url(app_url, ref.owner, ref.name, rel.tag, ".zip"),
        "draft": rel.draft,
        "prerelease": rel.prerelease,
        # release safety (docs/release-safety.md), beside the spec's fields
        "withdrawn": rel.withdrawn,
        "withdrawn_reason": rel.withdrawn_reason,
        "required": rel.required,
        "critical": rel.critical,
        # the staged-rollout percentage, as PATCH or a rollout plan set it (docs/rollouts.md)
        "rollout": rel.rollout,
        "created_at": rel.created_at,
        "published_at": rel.created_at,  # docs/releases.md: always the creation time
        "assets": [attachment(app_url, ref, rel.tag, a, counter, url_for) for a in rel.assets],
    }
