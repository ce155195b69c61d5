"""Where the `forge release` commands connect and as whom: OWNER/REPO, FORGE_URL and FORGE_TOKEN,
checked before any network (`forge release publish`, `forge release keys`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .client import PublishError

DEFAULT_URL = "http://localhost:8080/"  # where `make run` serves


@dataclass(frozen=True, slots=True)
class Target:
    base_url: str  # ends in '/'
    token: str
    owner: str
    repo: str


def target(repository: str, env: Mapping[str, str]) -> Target:
    """The repository and server to talk to, or PublishError with a message for the user."""
    owner, slash, repo = repository.partition("/")
    if not slash or not owner or not repo or "/" in repo:
        raise PublishError(f"{repository!r} is not OWNER/REPO")
    token = env.get("FORGE_TOKEN", "").strip()
    if not token:
        raise PublishError("FORGE_TOKEN is not set: create an access token and export it")
    base_url = env.get("FORGE_URL", "").strip() or DEFAULT_URL
    if not base_url.startswith(("http://", "https://")):
        raise PublishError(f"FORGE_URL must start with http:// or https://, not {base_url!r}")
    return Target(base_url if base_url.endswith("/") else base_url + "/", token, owner, repo)
