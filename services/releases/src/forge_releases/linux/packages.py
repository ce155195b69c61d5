"""What a `.deb` or `.rpm` asset says of itself, read from the package file (never its name) by
the packaging world's own libraries: python-debian's `DebFile` reads a `.deb`'s control stanza;
createrepo_c (the library behind Fedora's `createrepo_c`) reads an `.rpm`'s header and writes its
entries of the three repodata files exactly as `createrepo_c` would (docs/decisions.md). The blob
is copied from storage to a temporary file first (createrepo_c reads a path; a `.deb`'s control
member may sit anywhere in its `ar` archive), read in a worker thread, and removed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from dataclasses import dataclass
from urllib.parse import quote

from ..storage import Storage
from ..storage.base import BlobMissing

log = logging.getLogger(__name__)

DEB, RPM = "deb", "rpm"
# the file-name endings that make an asset a candidate (what it is comes from its content)
ENDINGS = {".deb": DEB, ".rpm": RPM}
# the control fields apt needs in a Packages stanza from the package itself, in Debian's order;
# Filename, Size and the digests are added from the stored asset (apt.py)
_SKIPPED_FIELDS = {"filename", "size", "md5sum", "sha1", "sha256", "sha512"}
# where a repository serves a package (relative to its root: apt/ and rpm/{channel}/), by asset
# id, so a renamed tag never moves it
HREF_MARK = "@FORGE_HREF@"


@dataclass(frozen=True, slots=True)
class LinuxPackage:
    format: str  # DEB, RPM, or '' for an asset that is no readable package
    name: str = ""
    version: str = ""  # as the package manager spells it (deb: [epoch:]upstream[-revision])
    arch: str = ""  # Debian's name for a .deb (amd64, arm64, ...), rpm's for an .rpm (x86_64)
    control: str = ""  # deb: the control stanza, without the fields the repository adds
    primary_xml: str = ""  # rpm: the <package> of primary.xml, with HREF_MARK as its location
    filelists_xml: str = ""
    other_xml: str = ""


NOT_A_PACKAGE = LinuxPackage("")


def format_of(name: str) -> str | None:
    """DEB or RPM when the asset's name makes it a candidate, else None."""
    lowered = name.lower()
    return next((kind for end, kind in ENDINGS.items() if lowered.endswith(end)), None)


def pool_path(asset_id: int, name: str) -> str:
    return f"pool/{asset_id}/{quote(name, safe='')}"


def _read_deb(path: str) -> LinuxPackage:
    from debian.debfile import DebFile  # imported where used: only uploads of packages need it

    package = DebFile(path)
    try:
        control = package.debcontrol()
    finally:
        package.close()
    name, version, arch = (
        control.get(field, "") for field in ("Package", "Version", "Architecture")
    )
    if not (name and version and arch):
        return NOT_A_PACKAGE
    kept = "".join(
        f"{field}: {value}\n"
        for field, value in control.items()
        if field.lower() not in _SKIPPED_FIELDS and "\n\n" not in value
    )
    return LinuxPackage(DEB, name, version, arch, control=kept)


def _read_rpm(path: str) -> LinuxPackage:
    import createrepo_c as cr  # type: ignore[import-untyped]  # no stubs; read at upload only

    package = cr.package_from_rpm(
        path, checksum_type=cr.SHA256, location_href=HREF_MARK, changelog_limit=10
    )
    version = (
        package.version
        if not package.epoch or package.epoch == "0"
        else (f"{package.epoch}:{package.version}")
    )
    return LinuxPackage(
        RPM,
        package.name,
        f"{version}-{package.release}",
        package.arch,
        primary_xml=cr.xml_dump_primary(package),
        filelists_xml=cr.xml_dump_filelists(package),
        other_xml=cr.xml_dump_other(package),
    )


def _read(path: str, kind: str) -> LinuxPackage:
    try:
        return _read_deb(path) if kind == DEB else _read_rpm(path)
    except Exception as exc:  # any damaged upload is "not a package", never a 500
        log.info("a %s asset is no readable package: %s", kind, type(exc).__name__)
        return NOT_A_PACKAGE


async def read_package(storage: Storage, sha256: str, size: int, kind: str) -> LinuxPackage | None:
    """What the package stored under `sha256` says (NOT_A_PACKAGE when it is none); None when
    the blob is missing from storage (nothing to keep)."""
    handle, path = tempfile.mkstemp(suffix=f".{kind}")
    try:
        with os.fdopen(handle, "wb") as out:
            try:
                async for chunk in storage.read(sha256, 0, size):
                    await asyncio.to_thread(out.write, chunk)
            except BlobMissing:
                return None
        return await asyncio.to_thread(_read, path, kind)
    finally:
        os.unlink(path)
