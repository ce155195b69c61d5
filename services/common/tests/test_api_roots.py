"""Versioning rule 1 (docs/http.md): organization profile operations live under the version-1 root
`/api/v1`, release operations under `/api/v2`, in every installed service's route table."""

from __future__ import annotations

from forge_common.app import create_app
from forge_common.config import Settings
from forge_common.service import installed_services

# HTML pages for people (docs/pages.md), not API operations
PAGES = {
    "/{org}",
    "/avatars/{name}",
    "/{owner}/{repo}",
    "/{owner}/{repo}/releases",
    "/{owner}/{repo}/releases/tag/{tag}",
    "/{owner}/{repo}/download",
    "/",
    # sign-in and settings for browsers (docs/accounts.md), at Gitea's paths
    "/user/login",
    "/user/logout",
    "/user/settings/applications",
    "/user/settings/applications/delete",
    "/user/settings/account",
    "/user/settings/change_password",
    # Gitea's "New organization" and "New repository" (docs/accounts.md)
    "/org/create",
    "/repo/create",
    # the release console for signed-in publishers and organization owners (docs/console.md)
    "/{owner}/{repo}/releases/new",
    "/{owner}/{repo}/releases/edit/{tag}",
    "/{owner}/{repo}/releases/edit/{tag}/assets",
    "/{owner}/{repo}/releases/edit/{tag}/assets/delete",
    "/{owner}/{repo}/releases/edit/{tag}/rollout",
    "/{owner}/{repo}/releases/edit/{tag}/unpublish",
    # release safety's and the rollout plan's forms (docs/console.md)
    "/{owner}/{repo}/releases/edit/{tag}/withdraw",
    "/{owner}/{repo}/releases/edit/{tag}/safety",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/pause",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/resume",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/jump",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/finish",
    "/{owner}/{repo}/settings",
    "/{owner}/{repo}/settings/update-keys",
    "/{owner}/{repo}/settings/update-keys/revoke",
    "/{owner}/{repo}/settings/tauri-key",
    "/{owner}/{repo}/settings/linux-key",
    "/-/console.js",
    "/{org}/settings/pins",
    # a repository's insights for its admins and publishers (docs/insights.md)
    "/{owner}/{repo}/insights",
    # its audit log for its admins (docs/audit.md "In the console")
    "/{owner}/{repo}/audit",
}


# The Gitea- and GitHub-shaped release APIs (docs/compat.md): other platforms' roots, on purpose
COMPAT = ("/api/v1/repos/", "/api/v3/", "/{owner}/{repo}/releases.atom")


def paths_of(service: str) -> set[str]:
    settings = Settings(database_url="postgresql://unused/db")
    app = create_app(settings, [installed_services()[service]])
    return (
        {r.canonical for r in app.router.resources()} - {"/healthz", "/readyz", "/metrics"} - PAGES
    )


def test_versioning_rule_1_orgs_under_v1_releases_under_v2() -> None:
    orgs = paths_of("orgs")
    assert any(p.startswith("/api/v1/orgs/") for p in orgs)
    assert all(p.startswith("/api/v1/") for p in orgs)
    releases = {p for p in paths_of("releases") if "/releases/download/" not in p}
    releases -= {p for p in releases if "/releases/latest/download/" in p}
    # like the download URLs, the update.electronjs.org URL shape is fixed by the clients
    # (update-electron-app builds `{host}/{owner}/{repo}/{platform}-{arch}/{version}`;
    # docs/releases.md)
    releases -= {
        p for p in releases if p.startswith(("/{owner}/{repo}/darwin-", "/{owner}/{repo}/win32-"))
    }
    # Velopack's client asks `{base}/releases.{channel}.json` and `{base}/{FileName}` of the base
    # URL an app is built with (`{APP_URL}{owner}/{repo}/velopack`: docs/releases.md "Velopack")
    releases -= {p for p in releases if p.startswith("/{owner}/{repo}/velopack/")}
    # apt and dnf read a repository at the base URL of a `.sources` or `.repo` file
    # (`{APP_URL}{owner}/{repo}/apt/`, `.../rpm/{channel}/`: docs/releases.md "Linux package
    # repositories"), under which their layouts are fixed
    releases -= {
        p for p in releases if p.startswith(("/{owner}/{repo}/apt/", "/{owner}/{repo}/rpm/"))
    }
    releases -= {p for p in releases if p.startswith(COMPAT)}
    # the source archive addresses every release hands out (tarball_url, zipball_url: the spec's
    # TarURL/ZipURL form, `{owner}/{repo}/archive/{tag}.tar.gz`) are answered where they point
    releases -= {p for p in releases if p.startswith("/{owner}/{repo}/archive/")}
    assert any(p.startswith("/api/v2/repos/") for p in releases)
    assert all(p.startswith("/api/v2/") for p in releases)
