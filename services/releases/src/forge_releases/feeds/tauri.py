"""Tauri v2 updater feeds (plugin-updater): the dynamic endpoint's `{version, url, signature,
notes, pub_date}` and the static `latest.json` with its `platforms` map.

Rules read from the client: 204 is "no update"; `version` and never also `name` (a body with both
fails to parse); `signature` required (the `.sig` companion asset's text); `pub_date` strict
RFC 3339. Targets `darwin|linux|windows`, arches `x86_64|aarch64|i686|armv7`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import semver
from forge_common.asset_match import DARWIN, LINUX, WINDOWS, canonical_arch, ranked
from forge_common.render import rfc3339

from ..models import Asset, Release
from .signatures import companion

Link = Callable[[Release, Asset], str]
Sign = Callable[[Asset], Awaitable[str | None]]

# Tauri target → (our platform, updater bundles in order of preference)
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "darwin": (DARWIN, (".app.tar.gz",)),
    "linux": (LINUX, (".appimage", ".appimage.tar.gz")),
    "windows": (WINDOWS, ("-setup.exe", ".msi", ".nsis.zip", ".msi.zip")),
}
TAURI_ARCHS = ("x86_64", "aarch64", "i686", "armv7")


async def signed_bundle(
    release: Release, target: str, arch: str, sign: Sign
) -> tuple[Asset, str] | None:
    """The best bundle of `release` for `target`/`arch` that has a readable `.sig`."""
    platform, kinds = TARGETS[target]
    wanted = canonical_arch(arch) or arch.lower()
    for asset in ranked(release.assets, platform, wanted, kinds):
        sig = companion(release.assets, asset)
        if sig is not None and (text := await sign(sig)) is not None:
            return asset, text
    return None


async def dynamic(
    candidates: Sequence[tuple[semver.Version, Release]],
    current: semver.Version,
    target: str,
    arch: str,
    link: Link,
    sign: Sign,
) -> dict[str, Any] | None:
    """The newest release above `current` with a signed bundle, or None (204)."""
    for version, release in candidates:
        if version <= current:
            return None
        found = await signed_bundle(release, target, arch, sign)
        if found is not None:
            asset, signature = found
            return {
                "version": str(version),
                "url": link(release, asset),
                "signature": signature,
                "notes": release.note,
                "pub_date": rfc3339(release.created_at),
            }
    return None


async def static(
    candidates: Sequence[tuple[semver.Version, Release]], link: Link, sign: Sign
) -> dict[str, Any] | None:
    """latest.json of the newest release with any signed bundle, or None."""
    for version, release in candidates:
        platforms: dict[str, dict[str, str]] = {}
        for target in TARGETS:
            for arch in TAURI_ARCHS:
                found = await signed_bundle(release, target, arch, sign)
                if found is not None:
                    asset, signature = found
                    platforms[f"{target}-{arch}"] = {
                        "signature": signature,
                        "url": link(release, asset),
                    }
        if platforms:
            return {
                "version": str(version),
                "notes": release.note,
                "pub_date": rfc3339(release.created_at),
                "platforms": platforms,
            }
    return None
