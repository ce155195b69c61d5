"""The one mapping from our release model to both compat shapes.

Our version-2 wire names are already Gitea's (read/render.py), so that rendering is the common
core; this module adds what both platforms carry beyond it (the API addresses of the release and
of its assets), and gitea.py / github.py add what only one of them has.
"""

from __future__ import annotations

from typing import Any

from ..counter import DownloadCounter
from ..models import Release, RepoRef
from ..read import render
from ..urls import segment

GITEA_ROOT = "api/v1"
GITHUB_ROOT = "api/v3"


def repo_api_url(app_url: str, root: str, ref: RepoRef) -> str:
    return f"{app_url}{root}/repos/{segment(ref.owner)}/{segment(ref.name)}"


def release_api_url(app_url: str, root: str, ref: RepoRef, release_id: int) -> str:
    return f"{repo_api_url(app_url, root, ref)}/releases/{release_id}"


# forge's own fields of the version-2 release (release safety, the staged rollout): neither
# Gitea's nor GitHub's release has them, and their documents list exactly their own (compat.md)
VERSION_2_ONLY = (*render.SAFETY_FIELDS, "rollout")


def release(
    app_url: str,
    root: str,
    ref: RepoRef,
    rel: Release,
    counter: DownloadCounter,
    url_for: render.UrlMap = render.unchanged,
) -> dict[str, Any]:
    """The release as both platforms name it, with its API addresses under `root`; `url_for`
    maps each download URL (signed for update keys, as on version 2)."""
    data = render.release(app_url, ref, rel, counter, url_for)
    for name in VERSION_2_ONLY:
        del data[name]
    url = release_api_url(app_url, root, ref, rel.id)
    data.update(url=url, assets_url=f"{url}/assets", upload_url=f"{url}/assets")
    return data
