"""The one place every feed builds the URL of an asset it hands out.

Clients that cannot send headers (Squirrel's downloads, Tauri) must get URLs that authorise
themselves for private repositories: the update-key work signs URLs here, so no feed builds a
download URL any other way.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.keys import SETTINGS

from ..models import Asset, Release, RepoRef
from ..urls import download_url


def asset_url(request: web.Request, ref: RepoRef, release: Release, asset: Asset) -> str:
    """The absolute download URL of `asset`; its last segment is the file name (Squirrel reads the
    version from it)."""
    return download_url(request.app[SETTINGS].app_url, ref.owner, ref.name, release.tag, asset.name)
