"""Warnings of `forge release publish` about `.deb` and `.rpm` packages (docs/releases.md "Linux
package repositories"; the release is published anyway): a package whose own version is not the
release's tag as the package managers spell it, or whose package name is not the one of the
repository's earlier packages. apt and dnf order by the package's version, never the tag, and
`apt upgrade` follows a package name: a package of another name is a second app.

Versions as the package managers order them: a prerelease tag `v1.2.0-beta.1` is `1.2.0~beta.1`
(`~` sorts before anything, so 1.2.0~beta.1 < 1.2.0); `1.2.0-beta.1` in a `.deb` is upstream
1.2.0 with Debian revision beta.1, which apt orders after 1.2.0-1.

The packages are read from the files about to be uploaded, with python-debian (a `.deb`'s control)
and rpmfile (an `.rpm`'s header); the earlier names come from the repository's own apt and dnf
repositories (the beta channel, which lists every published release), read with the
publisher's token."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge_common.versions import parse_version

# the names of the format's packages the repository lists now ("deb" or "rpm")
EarlierNames = Callable[[str], Awaitable[set[str]]]


@dataclass(frozen=True, slots=True)
class LocalPackage:
    path: Path
    format: str  # deb, rpm
    name: str
    version: str  # the upstream version: no epoch, no Debian revision or rpm release


def _deb(path: Path) -> LocalPackage | None:
    from debian.debfile import DebFile  # only publishers of .deb files need it

    package = DebFile(str(path))
    try:
        control = package.debcontrol()
    finally:
        package.close()
    version = control.get("Version", "").split(":", 1)[-1]
    upstream = version.rsplit("-", 1)[0] if "-" in version else version
    return LocalPackage(path, "deb", control.get("Package", ""), upstream)


def _rpm(path: Path) -> LocalPackage | None:
    import rpmfile  # type: ignore[import-untyped]  # no stubs; only publishers of .rpm files

    with rpmfile.open(str(path)) as package:
        headers = package.headers
        name, version = headers.get("name", b""), headers.get("version", b"")
    return LocalPackage(
        path, "rpm", name.decode(errors="replace"), version.decode(errors="replace")
    )


def local_packages(files: Sequence[Path]) -> list[LocalPackage]:
    """The `.deb` and `.rpm` packages among `files`, with what they say of themselves."""
    found = []
    for path in files:
        lowered = path.name.lower()
        reader = _deb if lowered.endswith(".deb") else _rpm if lowered.endswith(".rpm") else None
        if reader is None:
            continue
        try:
            package = reader(path)
        except Exception:  # not a package: the server will not list it either
            package = None
        if package is None or not package.name:
            found_line = f"warning: {path.name} is no readable package: apt and dnf will not see it"
            found.append(LocalPackage(path, "", found_line, ""))
            continue
        found.append(package)
    return found


def packaged_version(tag: str) -> str | None:
    """The tag's version as a .deb or .rpm spells it (`1.2.0~beta.1`); None for no version."""
    version = parse_version(tag)
    if version is None:
        return None
    plain = f"{version.major}.{version.minor}.{version.patch}"
    return f"{plain}~{version.prerelease}" if version.prerelease else plain


async def linux_warnings(tag: str, files: Sequence[Path], earlier: EarlierNames) -> list[str]:
    lines: list[str] = []
    packages = local_packages(files)
    expected = packaged_version(tag)
    for package in packages:
        if not package.format:
            lines.append(package.name)
        elif expected is not None and package.version != expected:
            lines.append(
                f"warning: {package.path.name} is version {package.version}, the tag {tag} is "
                f"{expected} as apt and dnf spell it: they order packages by their own version"
            )
    for fmt in ("deb", "rpm"):
        names = {p.name for p in packages if p.format == fmt}
        if not names:
            continue
        known = await earlier(fmt) or names
        for package in packages:
            if package.format == fmt and (package.name not in known or len(names) > 1):
                others = ", ".join(sorted((known | names) - {package.name}))
                lines.append(
                    f"warning: {package.path.name} is package {package.name}, but the "
                    f"repository's earlier {fmt} packages are {others}: an upgrade follows a "
                    "package name, so users of the old name are not updated"
                )
    return lines


_PACKAGE_LINE = re.compile(r"^Package: (\S+)$", re.MULTILINE)
_NAME_ELEMENT = re.compile(r"<name>([^<]+)</name>")
_PRIMARY = re.compile(r'<data type="primary">.*?<location href="([^"]+)"', re.DOTALL)


def deb_names(packages_text: str) -> set[str]:
    return set(_PACKAGE_LINE.findall(packages_text))


def rpm_names(primary_xml: str) -> set[str]:
    return set(_NAME_ELEMENT.findall(primary_xml))


def primary_href(repomd: str) -> str | None:
    found = _PRIMARY.search(repomd)
    return None if found is None else found.group(1)
