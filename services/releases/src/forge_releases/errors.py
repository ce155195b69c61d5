"""The releases service's 404s (DESIGN §4 codes and the spec's messages); the rest of the error
tree is `forge_common.errors`."""

from __future__ import annotations

from forge_common.errors import NotFound


class RepoNotFound(NotFound):
    code = "RepoNotFound"

    def __init__(self) -> None:
        super().__init__("Repository not found")


class ReleaseNotFound(NotFound):
    code = "ReleaseNotFound"

    def __init__(self) -> None:
        super().__init__("Release not found")


class NoReleasesFound(NotFound):
    code = "NoReleasesFound"

    def __init__(self) -> None:
        super().__init__("No releases found")


class AssetNotFound(NotFound):
    code = "AssetNotFound"

    def __init__(self) -> None:
        super().__init__("Asset not found")
