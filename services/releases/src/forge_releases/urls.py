"""Public addresses handed out by the API, built from APP_URL (which ends in `/`).

Path segments are percent-encoded, so a tag like `release/1.0` or a file name with spaces stays
one segment of the URL (docs/http.md).
"""

from __future__ import annotations

from urllib.parse import quote


def segment(value: str) -> str:
    return quote(value, safe="")


def repo_url(app_url: str, owner: str, repo: str) -> str:
    return f"{app_url}{segment(owner)}/{segment(repo)}"


def download_url(app_url: str, owner: str, repo: str, tag: str, name: str) -> str:
    """docs/releases.md Attachment.DownloadURL:
    `{app_url}<owner>/<repo>/releases/download/<tag>/<name>`."""
    return f"{repo_url(app_url, owner, repo)}/releases/download/{segment(tag)}/{segment(name)}"


def release_page_url(app_url: str, owner: str, repo: str, tag: str) -> str:
    return f"{repo_url(app_url, owner, repo)}/releases/tag/{segment(tag)}"


def archive_url(app_url: str, owner: str, repo: str, tag: str, suffix: str) -> str:
    return f"{repo_url(app_url, owner, repo)}/archive/{segment(tag)}{suffix}"


def api_releases_url(app_url: str, owner: str, repo: str) -> str:
    return f"{app_url}api/v2/repos/{segment(owner)}/{segment(repo)}/releases"
