"""The one place every feed builds the URL of an asset it hands out.

Clients that cannot send headers (Squirrel's downloads, Tauri) must get URLs that authorise
themselves for private repositories: a request authorised by an update key gets short-lived
signed URLs (access_keys/signed_urls.py), so no feed builds a download URL any other way.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.keys import SETTINGS

from ..access_keys.signed_urls import handed_out_url
from ..models import Asset, Release, RepoRef
from ..urls import download_url


def asset_url(request: web.Request, ref: RepoRef, release: Release, asset: Asset) -> str:
    """The absolute download URL of `asset`; its last segment is the file name (Squirrel reads the
    version from it)."""
    url = download_url(request.app[SETTINGS].app_url, ref.owner, ref.name, release.tag, asset.name)
    return handed_out_url(request, url)
