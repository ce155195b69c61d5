"""Warnings of `forge release publish` about the spec's own update check: its suffix table
(forge_common.asset_match `match_asset`) only knows its own suffixes, so an asset named the way
electron-builder or Tauri name them may reach the wrong architecture there, while the feeds'
matcher (the same module) gets it right. Publishing still goes ahead: the names are the
publisher's to choose."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge_common.asset_match import UNIVERSAL, best, facts, match_asset

# the platforms and architectures the spec's table distinguishes, with the file kinds it serves
_CHECKS = (
    ("darwin", ("arm64", "x64"), (".zip",)),
    ("windows", ("arm64", "x64"), (".exe",)),
    ("linux", ("arm64", "x64"), (".appimage", ".deb", ".rpm")),
)


@dataclass(frozen=True, slots=True)
class _File:
    name: str


def arch_warnings(names: Sequence[str]) -> list[str]:
    """One line per (platform, arch) whose update check would hand out a build of another
    architecture than the one the file names say is right."""
    files = [_File(name) for name in names]
    lines = []
    for platform, archs, kinds in _CHECKS:
        for arch in archs:
            chosen = match_asset(files, platform, arch)
            if chosen is None:
                continue
            said = facts(chosen.name).arch
            right = best(files, platform, arch, kinds)
            wrong_arch = said not in (None, arch, UNIVERSAL)
            better = right is not None and right != chosen and facts(right.name).arch == arch
            if wrong_arch or better:
                hint = f"; {right.name} fits" if better and right else ""
                lines.append(
                    f"warning: the update check (?platform={platform}&arch={arch}) would send "
                    f"{chosen.name}{hint}: rename it with a suffix of docs/releases.md's table"
                )
    return lines
