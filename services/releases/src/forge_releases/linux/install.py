"""The repository page's "Install on Linux" (docs/pages.md): the one-line setup of the apt
repository (a deb822 `.sources` with `Signed-By` the repository's `key.asc`) and of the dnf
repository (the `.repo` file forge serves), shown when the newest stable release has a `.deb` or
`.rpm`; the package name is the one the package itself says (kept at upload)."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.keys import DB_POOL

from ..models import Release
from . import queries
from .packages import DEB, RPM, format_of


async def install_on_linux(
    request: web.Request, release: Release, url: str, owner: str, name: str
) -> dict[str, Any] | None:
    """{"apt": command, "dnf": command} for the formats `release` has; None when it has none."""
    ids = [asset.id for asset in release.assets if format_of(asset.name) is not None]
    if not ids:
        return None
    packages = await queries.packages_of(request.app[DB_POOL], ids)
    names = {
        fmt: sorted({p.name for p in packages.values() if p.format == fmt}) for fmt in (DEB, RPM)
    }
    slug = f"{owner}-{name}"
    found: dict[str, Any] = {}
    if names[DEB]:
        keyring = f"/etc/apt/keyrings/{slug}.asc"
        sources = (
            f"Types: deb\\nURIs: {url}/apt/\\nSuites: stable\\nComponents: main\\n"
            f"Signed-By: {keyring}\\n"
        )
        found["apt"] = (
            f"sudo curl -fsSLo {keyring} {url}/apt/key.asc && "
            f"printf '{sources}' | sudo tee /etc/apt/sources.list.d/{slug}.sources && "
            f"sudo apt update && sudo apt install {' '.join(names[DEB])}"
        )
    if names[RPM]:
        found["dnf"] = (
            f"sudo curl -fsSLo /etc/yum.repos.d/{slug}.repo {url}/rpm/stable.repo && "
            f"sudo dnf install {' '.join(names[RPM])}"
        )
    return found or None
